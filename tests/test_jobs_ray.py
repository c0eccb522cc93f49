"""Batch runs on a real local Ray (2 CPUs, one instance for the module):
every row of a small run, injected failures, limits, min-cells, a changed
data file re-solved, a stalled run, escalation passes, a driver interrupted
(SIGINT), terminated (SIGTERM) and killed (SIGKILL) and resumed, two drivers
on one directory, a dead --address, a disk that fills mid-run, and the
driver solving while the local Ray it started comes up. Nothing here is
timed (bounds are guards against a hung test)."""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import cast

import pytest
import ray
from fixtures_runs import tmpfs
from test_jobs import cli, dataset, reference

import analyzer
import jobs.run
from analyzer.errors import StorageError
from jobs import runformat
from jobs.config import TASK_MEMORY_FACTOR, TASK_MEMORY_OVERHEAD, RunConfig, build_config
from jobs.ranges import DealRange
from jobs.task import EngineUnavailableError, TaskSummary

#: Generous for these deals, but bounds a deal the solver finds hard today.
LIMIT = ["--max-positions", "200000"]
CONFIG = build_config(max_positions=200_000)
REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def ray_address() -> Iterator[str]:
    # "bigmem": the custom resource escalation passes can ask for (--node-resource).
    ray.init(address="local", num_cpus=2, resources={"bigmem": 1}, include_dashboard=False, logging_level=logging.WARNING)
    try:
        yield str(ray.get_runtime_context().gcs_address)
    finally:
        ray.shutdown()


def files(out: Path) -> list[str]:
    return sorted(p.relative_to(out).as_posix() for p in out.glob("deal_block=*/deals-*.parquet"))


