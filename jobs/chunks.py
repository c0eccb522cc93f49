"""Solving a contiguous range of deals into one Arrow table in the schema of
`analyzer.schema`, and re-solving rows with larger budgets (escalation
passes). Pure Python over the engine; no Ray and no files here (the run
directory belongs to `jobs.runformat`), so every function can be called and
tested directly.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import pyarrow as pa
import pyarrow.compute as pc

import analyzer
from analyzer import Limits, SolveResult
from analyzer.schema import arrow_schema, constant_array

from .config import LIMIT_KEYS, Provenance, RunConfig, limits_from_dict, limits_to_dict
from .ranges import DealRange
from .runformat import file_metadata, strings


@dataclass(frozen=True)
class Row:
    """One result row before it becomes Arrow: a search result, and the
    deal's minimum number of cells in min-cells runs."""

    result: SolveResult
    min_cells: int | None = None
    attempts: int = 1
    attempt_history: str | None = None


def _error_result(deal: int, config: RunConfig, cells: int, message: str) -> SolveResult:
    v = config.variant
    return SolveResult(deal, v.name, cells, v.move_rule, "error", error=message)


def _solve_fixed(deals: DealRange, config: RunConfig, cells: int, metadata: Mapping[str, str]) -> pa.Table:
    """One engine batch call for all `deals` at `cells`, its results taken
    as Arrow columns (`analyzer.solve_range_table`: no Python object per
    deal, and no pandas imported).
    Should the call itself fail (it catches panics per deal, so only a bug
    could make it), the deals are retried one by one so that only the
    failing ones become ``error`` rows."""
    v, lim = config.variant, config.limits
    fail = [n for n in config.fail_deals if n in deals]
    try:
        cols = analyzer.solve_range_table(deals.start, deals.end + 1, v, cells=cells, limits=lim, fail_deals=fail)
    except Exception:
        rows: list[Row] = []
        for n in deals.deals():
            try:
                rows += [Row(r) for r in analyzer.solve_range(n, n + 1, v, cells=cells, limits=lim, fail_deals=fail)]
            except Exception as e:
                rows.append(Row(_error_result(n, config, cells, f"{type(e).__name__}: {e}")))
        return results_table(rows, metadata)
    # The columns the engine does not give are the same on every row.
    n = cols.num_rows
    same = {"variant": v.name, "cells": cells, "move_rule": v.move_rule, "min_cells": None, "attempts": 1, "attempt_history": None}
    schema = arrow_schema(dict(metadata))
    given = set(cols.column_names)
    arrays = [cols.column(f.name) if f.name in given else constant_array(f.name, same[f.name], n) for f in schema]
    return pa.Table.from_arrays(arrays, schema=schema)


def _solve_min_cells(deals: DealRange, config: RunConfig) -> list[Row]:
    """`analyzer.min_cells` per deal: rows for every count it searched, in
    order of cells, each carrying the deal's minimum. A failure on a deal
    gives one ``error`` row at the count the search starts from (the
    variant's own)."""
    return [row for n in deals.deals() for row in _solve_min_cells_one(n, config, config.limits)]


def _solve_min_cells_one(n: int, config: RunConfig, limits: Limits) -> list[Row]:
    v = config.variant
    try:
        if n in config.fail_deals:
            raise analyzer.EngineError(f"engine panic: injected failure for deal {n}")
        m = analyzer.min_cells(n, v, max_cells=config.max_cells, limits=limits)
    except Exception as e:
        start_cells = min(max(v.cells, config.cells[0]), config.max_cells)
        return [Row(_error_result(n, config, start_cells, f"{type(e).__name__}: {e}"))]
    return [Row(r, m.min_cells) for r in sorted(m.results, key=lambda r: r.cells)]


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
    "attempts": lambda row: row.attempts,
    "attempt_history": lambda row: row.attempt_history,
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
    meta = file_metadata(config, deals, provenance or Provenance.current())
    if config.min_cells:
        return results_table(_solve_min_cells(deals, config), meta)
    tables = [_solve_fixed(deals, config, k, meta) for k in config.cells]
    if len(tables) == 1:
        return tables[0]
    return pa.concat_tables(tables).sort_by([("deal_number", "ascending"), ("cells", "ascending")])


# ---------------------------------------------------------------------------
# Escalation passes
# ---------------------------------------------------------------------------


def _attempt(limits: Mapping[str, Any], row: Mapping[str, Any]) -> dict[str, Any]:
    return {
        **{k: limits.get(k, 0 if k == "max_disk" else None) for k in LIMIT_KEYS},
        "cells": row["cells"],
        "outcome": row["outcome"],
        "limit_reason": row["limit_reason"],
        "positions_expanded": row["positions_expanded"],
        "peak_bytes": row["peak_bytes"],
        "elapsed_s": row["elapsed_s"],
    }


def last_budgets(row: Mapping[str, Any], config: RunConfig) -> dict[str, Any]:
    """The budgets of a row's last attempt (the run's limits for a first attempt)."""
    if row["attempt_history"]:
        last = json.loads(row["attempt_history"])[-1]
        return limits_to_dict(limits_from_dict(last))
    return limits_to_dict(config.limits)


