"""Reading run directories into pandas, through the run format's one
checked reader (`jobs.runformat`; docs/DESIGN.md, "Runs on disk").

``load_run(dir)`` gives the rows as a DataFrame and the run's metadata; a
run that ``validate`` would call invalid raises `RunInvalidError` naming the
file (``report`` and ``publish`` exit 1 on it).

Several directories with the same configuration (say a run split over two
machines) are merged into one `Run`; directories with different
configurations are separate runs, to be compared, and are only accepted
when the caller says so (``allow_mixed=True``, ``--allow-mixed``).

Deal ranges are read once, by the run format (`jobs.ranges.parse_deals`,
which reads each item with `analyzer.cliframe.parse_deal_span`); here they
are plain ``(first, last)`` pairs, the shape the report tables use.

>>> format_ranges(((1, 3), (5, 5)))
'1-3,5'
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np
import pandas as pd
import pyarrow as pa

from analyzer import schema
from analyzer.errors import EXIT_FAILURE, AnalyzerError
from jobs import runformat
from jobs.config import cells_phrase, config_cells, describe_config
from jobs.ranges import format_deals

#: The key of a row: one per deal and number of cells (DESIGN.md, "Rows").
ROW_KEY: Final = ("deal_number", "cells")

__all__ = [
    "ROW_KEY",
    "Invocation",
    "Run",
    "RunError",
    "RunInvalidError",
    "RunManifest",
    "cells_phrase",
    "config_cells",
    "count_deals",
    "describe_config",
    "format_ranges",
    "iter_run_tables",
    "load_run",
    "load_runs",
    "manifest_of",
    "merge_ranges",
    "missing_ranges",
    "read_manifest",
    "read_run_table",
]


class RunError(AnalyzerError):
    """A directory that is not a readable run, or runs that do not go together."""


class RunInvalidError(RunError):
    """A run whose files `validate` would call invalid: `report` and
    `publish` refuse it with exit 1, naming the file."""

    exit_code = EXIT_FAILURE


# --- deal ranges -----------------------------------------------------------------


def merge_ranges(ranges: Iterable[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    """Sorts inclusive ranges and merges those that touch or overlap."""
    out: list[tuple[int, int]] = []
    for a, b in sorted(ranges):
        if out and a <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return tuple(out)


def format_ranges(ranges: Iterable[tuple[int, int]]) -> str:
    """Ranges as DEALS text (what `jobs.ranges.parse_deals` reads back)."""
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in ranges)


def count_deals(ranges: Iterable[tuple[int, int]]) -> int:
    return sum(b - a + 1 for a, b in ranges)


def missing_ranges(declared: Sequence[tuple[int, int]], deals: Iterable[int]) -> tuple[tuple[int, int], ...]:
    """The parts of `declared` with no deal in `deals`.

    >>> missing_ranges(((1, 10),), [2, 3, 7])
    ((1, 1), (4, 6), (8, 10))
    """
    present = np.unique(np.fromiter(deals, dtype=np.int64))
    gaps: list[tuple[int, int]] = []
    for a, b in declared:
        inside = present[(present >= a) & (present <= b)]
        edges = np.concatenate(([a - 1], inside, [b + 1]))
        step = np.diff(edges)
        for i in np.flatnonzero(step > 1):
            gaps.append((int(edges[i]) + 1, int(edges[i + 1]) - 1))
    return tuple(gaps)


# --- manifests -----------------------------------------------------------------


@dataclass(frozen=True)
class Invocation:
    """One invocation of the run command (resumes and escalation passes add one)."""

    started_at: str
    finished_at: str
    wall_s: float
    status: str
    command: tuple[str, ...] = ()
    deals: str = ""
    kind: str = "run"
    limits: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class RunManifest:
    """A run's metadata (from ``_run/run.json``, through `jobs.runformat`)."""

    path: Path
    schema_version: str
    package_version: str
    engine_version: str
    git_commit: str
    config: Mapping[str, Any]
    config_hash: str
    deals: str
    chunk_size: int | None  # deals per data file
    command: tuple[str, ...]
    invocations: tuple[Invocation, ...]
    passes: tuple[Mapping[str, Any], ...] = ()

    #: The deals the run was asked for, as read by the run format.
    declared: tuple[tuple[int, int], ...] = ()

    @property
    def wall_s(self) -> float:
        return sum(i.wall_s for i in self.invocations)

    @property
    def commands(self) -> tuple[tuple[str, ...], ...]:
        """Every invocation's command, in order."""
        return tuple(i.command for i in self.invocations if i.command)


