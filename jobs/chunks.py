"""Chunks: solving a contiguous range of deals into one Arrow table, writing it
as one Parquet file atomically, and finding which chunk files of a run
directory are complete and valid. Pure Python over the engine; no Ray here,
so every function can be called and tested directly.

A chunk file is ``chunks/deals-<start>-<end>.parquet`` (inclusive, 10 digits);
it is written as ``chunks/.deals-<start>-<end>.<token>.parquet.tmp`` and
renamed into place when complete (docs/DESIGN.md, "Runs on disk"). The
leading dot hides temporary files from pyarrow.dataset, pandas and DuckDB;
the random token keeps two writers of the same chunk (a retried task and a
slow original, or a killed driver's last task) from writing one file.

>>> chunk_name(DealRange(1, 1000))
'deals-0000000001-0000001000.parquet'
>>> parse_chunk_name("deals-0000000001-0000001000.parquet")
DealRange(1, 1000)
"""

from __future__ import annotations

import collections
import hashlib
import os
import re
import secrets
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import pyarrow as pa
import pyarrow.parquet as pq

import analyzer
from analyzer import SolveResult
from analyzer.schema import OUTCOMES, SCHEMA_VERSION, arrow_schema

from .config import Provenance, RunConfig
from .ranges import DealRange, merge

#: Subdirectory of a run directory that holds the chunk files.
CHUNKS_DIR: Final = "chunks"

_NAME = re.compile(r"deals-(\d{10})-(\d{10})\.parquet")
_TEMP = re.compile(r"\.deals-.*\.tmp")

#: File (key-value) metadata keys on every chunk (DESIGN.md, "Runs on disk").
META_KEYS: Final = (
    "fca.schema_version",
    "fca.package_version",
    "fca.engine_version",
    "fca.git_commit",
    "fca.config",
    "fca.config_hash",
    "fca.deal_start",
    "fca.deal_end",
)



def chunk_name(deals: DealRange) -> str:
    """The file name of the chunk holding `deals`."""
    return f"deals-{deals.start:010d}-{deals.end:010d}.parquet"


def parse_chunk_name(name: str) -> DealRange | None:
    """The deals a chunk file name claims, or ``None`` if it is not one."""
    m = _NAME.fullmatch(name)
    if m is None:
        return None
    start, end = int(m.group(1)), int(m.group(2))
    if not 1 <= start <= end:
        return None
    try:
        return DealRange(start, end)
    except analyzer.RangeError:
        return None


def chunk_metadata(config: RunConfig, deals: DealRange, provenance: Provenance) -> dict[str, str]:
    """The Parquet file metadata of one chunk (all values are strings)."""
    return {
        "fca.schema_version": SCHEMA_VERSION,
        "fca.package_version": provenance.package_version,
        "fca.engine_version": provenance.engine_version,
        "fca.git_commit": provenance.git_commit,
        "fca.config": config.canonical_json(),
        "fca.config_hash": config.config_hash(),
        "fca.deal_start": str(deals.start),
        "fca.deal_end": str(deals.end),
    }


# ---------------------------------------------------------------------------
# Solving
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    """One result row before it becomes Arrow: a search result, and the
    deal's minimum number of cells in min-cells runs."""

    result: SolveResult
    min_cells: int | None = None


def _error_result(deal: int, config: RunConfig, cells: int, message: str) -> SolveResult:
    v = config.variant
    return SolveResult(deal, v.name, cells, v.move_rule, "error", error=message)


def _solve_fixed(deals: DealRange, config: RunConfig, cells: int) -> list[Row]:
    """One engine batch call for all `deals` at `cells`. Should the call
    itself fail (it catches panics per deal, so only a bug could make it),
    the deals are retried one by one so that only the failing ones become
    ``error`` rows."""
    v, lim = config.variant, config.limits
    fail = [n for n in config.fail_deals if n in deals]
    try:
        results = analyzer.solve_range(deals.start, deals.end + 1, v, cells=cells, limits=lim, fail_deals=fail)
    except Exception:
        results = []
        for n in deals.deals():
            try:
                results += analyzer.solve_range(n, n + 1, v, cells=cells, limits=lim, fail_deals=fail)
            except Exception as e:
                results.append(_error_result(n, config, cells, f"{type(e).__name__}: {e}"))
    return [Row(r) for r in results]