def test_small_run_every_row(ray_address: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    assert cli(["run", "1-60", "--out", str(out), "--file-deals", "20", *LIMIT]) == 0
    err = capsys.readouterr().err
    assert "in tasks of up to 8 deals" in err and "complete: 60 deals" in err  # 60 deals / (4 x 2 CPUs)
    # the closing summary opens with the answer, counted in deals
    reference_rows = reference(DealRange(1, 60), CONFIG).to_pylist()
    unsolvable = [r["deal_number"] for r in reference_rows if r["outcome"] == "unsolvable"]
    closing = err[err.index("freecell, 4 cells, product; MS deals 1-60: 60 deals") :].splitlines()
    assert closing[1].startswith(f"  solved {60 - len(unsolvable)} (")
    assert closing[2] == f"    unsolvable ({len(unsolvable)}): " + (", ".join(map(str, unsolvable)) or "none")
    assert closing[4].startswith("complete: 60 deals")
    assert files(out) == [f"deal_block=0/deals-{a:010d}-{a + 19:010d}.parquet" for a in (1, 21, 41)]
    assert dataset(out).to_pylist() == reference(DealRange(1, 60), CONFIG).to_pylist()
    manifest = json.loads((out / "_run" / "run.json").read_text())
    assert manifest["deals"] == "1-60" and manifest["layout"]["file_deals"] == 20
    assert [h["status"] for h in manifest["history"]] == ["complete"]
    assert not list((out / "_run" / "parts").iterdir())
    assert cli(["status", str(out)]) == 0 and cli(["validate", str(out)]) == 0
    # extending the run: only the new deals are solved, the old files stay
    before = {f: (out / f).stat().st_mtime_ns for f in files(out)}
    assert cli(["run", "1-70", "--out", str(out), *LIMIT]) == 0
    assert "10 deals to do (60 already done)" in capsys.readouterr().err
    assert all((out / f).stat().st_mtime_ns == t for f, t in before.items())
    m = runformat.load_manifest(out)
    assert m is not None and [h.deals for h in m.history] == ["1-60", "1-70"]


def test_failures_and_limits_become_rows(ray_address: str, tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = ["run", "1-30", "--out", str(out), "--max-positions", "300", "--fail-deals", "3,17"]
    assert cli(args) == 0
    rows = {r["deal_number"]: r for r in dataset(out).to_pylist()}
    assert {n for n, r in rows.items() if r["outcome"] == "error"} == {3, 17}
    assert any(r["outcome"] == "limit" and r["limit_reason"] == "positions" for r in rows.values())


def test_retry_limits_resolves_only_limit_rows(ray_address: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    assert cli(["run", "1-40", "--out", str(out), "--file-deals", "20", "--max-positions", "300"]) == 0
    first = {r["deal_number"]: r for r in dataset(out).to_pylist()}
    limited = sorted(n for n, r in first.items() if r["outcome"] == "limit")
    assert limited
    capsys.readouterr()
    # smaller or equal budgets are refused; larger ones re-solve the limit rows only
    assert cli(["run", "1-40", "--out", str(out), "--retry-limits", "--max-positions", "300"]) == 2
    assert "needs larger budgets" in capsys.readouterr().err
    # a pass no node can host is refused before it is recorded: smaller budgets stay open
    assert cli(["run", "1-40", "--out", str(out), "--retry-limits", "--max-positions", "200000", "--max-bytes", "1T"]) == 2
    assert "but the largest Ray node offers" in capsys.readouterr().err
    assert cli(["run", "1-40", "--out", str(out), "--retry-limits", "--max-positions", "200000", "--node-resource", "nosuch"]) == 2
    assert "no Ray node has that resource" in capsys.readouterr().err
    m = runformat.load_manifest(out)
    assert m is not None and m.passes == []
    assert cli(["run", "1-40", "--out", str(out), "--retry-limits", "--max-positions", "200000", "--node-resource", "bigmem"]) == 0
    after = {r["deal_number"]: r for r in dataset(out).to_pylist()}
    assert sorted(after) == list(range(1, 41))
    for n, r in after.items():
        if n in limited:
            assert r["attempts"] == 2 and r["outcome"] != "limit"
            history = json.loads(r["attempt_history"])
            assert [h["max_positions"] for h in history] == [300, 200000]
            assert history[0]["outcome"] == "limit"
        else:
            assert r == first[n]
    assert cli(["validate", str(out), "--all"]) == 0
    m = runformat.load_manifest(out)
    assert m is not None and m.passes[0]["max_positions"] == 200000
    assert [h.kind for h in m.history] == ["run"] + ["retry-limits"] * 4
    assert [h.status for h in m.history] == ["complete", "failed", "failed", "failed", "complete"]


def test_an_interrupted_retry_pass_keeps_each_deal_it_finished(ray_address: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A pass writes every deal it re-solves as a retry part at once; the same
    command again takes those deals from their parts (a bad part is deleted
    and its deal solved again) and writes them all into the data file."""
    from jobs.chunks import deals_to_retry, retry_deal
    from jobs.config import Provenance

    out = tmp_path / "run"
    assert cli(["run", "1-40", "--out", str(out), "--max-positions", "300"]) == 0
    config = build_config(max_positions=300)
    state = runformat.run_state(out)
    (entry,) = state.sealed
    big = {**runformat.limits_dict(config), "max_positions": 200_000}
    todo = deals_to_retry(runformat.read_checked(out / entry.file, config, entry=entry), config, big)
    assert len(todo) >= 2
    # A pass interrupted after its first two deals: their retry parts.
    prov = Provenance.current()
    kept, bad = (runformat.write_part(out, retry_deal(rows, config, big, prov), retry=True) for rows in todo[:2])
    kept_rows = runformat.read_checked(kept, config, part=True).__next__().to_pylist()
    bad.write_bytes(bad.read_bytes()[:-40])  # a torn part
    assert cli(["status", str(out)]) == 0
    assert "not yet written into their data files: 2 deals" in capsys.readouterr().out
    assert cli(["run", "1-40", "--out", str(out), "--retry-limits", "--max-positions", "200000", "-v"]) == 0
    err = capsys.readouterr().err
    resolved = {int(line.split()[1]) for line in err.splitlines() if line.startswith("deal ") and " re-solved: " in line}
    assert resolved == {int(rows[0]["deal_number"]) for rows in todo[1:]}  # not the kept one
    after = {r["deal_number"]: r for r in dataset(out).to_pylist()}
    assert after[kept_rows[0]["deal_number"]] == {k: v for k, v in kept_rows[0].items() if k in after[1]}
    assert all(after[rows[0]["deal_number"]]["attempts"] == 2 for rows in todo)
    assert not list((out / "_run" / "retry").iterdir())
    assert cli(["validate", str(out), "--all"]) == 0


def test_retry_limits_settles_a_min_cells_run(ray_address: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    assert cli(["run", "1-12", "--out", str(out), "--min-cells", "--max-cells", "5", "--max-positions", "2000"]) == 0
    first = dataset(out).to_pylist()
    limited = sorted({r["deal_number"] for r in first if r["outcome"] == "limit"})
    assert limited
    capsys.readouterr()
    assert cli(["run", "1-12", "--out", str(out), "--min-cells", "--max-cells", "5", "--retry-limits", "--max-positions", "5M"]) == 0
    after = dataset(out).to_pylist()
    assert not [r for r in after if r["outcome"] == "limit"]
    for n in range(1, 13):
        rows = [r for r in after if r["deal_number"] == n]
        m = analyzer.min_cells(n, max_cells=5)
        assert {r["min_cells"] for r in rows} == {m.min_cells}
        if n in limited:
            assert {r["attempts"] for r in rows} == {2}
            history = json.loads(rows[0]["attempt_history"])
            assert [h["max_positions"] for h in history] == [2000, 5_000_000] and history[0]["outcome"] == "limit"
        else:
            assert rows == [r for r in first if r["deal_number"] == n]
    assert cli(["validate", str(out), "--all"]) == 0


def test_run_json_quiet_and_verbose(ray_address: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    args = ["run", "1-10", "--out", str(out), "--file-deals", "5", "--task-deals", "5", *LIMIT]
    assert cli([*args, "--json", "--quiet"]) == 0
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert doc["command"] == "run" and doc["status"] == "complete" and doc["exit_code"] == 0
    assert (doc["deals"], doc["deals_requested"], doc["deals_done"]) == ("1-10", 10, 10)
    assert (doc["tasks_done"], doc["files_sealed"]) == (2, 2)
    assert sum(doc["outcomes"].values()) == 10 and doc["failed"] == []
    assert doc["config_hash"] == CONFIG.config_hash() and doc["out"] == str(out)
    assert captured.err == ""  # --quiet: no start, progress or final line
    answer = doc["headline"]
    assert answer["label"] == "freecell, 4 cells, product" and answer["deals"] == 10 and answer["declared"] == 10
    assert answer["cells"][0]["counts"] == doc["outcomes"] and answer["text"][0].endswith(": 10 deals")

    (out / files(out)[1]).unlink()
    assert cli([*args, "--verbose"]) == 0
    err = capsys.readouterr().err
    assert "deals 6-10 done on " in err and "complete: 5 deals" in err
    assert cli([*args, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["status"] == "complete" and doc["deals_done"] == 0  # nothing left to do


def test_changed_file_is_resolved(ray_address: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    assert cli(["run", "1-30", "--out", str(out), "--file-deals", "10", *LIMIT]) == 0
    f = out / files(out)[1]
    f.write_bytes(f.read_bytes()[:-200])  # truncated
    assert cli(["validate", str(out)]) == 1
    assert cli(["run", "1-30", "--out", str(out), *LIMIT]) == 0
    assert "changed on disk since it was written; removing it" in capsys.readouterr().err
    assert dataset(out).to_pylist() == reference(DealRange(1, 30), CONFIG).to_pylist()


def test_stall_timeout_names_the_stuck_task(ray_address: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    args = ["run", "1-200", "--out", str(out), "--min-cells", "--task-deals", "200", "--stall-timeout", "1"]
    assert cli(args) == 3
    err = capsys.readouterr().err
    assert "no task finished" in err and "still running: solve deals 1-200" in err and "run the same command again" in err
    m = runformat.load_manifest(out)
    assert m is not None and m.history[-1].status == "stalled"
    assert cli(["status", str(out)]) == 3


# The driver as a terminal's Ctrl-C finds it, whatever this test process
# passes on: a child inherits ignored and blocked signals, and a background
# job of a non-interactive shell (`bash .ci/run &`) starts with SIGINT
# ignored, so Python installs no handler and the driver ran to the end
# through the interrupt.
_RUN_WITH_SIGINT = (
    "import runpy, signal; "
    "signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM}); "
    "signal.signal(signal.SIGINT, signal.default_int_handler); "
    "runpy.run_module('jobs.run', run_name='__main__', alter_sys=True)"
)


def _driver(out: Path, address: str, *extra: str, deals: str = "1-60") -> subprocess.Popen[str]:
    argv = [sys.executable, "-c", _RUN_WITH_SIGINT, deals, "--out", str(out), "--task-deals", "2", "--max-in-flight", "1"]
    return subprocess.Popen(
        [*argv, *LIMIT, "--address", address, "--progress-interval", "0", *extra],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "RAY_ADDRESS": ""},
    )


def _parts(out: Path) -> int:
    d = out / "_run" / "parts"
    return len([p for p in d.iterdir() if p.suffix == ".part"]) if d.is_dir() else 0


def _wait_for_parts(out: Path, n: int, proc: subprocess.Popen[str]) -> int:
    """Polls until `n` parts exist (the driver is then mid-run)."""
    deadline = time.monotonic() + 300  # only a guard against a hung test
    while time.monotonic() < deadline:
        have = _parts(out)
        if have >= n:
            return have
        assert proc.poll() is None, proc.communicate()[0]
        time.sleep(0.02)
    raise AssertionError("the driver made no progress")


def test_interrupted_terminated_killed_driver_resumes_exactly_once(ray_address: str, tmp_path: Path) -> None:
    out = tmp_path / "run"
    # Ctrl-C: exit 130, finished work kept
    proc = _driver(out, ray_address)
    _wait_for_parts(out, 2, proc)
    proc.send_signal(signal.SIGINT)
    text = proc.communicate(timeout=120)[0]
    assert proc.returncode == 130, text
    assert "interrupted" in text
    # SIGTERM: handled the same way, exit 143, no stack dump
    proc = _driver(out, ray_address)
    _wait_for_parts(out, _parts(out) + 2, proc)
    proc.send_signal(signal.SIGTERM)
    text = proc.communicate(timeout=120)[0]
    assert proc.returncode == 143, text
    assert "terminated (SIGTERM)" in text and "Traceback" not in text and "*** " not in text
    m = runformat.load_manifest(out)
    assert m is not None and [h.status for h in m.history] == ["interrupted", "interrupted"]

    # SIGKILL: no chance to clean up; the next driver takes the lock over
    proc = _driver(out, ray_address)
    have = _wait_for_parts(out, _parts(out) + 2, proc)
    proc.kill()
    proc.wait(timeout=60)
    assert have < 30  # the kill landed mid-run
    m = runformat.load_manifest(out)
    assert m is not None and [h.status for h in m.history] == ["interrupted", "interrupted", "running"]

    # the same command again completes the run: one row per deal, same content
    assert cli(["run", "1-60", "--out", str(out), *LIMIT]) == 0
    rows = dataset(out).to_pylist()
    assert [r["deal_number"] for r in rows] == list(range(1, 61))
    assert rows == reference(DealRange(1, 60), CONFIG).to_pylist()
    assert not [p for p in out.rglob(".*") if p.is_file()]
    assert cli(["validate", str(out)]) == 0
    m = runformat.load_manifest(out)
    assert m is not None and [h.status for h in m.history] == ["interrupted", "interrupted", "killed", "complete"]


@pytest.mark.parametrize("other", [[], ["--cells", "3"]], ids=["same-config", "other-config"])
def test_second_driver_is_refused_at_once(
    ray_address: str, tmp_path: Path, other: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    proc = _driver(out, ray_address)
    _wait_for_parts(out, 1, proc)
    t0 = time.monotonic()
    assert cli(["run", "1-60", "--out", str(out), *LIMIT, *other, "--address", ray_address]) == 2
    assert time.monotonic() - t0 < 60  # a guard: refused before any Ray work
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"is in use by the driver with PID {proc.pid} on host" in err
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=120)
    m = runformat.load_manifest(out)
    assert m is not None and [h.status for h in m.history] == ["interrupted"]  # the refused one left no entry


def test_dead_address_fails_fast(tmp_path: Path) -> None:
    out = tmp_path / "run"
    done = subprocess.run(
        [sys.executable, "-m", "jobs.run", "1-10", "--out", str(out), "--address", "127.0.0.1:1"],
        cwd=REPO, capture_output=True, text=True, timeout=120, env={**os.environ, "RAY_ADDRESS": ""},
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "cannot reach the Ray cluster at 127.0.0.1:1" in done.stderr and done.stderr.count("\n") == 1
    m = runformat.load_manifest(out)
    assert m is not None and m.history[-1].status == "failed"


def test_stale_temporary_files_never_block_a_resume(ray_address: str, tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert cli(["run", "1-20", "--out", str(out), "--file-deals", "10", *LIMIT]) == 0
    (block,) = [d for d in out.iterdir() if d.name.startswith("deal_block=")]
    planted = [
        out / "_run" / ".run.json.4242.tmp",  # a manifest write cut short (the case)
        block / ".deals-0000000021-0000000030.parquet.4242.tmp",
        out / ".stray.4242.tmp",
    ]
    (out / "_run" / "parts").mkdir(exist_ok=True)
    planted.append(out / "_run" / "parts" / ".part.4242.tmp")
    for f in planted:
        f.write_bytes(b"half written")
    assert cli(["run", "1-30", "--out", str(out), "--file-deals", "10", *LIMIT]) == 0
    assert not [f for f in planted if f.exists()]
    assert dataset(out).to_pylist() == reference(DealRange(1, 30), CONFIG).to_pylist()


def test_sigterm_while_joining_a_cluster_ends_at_once(tmp_path: Path) -> None:
    # A port that accepts connections and never answers: joining hangs
    # until the watchdog's 40 s, unless SIGTERM ends it first.
    out = tmp_path / "run"
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        port = server.getsockname()[1]
        driver = subprocess.Popen(
            [sys.executable, "-m", "jobs.run", "1-10", "--out", str(out), "--address", f"127.0.0.1:{port}"],
            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "RAY_ADDRESS": ""},
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (out / "_run" / "run.json").exists():
            time.sleep(0.1)
        time.sleep(3)  # importing Ray and joining
        sent = time.monotonic()
        driver.send_signal(signal.SIGTERM)
        _, err = driver.communicate(timeout=30)
    assert driver.returncode == 143, err
    assert time.monotonic() - sent < 10 and "Traceback" not in err
    m = runformat.load_manifest(out)
    assert m is not None and m.history[-1].status == "interrupted"


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("mount") is None, reason="needs root to mount a tmpfs")
def test_disk_full_mid_run_is_resumable(ray_address: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with tmpfs(tmp_path / "small", "size=96k") as mnt:
        out = mnt / "run"
        # full from the start: one line, exit 3, no temporary file left to block the resume
        filler = mnt / "filler"
        with open(filler, "wb", buffering=0) as f:
            try:
                while True:
                    f.write(b"x" * 4096)
            except OSError:
                pass
        assert cli(["run", "1-1000", "--out", str(out), "--file-deals", "100", *LIMIT]) == 3
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "the disk is full" in err, err
        assert not [p for p in mnt.rglob(".*") if p.is_file()]
        filler.unlink()
        code = cli(["run", "1-1000", "--out", str(out), "--file-deals", "100", "--task-deals", "20", *LIMIT])
        err = capsys.readouterr().err
        assert code == 3, err
        assert "the disk is full" in err and "Traceback" not in err
        m = runformat.load_manifest(out)
        assert m is not None and m.history[-1].status == "incomplete"
        kept = runformat.run_state(out).covered()
        # room again: the same command resumes to exactly one row per deal
        subprocess.run(["mount", "-o", "remount,size=8m", str(mnt)], check=True)
        assert cli(["run", "1-1000", "--out", str(out), *LIMIT]) == 0
        assert [r["deal_number"] for r in dataset(out).to_pylist()] == list(range(1, 1001))
        assert all(runformat.run_state(out).covered()[0].start <= r.start for r in kept)


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("mount") is None, reason="needs root to mount a tmpfs")
def test_final_status_is_written_on_a_disk_left_full(ray_address: str, tmp_path: Path) -> None:
    # Another writer takes every free byte while the run goes on: the run's
    # last act, writing its final status, uses the room it reserved at start.
    filled: list[int] = []
    with tmpfs(tmp_path / "small", "size=256k") as mnt:

        def fill(_summary: object) -> None:
            if not filled:
                with open(mnt / "filler", "wb", buffering=0) as f, contextlib.suppress(OSError):
                    while True:
                        filled.append(f.write(b"x" * 1024))

        options = jobs.run.RunOptions(
            deals=(DealRange(1, 400),), out=mnt / "run", config=build_config(max_positions=200_000),
            task_deals=20, file_deals=100, max_in_flight=2, command=["test"], verbosity=-1,
        )  # fmt: skip
        outcome = jobs.run.run(options, on_chunk=fill)
        assert filled and outcome.exit_code == 3
        m = runformat.load_manifest(mnt / "run")
        assert m is not None and m.history[-1].status == "incomplete"
        assert runformat.lock_holder(mnt / "run") is None


def test_read_only_output_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ro = tmp_path / "ro"
    ro.mkdir()
    if os.geteuid() == 0:
        if subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", str(ro)], check=False).returncode:
            pytest.skip("cannot mount a read-only tmpfs here")
    else:
        ro.chmod(0o555)
    try:
        assert cli(["run", "1-10", "--out", str(ro)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and ("read-only" in err or "permission denied" in err)
    finally:
        if os.geteuid() == 0:
            subprocess.run(["umount", str(ro)], check=False)


# ---------------------------------------------------------------------------
# A local Ray started in the background while the driver solves
# ---------------------------------------------------------------------------


def _ray_heads() -> set[int]:
    """The PIDs of the GCS servers running on this machine (one a Ray)."""
    pids = set()
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            with contextlib.suppress(OSError):
                if b"gcs_server" in (d / "cmdline").read_bytes().split(b"\0")[0]:
                    pids.add(int(d.name))
    return pids


def _local_run(out: Path, deals: str, *extra: str) -> dict[str, object]:
    """``jobs.run`` in a process of its own that starts its own local Ray;
    returns its ``--json`` summary."""
    done = subprocess.run(
        [sys.executable, "-m", "jobs.run", deals, "--out", str(out), "--address", "local", "--json", "--quiet", *extra],
        cwd=REPO, capture_output=True, text=True, timeout=300, env={**os.environ, "RAY_ADDRESS": ""},
    )  # fmt: skip
    assert done.returncode == 0 and done.stderr == "", done.stderr
    doc: dict[str, object] = json.loads(done.stdout)
    return doc


def _ray_gone(before: set[int]) -> bool:
    deadline = time.monotonic() + 30  # a guard: Ray's processes die with the driver
    while time.monotonic() < deadline and _ray_heads() - before:
        time.sleep(0.1)
    return not _ray_heads() - before


@pytest.mark.usefixtures("ray_address")
def test_driver_solves_while_a_local_ray_starts(tmp_path: Path) -> None:
    before = _ray_heads()
    # A short run is done by the driver before the Ray it started is up;
    # the rows are the ones Ray's workers write, and that Ray goes away.
    out = tmp_path / "short"
    doc = _local_run(out, "1-60", *LIMIT)
    assert (doc["status"], doc["deals_done"], doc["driver_deals"], doc["ray_up_s"]) == ("complete", 60, 60, None)
    assert dataset(out).to_pylist() == reference(DealRange(1, 60), CONFIG).to_pylist()
    assert cli(["validate", str(out)]) == 0
    assert _ray_gone(before)
    # --ray-only: the same rows, every task on Ray
    out = tmp_path / "ray-only"
    doc = _local_run(out, "1-60", *LIMIT, "--ray-only")
    assert (doc["status"], doc["deals_done"], doc["driver_deals"], doc["ray_up_s"]) == ("complete", 60, 0, None)
    assert dataset(out).to_pylist() == reference(DealRange(1, 60), CONFIG).to_pylist()
    assert _ray_gone(before)


class _HeldStart:
    """A Ray start that the test declares done (the module's Ray is up all along)."""

    def __init__(self, wake: threading.Event) -> None:
        self.wake = wake
        self.failure: BaseException | None = None
        self.t_start, self.t_up = time.monotonic(), 0.0
        self.up = self.stopped = False

    def declare_up(self) -> None:
        self.t_up, self.up = time.monotonic(), True
        self.wake.set()

    def stop(self) -> None:
        self.stopped = True


def test_ray_takes_over_from_the_driver_once_up(ray_address: str, tmp_path: Path) -> None:
    starts: list[_HeldStart] = []
    chunks: list[TaskSummary] = []

    def start(wake: threading.Event) -> _HeldStart:
        starts.append(_HeldStart(wake))
        return starts[-1]

    def chunk(summary: TaskSummary) -> None:
        chunks.append(summary)
        if len(chunks) == 3:
            starts[0].declare_up()

    options = jobs.run.RunOptions(
        deals=(DealRange(1, 120),), out=tmp_path / "run", config=CONFIG, task_deals=10, file_deals=40,
        max_in_flight=2, command=["test"], verbosity=-1,
    )  # fmt: skip
    outcome = jobs.run.run(options, on_chunk=chunk, ray_start=start)
    assert outcome.status == "complete" and outcome.deals_done == 120 and starts[0].stopped
    # the driver's three tasks, and a fourth if it had begun it before Ray
    # was declared up; Ray's workers the rest
    assert len(chunks) == 12 and outcome.driver_deals in (30, 40) and outcome.ray_up_s is not None
    assert dataset(options.out).to_pylist() == reference(DealRange(1, 120), CONFIG).to_pylist()
    assert cli(["validate", str(options.out)]) == 0


def _run_up_at_first_task(options: jobs.run.RunOptions) -> jobs.run.RunOutcome:
    """Runs `options` with a Ray start the test declares up once the
    driver's lane has finished its first task (`_HeldStart`)."""
    starts: list[_HeldStart] = []

    def start(wake: threading.Event) -> _HeldStart:
        starts.append(_HeldStart(wake))
        return starts[-1]

    def chunk(summary: TaskSummary) -> None:
        if not starts[0].up:
            starts[0].declare_up()

    return jobs.run.run(options, on_chunk=chunk, ray_start=start)


def test_ray_takes_the_tasks_the_driver_has_not_begun(ray_address: str, tmp_path: Path) -> None:
    # The lane holds a task running and one waiting per thread; once Ray is
    # declared up those waiting go to Ray (`DriverLane.withdraw`), and every
    # deal is still solved exactly once.
    options = jobs.run.RunOptions(
        deals=(DealRange(1, 200),), out=tmp_path / "run", config=CONFIG, task_deals=5, file_deals=100,
        command=["test"], verbosity=-1,
    )  # fmt: skip
    outcome = _run_up_at_first_task(options)
    assert outcome.status == "complete" and outcome.deals_done == 200 and outcome.tasks_done == 40
    assert outcome.driver_deals <= 5 * 2 * jobs.run._local_cpus()  # at most the lane's first tasks
    assert dataset(options.out).to_pylist() == reference(DealRange(1, 200), CONFIG).to_pylist()
    assert cli(["validate", str(options.out)]) == 0


def test_a_runs_last_tasks_are_cut_smaller(ray_address: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The tasks that begin within the run's last two per CPU are cut in
    # four (`jobs.run.taper`; in a real run into pieces of at least 1,000
    # deals, here of 5), wherever they run, and the results are the same.
    monkeypatch.setattr(jobs.run, "TAPER_MIN_DEALS", 1)
    options = jobs.run.RunOptions(
        deals=(DealRange(1, 400),), out=tmp_path / "run", config=CONFIG, task_deals=20, file_deals=400,
        command=["test"], verbosity=-1,
    )  # fmt: skip
    outcome = _run_up_at_first_task(options)
    tail = min(400, 2 * jobs.run._local_cpus() * 20)  # the tasks are cut while the driver solves
    assert outcome.status == "complete" and outcome.deals_done == 400
    assert outcome.tasks_done == (400 - tail) // 20 + tail // 5
    assert dataset(options.out).to_pylist() == reference(DealRange(1, 400), CONFIG).to_pylist()
    assert cli(["validate", str(options.out)]) == 0


def _script(source: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Runs `source` in a fresh Python process from the checkout, with no
    Ray cluster named (`RAY_ADDRESS` empty: a run there starts its own)."""
    return subprocess.run(
        [sys.executable, "-c", source, *args], cwd=REPO, capture_output=True, text=True, timeout=300,
        env={**os.environ, "RAY_ADDRESS": ""},
    )  # fmt: skip


_TWO_RUNS = """
import json, sys
from pathlib import Path
from jobs.config import build_config
from jobs.ranges import DealRange
from jobs.run import RunOptions, run
out = []
for i, deals in enumerate([DealRange(1, 30), DealRange(31, 60), DealRange(61, 90)]):
    o = run(RunOptions(deals=(deals,), out=Path(sys.argv[1]) / str(i), config=build_config(max_positions=200_000),
                       command=["test"], verbosity=-1, driver_solves=i < 2))
    out.append([o.status, o.driver_deals])
print(json.dumps(out))
"""


@pytest.mark.usefixtures("ray_address")
def test_runs_one_after_another_in_one_process(tmp_path: Path) -> None:
    # The second run comes while the Ray the first one started (and left
    # behind, done first) is still starting: it takes that start over. The
    # third, with every task on Ray, joins the Ray that came up.
    before = _ray_heads()
    done = _script(_TWO_RUNS, str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [["complete", 30], ["complete", 30], ["complete", 0]], done.stderr
    for i, (a, b) in enumerate([(1, 30), (31, 60), (61, 90)]):
        assert dataset(tmp_path / str(i)).to_pylist() == reference(DealRange(a, b), CONFIG).to_pylist()
    assert _ray_gone(before)


_ABANDONED = """
import json, os, threading, time
import jobs.run as r
start = r._local_start(threading.Event())
# Wait for the raylet's own children (its agents, its first workers), which
# it starts before it registers, so the start is still under way.
tree: set[int] = set()
deadline = time.monotonic() + 120
while time.monotonic() < deadline and not start.up:
    parents = r._proc_parents()
    children = set(r._children(parents))
    tree = r._descendants(children, parents)
    if tree - children:
        break
    time.sleep(0.02)
nice = sorted({os.getpriority(os.PRIO_PROCESS, pid) for pid in tree})
start.stop()  # abandoned: the process exits without waiting for Ray
print(json.dumps({"pids": sorted(tree), "grandchildren": bool(tree - children), "nice": nice, "up": start.up}))
"""


def _running(pid: int) -> bool:
    """Whether `pid` is a process that has not exited (a zombie has)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_a_local_ray_starts_at_the_lowest_priority_and_an_abandoned_start_ends_with_the_driver() -> None:
    # Ray's processes (GCS, raylet, and the raylet's agents and workers)
    # run at nice 19, so its start takes no core from the driver's solving;
    # a start the driver abandons (its run done first) is gone when the
    # driver exits, the raylet's agents too (on their own they outlive it
    # by a minute).
    done = _script(_ABANDONED)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["grandchildren"] and not doc["up"] and doc["nice"] == [jobs.run.LOCAL_RAY_NICE], doc
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(_running(p) for p in doc["pids"]):
        time.sleep(0.1)
    assert not [p for p in doc["pids"] if _running(p)], doc


_ABANDONED_IN_INIT = """
import atexit, json, linecache, sys, threading, time
atexit.register(time.sleep, 1.5)  # a slow exit: runs after every handler registered later
import jobs.run as r
start = r._local_start(threading.Event())
seen = False
deadline = time.monotonic() + 120
while time.monotonic() < deadline and not start.up and not seen:
    t = next((t for t in threading.enumerate() if t.name == "ray-start"), None)
    frame = sys._current_frames().get(t.ident) if t is not None and t.ident is not None else None
    # Ray's start in its loop waiting for its API server, asleep between
    # two reads of the server's address from Ray's key-value store
    seen = (
        frame is not None
        and frame.f_code.co_name == "start_api_server"
        and "sleep(" in linecache.getline(frame.f_code.co_filename, frame.f_lineno)
    )
    time.sleep(0.001)
start.stop()  # abandoned there: the process exits without waiting for Ray
print(json.dumps({"seen": seen, "up": start.up}))
"""


def test_a_start_abandoned_inside_ray_init_says_nothing_at_exit() -> None:
    # The driver exits while its abandoned local start is still inside
    # `ray.init`, waiting for Ray's API server: Ray's exit handler shuts
    # Ray down under it, and the start used to fail in Ray's log
    # ("ERROR services.py -- 'NoneType' object has no attribute
    # 'internal_kv_get'") after the run had printed its summary.
    done = _script(_ABANDONED_IN_INIT)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc == {"seen": True, "up": False}, (doc, done.stderr)
    assert "ERROR" not in done.stderr and "Traceback" not in done.stderr, done.stderr


def test_the_driver_solves_a_task_per_thread() -> None:
    wake = threading.Event()
    lane = jobs.run.DriverLane(wake, threads=2)
    both = threading.Barrier(2, timeout=30)  # passed only by two tasks at once
    refs = [lane.submit(both.wait) for _ in range(2)]
    assert lane.full is False  # two running, none waiting
    refs += [lane.submit(pow, 2, k) for k in range(2)]
    assert lane.full and not lane.idle
    done: list[jobs.run.LocalRef] = []
    deadline = time.monotonic() + 60
    while len(done) < 4 and time.monotonic() < deadline:
        wake.wait(1)
        wake.clear()
        done += lane.take_finished()
    assert sorted(id(r) for r in done) == sorted(id(r) for r in refs) and lane.idle
    assert all(r.error is None for r in done), [r.error for r in done]
    assert sorted(r.result for r in refs[2:]) == [1, 2]


def test_the_driver_gives_back_the_tasks_it_has_not_begun() -> None:
    wake = threading.Event()
    lane = jobs.run.DriverLane(wake, threads=1)
    go, begun = threading.Event(), threading.Event()

    def first() -> str:
        begun.set()
        go.wait(30)
        return "first"

    refs = [lane.submit(first), lane.submit(pow, 2, 3), lane.submit(pow, 2, 4)]
    assert begun.wait(30)
    assert lane.withdraw() == refs[1:] and lane.withdraw() == []
    go.set()
    done: list[jobs.run.LocalRef] = []
    deadline = time.monotonic() + 30
    while not lane.idle and time.monotonic() < deadline:
        wake.wait(1)
        wake.clear()
        done += lane.take_finished()
    done += lane.take_finished()
    assert done == refs[:1] and done[0].result == "first"


def test_the_driver_solves_only_what_fits_beside_rays_workers() -> None:
    # one thread per CPU; none when a task's memory, once more per thread
    # beside Ray's CPUs' tasks, would not fit in 70 % of the machine's memory
    room = 0.7 * os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")

    def asking(task_bytes: float) -> RunConfig:
        """A configuration whose task asks for about `task_bytes` of memory."""
        return build_config(max_bytes=int((task_bytes - TASK_MEMORY_OVERHEAD) / TASK_MEMORY_FACTOR))

    assert jobs.run._lane_threads(CONFIG, 2) == 2
    assert jobs.run._lane_threads(asking(room / 3.5), 2) == 1  # 3 fit: Ray's 2 and one thread
    assert jobs.run._lane_threads(asking(room / 2.5), 2) == 0  # only Ray's 2
    assert jobs.run._lane_threads(asking(room / 2.5), 1) == 1


_RAY_HALF_IMPORTED = """
import json, sys, threading, types
from pathlib import Path
sys.modules["ray"] = types.ModuleType("ray")  # as while another thread imports it: no is_initialized yet
import jobs.run as r
from jobs.config import build_config
from jobs.ranges import DealRange

class Held:
    def __init__(self, wake):
        self.failure, self.t_start, self.t_up, self.up = None, 0.0, 0.0, False
    def stop(self):
        pass

o = r.run(r.RunOptions(deals=(DealRange(1, 20),), out=Path(sys.argv[1]), config=build_config(max_positions=200_000),
                       command=["test"], verbosity=-1), ray_start=Held)
print(json.dumps([o.status, o.driver_deals]))
"""


def test_a_run_while_ray_is_half_imported_solves_in_the_driver(tmp_path: Path) -> None:
    # A second run in one process can come while the first run's abandoned
    # start is still importing Ray: the module is there, not yet complete.
    done = subprocess.run(
        [sys.executable, "-c", _RAY_HALF_IMPORTED, str(tmp_path / "run")], cwd=REPO, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0 and json.loads(done.stdout) == ["complete", 20], done.stderr


def test_an_interrupt_while_the_driver_solves_keeps_its_work(ray_address: str, tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = _driver(out, "local", deals="1-600")  # tasks of 2 deals: the driver writes a part every few ms
    _wait_for_parts(out, 2, proc)
    proc.send_signal(signal.SIGINT)
    text = proc.communicate(timeout=120)[0]
    assert proc.returncode == 130 and "interrupted" in text and "Traceback" not in text, text
    assert cli(["run", "1-600", "--out", str(out), *LIMIT]) == 0
    assert dataset(out).to_pylist() == reference(DealRange(1, 600), CONFIG).to_pylist()
    m = runformat.load_manifest(out)
    assert m is not None and [h.status for h in m.history] == ["interrupted", "complete"]


def test_a_task_the_driver_runs_fails_like_a_workers() -> None:
    wake = threading.Event()
    lane = jobs.run.DriverLane(wake)

    def boom(kind: str) -> None:
        raise {"storage": StorageError("disk full", True), "engine": EngineUnavailableError("no engine"), "bug": ValueError("bug")}[kind]

    refs = [lane.submit(boom, k) for k in ("storage", "engine", "bug")]
    refs.append(lane.submit(pow, 2, 10))
    deadline = time.monotonic() + 60
    done: list[jobs.run.LocalRef] = []
    while len(done) < 4 and time.monotonic() < deadline:
        wake.wait(1)
        wake.clear()
        done += lane.take_finished()
    assert done == refs and lane.idle
    kinds = [jobs.run.classify_failure(r.error) for r in done[:3] if r.error is not None]
    assert kinds == ["storage", "environment", "application"]
    assert jobs.run._first_line(cast(BaseException, done[2].error)) == "ValueError: bug"
    assert done[3].error is None and done[3].result == 1024


def test_a_file_is_written_while_its_parts_are_solved(ray_address: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    args = ["run", "1-600", "--out", str(out), "--file-deals", "200", "--task-deals", "10", "--verbose", *LIMIT]
    # 20 tasks a file: each file is written by a StreamSeal actor as its parts come
    assert cli(args) == 0
    err = capsys.readouterr().err
    assert err.count("sealed (written while its parts were solved)") == 3, err
    assert dataset(out).to_pylist() == reference(DealRange(1, 600), CONFIG).to_pylist()
    assert cli(["validate", str(out)]) == 0
    assert not [p for p in out.rglob(".*") if p.is_file()]


def _parts_of_an_interrupted_run(out: Path, deals: DealRange, tasks: int) -> list[Path]:
    """The parts of a run of `deals` (one file, tasks of 10 deals, one at a
    time, on the module's Ray) interrupted after its first `tasks` tasks."""
    options = jobs.run.RunOptions(
        deals=(deals,), out=out, config=CONFIG, task_deals=10, file_deals=len(deals), max_in_flight=1,
        command=["test"], verbosity=-1,
    )  # fmt: skip
    seen: list[TaskSummary] = []

    def stop(summary: TaskSummary) -> None:
        seen.append(summary)
        if len(seen) == tasks:
            raise KeyboardInterrupt

    assert jobs.run.run(options, on_chunk=stop).status == "interrupted"
    parts = sorted((out / "_run" / "parts").glob("*.part"))
    assert len(parts) == tasks
    return parts


def test_a_bad_part_in_a_written_stream_is_solved_again(ray_address: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    parts = _parts_of_an_interrupted_run(out, DealRange(1, 250), 5)
    parts[2].write_bytes(b"not a part")  # deals 21-30, found bad by the file's stream
    assert cli(["run", "1-250", "--out", str(out), "--file-deals", "250", "--task-deals", "10", "--verbose", *LIMIT]) == 0
    err = capsys.readouterr().err
    assert "deals 1-250: " in err and "solving 21-30 again" in err, err
    assert "file of deals 1-250 sealed (its parts merged)" in err, err
    assert dataset(out).to_pylist() == reference(DealRange(1, 250), CONFIG).to_pylist()
    assert cli(["validate", str(out)]) == 0


def _lane_only(out: Path, deals: DealRange, file_deals: int) -> tuple[jobs.run.RunOutcome, str]:
    """A run whose local Ray never comes up (a held start): the driver solves
    and seals everything. Returns the outcome and its verbose lines."""
    options = jobs.run.RunOptions(
        deals=(deals,), out=out, config=CONFIG, task_deals=10, file_deals=file_deals, command=["test"], verbosity=1,
    )  # fmt: skip
    starts: list[_HeldStart] = []

    def start(wake: threading.Event) -> _HeldStart:
        starts.append(_HeldStart(wake))
        return starts[-1]

    text = io.StringIO()
    outcome = jobs.run.run(options, ray_start=start, stream=text)
    assert starts and not starts[0].up and starts[0].stopped
    return outcome, text.getvalue()


def test_the_driver_writes_a_file_while_it_solves_its_parts(tmp_path: Path) -> None:
    # 4 tasks a file: while Ray starts, each file is written by a stream in
    # a thread of the driver as its parts come
    out = tmp_path / "run"
    outcome, text = _lane_only(out, DealRange(1, 120), 40)
    assert outcome.status == "complete" and outcome.driver_deals == 120 and outcome.files_sealed == 3, text
    assert text.count("sealed (written while its parts were solved)") == 3, text
    assert dataset(out).to_pylist() == reference(DealRange(1, 120), CONFIG).to_pylist()
    assert cli(["validate", str(out)]) == 0
    assert not [p for p in out.rglob(".*") if p.is_file()]


def test_a_bad_part_in_the_drivers_stream_is_solved_again(ray_address: str, tmp_path: Path) -> None:
    out = tmp_path / "run"
    parts = _parts_of_an_interrupted_run(out, DealRange(1, 50), 3)
    parts[1].write_bytes(b"not a part")  # deals 11-20, found bad by the driver's stream
    outcome, text = _lane_only(out, DealRange(1, 50), 50)
    assert outcome.status == "complete", text
    assert "deals 1-50: " in text and "solving 11-20 again" in text, text
    assert "file of deals 1-50 sealed (its parts merged)" in text, text
    assert dataset(out).to_pylist() == reference(DealRange(1, 50), CONFIG).to_pylist()
    assert cli(["validate", str(out)]) == 0


@pytest.mark.parametrize("mode", [[], ["--ray-only"]], ids=["driver-solves", "ray-only"])
def test_a_local_ray_that_cannot_start_is_one_line(tmp_path: Path, mode: list[str]) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    out = tmp_path / "run"
    done = subprocess.run(
        [sys.executable, "-m", "jobs.run", "1-200000", "--out", str(out), "--quiet", *LIMIT, *mode],  # longer than a failed start
        cwd=REPO, capture_output=True, text=True, timeout=300,
        env={**os.environ, "RAY_ADDRESS": "", "RAY_TMPDIR": str(blocker / "ray")},  # Ray's directory cannot be made
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("freecell-analyzer: error: cannot start Ray on this machine: ") and done.stderr.count("\n") == 1, done.stderr
    m = runformat.load_manifest(out)
    assert m is not None and m.history[-1].status == "failed"
