"""--json, --quiet and --verbose, spelled the same by every subcommand that
has them (analyzer.cliframe), and what each prints (README, "Machine-readable
output"). `run --json` needs Ray: it is in test_jobs_ray.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_inputs import call
from test_jobs import FAST, make_run_dir

from jobs.runformat import Invocation, load_manifest, write_manifest


@pytest.fixture(scope="module")
def complete(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = make_run_dir(tmp_path_factory.mktemp("out") / "run", "1-10", FAST, 5)
    m = load_manifest(run)
    assert m is not None
    m.history.append(
        Invocation("run", ["test"], "1-10", "2026-01-02T00:00:00Z", finished_at="2026-01-02T00:00:09Z", wall_s=9.0, status="complete")
    )
    write_manifest(run, m)
    return run


@pytest.fixture
def incomplete(tmp_path: Path) -> Path:
    """Deals 6-10 lost (the index lists their file, the disk has not) and
    the file of 11-15 truncated (changed since it was indexed)."""
    run = make_run_dir(tmp_path / "run", "1-15", FAST, 5)
    (run / "deal_block=0" / "deals-0000000006-0000000010.parquet").unlink()
    bad = run / "deal_block=0" / "deals-0000000011-0000000015.parquet"
    bad.write_bytes(bad.read_bytes()[:100])
    return run


def test_status_json(complete: Path, incomplete: Path) -> None:
    done = call("status", complete, "--json")
    assert done.returncode == 0 and done.stderr == ""
    doc = json.loads(done.stdout)
    assert doc["command"] == "status" and doc["status"] == "complete" and doc["exit_code"] == 0
    assert (doc["deals"], doc["deals_total"], doc["deals_present"], doc["deals_missing"]) == ("1-10", 10, 10, 0)
    assert doc["config"] == FAST.to_dict() and doc["config_hash"] == FAST.config_hash()
    assert doc["rows"] == 10 and sum(doc["outcomes"].values()) == 10
    files = doc["files"]
    assert (files["sealed"], files["file_deals"], files["problems"], files["pending"]) == (2, 5, [], [])
    assert (files["parts"], files["temporary"], files["ignored"]) == (0, 0, [])
    assert [r["status"] for r in doc["invocations"]] == ["complete", "complete"]
    assert doc["running"] is None and doc["passes"] == []

    done = call("status", incomplete, "--json")
    doc = json.loads(done.stdout)
    assert done.returncode == doc["exit_code"] == 3 and doc["status"] == "incomplete"
    assert doc["missing"] == "6-15" and doc["deals_missing"] == 10
    assert [p.split(":")[0] for p in doc["files"]["problems"]] == ["deal_block=0/deals-0000000011-0000000015.parquet"]
    assert [p.split(":")[0] for p in doc["files"]["pending"]] == ["deal_block=0/deals-0000000006-0000000010.parquet"]


def test_status_quiet_and_verbose(complete: Path, incomplete: Path) -> None:
    assert call("status", complete, "-q").stdout == "status: complete\n"
    quiet = call("status", incomplete, "--quiet")
    assert quiet.returncode == 3 and quiet.stdout.splitlines() == ["status: incomplete (run the same command again to resume)"]
    many = complete.parent / "many"
    make_run_dir(many, "1-10", FAST, 5)
    m8 = load_manifest(many)
    assert m8 is not None
    m8.history += [Invocation("run", ["test"], "1-10", f"2026-01-0{i}T00:00:00Z", status="complete") for i in range(2, 9)]
    write_manifest(many, m8)
    normal = call("status", many).stdout.splitlines()
    verbose = call("status", many, "--verbose").stdout.splitlines()
    assert [line for line in normal if line.startswith("invocation ")] == [
        f"invocation {i}: run 1-10: complete (started 2026-01-0{i}T00:00:00Z)" for i in range(4, 9)
    ]
    assert "  (8 invocations in all; --verbose lists every one)" in normal
    assert [line for line in verbose if line.startswith("invocation ")] == [
        f"invocation {i}: run 1-10: complete (started 2026-01-0{i}T00:00:00Z)" for i in range(1, 9)
    ]
    assert call("status", complete, "-q", "-v").returncode == 2  # one or the other


def test_validate_json(complete: Path, tmp_path: Path) -> None:
    doc = json.loads(call("validate", complete, "--all", "--json").stdout)
    assert doc["command"] == "validate" and doc["result"] == "valid" and doc["exit_code"] == 0
    solved = doc["outcomes"]["solved"]
    assert doc["replay"] == {"solutions": solved, "replayed": solved, "every": True, "rejected": []}
    assert doc["checked"] == {"files": 2, "rows": 10, "refused": []}
    doc = json.loads(call("validate", complete, "--sample", "2", "--json").stdout)
    assert doc["replay"]["replayed"] == 2 and not doc["replay"]["every"]

    lost = make_run_dir(tmp_path / "lost", "1-10", FAST, 5)
    (lost / "deal_block=0" / "deals-0000000006-0000000010.parquet").unlink()
    done = call("validate", lost, "--json")
    doc = json.loads(done.stdout)
    assert done.returncode == doc["exit_code"] == 3 and doc["result"] == "incomplete"


def _wrong(tmp_path: Path, files: int) -> Path:
    """A run of one deal per file whose first `files` files had a byte
    changed after they were indexed (same size, another sha256)."""
    run = make_run_dir(tmp_path / "run", "1-30", FAST, 1)
    for n in range(1, files + 1):
        path = run / "deal_block=0" / f"deals-{n:010d}-{n:010d}.parquet"
        data = bytearray(path.read_bytes())
        data[len(data) // 2] ^= 0xFF
        path.write_bytes(bytes(data))
    return run


def test_validate_json_lists_every_problem_and_verbose_prints_them(tmp_path: Path) -> None:
    run = _wrong(tmp_path, 25)
    done = call("validate", run, "--json", "--sample", "0")
    doc = json.loads(done.stdout)
    assert done.returncode == doc["exit_code"] == 1 and doc["result"] == "invalid"
    assert len(doc["checked"]["refused"]) == 25
    normal = call("validate", run, "--sample", "0").stdout
    verbose = call("validate", run, "--sample", "0", "--verbose").stdout
    assert normal.count("PROBLEM files: deal_block=0/deals-") == 20 and "... and 5 more" in normal
    assert verbose.count("PROBLEM files: deal_block=0/deals-") == 25 and "more" not in verbose
    quiet = call("validate", run, "--sample", "0", "--quiet")
    assert quiet.returncode == 1 and quiet.stdout.startswith("result: INVALID") and quiet.stdout.count("\n") == 1


def test_solve_quiet_verbose_json() -> None:
    quiet = call("solve", "11982", "--quiet")
    assert (quiet.returncode, quiet.stdout) == (0, "outcome: unsolvable (proved: the search examined every reachable position)\n")
    verbose = call("solve", "617", "--verbose").stdout.splitlines()
    assert verbose[1] == "rules: 8 columns, build alternate, empty columns take any, 0 cards dealt to cells"
    assert verbose[2] == "limits: no position limit, 1.0 GiB memory, 8.0 GiB disk, no time limit"
    assert call("solve", "617", "--min-cells", "--max-cells", "3", "-q").stdout == (
        "minimum cells: none (not won with up to 3 cells)\n"
    )
    doc = json.loads(call("solve", "617", "--json", "--verbose").stdout)
    assert doc["outcome"] == "solved"  # --json is the same whatever the verbosity


def test_verify_quiet() -> None:
    done = call("verify", "1", "8a 81", "--quiet")
    assert done.returncode == 1
    assert done.stdout == "illegal: move 2 '81': 7D cannot go onto 6S (freecell, 4 cells, move rule product)\n"
