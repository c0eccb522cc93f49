"""Tiny run directories for the report and publish tests.

Built through the run-format module (`jobs.runformat`), from
real solver output (`analyzer.solve_range`, `analyzer.min_cells`), so the
tests need neither Ray nor `jobs`. Limit and error rows are real too: a small
position budget and the engine's injected failures (`fail_deals`).
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import analyzer
from jobs import runformat
from jobs.chunks import Row, results_table
from jobs.config import RunConfig
from jobs.ranges import DealRange
from jobs.runformat import Invocation


@contextlib.contextmanager
def tmpfs(path: Path, options: str) -> Iterator[Path]:
    """A tmpfs mounted at `path` (created) with mount `options` such as
    ``size=96k`` or ``ro,size=64k``, unmounted after; the test is skipped
    where it cannot be mounted (root is needed)."""
    path.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)], check=False).returncode:
        pytest.skip(f"cannot mount a tmpfs ({options}) here")
    try:
        yield path
    finally:
        # lazily: a Ray worker may still hold a file open there
        subprocess.run(["umount", "-l", str(path)], check=False)


STARTED = "2024-05-01T10:00:00+00:00"
FINISHED = "2024-05-01T10:00:02+00:00"


def config(
    cells: Sequence[int] = (4,),
    *,
    variant: str = "freecell",
    min_cells: bool = False,
    limits: analyzer.Limits | None = None,
) -> dict[str, Any]:
    lim = limits or analyzer.Limits()
    return {
        "variant": analyzer.Variant.named(variant).as_dict(),
        "cells": list(cells),
        "min_cells": min_cells,
        "limits": {
            "max_positions": lim.max_positions,
            "max_bytes": lim.max_bytes,
            "max_seconds": lim.max_seconds,
        },
    }


def table_of(
    results: Sequence[analyzer.SolveResult], min_cells: Mapping[int, int | None] | None = None
) -> pa.Table:
    """Result rows in the schema of `analyzer.schema` (through `jobs.chunks`)."""
    rows = [Row(r, None if min_cells is None else min_cells.get(r.deal_number or 0)) for r in results]
    return results_table(rows)


def write_run(
    out: Path,
    results: Sequence[analyzer.SolveResult],
    cfg: Mapping[str, Any],
    deals: tuple[int, int],
    *,
    chunk_size: int = 10,
    min_cells: Mapping[int, int | None] | None = None,
    skip_chunks: Sequence[int] = (),
    command: Sequence[str] = (),
) -> Path:
    """A run directory made through `jobs.runformat` (manifest, one sealed
    data file per `chunk_size` deals, the index), as a run leaves it.

    `skip_chunks` (file indices) leaves files out, as an interrupted run does.
    """
    config = RunConfig.from_dict(cfg)
    first, last = deals
    cells = cfg["cells"]
    argv = list(command) or [
        "freecell-analyzer", "run", f"{first}-{last}", "--out", out.name,
        *(["--min-cells"] if cfg["min_cells"] else ["--cells", ",".join(map(str, cells))]),
    ]  # fmt: skip
    history = [Invocation("run", argv, f"{first}-{last}", STARTED, finished_at=FINISHED, wall_s=2.0, status="complete")]
    manifest = runformat.create_run(out, config, [DealRange(first, last)], file_deals=chunk_size, history=history)
    table = table_of(results, min_cells).sort_by([("deal_number", "ascending"), ("cells", "ascending")])
    index = runformat.IndexWriter(out)
    for i, unit in enumerate(runformat.file_units([DealRange(first, last)], chunk_size)):
        if i in skip_chunks:
            continue
        mask = (pc.field("deal_number") >= unit.start) & (pc.field("deal_number") <= unit.end)
        runformat.add_file(out, manifest, unit, [table.filter(mask)], index)
    index.close()
    return out


@dataclass(frozen=True)
class FixtureRuns:
    c4: Path  # freecell, 4 cells, deals 1-30: all solved; a stray temporary chunk file
    c3: Path  # freecell, 3 cells, deals 1-30
    c2: Path  # freecell, 2 cells, deals 1-30, 20,000 positions: solved, unsolvable, limit and error rows
    min_cells: Path  # freecell, min cells 0-3, deals 1-12, 20,000 positions: some minima undetermined
    incomplete: Path  # as c4 but deals 11-20 missing


LIMITS = analyzer.Limits(max_positions=20_000)


def make_runs(base: Path) -> FixtureRuns:
    c4 = analyzer.solve_range(1, 31, cells=4)
    write_run(base / "c4", c4, config([4]), (1, 30))
    (base / "c4" / "deal_block=0" / ".deals-0000000031-0000000040.parquet.1.0a0b0c0d.tmp").write_bytes(b"partial")
    write_run(base / "c3", analyzer.solve_range(1, 31, cells=3), config([3]), (1, 30))
    c2 = analyzer.solve_range(1, 31, cells=2, limits=LIMITS, fail_deals=[13])
    write_run(base / "c2", c2, config([2], limits=LIMITS), (1, 30))
    mins = [analyzer.min_cells(n, max_cells=3, limits=LIMITS) for n in range(1, 13)]
    write_run(
        base / "min_cells",
        [r for m in mins for r in m.results],
        config([0, 1, 2, 3], min_cells=True, limits=LIMITS),
        (1, 12),
        chunk_size=5,
        min_cells={m.deal_number: m.min_cells for m in mins},
    )
    write_run(base / "incomplete", c4, config([4]), (1, 30), skip_chunks=[1])
    return FixtureRuns(base / "c4", base / "c3", base / "c2", base / "min_cells", base / "incomplete")


_CACHE: dict[Path, FixtureRuns] = {}


def shared_runs(base: Path) -> FixtureRuns:
    """`make_runs` once per test session (`base` from the session's tmp_path_factory)."""
    if base not in _CACHE:
        _CACHE[base] = make_runs(base)
    return _CACHE[base]


_REPORTS: dict[Path, Path] = {}


def shared_c2_report(base: Path) -> Path:
    """report.html of the c2 run (every outcome), written once per session.
    Tests that add files must work on a copy."""
    if base not in _REPORTS:
        from reports import report

        _REPORTS[base] = report.report([shared_runs(base).c2], base / "report-c2")
    return _REPORTS[base]


def synthetic_rows(unit: DealRange, cfg: RunConfig) -> pa.Table:
    """Rows for every deal of `unit` without solving (the scale test): each a
    `limit` row of a first attempt, which no replay needs; vectorised, so
    millions of rows cost seconds."""
    import numpy as np

    from analyzer.schema import arrow_schema

    n = len(unit)
    deals = np.arange(unit.start, unit.end + 1, dtype=np.int64)
    schema = arrow_schema()

    def cat(value: str) -> pa.DictionaryArray:
        return pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, dtype=np.int8)), pa.array([value]))

    none = pa.nulls(n)
    cols = {
        "deal_number": pa.array(deals),
        "variant": cat(cfg.variant.name),
        "cells": pa.array(np.full(n, cfg.cells[0], dtype=np.int8)),
        "move_rule": cat(cfg.variant.move_rule),
        "outcome": cat("limit"),
        "limit_reason": cat("positions"),
        "solution_length_single": none,
        "solution_length_multi": none,
        "solution": none,
        "positions_expanded": pa.array(deals % 1000 + 1),
        "positions_stored": pa.array(deals % 1000 + 1),
        "peak_bytes": pa.array(deals % 4096),
        "elapsed_s": pa.array((deals % 97) / 1000.0),
        "min_cells": none,
        "error": none,
        "attempts": pa.array(np.ones(n, dtype=np.int8)),
        "attempt_history": none,
    }
    return pa.Table.from_arrays([cols[f.name].cast(f.type) for f in schema], schema=schema)


def synthetic_run(out: Path, deals: DealRange, file_deals: int, *, skip: Sequence[int] = ()) -> Path:
    """A run directory of `synthetic_rows`, one sealed file per `file_deals`."""
    cfg = RunConfig.from_dict(config([4], limits=analyzer.Limits(max_positions=1000)))
    history = [Invocation("run", ["freecell-analyzer", "run", str(deals)], str(deals), STARTED, finished_at=FINISHED, wall_s=2.0, status="complete")]
    manifest = runformat.create_run(out, cfg, [deals], file_deals=file_deals, history=history)
    index = runformat.IndexWriter(out)
    for i, unit in enumerate(runformat.file_units([deals], file_deals)):
        if i not in skip:
            groups = [synthetic_rows(r, cfg) for r in runformat.file_units([unit], runformat.ROW_GROUP_DEALS)]
            runformat.add_file(out, manifest, unit, groups, index)
    index.close()
    return out
