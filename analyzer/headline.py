"""The headline of a run: the answer first, counted in deals.

One implementation for every place that opens with the answer (the report
page, the dataset card, ``run``'s closing summary, ``status``):
`headline_text` takes the result rows of one run as an Arrow table and
returns the lines to print. It needs only pyarrow and numpy (core
dependencies), not pandas, so ``status`` works without the ``reports``
extra, and it lives here, beside the schema, because both `jobs` (``run``,
``status``) and `reports` (the page, the card) use it.

A run's answer also adds up: `Headline.part` keeps the counts of some rows
(every deal's rows together) with the first `KEEP` deals of each list, and
`combine` adds such parts into the headline of all of them, exactly as
`headline` of the whole table would print it. The run format records one
part per data file in the run's index when it seals the file, so
``status`` and ``run`` print the answer of any run, even one of the whole
range, from the index alone.

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
from typing import TYPE_CHECKING, Any, Final

from ._lazy import LazyModule

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    import pyarrow as pa
else:  # ``status`` combines the index's parts without numpy or pyarrow
    np = LazyModule("numpy")
    pa = LazyModule("pyarrow")

#: pyarrow.compute, imported on first use (`combine`, which ``status`` calls,
#: needs none of it). Untyped: pyarrow's stubs type each compute function
#: per array type, and this module mixes chunked and plain arrays.
pc: Any = LazyModule("pyarrow.compute")

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
#: Deals of each list a part keeps (`Headline.part`): what a headline built
#: by `combine` can list.
KEEP: Final = SHOW_DEALS
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


def listing(items: Sequence[str], *, show: int = SHOW_DEALS, more: str = "", total: int | None = None) -> str:
    """``a, b, c`` or ``a, b, ... (first 20 of 199; all in unsolvable.csv)``;
    `total` is the length of the whole list when `items` holds only its start.

    >>> listing(["1", "2", "3"], show=2, total=40, more="x.csv")
    '1, 2, ... (first 2 of 40; all in x.csv)'
    """
    n = len(items) if total is None else total
    if not n:
        return "none"
    if n <= show and len(items) >= n:
        return ", ".join(items[:n])
    shown = min(show, len(items))
    where = f"; all in {more}" if more else ""
    return ", ".join(items[:shown]) + f", ... (first {shown:,} of {n:,}{where})"


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
    """The deals at one count of cells. `unsolvable`, `limits` and `errors`
    list the deals of those outcomes in order, all of them or (in a
    headline built by `combine`) the first `KEEP`; `counts` has how many
    there are."""

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

    def count(self, outcome: str) -> int:
        return int(self.counts.get(outcome, 0))

    def part(self, keep: int = KEEP) -> dict[str, Any]:
        """This line as JSON-ready data, its lists cut to `keep` deals."""
        return {
            "cells": self.cells,
            "deals": self.deals,
            "counts": {o: int(self.counts.get(o, 0)) for o in OUTCOMES},
            "inferred": {o: int(self.inferred.get(o, 0)) for o in OUTCOMES},
            "not_tried": self.not_tried,
            "unsolvable": list(self.unsolvable[:keep]),
            "limits": [[d, why] for d, why in self.limits[:keep]],
            "errors": [[d, why] for d, why in self.errors[:keep]],
        }


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

    def _more_than(self) -> str:
        return f"more than {self.cells[-1].cells if self.cells else 0}"

    def part(self, keep: int = KEEP) -> dict[str, Any]:
        """The counts of these rows and the first `keep` deals of each list,
        as JSON-ready data that `combine` adds up (no label or deal range:
        those belong to the whole run)."""
        return {
            "deals": self.deals,
            "min_cells": self.min_cells,
            "cells": [line.part(keep) for line in self.cells],
            "minimum": {k: int(v) for k, v in self.minimum.items()},
            "above": list(self.above[:keep]),
            "undetermined": [[d, why] for d, why in self.undetermined[:keep]],
        }

    def to_dict(self, *, show: int = SHOW_DEALS) -> dict[str, Any]:
        """The headline as data (``status --json``, ``run --json``): the
        part, with the first `show` deals of each list, and the label,
        deals asked for and their number."""
        return {"label": self.label, "deal_text": self.deal_text, "declared": self.declared, **self.part(show)}

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
            above = int(self.minimum.get(self._more_than(), 0))
            undetermined = int(self.minimum.get("undetermined", 0))
            out.append(
                f"    not won with {top} cells, the most tried ({above:,}): "
                + listing([str(d) for d in self.above], show=show, more=csv.get("unsolvable", ""), total=above)
            )
            out.append(
                f"    minimum undetermined ({undetermined:,}): "
                + listing(
                    [f"{d} ({why})" for d, why in self.undetermined],
                    show=show,
                    more=csv.get("limit", ""),
                    total=undetermined,
                )
            )
            return out
        for line in self.cells:
            out.append(_cells_text(line, several=len(self.cells) > 1))
            n = line.count("unsolvable")
            out.append(
                f"    unsolvable ({n:,}): "
                + listing([str(d) for d in line.unsolvable], show=show, more=csv.get("unsolvable", ""), total=n)
            )
            n = line.count("limit")
            out.append(
                f"    limit ({n:,}): "
                + listing(
                    [f"{d} ({why})" for d, why in line.limits], show=show, more=csv.get("limit", ""), total=n
                )
            )
            n = line.count("error")
            if n:
                out.append(
                    f"    error ({n:,}): "
                    + listing([str(d) for d, _ in line.errors], show=show, more=csv.get("error", ""), total=n)
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


def _cells_line(d: _Deals, k: int, keep: int | None = None) -> CellsLine:
    code, how, stands = d.at(k)
    counts = {o: int((code == i).sum()) for i, o in enumerate(OUTCOMES)}
    inferred = {o: int(((code == i) & (how == 1)).sum()) for i, o in enumerate(OUTCOMES)}
    unsolvable = d.deals[code == _CODE["unsolvable"]][:keep]
    limit = np.flatnonzero(code == _CODE["limit"])[:keep]
    error = np.flatnonzero(code == _CODE["error"])[:keep]
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
    keep: int | None = None,
) -> Headline:
    """The headline of one run's rows (one configuration).

    `cells` are the counts the run asked about (default: those in the rows);
    `min_cells` says the run asked for each deal's minimum; `declared` are
    the inclusive deal ranges it was asked for (for coverage); `keep` cuts
    each deal list to its first `keep` deals (the counts stay whole).
    """
    counts = _counts_of(table, cells)
    d = _Deals(table)
    deals = len(d.deals)
    n_declared = sum(b - a + 1 for a, b in declared) if declared else None
    deal_text = _deal_text(declared) if declared else deal_ranges(int(x) for x in d.deals)
    lines = tuple(_cells_line(d, k, keep) for k in counts)
    if not min_cells:
        return Headline(label, deals, n_declared, deal_text, lines, False)
    top = max(counts) if counts else 0
    code, _, _ = d.at(top)
    found = d.minimum != _BIG
    is_above = ~found & (code == _CODE["unsolvable"])
    is_open = ~found & ~is_above
    values, times = np.unique(d.minimum[found], return_counts=True)
    minimum: dict[str, int] = {str(k): 0 for k in counts}
    for v, n in zip(values.tolist(), times.tolist(), strict=True):
        minimum[str(v)] = minimum.get(str(v), 0) + int(n)
    minimum = {k: minimum[k] for k in sorted(minimum, key=int)}
    if is_above.any():
        minimum[f"more than {top}"] = int(is_above.sum())
    if is_open.any():
        minimum["undetermined"] = int(is_open.sum())
    above = tuple(int(x) for x in d.deals[is_above][:keep])
    undetermined = [int(x) for x in d.deals[is_open][:keep]]
    return Headline(
        label, deals, n_declared, deal_text, lines, True, minimum, above, _open_reasons(d, counts, undetermined)
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
            why[deal] = f"{o} at {k} cell{'' if k == 1 else 's'}" + (f": {r}" if o == "limit" and r else "")
    return tuple((deal, why.get(deal, "not tried")) for deal in deals)


def _deal_text(declared: Sequence[tuple[int, int]]) -> str:
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in declared)


def combine(
    parts: Iterable[Mapping[str, Any]],
    *,
    label: str,
    cells: Sequence[int],
    min_cells: bool = False,
    declared: Sequence[tuple[int, int]] | None = None,
) -> Headline:
    """The headline of the rows whose parts (`Headline.part`) are `parts`,
    given in deal order and each holding whole deals: counts add up, and
    each list keeps its first `KEEP` deals. `cells` are the counts of cells
    the run asked about.

    >>> t = pa.table({"deal_number": [1, 2, 3, 4], "cells": [4] * 4,
    ...               "outcome": ["solved", "unsolvable", "solved", "unsolvable"]})
    >>> halves = [headline(t.slice(i, 2), label="", cells=[4]).part() for i in (0, 2)]
    >>> whole = headline(t, label="x", cells=[4], declared=[(1, 4)])
    >>> combine(halves, label="x", cells=[4], declared=[(1, 4)]).text() == whole.text()
    True
    """
    counts = sorted({int(k) for k in cells})
    lines: dict[int, dict[str, Any]] = {
        k: {"deals": 0, "counts": dict.fromkeys(OUTCOMES, 0), "inferred": dict.fromkeys(OUTCOMES, 0),
            "not_tried": 0, "unsolvable": [], "limits": [], "errors": []}
        for k in counts
    }
    minimum: dict[str, int] = {str(k): 0 for k in counts}
    above: list[int] = []
    undetermined: list[tuple[int, str]] = []
    deals = 0
    for part in parts:
        deals += int(part["deals"])
        for line in part["cells"]:
            into = lines.get(int(line["cells"]))
            if into is None:
                raise ValueError(f"a part has {line['cells']} cells, not one of {counts}")
            into["deals"] += int(line["deals"])
            into["not_tried"] += int(line["not_tried"])
            for o in OUTCOMES:
                into["counts"][o] += int(line["counts"].get(o, 0))
                into["inferred"][o] += int(line["inferred"].get(o, 0))
            into["unsolvable"] += [int(d) for d in line["unsolvable"][: KEEP - len(into["unsolvable"])]]
            into["limits"] += [(int(d), str(w)) for d, w in line["limits"][: KEEP - len(into["limits"])]]
            into["errors"] += [(int(d), str(w)) for d, w in line["errors"][: KEEP - len(into["errors"])]]
        for k, v in part.get("minimum", {}).items():
            minimum[k] = minimum.get(k, 0) + int(v)
        above += [int(d) for d in part.get("above", [])[: KEEP - len(above)]]
        undetermined += [(int(d), str(w)) for d, w in part.get("undetermined", [])[: KEEP - len(undetermined)]]
    built = tuple(
        CellsLine(
            cells=k,
            deals=v["deals"],
            counts=v["counts"],
            inferred=v["inferred"],
            unsolvable=tuple(v["unsolvable"]),
            limits=tuple(v["limits"]),
            errors=tuple(v["errors"]),
            not_tried=v["not_tried"],
        )
        for k, v in lines.items()
    )
    n_declared = sum(b - a + 1 for a, b in declared) if declared else None
    deal_text = _deal_text(declared) if declared else ""
    if not min_cells:
        return Headline(label, deals, n_declared, deal_text, built, False)
    more = f"more than {counts[-1] if counts else 0}"
    ordered = {k: minimum.get(k, 0) for k in sorted((k for k in minimum if k.isdigit()), key=int)}
    for k in (more, "undetermined"):
        if minimum.get(k):
            ordered[k] = minimum[k]
    return Headline(label, deals, n_declared, deal_text, built, True, ordered, tuple(above), tuple(undetermined))


def table_part(table: pa.Table, *, cells: Sequence[int], min_cells: bool = False) -> dict[str, Any]:
    """`Headline.part` of `table`, rows of whole deals (a data file's row
    group, say) of a run that asked about `cells`.

    >>> t = pa.table({"deal_number": [7, 8], "cells": [3, 3], "outcome": ["solved", "limit"],
    ...               "limit_reason": [None, "bytes"]})
    >>> table_part(t, cells=[3])["cells"][0]["limits"]
    [[8, 'bytes']]
    """
    if not len(table):
        return combine([], label="", cells=cells, min_cells=min_cells).part()
    first = int(pc.min(table["deal_number"]).as_py())
    last = int(pc.max(table["deal_number"]).as_py())
    return headline(table, label="", cells=cells, min_cells=min_cells, declared=[(first, last)], keep=KEEP).part()


def merge_parts(parts: Iterable[Mapping[str, Any]], *, cells: Sequence[int], min_cells: bool = False) -> dict[str, Any]:
    """Parts of consecutive rows (in deal order) as one part."""
    return combine(parts, label="", cells=cells, min_cells=min_cells).part()


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