def _solve_min_cells(deals: DealRange, config: RunConfig) -> list[Row]:
    """`analyzer.min_cells` per deal: rows for every count it tried, each
    carrying the deal's minimum. A failure on a deal gives one ``error`` row
    at the count the search starts from (the variant's own)."""
    v = config.variant
    start_cells = min(max(v.cells, config.cells[0]), config.max_cells)
    rows: list[Row] = []
    for n in deals.deals():
        try:
            if n in config.fail_deals:
                raise analyzer.EngineError(f"engine panic: injected failure for deal {n}")
            m = analyzer.min_cells(n, v, max_cells=config.max_cells, limits=config.limits)
        except Exception as e:
            rows.append(Row(_error_result(n, config, start_cells, f"{type(e).__name__}: {e}")))
            continue
        rows += [Row(r, m.min_cells) for r in m.results]
    return rows


#: How each column of `analyzer.schema.COLUMNS` is read off a row. The
#: schema owns the names, types and order; this only says where the values
#: come from, and `results_table` refuses a schema it does not cover.
_VALUES: Final[Mapping[str, Callable[[Row], object]]] = {
    "deal_number": lambda row: row.result.deal_number,
    "variant": lambda row: row.result.variant,
    "cells": lambda row: row.result.cells,
    "move_rule": lambda row: row.result.move_rule,
    "outcome": lambda row: row.result.outcome,
    "limit_reason": lambda row: row.result.limit_reason,
    "solution_length_single": lambda row: row.result.solution_length_single,
    "solution_length_multi": lambda row: row.result.solution_length_multi,
    "solution": lambda row: " ".join(row.result.solution) if row.result.outcome == "solved" else None,
    "positions_expanded": lambda row: row.result.positions_expanded,
    "positions_stored": lambda row: row.result.positions_stored,
    "peak_bytes": lambda row: row.result.peak_bytes,
    "elapsed_s": lambda row: row.result.elapsed_s,
    "min_cells": lambda row: row.min_cells,
    "error": lambda row: row.result.error,
}


def results_table(rows: Iterable[Row], metadata: Mapping[str, str] | None = None) -> pa.Table:
    """The Arrow table of `rows` with `analyzer.schema.arrow_schema`, sorted
    by deal and cells so that equal inputs give equal tables."""
    schema = arrow_schema(dict(metadata) if metadata else None)
    unknown = [f.name for f in schema if f.name not in _VALUES]
    if unknown:
        raise KeyError(f"analyzer.schema has columns jobs.chunks does not fill: {', '.join(unknown)}")
    ordered = sorted(rows, key=lambda row: (row.result.deal_number or 0, row.result.cells))
    arrays = [pa.array([_VALUES[f.name](row) for row in ordered], type=f.type) for f in schema]
    return pa.Table.from_arrays(arrays, schema=schema)


def solve_chunk(
    start: int,
    end_inclusive: int,
    config: RunConfig,
    provenance: Provenance | None = None,
) -> pa.Table:
    """Solves deals ``start..end_inclusive`` under `config` and returns the
    chunk's table, file metadata included.

    Fixed cells: one engine batch call (GIL released) per cell count.
    Min-cells: `analyzer.min_cells` per deal. Per-deal failures become
    ``error`` rows; budgets that run out become ``limit`` rows.

    >>> from jobs.config import build_config
    >>> t = solve_chunk(1, 3, build_config(cells="3-4"))
    >>> t.num_rows, t.column("outcome").to_pylist()
    (6, ['solved', 'solved', 'solved', 'solved', 'solved', 'solved'])
    >>> t.schema.metadata[b"fca.deal_end"]
    b'3'
    """
    deals = DealRange(start, end_inclusive)
    if config.min_cells:
        rows = _solve_min_cells(deals, config)
    else:
        rows = [row for k in config.cells for row in _solve_fixed(deals, config, k)]
    prov = provenance or Provenance.current()
    return results_table(rows, chunk_metadata(config, deals, prov))


