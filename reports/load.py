"""Reading run directories into pandas (docs/DESIGN.md, "Runs on disk").

A run directory holds ``run.json`` (the manifest) and ``chunks/`` with one
Parquet file per chunk of deals. This module reads only those two things, so
reports work on any machine with pandas and pyarrow, without Ray or `jobs`.

Several directories with the same configuration (say a run split over two
machines) are merged into one `Run`; directories with different
configurations are separate runs, to be compared, and are only accepted
when the caller says so (``allow_mixed=True``, ``--allow-mixed``).

>>> parse_deals("1-1000,5000-6000,11982")
((1, 1000), (5000, 6000), (11982, 11982))
>>> format_ranges(((1, 3), (5, 5)))
'1-3,5'
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from analyzer import schema
from analyzer.errors import AnalyzerError, RangeError

RUN_MANIFEST: Final = "run.json"
CHUNK_DIR: Final = "chunks"
#: Complete chunk files; temporary ones start with a dot and never match.
CHUNK_NAME: Final = re.compile(r"^deals-(\d{10})-(\d{10})\.parquet$")
#: Parquet file metadata keys written on every chunk (DESIGN.md).
META_CONFIG: Final = "fca.config"
META_CONFIG_HASH: Final = "fca.config_hash"
#: Largest Microsoft deal number (DESIGN.md, "Deal generator note").
MAX_DEAL: Final = 2**33 - 1
#: The key of a row: one per deal and number of cells (DESIGN.md, "Rows").
ROW_KEY: Final = ("deal_number", "cells")


class RunError(AnalyzerError):
    """A directory that is not a readable run, or runs that do not go together."""


# --- deal ranges -----------------------------------------------------------------


def parse_deals(text: str) -> tuple[tuple[int, int], ...]:
    """Parses a deal set such as ``1-32000`` or ``1-1000,5000-6000`` into
    sorted, merged, inclusive ranges."""
    ranges: list[tuple[int, int]] = []
    for part in str(text).split(","):
        m = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", part)
        if not m:
            raise RangeError(f"deal range {text!r}: {part!r} is not a deal number or a range like 1-32000")
        a = int(m.group(1))
        b = int(m.group(2)) if m.group(2) is not None else a
        if not 1 <= a <= b <= MAX_DEAL:
            raise RangeError(f"deal range {text!r}: {part.strip()!r} is not within 1..{MAX_DEAL} in order")
        ranges.append((a, b))
    return merge_ranges(ranges)


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
    """The inverse of `parse_deals`."""
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
    """One invocation of the run command (resumes add one)."""

    started_at: str
    finished_at: str
    wall_s: float
    status: str


@dataclass(frozen=True)
class RunManifest:
    """A parsed ``run.json``; `raw` keeps its bytes for the published copy."""

    path: Path
    raw: bytes
    schema_version: str
    package_version: str
    engine_version: str
    git_commit: str
    config: Mapping[str, Any]
    config_hash: str
    deals: str
    chunk_size: int | None
    command: tuple[str, ...]
    invocations: tuple[Invocation, ...]

    @property
    def declared(self) -> tuple[tuple[int, int], ...]:
        return parse_deals(self.deals)

    @property
    def wall_s(self) -> float:
        return sum(i.wall_s for i in self.invocations)


def _variant_of(config: Mapping[str, Any]) -> Mapping[str, Any]:
    v = config.get("variant", {})
    return v if isinstance(v, Mapping) else {}


def config_cells(config: Mapping[str, Any]) -> tuple[int, ...]:
    """The numbers of cells a configuration tries."""
    cells = config.get("cells")
    if isinstance(cells, list) and cells:
        return tuple(int(c) for c in cells)
    return (int(_variant_of(config).get("cells", 4)),)


def cells_phrase(k: int) -> str:
    """``1 cell``, ``4 cells``."""
    return f"{k} cell" if k == 1 else f"{k} cells"


def describe_config(config: Mapping[str, Any]) -> str:
    """A short human label, e.g. ``freecell, 4 cells, product``.

    >>> describe_config({"variant": {"name": "freecell", "move_rule": "product"}, "cells": [0, 1, 2, 3],
    ...                  "min_cells": True})
    'freecell, min cells 0-3, product'
    """
    v = _variant_of(config)
    cells = config_cells(config)
    if len(cells) == 1:
        cells_text = cells_phrase(cells[0])
    else:
        ranges = format_ranges(merge_ranges((c, c) for c in cells)).replace(",", ", ")
        cells_text = f"{'min cells' if config.get('min_cells') else 'cells'} {ranges}"
    return f"{v.get('name', '?')}, {cells_text}, {v.get('move_rule', '?')}"


def read_manifest(run_dir: Path) -> RunManifest:
    """Reads ``run_dir/run.json``, raising `RunError` with a clear message."""
    run_dir = Path(run_dir)
    if not run_dir.exists():
        raise RunError(f"{run_dir}: no such directory")
    if not run_dir.is_dir():
        raise RunError(
            f"{run_dir}: not a directory (expected a run directory with {RUN_MANIFEST} and {CHUNK_DIR}/)"
        )
    if not any(run_dir.iterdir()):
        raise RunError(
            f"{run_dir}: the directory is empty, not a run (expected {RUN_MANIFEST} and {CHUNK_DIR}/)"
        )
    path = run_dir / RUN_MANIFEST
    if not path.is_file():
        raise RunError(
            f"{run_dir}: not a run directory (no {RUN_MANIFEST}; expected {RUN_MANIFEST} and {CHUNK_DIR}/)"
        )
    raw = path.read_bytes()
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as e:
        raise RunError(f"{path}: not valid JSON ({e})") from None
    if not isinstance(data, dict):
        raise RunError(f"{path}: expected a JSON object")
    for key in ("config", "config_hash", "deals"):
        if key not in data:
            raise RunError(f"{path}: the manifest has no {key!r} field")
    if not isinstance(data["config"], dict):
        raise RunError(f"{path}: 'config' must be an object")
    invocations: list[Invocation] = []
    for entry in data.get("runs") or []:
        if isinstance(entry, dict):
            invocations.append(
                Invocation(
                    started_at=str(entry.get("started_at") or ""),
                    finished_at=str(entry.get("finished_at") or ""),
                    wall_s=float(entry.get("wall_s") or 0.0),
                    status=str(entry.get("status") or ""),
                )
            )
    try:
        parse_deals(str(data["deals"]))
    except RangeError as e:
        raise RunError(f"{path}: 'deals': {e}") from None
    chunk_size = data.get("chunk_size")
    return RunManifest(
        path=run_dir,
        raw=raw,
        schema_version=str(data.get("schema_version", "")),
        package_version=str(data.get("package_version", "")),
        engine_version=str(data.get("engine_version", "")),
        git_commit=str(data.get("git_commit") or ""),
        config=data["config"],
        config_hash=str(data["config_hash"]),
        deals=str(data["deals"]),
        chunk_size=int(chunk_size) if chunk_size is not None else None,
        command=tuple(str(a) for a in data.get("command") or ()),
        invocations=tuple(invocations),
    )


# --- chunks ---------------------------------------------------------------------


def chunk_files(run_dir: Path) -> list[Path]:
    """The complete chunk files of a run, in deal order (temporary files ignored)."""
    d = Path(run_dir) / CHUNK_DIR
    if not d.is_dir():
        return []
    return sorted(p for p in d.iterdir() if CHUNK_NAME.match(p.name) and p.is_file())


def read_run_table(manifest: RunManifest, columns: Sequence[str] | None = None) -> pa.Table:
    """All complete chunks of one run directory as one Arrow table.

    Every chunk must carry the run's configuration hash, and its hash must be
    the sha256 of its configuration text (DESIGN.md, Parquet metadata).
    """
    files = chunk_files(manifest.path)
    if not files:
        raise RunError(
            f"{manifest.path}: the run has no results yet ({CHUNK_DIR}/ holds no complete chunk file)"
        )
    wanted = list(columns) if columns is not None else [c.name for c in schema.COLUMNS]
    expected = {c.name: c for c in schema.COLUMNS}
    tables: list[pa.Table] = []
    for f in files:
        try:
            pf = pq.ParquetFile(f)
        except (OSError, pa.ArrowException) as e:
            raise RunError(
                f"{f}: not a readable Parquet file ({e}); run `freecell-analyzer validate`"
            ) from None
        meta = {k.decode(): v.decode() for k, v in (pf.schema_arrow.metadata or {}).items()}
        chunk_hash = meta.get(META_CONFIG_HASH, "")
        if chunk_hash != manifest.config_hash:
            raise RunError(
                f"{f}: configuration hash {chunk_hash[:12] or '(none)'} differs from run.json's "
                f"{manifest.config_hash[:12]}: the directory mixes configurations"
            )
        config_text = meta.get(META_CONFIG, "")
        if hashlib.sha256(config_text.encode()).hexdigest() != chunk_hash:
            raise RunError(
                f"{f}: {META_CONFIG_HASH} is not the sha256 of {META_CONFIG}; the file was altered"
            )
        names = set(pf.schema_arrow.names)
        lacking = [c for c in wanted if c not in names]
        if lacking:
            raise RunError(
                f"{f}: no column {', '.join(lacking)} (schema version {meta.get('fca.schema_version')!r})"
            )
        for name in wanted:
            if pf.schema_arrow.field(name).type != expected[name].type:
                raise RunError(
                    f"{f}: column {name} has type {pf.schema_arrow.field(name).type}, expected {expected[name].type}"
                )
        try:
            table = pf.read(columns=wanted)
        except (OSError, pa.ArrowException) as e:
            raise RunError(f"{f}: cannot read ({e}); run `freecell-analyzer validate`") from None
        tables.append(table.replace_schema_metadata(None))
    return pa.concat_tables(tables)


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


def load_run(path: Path | str, columns: Sequence[str] | None = None) -> Run:
    """Reads one run directory."""
    return load_runs([path], columns=columns)[0]


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
