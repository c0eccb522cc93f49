"""Batch runs on a real local Ray (2 CPUs, one instance for the module):
every row of a small run, injected failures, limits, min-cells, a corrupted
chunk recomputed, a stalled run, and a driver interrupted (SIGINT) then
killed (SIGKILL) and resumed. Nothing here is timed."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import ray
from test_jobs import cli, corrupt_middle, dataset, make_run_dir, reference

import jobs.run
from jobs.chunks import CHUNKS_DIR, file_metadata, parse_chunk_name
from jobs.config import build_config
from jobs.ranges import DealRange
from jobs.rundir import load_manifest

#: Generous for these deals, but bounds a deal the solver finds hard today.
LIMIT = ["--max-positions", "200000"]
CONFIG = build_config(max_positions=200_000)
REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def ray_address() -> Iterator[str]:
    ray.init(address="local", num_cpus=2, include_dashboard=False, logging_level=logging.WARNING)
    try:
        yield str(ray.get_runtime_context().gcs_address)
    finally:
        ray.shutdown()


def test_small_run_every_row(ray_address: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    assert cli(["run", "1-60", "--out", str(out), "--chunk-size", "7", *LIMIT]) == 0
    err = capsys.readouterr().err
    assert "complete: 60 deals" in err

    # every row, every column but elapsed_s, equals the engine's own answer
    got = dataset(out).to_pylist()
    want = reference(DealRange(1, 60), CONFIG).to_pylist()
    assert len(got) == 60
    for g, w in zip(got, want, strict=True):
        assert g == w

    names = sorted(p.name for p in (out / CHUNKS_DIR).iterdir())
    assert names == [f"deals-{a:010d}-{min(a + 6, 60):010d}.parquet" for a in range(1, 61, 7)]
    manifest = json.loads((out / "run.json").read_text())
    assert manifest["deals"] == "1-60" and manifest["chunk_size"] == 7
    assert manifest["config"] == CONFIG.to_dict() and manifest["config_hash"] == CONFIG.config_hash()
    assert [r["status"] for r in manifest["runs"]] == ["complete"]
    for name in names:
        meta = file_metadata(out / CHUNKS_DIR / name)
        r = parse_chunk_name(name)
        assert r is not None
        assert (meta["fca.deal_start"], meta["fca.deal_end"]) == (str(r.start), str(r.end))
        assert meta["fca.config_hash"] == CONFIG.config_hash()
        assert meta["fca.engine_version"] == manifest["engine_version"]
        assert meta["fca.git_commit"] == manifest["git_commit"]

    assert cli(["validate", str(out), "--all"]) == 0
    assert "result: valid and complete" in capsys.readouterr().out
    assert cli(["status", str(out)]) == 0

    # the same command again: nothing to do, and a second run entry
    assert cli(["run", "1-60", "--out", str(out), "--chunk-size", "7", *LIMIT]) == 0
    assert "nothing to do" in capsys.readouterr().err
    m = load_manifest(out)
    assert m is not None and [r.status for r in m.runs] == ["complete", "complete"]


def test_failures_and_limits_become_rows(ray_address: str, tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = ["run", "1-30", "--out", str(out), "--chunk-size", "8", "--max-positions", "300", "--fail-deals", "3,17"]
    assert cli(args) == 0
    rows = dataset(out).to_pylist()
    assert [r["deal_number"] for r in rows] == list(range(1, 31))
    errors = {r["deal_number"]: r["error"] for r in rows if r["outcome"] == "error"}
    assert set(errors) == {3, 17} and "injected failure for deal 17" in errors[17]
    config = build_config(max_positions=300, fail_deals=[3, 17])
    assert rows == reference(DealRange(1, 30), config).to_pylist()
    limited = [r for r in rows if r["outcome"] == "limit"]
    assert limited and all(r["limit_reason"] == "positions" for r in limited)
    assert cli(["validate", str(out), "--all"]) == 0


def test_min_cells_run(ray_address: str, tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = ["run", "1-6", "--out", str(out), "--min-cells", "--max-cells", "6", "--max-positions", "20000"]
    assert cli([*args, "--chunk-size", "3"]) == 0
    config = build_config(min_cells=True, max_cells=6, max_positions=20_000)
    assert dataset(out).to_pylist() == reference(DealRange(1, 6), config).to_pylist()
    assert cli(["validate", str(out), "--all"]) == 0


def test_run_json_quiet_and_verbose(ray_address: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    args = ["run", "1-10", "--out", str(out), "--chunk-size", "5", *LIMIT]
    assert cli([*args, "--json", "--quiet"]) == 0
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert doc["command"] == "run" and doc["status"] == "complete" and doc["exit_code"] == 0
    assert (doc["deals"], doc["deals_requested"], doc["deals_done"], doc["chunks_done"]) == ("1-10", 10, 10, 2)
    assert sum(doc["outcomes"].values()) == 10 and doc["failed"] == []
    assert doc["config_hash"] == CONFIG.config_hash() and doc["out"] == str(out)
    assert "complete:" not in captured.err and "run 1-10 ->" not in captured.err  # --quiet

    (out / CHUNKS_DIR / "deals-0000000006-0000000010.parquet").unlink()
    assert cli([*args, "--verbose"]) == 0
    err = capsys.readouterr().err
    assert "chunk 6-10 done on " in err and "complete: 5 deals" in err
    assert cli([*args, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["status"] == "complete" and doc["deals_done"] == 0  # nothing left to do


def test_corrupted_chunks_are_recomputed(ray_address: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = make_run_dir(tmp_path / "run", "1-20", CONFIG, 5)
    chunks = sorted((out / CHUNKS_DIR).iterdir())
    chunks[1].write_bytes(chunks[1].read_bytes()[:-200])  # truncated
    corrupt_middle(chunks[2])
    assert cli(["validate", str(out)]) == 3
    report = capsys.readouterr().out
    assert f"invalid {chunks[1].name}" in report and f"invalid {chunks[2].name}" in report

    options = jobs.run.RunOptions(deals=(DealRange(1, 20),), out=out, config=CONFIG, command=["test"])
    result = jobs.run.run(options)
    assert result.exit_code == 0
    assert sorted((s["start"], s["end"]) for s in result.summaries) == [(6, 10), (11, 15)]
    assert dataset(out).to_pylist() == reference(DealRange(1, 20), CONFIG).to_pylist()
    assert cli(["validate", str(out), "--all"]) == 0


def test_stall_timeout_names_the_stuck_chunk(ray_address: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    # one chunk of min-cells searches: far more than one second of work
    args = ["run", "1-200", "--out", str(out), "--min-cells", "--chunk-size", "200", "--stall-timeout", "1"]
    assert cli(args) == 3
    err = capsys.readouterr().err
    assert "no chunk finished" in err and "still running: deals 1-200" in err and "run the same command again" in err
    assert not list((out / CHUNKS_DIR).glob("*.parquet"))
    m = load_manifest(out)
    assert m is not None and m.runs[-1].status == "stalled"
    assert cli(["status", str(out)]) == 3


# The driver as a terminal's Ctrl-C finds it, whatever this test process
# passes on: a child inherits ignored and blocked signals, and a background
# job of a non-interactive shell (`bash .ci/run &`) starts with SIGINT
# ignored, so Python installs no handler and the driver ran to the end
# through the interrupt.
_RUN_WITH_SIGINT = (
    "import runpy, signal; "
    "signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT}); "
    "signal.signal(signal.SIGINT, signal.default_int_handler); "
    "runpy.run_module('jobs.run', run_name='__main__', alter_sys=True)"
)


def _driver(out: Path, address: str) -> subprocess.Popen[str]:
    argv = [sys.executable, "-c", _RUN_WITH_SIGINT, "1-60", "--out", str(out), "--chunk-size", "2", "--max-in-flight", "1"]
    return subprocess.Popen(
        [*argv, *LIMIT, "--address", address, "--progress-interval", "0"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "RAY_ADDRESS": ""},
    )


def _wait_for_chunks(out: Path, n: int, proc: subprocess.Popen[str]) -> int:
    """Polls until `n` chunk files exist (the driver is then mid-run)."""
    deadline = time.monotonic() + 300  # only a guard against a hung test
    while time.monotonic() < deadline:
        have = len(list((out / CHUNKS_DIR).glob("deals-*.parquet"))) if (out / CHUNKS_DIR).is_dir() else 0
        if have >= n:
            return have
        assert proc.poll() is None, proc.communicate()[0]
        time.sleep(0.02)
    raise AssertionError("the driver made no progress")


def test_interrupted_then_killed_driver_resumes_exactly_once(ray_address: str, tmp_path: Path) -> None:
    out = tmp_path / "run"
    # Ctrl-C: exit 130, finished chunks kept
    proc = _driver(out, ray_address)
    _wait_for_chunks(out, 2, proc)
    proc.send_signal(signal.SIGINT)
    text = proc.communicate(timeout=120)[0]
    assert proc.returncode == 130, text
    assert "interrupted" in text
    m = load_manifest(out)
    assert m is not None and m.runs[-1].status == "interrupted"

    # SIGKILL: no chance to clean up
    proc = _driver(out, ray_address)
    before = len(list((out / CHUNKS_DIR).glob("deals-*.parquet")))
    have = _wait_for_chunks(out, before + 2, proc)
    proc.kill()
    proc.wait(timeout=60)
    assert have < 30  # the kill landed mid-run
    m = load_manifest(out)
    assert m is not None and [r.status for r in m.runs] == ["interrupted", "running"]

    # the same command again completes the dataset: one row per deal, same content
    assert cli(["run", "1-60", "--out", str(out), "--chunk-size", "2", *LIMIT]) == 0
    rows = dataset(out).to_pylist()
    assert [r["deal_number"] for r in rows] == list(range(1, 61))
    assert rows == reference(DealRange(1, 60), CONFIG).to_pylist()
    assert not [p for p in (out / CHUNKS_DIR).iterdir() if p.name.startswith(".")]
    assert cli(["validate", str(out)]) == 0
    m = load_manifest(out)
    assert m is not None and [r.status for r in m.runs] == ["interrupted", "running", "complete"]