# ---------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_chunk(directory: Path | str, table: pa.Table) -> Path:
    """Writes `table` (from :func:`solve_chunk`) into ``directory/chunks``:
    to a temporary dot-file first, fsynced, then renamed into place, so a
    chunk file either is complete or does not exist. Returns its path.
    Rewriting an existing chunk replaces it atomically."""
    meta = table.schema.metadata or {}
    try:
        deals = DealRange(int(meta[b"fca.deal_start"]), int(meta[b"fca.deal_end"]))
    except (KeyError, ValueError) as e:
        raise ValueError(f"table has no chunk metadata (fca.deal_start/fca.deal_end): {e}") from e
    chunks = Path(directory) / CHUNKS_DIR
    chunks.mkdir(parents=True, exist_ok=True)
    final = chunks / chunk_name(deals)
    tmp = chunks / f".{final.stem}.{secrets.token_hex(4)}.parquet.tmp"
    try:
        with open(tmp, "wb") as f:
            # zstd (DESIGN.md); page checksums so that a corrupted chunk is
            # caught when read instead of yielding wrong rows.
            pq.write_table(table, f, compression="zstd", write_page_checksum=True)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, final)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(chunks)
    return final


def read_chunk(path: Path | str, columns: Sequence[str] | None = None) -> pa.Table:
    """Reads a chunk file, verifying page checksums."""
    pf = pq.ParquetFile(path, page_checksum_verification=True)
    return pf.read(columns=list(columns) if columns is not None else None)


# ---------------------------------------------------------------------------
# Scanning
# ---------------------------------------------------------------------------


class ChunkInvalid(Exception):
    """Why a chunk file cannot be used (internal; reported, never raised to users)."""


@dataclass(frozen=True)
class ChunkInfo:
    """A complete, valid chunk file."""

    path: Path
    deals: DealRange
    rows: int
    outcomes: Mapping[str, int]
    metadata: Mapping[str, str]

    @property
    def config_hash(self) -> str:
        return self.metadata["fca.config_hash"]


@dataclass(frozen=True)
class BadChunk:
    """A chunk file that is not complete and valid, and why."""

    path: Path
    deals: DealRange | None
    reason: str


@dataclass
class Scan:
    """What a run directory's ``chunks/`` holds."""

    complete: list[ChunkInfo] = field(default_factory=list)
    bad: list[BadChunk] = field(default_factory=list)
    temp_files: list[Path] = field(default_factory=list)
    other_files: list[Path] = field(default_factory=list)

    def covered(self) -> tuple[DealRange, ...]:
        """Deals with rows in a complete chunk."""
        return merge(c.deals for c in self.complete)

    def outcome_counts(self) -> dict[str, int]:
        """Rows per outcome over the complete chunks, every outcome listed."""
        total = dict.fromkeys(OUTCOMES, 0)
        for c in self.complete:
            for k, n in c.outcomes.items():
                total[k] = total.get(k, 0) + n
        return total

    def rows(self) -> int:
        return sum(c.rows for c in self.complete)

    def overlaps(self) -> list[tuple[ChunkInfo, ChunkInfo]]:
        """Pairs of complete chunks that share deals (each deal's rows would
        then appear twice in the dataset)."""
        out = []
        ordered = sorted(self.complete, key=lambda c: c.deals)
        reach: ChunkInfo | None = None
        for c in ordered:
            if reach is not None and c.deals.start <= reach.deals.end:
                out.append((reach, c))
            if reach is None or c.deals.end > reach.deals.end:
                reach = c
        return out


def file_metadata(path: Path | str) -> dict[str, str]:
    """The key-value metadata of a Parquet file, decoded."""
    raw = pq.read_metadata(path).metadata or {}
    return {k.decode(errors="replace"): v.decode(errors="replace") for k, v in raw.items()}


def check_chunk(path: Path, config: RunConfig | None = None) -> ChunkInfo:
    """Reads a whole chunk file and checks it against its name and, when
    given, the run's configuration: metadata keys, schema, configuration
    hash, deal range, and exactly the expected rows (one per deal and cell
    count; at least one per deal in min-cells runs). Raises `ChunkInvalid`."""
    return load_chunk(path, config)[0]