def retry_rows(rows: Sequence[Mapping[str, Any]], config: RunConfig, limits: Mapping[str, Any]) -> pa.Table:
    """Re-solves `rows` (``limit`` rows of a fixed-cells run) under `limits`;
    the new rows carry ``attempts + 1`` and the history of every attempt."""
    lim = limits_from_dict(limits, config.limits.spill_dir)
    out: list[Row] = []
    v = config.variant
    for r in rows:
        deal, cells = int(r["deal_number"]), int(r["cells"])
        fail = [deal] if deal in config.fail_deals else []
        try:
            (res,) = analyzer.solve_range(deal, deal + 1, v, cells=cells, limits=lim, fail_deals=fail)
        except Exception as e:
            res = _error_result(deal, config, cells, f"{type(e).__name__}: {e}")
        history = json.loads(r["attempt_history"]) if r["attempt_history"] else [_attempt(last_budgets(r, config), r)]
        new = Row(res, attempts=int(r["attempts"]) + 1)
        rec = dict(results_table([new]).to_pylist()[0])
        history.append(_attempt(limits, rec))
        out.append(Row(res, attempts=int(r["attempts"]) + 1, attempt_history=json.dumps(history, separators=(",", ":"))))
    return results_table(out)


def retry_min_cells(rows: Sequence[Mapping[str, Any]], config: RunConfig, limits: Mapping[str, Any]) -> pa.Table:
    """Re-runs `analyzer.min_cells` under `limits` for the deal of `rows`
    (its rows of a min-cells run, one of them ``limit``). The deal's new
    rows replace them all; each carries the deal's earlier attempts (its
    ``limit`` rows, each with its budgets and cells) and then its own, so
    ``attempts`` counts the passes the deal went through."""
    deal = int(rows[0]["deal_number"])
    history: list[dict[str, Any]] = []
    for r in rows:
        if r["outcome"] == "limit":
            history += json.loads(r["attempt_history"]) if r["attempt_history"] else [_attempt(last_budgets(r, config), r)]
    (redone,) = [_solve_min_cells_one(deal, config, limits_from_dict(limits, config.limits.spill_dir))]
    out = []
    for row in redone:
        rec = dict(results_table([row]).to_pylist()[0])
        h = [*history, _attempt(limits, rec)]
        out.append(Row(row.result, row.min_cells, attempts=len(h), attempt_history=json.dumps(h, separators=(",", ":"))))
    return results_table(out)


def needs_retry(rows: Sequence[Mapping[str, Any]], config: RunConfig, limits: Mapping[str, Any]) -> bool:
    """Whether one deal's rows have a ``limit`` row whose last attempt used
    other budgets than `limits` (a pass resumed does not solve a deal again)."""
    return any(r["outcome"] == "limit" and last_budgets(r, config) != dict(limits) for r in rows)


def deals_to_retry(
    tables: Iterable[pa.Table], config: RunConfig, limits: Mapping[str, Any]
) -> list[list[dict[str, Any]]]:
    """Every row of each deal in `tables` (a data file's row groups) that
    `needs_retry`, grouped by deal, in deal order."""
    compute: Any = pc
    out: list[list[dict[str, Any]]] = []
    for t in tables:
        limit = compute.equal(strings(t.column("outcome")), "limit")
        if not compute.any(limit).as_py():
            continue
        deals = compute.unique(t.filter(limit).column("deal_number"))
        rows = t.filter(compute.is_in(t.column("deal_number"), value_set=deals)).to_pylist()
        by_deal: dict[int, list[dict[str, Any]]] = {}
        for r in rows:
            by_deal.setdefault(int(r["deal_number"]), []).append(r)
        out += [v for _, v in sorted(by_deal.items()) if needs_retry(v, config, limits)]
    return out


def retry_deal(
    rows: Sequence[Mapping[str, Any]], config: RunConfig, limits: Mapping[str, Any], provenance: Provenance
) -> pa.Table:
    """Re-solves one deal under `limits`, given all its rows: in a min-cells
    run the whole search again (`retry_min_cells`), else each ``limit`` row
    that `needs_retry` (`retry_rows`). Returns the deal's rows, the others
    unchanged, as a table with the metadata of a part of that one deal."""
    deal = int(rows[0]["deal_number"])
    if config.min_cells:
        t = retry_min_cells(rows, config, limits)
    else:
        todo = [r for r in rows if needs_retry([r], config, limits)]
        keep = [r for r in rows if not needs_retry([r], config, limits)]
        t = pa.concat_tables(
            [
                pa.Table.from_pylist(keep, schema=arrow_schema()),
                retry_rows(todo, config, limits).cast(arrow_schema()),
            ]
        )
        t = t.sort_by([("deal_number", "ascending"), ("cells", "ascending")])
    return t.replace_schema_metadata(file_metadata(config, DealRange(deal, deal), provenance))