def manifest_of(run_dir: Path, m: runformat.Manifest) -> RunManifest:
    invocations = tuple(
        Invocation(
            started_at=h.started_at,
            finished_at=h.finished_at or "",
            wall_s=float(h.wall_s or 0.0),
            status=h.status,
            command=tuple(h.command),
            deals=h.deals,
            kind=h.kind,
            limits=h.limits,
        )
        for h in m.history
    )
    first = next((i.command for i in invocations if i.command), ())
    return RunManifest(
        path=run_dir,
        schema_version=m.schema_version,
        package_version=m.provenance.package_version,
        engine_version=m.provenance.engine_version,
        git_commit=m.provenance.git_commit,
        config=m.config.to_dict(),
        config_hash=m.config_hash,
        deals=format_deals(m.deals),
        declared=tuple((r.start, r.end) for r in m.deals),
        chunk_size=m.file_deals,
        command=first,
        invocations=invocations,
        passes=tuple(m.passes),
    )


def _run_error(e: AnalyzerError) -> RunError:
    return RunInvalidError(str(e)) if isinstance(e, runformat.RunInvalid) else RunError(str(e))


def read_manifest(run_dir: Path) -> RunManifest:
    """Reads a run directory's manifest, raising `RunError` with a clear message."""
    run_dir = Path(run_dir)
    if not run_dir.exists():
        raise RunError(f"{run_dir}: no such directory")
    if not run_dir.is_dir():
        raise RunError(f"{run_dir}: not a directory (expected a run directory)")
    if not any(run_dir.iterdir()):
        raise RunError(f"{run_dir}: the directory is empty, not a run")
    try:
        return manifest_of(run_dir, runformat.require_run_dir(run_dir))
    except AnalyzerError as e:
        raise _run_error(e) from None


# --- rows ------------------------------------------------------------------------


def iter_run_tables(
    manifest: RunManifest, columns: Sequence[str] | None = None, *, allow_missing: bool = True
) -> Iterator[pa.Table]:
    """The run's rows in deal order, one row group at a time, through the one
    checked reader (`jobs.runformat.read_checked`). Raises `RunInvalidError`
    naming the file for anything `validate` would call invalid, and for a
    run with deals missing unless `allow_missing`."""
    try:
        state = runformat.checked_state(manifest.path, allow_missing=allow_missing)
        if not state.sealed:
            raise RunError(f"{manifest.path}: the run has no results yet (no sealed data file)")
        for _, t in runformat.iter_run(manifest.path, state, columns):
            yield t
    except AnalyzerError as e:
        raise _run_error(e) from None


def read_run_table(manifest: RunManifest, columns: Sequence[str] | None = None) -> pa.Table:
    """All rows of one run directory as one Arrow table (checked as `iter_run_tables`)."""
    wanted = list(columns) if columns is not None else [c.name for c in schema.COLUMNS]
    return pa.concat_tables(list(iter_run_tables(manifest, wanted)))


# --- runs -----------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Run:
    """One configuration's results: the rows of one or more run directories."""

    label: str
    manifests: tuple[RunManifest, ...]
    frame: pd.DataFrame

    @property
    def config(self) -> Mapping[str, Any]:
        return self.manifests[0].config

    @property
    def config_hash(self) -> str:
        return self.manifests[0].config_hash

    @property
    def declared(self) -> tuple[tuple[int, int], ...]:
        return merge_ranges(r for m in self.manifests for r in m.declared)

    @property
    def min_cells(self) -> bool:
        return bool(self.config.get("min_cells")) or (
            "min_cells" in self.frame and bool(self.frame["min_cells"].notna().any())
        )

    def missing(self) -> tuple[tuple[int, int], ...]:
        return missing_ranges(self.declared, self.frame["deal_number"].to_numpy())