def load_chunk(path: Path, config: RunConfig | None = None) -> tuple[ChunkInfo, pa.Table]:
    """:func:`check_chunk`, also returning the table it read."""
    deals = parse_chunk_name(path.name)
    if deals is None:
        raise ChunkInvalid(f"{path.name} is not a chunk file name")
    try:
        table = read_chunk(path)
    except (OSError, pa.ArrowException, ValueError) as e:
        raise ChunkInvalid(f"unreadable ({type(e).__name__}: {e})") from e
    meta = {k.decode(errors="replace"): v.decode(errors="replace") for k, v in (table.schema.metadata or {}).items()}
    missing = [k for k in META_KEYS if k not in meta]
    if missing:
        raise ChunkInvalid(f"metadata keys missing: {', '.join(missing)}")
    if meta["fca.schema_version"] != SCHEMA_VERSION:
        raise ChunkInvalid(f"schema version {meta['fca.schema_version']!r}, expected {SCHEMA_VERSION!r}")
    if not table.schema.remove_metadata().equals(arrow_schema(), check_metadata=True):
        raise ChunkInvalid("columns differ from analyzer.schema")
    if hashlib.sha256(meta["fca.config"].encode()).hexdigest() != meta["fca.config_hash"]:
        raise ChunkInvalid("fca.config_hash is not the sha256 of fca.config")
    if config is not None and meta["fca.config_hash"] != config.config_hash():
        raise ChunkInvalid(
            f"configuration {meta['fca.config_hash'][:12]} differs from the run's {config.config_hash()[:12]}"
        )
    if (meta["fca.deal_start"], meta["fca.deal_end"]) != (str(deals.start), str(deals.end)):
        raise ChunkInvalid(
            f"metadata says deals {meta['fca.deal_start']}-{meta['fca.deal_end']}, the file name {deals}"
        )
    _check_rows(table, deals, config)
    outcomes = collections.Counter(str(o) for o in table.column("outcome").to_pylist())
    return ChunkInfo(path, deals, table.num_rows, dict(outcomes), meta), table


def _check_rows(table: pa.Table, deals: DealRange, config: RunConfig | None) -> None:
    numbers = table.column("deal_number").to_pylist()
    cells = table.column("cells").to_pylist()
    keys = list(zip(numbers, cells, strict=True))
    if keys != sorted(keys):
        raise ChunkInvalid("rows are not sorted by deal and cells")
    if len(set(keys)) != len(keys):
        dup = next(k for k, n in collections.Counter(keys).items() if n > 1)
        raise ChunkInvalid(f"deal {dup[0]} with {dup[1]} cells appears more than once")
    outside = [n for n in numbers if n not in deals]
    if outside:
        raise ChunkInvalid(f"deal {outside[0]} is outside the chunk's range {deals}")
    seen = set(numbers)
    if len(seen) != len(deals):
        absent = next(n for n in deals.deals() if n not in seen)
        raise ChunkInvalid(f"{len(deals) - len(seen)} deals have no row (first: {absent})")
    if config is None:
        return
    allowed = set(config.cells)
    wrong = [k for k in cells if k not in allowed]
    if wrong:
        raise ChunkInvalid(f"a row has {wrong[0]} cells, not one of the run's {sorted(allowed)}")
    per = config.rows_per_deal()
    if per is not None and len(keys) != per * len(deals):
        raise ChunkInvalid(f"{len(keys)} rows, expected {per * len(deals)} ({len(deals)} deals x {per} cell counts)")


def _entries(chunks: Path) -> Iterator[os.DirEntry[str]]:
    try:
        with os.scandir(chunks) as it:
            yield from it
    except FileNotFoundError:
        return


def scan(
    directory: Path | str,
    config: RunConfig | None = None,
    *,
    remove_temp: bool = False,
    visit: Callable[[ChunkInfo, pa.Table], None] | None = None,
) -> Scan:
    """Finds the complete, valid chunk files of a run directory (reading each
    one fully), the bad ones with a reason, and stray temporary files, which
    are deleted when `remove_temp` (a resuming run; never while another run
    writes into the same directory). `visit` sees each valid chunk's table
    (``validate`` checks rows without reading files twice)."""
    result = Scan()
    chunks = Path(directory) / CHUNKS_DIR
    for entry in sorted(_entries(chunks), key=lambda e: e.name):
        path = Path(entry.path)
        if _TEMP.fullmatch(entry.name):
            result.temp_files.append(path)
            if remove_temp:
                path.unlink(missing_ok=True)
            continue
        deals = parse_chunk_name(entry.name)
        if deals is None or not entry.is_file():
            result.other_files.append(path)
            continue
        try:
            info, table = load_chunk(path, config)
        except ChunkInvalid as e:
            result.bad.append(BadChunk(path, deals, str(e)))
            continue
        result.complete.append(info)
        if visit is not None:
            visit(info, table)
    return result
