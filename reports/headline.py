"""The headline of a run: the answer first, counted in deals.

One implementation for every place that opens with the answer (the report
page, the dataset card, ``run``'s closing summary, ``status``):
`headline_text` takes the result rows of one run as an Arrow table and
returns the lines to print. It needs only pyarrow (a core dependency), not
pandas, so ``status`` works without the ``reports`` extra.

Counting is by deal, whatever the row shape: a run of one cell count has one
row per deal; ``--cells 0-5`` has one row per deal and count; a min-cells run
may carry one row per count tried or one row per deal with its minimum. The
per-deal view (`deal_cells`) says, for every deal and every count of cells
the run asked about, whether the deal is won, proved unsolvable, or open,
and whether that was *proved* by a row of its own or *inferred*: a deal won
with k cells is won with more, and a deal that cannot be won with k cells
cannot be won with fewer.

Percentages carry enough digits that neither a share nor its complement
rounds to 0 or 100: one unsolvable deal in 32,000 reads 0.0031 %, the
solved ones 99.9969 %.

>>> share_text(1, 32000), share_text(31999, 32000)
('0.0031 %', '99.9969 %')
>>> share_text(8, 1_000_000), share_text(0, 5), share_text(5, 5)
('0.00080 %', '0 %', '100 %')
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as _compute

#: pyarrow's stubs type each compute function per array type; this module
#: mixes chunked and plain arrays of several types, so it calls them untyped.
pc: Any = _compute

#: Outcomes of one search (analyzer.schema.OUTCOMES), in the order shown.
OUTCOMES: Final = ("solved", "unsolvable", "limit", "error")
#: How a deal's outcome at a count of cells is known.
PROVED: Final = "proved"
INFERRED: Final = "inferred"
#: A count of cells the run asked about but never reached for this deal.
NOT_TRIED: Final = "not tried"
#: The columns a headline reads (`headline_text` takes a table of these).
HEADLINE_COLUMNS: Final = ("deal_number", "cells", "outcome", "limit_reason", "error", "min_cells")
#: Deals listed in a headline before "... and N more".
SHOW_DEALS: Final = 20
#: Most decimals a percentage gets (one deal in 8.6 milliard needs 11).
MAX_DECIMALS: Final = 12


# --- percentages -----------------------------------------------------------------


def percent_decimals(share: float) -> int:
    """Decimals that show `share` (0..1) as a percentage with two significant
    digits on the smaller of the share and its complement, at least one.

    >>> percent_decimals(0.5), percent_decimals(1 / 32000), percent_decimals(0.999)
    (1, 4, 2)
    """
    if not 0.0 < share < 1.0 or math.isnan(share):
        return 0
    smaller = 100.0 * min(share, 1.0 - share)
    return min(MAX_DECIMALS, max(1, 1 - math.floor(math.log10(smaller))))


def percent_text(share: float, decimals: int | None = None) -> str:
    """A share (0..1) as a percentage that never rounds to 0 or 100 unless it is.

    `decimals` forces a number of decimals (a table column uses the most any
    of its cells needs); exact 0 and 1 print as ``0 %`` and ``100 %``.

    >>> percent_text(0.25), percent_text(1 / 3, 3), percent_text(1.0)
    ('25.0 %', '33.333 %', '100 %')
    """
    if math.isnan(share):
        return ""
    if share <= 0.0:
        return "0 %"
    if share >= 1.0:
        return "100 %"
    d = percent_decimals(share) if decimals is None else max(decimals, percent_decimals(share))
    return f"{100.0 * share:.{d}f} %"


def share_text(count: int, total: int) -> str:
    """``count`` of ``total`` as a percentage (`percent_text`)."""
    if total <= 0:
        return ""
    if count == 0:
        return "0 %"
    if count == total:
        return "100 %"
    return percent_text(count / total)


def count_share(count: int, total: int) -> str:
    """``1 (0.0031 %)``; ``0`` alone."""
    return f"{count:,}" if count == 0 else f"{count:,} ({share_text(count, total)})"


# --- deal ranges -----------------------------------------------------------------


def deal_ranges(deals: Iterable[int]) -> str:
    """Sorted deal numbers as ranges: ``1-3,7``.

    >>> deal_ranges([3, 1, 2, 7])
    '1-3,7'
    """
    out: list[str] = []
    run: list[int] = []
    for d in sorted(set(deals)):
        if run and d == run[-1] + 1:
            run.append(d)
            continue
        if run:
            out.append(str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}")
        run = [d]
    if run:
        out.append(str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}")
    return ",".join(out)


def listing(items: Sequence[str], *, show: int = SHOW_DEALS, more: str = "") -> str:
    """``a, b, c`` or ``a, b, ... (first 20 of 199; all in unsolvable.csv)``."""
    if not items:
        return "none"
    if len(items) <= show:
        return ", ".join(items)
    where = f"; all in {more}" if more else ""
    return ", ".join(items[:show]) + f", ... (first {show:,} of {len(items):,}{where})"


# --- the per-deal view -------------------------------------------------------------


def _table(columns: Mapping[str, Any]) -> pa.Table:
    return pa.table(dict(columns))


def _values(column: Any) -> list[Any]:
    """A column as Python values (ints, strings, None)."""
    return list(column.to_pylist())


def _strings(col: Any) -> Any:
    """A dictionary (categorical) column as plain strings."""
    if pa.types.is_dictionary(col.type):
        return pc.cast(col, pa.string())
    return col


def _column(table: pa.Table, name: str, type_: Any) -> Any:
    if name in table.column_names:
        return pc.cast(_strings(table[name]), type_)
    return pa.nulls(len(table), type=type_)


#: Codes of `OUTCOMES` in the arrays below; -1 is "no row" (not tried).
_CODE: Final = {o: i for i, o in enumerate(OUTCOMES)}
_NONE: Final = -1
#: Larger than any number of cells.
_BIG: Final = 1 << 30


class _Deals:
    """One run's rows folded per deal once: the arrays every per-deal view
    reads (numpy over the whole run; no per-row Python)."""

    def __init__(self, table: pa.Table) -> None:
        n_rows = len(table)
        self.rows = table
        deal = np.asarray(
            pc.cast(table["deal_number"], pa.int64()).to_numpy(zero_copy_only=False), dtype=np.int64
        )
        self.cells = np.asarray(
            pc.cast(table["cells"], pa.int64()).to_numpy(zero_copy_only=False), dtype=np.int64
        )
        outcome = _column(table, "outcome", pa.string())
        codes = pc.fill_null(pc.index_in(outcome, value_set=pa.array(OUTCOMES)), _NONE)
        self.code = np.asarray(codes.to_numpy(zero_copy_only=False), dtype=np.int64)
        self.limit_reason = _column(table, "limit_reason", pa.string())
        self.error = _column(table, "error", pa.string())
        mins = _column(table, "min_cells", pa.int64())
        self.deals, self.index = np.unique(deal, return_inverse=True)
        n = len(self.deals)
        self.solved_from = np.full(n, _BIG, dtype=np.int64)
        solved = self.code == _CODE["solved"]
        np.minimum.at(self.solved_from, self.index[solved], self.cells[solved])
        self.unsolvable_to = np.full(n, -1, dtype=np.int64)
        lost = self.code == _CODE["unsolvable"]
        np.maximum.at(self.unsolvable_to, self.index[lost], self.cells[lost])
        self.minimum = np.full(n, _BIG, dtype=np.int64)
        valid = (
            np.asarray(pc.is_valid(mins).to_numpy(zero_copy_only=False), dtype=bool)
            if n_rows
            else np.zeros(0, bool)
        )
        if valid.any():
            values = np.asarray(pc.fill_null(mins, 0).to_numpy(zero_copy_only=False), dtype=np.int64)
            np.minimum.at(self.minimum, self.index[valid], values[valid])

    def at(self, k: int) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """Per deal at `k` cells: outcome code, how (0 proved, 1 inferred, -1 not
        tried) and the row whose limit or error stands (-1 when none)."""
        n = len(self.deals)
        row_code = np.full(n, _NONE, dtype=np.int64)
        row_at = np.full(n, -1, dtype=np.int64)
        here = np.flatnonzero(self.cells == k)
        row_code[self.index[here]] = self.code[here]
        row_at[self.index[here]] = here
        has_min = self.minimum != _BIG
        won = (self.solved_from <= k) | (has_min & (self.minimum <= k))
        lost = (self.unsolvable_to >= k) | (has_min & (self.minimum > k))
        proof = (row_code == _CODE["solved"]) | (row_code == _CODE["unsolvable"])
        code = np.where(
            proof, row_code, np.where(won, _CODE["solved"], np.where(lost, _CODE["unsolvable"], row_code))
        )
        how = np.where(proof, 0, np.where(won | lost, 1, np.where(row_code != _NONE, 0, -1)))
        stands = np.where(proof | won | lost, -1, row_at)
        return code, how, stands


def _named(codes: npt.NDArray[np.int64], names: Sequence[str]) -> Any:
    """Codes as a string array; negative codes are null."""
    mask = codes < 0
    indices: Any = pa.array(np.where(mask, 0, codes).astype(np.int32), mask=mask)
    return pc.cast(pa.DictionaryArray.from_arrays(indices, pa.array(list(names))), pa.string())


def _taken(column: Any, rows: npt.NDArray[np.int64]) -> Any:
    mask = rows < 0
    return (
        pc.take(column, pa.array(np.where(mask, 0, rows), mask=mask))
        if len(column)
        else pa.nulls(len(rows), pa.string())
    )


def _grid(d: _Deals, counts: Sequence[int]) -> pa.Table:
    parts: list[pa.Table] = []
    n = len(d.deals)
    for k in counts:
        code, how, stands = d.at(k)
        parts.append(
            _table(
                {
                    "deal_number": pa.array(d.deals, pa.int64()),
                    "cells": pa.array(np.full(n, k, dtype=np.int64)),
                    "outcome": _named(code, OUTCOMES),
                    "how": _named(how, (PROVED, INFERRED)),
                    "limit_reason": _taken(d.limit_reason, stands),
                    "error": _taken(d.error, stands),
                }
            )
        )
    if not parts:
        empty = {c: pa.array([], pa.int64()) for c in ("deal_number", "cells")}
        return _table(
            {**empty, **{c: pa.array([], pa.string()) for c in ("outcome", "how", "limit_reason", "error")}}
        )
    return pa.concat_tables(parts).combine_chunks()


def _counts_of(table: pa.Table, cells: Sequence[int] | None) -> list[int]:
    return sorted({int(k) for k in (cells if cells is not None else _values(pc.unique(table["cells"])))})


def deal_cells(table: pa.Table, cells: Sequence[int] | None = None) -> pa.Table:
    """Every deal at every count of `cells` (default: the counts in `table`):
    ``deal_number, cells, outcome, how, limit_reason, error``, sorted by
    cells, then deal.

    `outcome` is solved / unsolvable / limit / error, or null when the count
    was never reached for the deal; `how` is ``proved`` (a row at that count
    says so) or ``inferred`` (from a row at another count or from the deal's
    minimum number of cells), null when not tried. A row's own limit or
    error is kept only when no inference settles the count.
    """
    return _grid(_Deals(table), _counts_of(table, cells))


def _minimum(d: _Deals, counts: Sequence[int]) -> pa.Table:
    top = max(counts) if counts else 0
    code, _, _ = d.at(top)
    found = d.minimum != _BIG
    status = np.where(found, 0, np.where(code == _CODE["unsolvable"], 1, 2))
    return _table(
        {
            "deal_number": pa.array(d.deals, pa.int64()),
            "min_cells": pa.array(d.minimum, pa.int64(), mask=~found),
            "status": _named(status, ("found", "above", "undetermined")),
        }
    )


def deal_minimum(table: pa.Table, cells: Sequence[int]) -> pa.Table:
    """One row per deal of a min-cells run: ``deal_number, min_cells, status``.

    `status` is ``found`` (the minimum is known), ``above`` (not won with the
    most cells tried, `max(cells)`, so the minimum is larger) or
    ``undetermined`` (a limit or an error left a smaller count open).
    """
    return _minimum(_Deals(table), list(cells))


# --- the headline -------------------------------------------------------------------


@dataclass(frozen=True)
class CellsLine:
    """The deals at one count of cells."""

    cells: int
    deals: int
    counts: Mapping[str, int]
    inferred: Mapping[str, int]
    unsolvable: tuple[int, ...]
    limits: tuple[tuple[int, str], ...]
    errors: tuple[tuple[int, str], ...]
    not_tried: int

    def share(self, outcome: str) -> str:
        return share_text(self.counts.get(outcome, 0), self.deals)


@dataclass(frozen=True)
class Headline:
    """The answer of one run, counted in deals."""

    label: str
    deals: int
    declared: int | None
    deal_text: str
    cells: tuple[CellsLine, ...]
    min_cells: bool
    minimum: Mapping[str, int] = field(default_factory=dict)
    above: tuple[int, ...] = ()
    #: (deal, why): the first count of cells left open and its limit or error
    undetermined: tuple[tuple[int, str], ...] = ()

    def lines(self, *, show: int = SHOW_DEALS, csv: Mapping[str, str] | None = None) -> list[str]:
        """The headline as text lines; `csv` names files holding full deal lists
        (keys ``unsolvable``, ``limit``, ``error``)."""
        csv = csv or {}
        cover = f"{self.deals:,} deals"
        if self.declared is not None and self.declared != self.deals:
            cover = f"{self.deals:,} of {self.declared:,} deals have results ({share_text(self.deals, self.declared)})"
        out = [f"{self.label}; MS deals {self.deal_text}: {cover}"]
        if self.min_cells:
            parts = [f"{k}: {count_share(v, self.deals)}" for k, v in self.minimum.items()]
            out.append("  minimum cells per deal: " + "; ".join(parts))
        if self.min_cells:
            top = self.cells[-1].cells if self.cells else 0
            out.append(
                f"    not won with {top} cells, the most tried ({len(self.above):,}): "
                + listing([str(d) for d in self.above], show=show, more=csv.get("unsolvable", ""))
            )
            out.append(
                f"    minimum undetermined ({len(self.undetermined):,}): "
                + listing(
                    [f"{d} ({why})" for d, why in self.undetermined], show=show, more=csv.get("limit", "")
                )
            )
            return out
        for line in self.cells:
            out.append(_cells_text(line, several=len(self.cells) > 1))
            out.append(
                f"    unsolvable ({len(line.unsolvable):,}): "
                + listing([str(d) for d in line.unsolvable], show=show, more=csv.get("unsolvable", ""))
            )
            out.append(
                f"    limit ({len(line.limits):,}): "
                + listing([f"{d} ({why})" for d, why in line.limits], show=show, more=csv.get("limit", ""))
            )
            if line.errors:
                out.append(
                    f"    error ({len(line.errors):,}): "
                    + listing([str(d) for d, _ in line.errors], show=show, more=csv.get("error", ""))
                )
        return out

    def text(self, **kwargs: Any) -> str:
        return "\n".join(self.lines(**kwargs))


def _cells_text(line: CellsLine, *, several: bool) -> str:
    parts = []
    for o in OUTCOMES:
        c = line.counts.get(o, 0)
        if o == "error" and not c:
            continue
        text = f"{o} {count_share(c, line.deals)}"
        inferred = line.inferred.get(o, 0)
        if inferred:
            text += f" [{inferred:,} inferred]"
        parts.append(text)
    if line.not_tried:
        parts.append(f"not tried {count_share(line.not_tried, line.deals)}")
    head = f"  with {line.cells} cell{'s' if line.cells != 1 else ''}: " if several else "  "
    return head + "; ".join(parts)


def _cells_line(d: _Deals, k: int) -> CellsLine:
    code, how, stands = d.at(k)
    counts = {o: int((code == i).sum()) for i, o in enumerate(OUTCOMES)}
    inferred = {o: int(((code == i) & (how == 1)).sum()) for i, o in enumerate(OUTCOMES)}
    unsolvable = d.deals[code == _CODE["unsolvable"]]
    limit = np.flatnonzero(code == _CODE["limit"])
    error = np.flatnonzero(code == _CODE["error"])
    reasons = _values(_taken(d.limit_reason, stands[limit]))
    errors = _values(_taken(d.error, stands[error]))
    return CellsLine(
        cells=k,
        deals=len(d.deals),
        counts=counts,
        inferred=inferred,
        unsolvable=tuple(int(x) for x in unsolvable),
        limits=tuple((int(d.deals[i]), r or "?") for i, r in zip(limit, reasons, strict=True)),
        errors=tuple(
            (int(d.deals[i]), (e or "").splitlines()[0] if e else "")
            for i, e in zip(error, errors, strict=True)
        ),
        not_tried=int((code == _NONE).sum()),
    )


def headline(
    table: pa.Table,
    *,
    label: str,
    cells: Sequence[int] | None = None,
    min_cells: bool = False,
    declared: Sequence[tuple[int, int]] | None = None,
) -> Headline:
    """The headline of one run's rows (one configuration).

    `cells` are the counts the run asked about (default: those in the rows);
    `min_cells` says the run asked for each deal's minimum; `declared` are
    the inclusive deal ranges it was asked for (for coverage).
    """
    counts = _counts_of(table, cells)
    d = _Deals(table)
    deals = len(d.deals)
    n_declared = sum(b - a + 1 for a, b in declared) if declared else None
    deal_text = (
        ",".join(str(a) if a == b else f"{a}-{b}" for a, b in declared)
        if declared
        else deal_ranges(int(x) for x in d.deals)
    )
    lines = tuple(_cells_line(d, k) for k in counts)
    if not min_cells:
        return Headline(label, deals, n_declared, deal_text, lines, False)
    mins = _minimum(d, counts)
    minimum: dict[str, int] = {str(k): 0 for k in counts}
    above: list[int] = []
    undetermined: list[int] = []
    for deal, m, status in zip(
        _values(mins["deal_number"]),
        _values(mins["min_cells"]),
        _values(mins["status"]),
        strict=True,
    ):
        if status == "found":
            minimum[str(m)] = minimum.get(str(m), 0) + 1
        elif status == "above":
            above.append(deal)
        else:
            undetermined.append(deal)
    minimum = {k: minimum[k] for k in sorted(minimum, key=int)}
    if above:
        minimum[f"more than {max(counts)}"] = len(above)
    if undetermined:
        minimum["undetermined"] = len(undetermined)
    return Headline(
        label,
        deals,
        n_declared,
        deal_text,
        lines,
        True,
        minimum,
        tuple(above),
        _open_reasons(d, counts, undetermined),
    )


def _open_reasons(d: _Deals, counts: Sequence[int], deals: Sequence[int]) -> tuple[tuple[int, str], ...]:
    """For each deal, the first count of cells a limit or an error left open."""
    if not deals:
        return ()
    grid = _grid(d, counts)
    open_ = grid.filter(
        pc.and_(
            pc.is_in(grid["deal_number"], pa.array(deals, pa.int64())),
            pc.is_in(grid["outcome"], pa.array(["limit", "error"])),
        )
    ).sort_by([("deal_number", "ascending"), ("cells", "ascending")])
    why: dict[int, str] = {}
    for deal, k, o, r in zip(
        _values(open_["deal_number"]),
        _values(open_["cells"]),
        _values(open_["outcome"]),
        _values(open_["limit_reason"]),
        strict=True,
    ):
        if deal not in why:
            why[deal] = f"{o} at {k} cells" + (f": {r}" if o == "limit" and r else "")
    return tuple((deal, why.get(deal, "not tried")) for deal in deals)


def headline_text(
    table: pa.Table,
    *,
    label: str,
    cells: Sequence[int] | None = None,
    min_cells: bool = False,
    declared: Sequence[tuple[int, int]] | None = None,
    show: int = SHOW_DEALS,
    csv: Mapping[str, str] | None = None,
) -> str:
    """The headline as text: what ``run``, ``status``, the dataset card and the
    report open with. `table` holds one run's rows (at least ``deal_number``,
    ``cells``, ``outcome``; ``limit_reason``, ``error`` and ``min_cells`` when
    present), e.g. `reports.load.read_run_table(manifest, HEADLINE_COLUMNS)`.

    >>> t = pa.table({"deal_number": [1, 2, 3], "cells": [4, 4, 4],
    ...               "outcome": ["solved", "unsolvable", "solved"]})
    >>> print(headline_text(t, label="freecell, 4 cells, product"))
    freecell, 4 cells, product; MS deals 1-3: 3 deals
      solved 2 (66.7 %); unsolvable 1 (33.3 %); limit 0
        unsolvable (1): 2
        limit (0): none
    """
    h = headline(table, label=label, cells=cells, min_cells=min_cells, declared=declared)
    return h.text(show=show, csv=csv)