def _duplicates(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[frame.duplicated(list(ROW_KEY), keep=False)]


def load_runs(
    paths: Sequence[Path | str], *, allow_mixed: bool = False, columns: Sequence[str] | None = None
) -> list[Run]:
    """Reads run directories: one `Run` per configuration, in order of first
    appearance. Raises `RunError` for anything that is not a clean run."""
    if not paths:
        raise RunError("no run directory given")
    manifests = [read_manifest(Path(p)) for p in paths]
    seen: dict[Path, Path] = {}
    for m in manifests:
        key = m.path.resolve()
        if key in seen:
            raise RunError(f"{m.path}: the same run directory is given twice")
        seen[key] = m.path
    groups: dict[str, list[RunManifest]] = {}
    for m in manifests:
        groups.setdefault(m.config_hash, []).append(m)
    if len(groups) > 1 and not allow_mixed:
        described = "; ".join(f"{g[0].path.name}: {describe_config(g[0].config)}" for g in groups.values())
        raise RunError(
            f"the runs have different configurations ({described}); "
            "pass --allow-mixed to compare them side by side"
        )
    cols = list(columns) if columns is not None else None
    if cols is not None:
        cols = [*ROW_KEY, *(c for c in cols if c not in ROW_KEY)]
    runs: list[Run] = []
    labels = [describe_config(g[0].config) for g in groups.values()]
    for group, label in zip(groups.values(), labels, strict=True):
        if labels.count(label) > 1:  # same rules, other limits: name the directory too
            label = f"{label} ({group[0].path.name})"
        table = pa.concat_tables([read_run_table(m, cols) for m in group])
        frame = table.to_pandas()
        dup = _duplicates(frame)
        if len(dup):
            first = dup.sort_values(list(ROW_KEY)).iloc[0]
            where = ", ".join(m.path.name for m in group)
            raise RunError(
                f"{where}: {len(dup)} rows share a deal and number of cells "
                f"(first: deal {int(first['deal_number'])}, {int(first['cells'])} cells); "
                "run `freecell-analyzer validate`"
            )
        frame = frame.sort_values(list(ROW_KEY), kind="stable", ignore_index=True)
        runs.append(Run(label=label, manifests=tuple(group), frame=frame))
    return runs


def load_run(path: Path | str, columns: Sequence[str] | None = None) -> tuple[pd.DataFrame, RunManifest]:
    """Reads one run directory: its rows (one per deal and number of cells,
    sorted by deal then cells) and its metadata."""
    run = load_runs([path], columns=columns)[0]
    return run.frame, run.manifests[0]


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m reports.load DIR...``: what the directories hold."""
    from analyzer.cliframe import run_main

    def add(p: argparse.ArgumentParser) -> None:
        p.add_argument("dirs", nargs="+", type=Path, metavar="DIR", help="run directories")
        p.add_argument("--allow-mixed", action="store_true", help="accept runs of different configurations")

    def handle(args: argparse.Namespace) -> int:
        for run in load_runs(args.dirs, allow_mixed=args.allow_mixed, columns=["outcome"]):
            counts = run.frame["outcome"].value_counts()
            print(f"{run.label}: {len(run.frame)} rows from {', '.join(str(m.path) for m in run.manifests)}")
            print("  " + ", ".join(f"{o} {int(counts.get(o, 0))}" for o in schema.OUTCOMES))
            gaps = run.missing()
            print(f"  missing deals: {format_ranges(gaps) if gaps else 'none'}")
        return 0

    return run_main(
        "python -m reports.load", "Read run directories and say what they hold.", add, handle, argv
    )


if __name__ == "__main__":
    raise SystemExit(main())
