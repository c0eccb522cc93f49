"""The batch layer at the size of the whole range, without solving:

- a run directory covering deals 1..8,589,934,591 (8,590 data files of 10^6
  deals, made through `jobs.runformat` as sparse placeholders of the indexed
  sizes, each with its part of the answer in the index): `status` reads the
  index and a directory listing only, never a data file, opens with the
  answer of the whole range (counts in deals, the first unsolvable and
  limit deals), and a resume plans exactly the missing files, lazily;
- a run of 3,000,000 synthetic rows: `validate` and `publish` stream it in
  bounded memory (peak RSS of each, in a fresh process, under 500 MB, where
  the rows alone would take about 600 MB in pandas, and the interpreter
  with pyarrow and pandas about 170 MB more). The size is the smallest
  that keeps that margin: the property, not the figure, is tested here
  (`bench/scale_run.py` measures 5,000,000 rows).

Nothing is timed here; `python bench/scale_run.py` prints the figures.
"""

from __future__ import annotations

import copy
import itertools
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from fixtures_runs import STARTED, config, synthetic_run

from analyzer import headline
from jobs import check, run, runformat
from jobs.config import RunConfig
from jobs.ranges import MAX_DEAL, DealRange, count, subtract

REPO = Path(__file__).resolve().parent.parent
#: Files left out of the full-range run (their deals are what a resume must plan).
GAPS = (0, 4321, 8589)


#: The rows every synthetic file's answer is made from: deals 1-4 of it.
_ROWS = pa.table(
    {
        "deal_number": [1, 2, 3, 4],
        "cells": [4] * 4,
        "outcome": ["solved", "unsolvable", "limit", "unsolvable"],
        "limit_reason": [None, None, "bytes", None],
    }
)


def file_answer(unit: DealRange, template: dict[str, Any]) -> dict[str, Any]:
    """A data file's part of the answer as the index keeps it: two
    unsolvable deals and one limit per file, the rest solved (`template`,
    the part of `_ROWS`, moved to the file's deals)."""
    part = copy.deepcopy(template)
    part["deals"] = len(unit)
    line = part["cells"][0]
    line["deals"] = len(unit)
    line["counts"]["solved"] += len(unit) - len(_ROWS)
    line["unsolvable"] = [d + unit.start - 1 for d in line["unsolvable"]]
    line["limits"] = [[d + unit.start - 1, why] for d, why in line["limits"]]
    return part


def full_range_run(out: Path) -> Path:
    cfg = RunConfig.from_dict(config([4]))
    m = runformat.create_run(out, cfg, [DealRange(1, MAX_DEAL)], file_deals=10**6,
                             history=[runformat.Invocation("run", ["x"], "1-8589934591", STARTED, status="interrupted")])  # fmt: skip
    entries = []
    template = headline.table_part(_ROWS, cells=[4])
    for i, unit in enumerate(runformat.file_units([DealRange(1, MAX_DEAL)], 10**6)):
        if i in GAPS:
            continue
        rel = runformat.data_relpath(unit)
        (out / rel).parent.mkdir(exist_ok=True)
        with open(out / rel, "wb") as f:
            f.truncate(180_000_000)  # sparse: the indexed size, no disk used
        entries.append(runformat.FileEntry(rel, unit.start, unit.end, len(unit), 180_000_000, "0" * 64,
                                           {"solved": len(unit) - 3, "unsolvable": 2, "limit": 1}, m.config_hash,
                                           file_answer(unit, template)))  # fmt: skip
    runformat.rewrite_index(out, entries)
    return out


@pytest.fixture(scope="module")
def full(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The full-range run, made once for the tests that read it."""
    return full_range_run(tmp_path_factory.mktemp("scale") / "full")


def test_status_of_the_full_range_reads_no_data_file(full: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = full

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("status opened a data file")

    monkeypatch.setattr(pq, "ParquetFile", refuse)
    monkeypatch.setattr(pq, "read_table", refuse)
    report = check.status(out)
    text = report.text()
    assert report.exit_code == 3
    gaps = 2 * 10**6 + (MAX_DEAL - 8589 * 10**6)
    assert f"coverage: {MAX_DEAL - gaps:,}/{MAX_DEAL:,} deals (99.966 %)" in text  # not rounded up to 100
    assert "missing: " in text and "1-1000000" in text and "4321000001-4322000000" in text
    assert "files: 8587 data files" in text
    present = MAX_DEAL - gaps
    lines = text.splitlines()
    assert lines[0] == (
        f"freecell, 4 cells, product; MS deals 1-{MAX_DEAL}: {present:,} of {MAX_DEAL:,} deals have results (99.966 %)"
    )
    # one unsolvable deal in 500,000: neither share rounds away
    assert lines[1] == (
        f"  solved {present - 3 * 8587:,} (99.99970 %); unsolvable 17,174 (0.00020 %); limit 8,587 (0.00010 %)"
    )
    assert lines[2].startswith("    unsolvable (17,174): 1000002, 1000004, 2000002, 2000004,")
    assert lines[2].endswith(", ... (first 20 of 17,174; all in the report's unsolvable.csv)")
    assert lines[3].startswith("    limit (8,587): 1000003 (bytes), 2000003 (bytes),")
    doc = report.to_dict()
    answer = doc["headline"]
    assert isinstance(answer, dict) and answer["deals"] == present and answer["files_not_counted"] == 0


def test_resume_plans_only_the_missing_files_lazily(full: Path) -> None:
    out = full
    state = runformat.run_state(out)
    todo = subtract([DealRange(1, MAX_DEAL)], state.covered())
    assert todo == (DealRange(1, 10**6), DealRange(4321 * 10**6 + 1, 4322 * 10**6), DealRange(8589 * 10**6 + 1, MAX_DEAL))
    units = runformat.file_units(todo, 10**6)
    assert list(units) == list(todo)
    # the whole range as work: a generator, taken a few units at a time
    lazy = runformat.file_units([DealRange(1, MAX_DEAL)], 10**6)
    assert [str(u) for u in itertools.islice(lazy, 2)] == ["1-1000000", "1000001-2000000"]
    cfg = RunConfig.from_dict(config([4]))
    assert run.task_size(count(todo), 2, cfg) == 10_000  # capped: seconds of work per task
    assert run.task_size(count(todo), 1000, cfg) == 734  # a big cluster: about four tasks per CPU


def _peak_rss_mb(argv: list[str]) -> tuple[int, float]:
    """Runs `argv` in a fresh process; its exit code and peak RSS in MB."""
    code = (
        "import resource, subprocess, sys; "
        f"r = subprocess.run({argv!r}, cwd={str(REPO)!r}, stdout=subprocess.DEVNULL); "
        "print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    return int(out[0]), float(out[1])


@pytest.mark.skipif(sys.platform != "linux", reason="ru_maxrss in kilobytes (Linux)")
def test_validate_and_publish_stream_in_bounded_memory(tmp_path: Path) -> None:
    out = synthetic_run(tmp_path / "big", DealRange(1, 3_000_000), 10**6)
    cli = [sys.executable, "-m", "analyzer.cli"]
    code, rss = _peak_rss_mb([*cli, "validate", str(out), "--sample", "0"])
    assert code == 0 and rss < 500, rss
    code, rss = _peak_rss_mb([*cli, "publish", str(out), "--out", str(tmp_path / "ds")])
    assert code == 0 and rss < 500, rss
    shards = sorted((tmp_path / "ds" / "1.0.0" / "data").iterdir())
    assert [p.name for p in shards][-1].endswith(f"-of-{len(shards):05d}.parquet")
    assert sum(pq.ParquetFile(p).metadata.num_rows for p in shards) == 3_000_000


def test_damaged_index_lines_are_skipped_one_by_one(tmp_path: Path) -> None:
    # The index is parsed in one piece; a damaged line must not merge with
    # its neighbours into something that parses (a newline inside a string,
    # a line torn by a kill), and every intact line still counts.
    out = synthetic_run(tmp_path / "run", DealRange(1, 400), 100)
    path = out / "_run" / "index.jsonl"
    lines = path.read_text().splitlines()
    assert len(runformat.read_index(out)) == 4
    split = lines[1].replace('[101, "positions"]', '[101, "posi\ntions"]')
    assert split != lines[1]
    intact = sorted(runformat.FileEntry.from_json(line).file for line in (lines[0], lines[2]))
    path.write_text("\n".join([lines[0], split, lines[2]]) + "\n")
    assert sorted(runformat.read_index(out)) == intact
    path.write_text("\n".join([lines[0], split, lines[2], lines[3][:-40]]) + "\n")
    assert sorted(runformat.read_index(out)) == intact
    state = runformat.run_state(out)
    assert len(state.unindexed) == 2  # checked again by the next run


def test_files_written_before_a_description_was_reworded_still_read(tmp_path: Path) -> None:
    # A column's description and unit are documentation: an upgrade that
    # rewords one must not refuse the runs made before it. A changed type is
    # another schema and is refused.
    out = synthetic_run(tmp_path / "run", DealRange(1, 200), 100)
    m = runformat.require_run_dir(out)
    rel = sorted(runformat.read_index(out))[0]
    t = pq.read_table(out / rel)
    reworded = pa.schema(
        [f.with_metadata({b"description": b"older wording", b"unit": b""}) for f in t.schema],
        metadata=t.schema.metadata,
    )
    runformat.write_table_file(out / rel, [t.cast(reworded)], reworded, compression=runformat.DATA_COMPRESSION)
    assert runformat.check_file(out / rel, m.config).rows == 100
    retyped = pa.schema([f.with_type(pa.int32()) if f.name == "positions_stored" else f for f in t.schema],
                        metadata=t.schema.metadata)  # fmt: skip
    runformat.write_table_file(out / rel, [t.cast(retyped)], retyped, compression=runformat.DATA_COMPRESSION)
    with pytest.raises(runformat.FileInvalid, match="columns differ"):
        runformat.check_file(out / rel, m.config)
