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


def _normalise(table: pa.Table) -> pa.Table:
    """The columns the per-deal view reads, as plain types."""
    return _table(
        {
            "deal_number": pc.cast(table["deal_number"], pa.int64()),
            "cells": pc.cast(table["cells"], pa.int64()),
            "outcome": _column(table, "outcome", pa.string()),
            "limit_reason": _column(table, "limit_reason", pa.string()),
            "error": _column(table, "error", pa.string()),
            "min_cells": _column(table, "min_cells", pa.int64()),
        }
    )


def _per_deal(rows: pa.Table) -> pa.Table:
    """One row per deal: smallest count solved, largest proved unsolvable, minimum cells."""
    deals = _table({"deal_number": pc.unique(rows["deal_number"])})

    def agg(mask: Any, column: str, how: str, name: str) -> pa.Table:
        part = rows.filter(mask).group_by("deal_number").aggregate([(column, how)])  # type: ignore[list-item]
        return part.rename_columns(["deal_number" if c == "deal_number" else name for c in part.column_names])

    out = deals
    for part in (
        agg(pc.equal(rows["outcome"], "solved"), "cells", "min", "solved_from"),
        agg(pc.equal(rows["outcome"], "unsolvable"), "cells", "max", "unsolvable_to"),
        agg(pc.is_valid(rows["min_cells"]), "min_cells", "min", "min_cells"),
    ):
        out = out.join(part, "deal_number", join_type="left outer")
    return out.sort_by("deal_number")


def deal_cells(table: pa.Table, cells: Sequence[int] | None = None) -> pa.Table:
    """Every deal at every count of `cells` (default: the counts in `table`):
    ``deal_number, cells, outcome, how, limit_reason, error``.

    `outcome` is solved / unsolvable / limit / error, or null when the count
    was never reached for the deal; `how` is ``proved`` (a row at that count
    says so) or ``inferred`` (from a row at another count or from the deal's
    minimum number of cells), null when not tried. A row's own limit or
    error is kept only when no inference settles the count.
    """
    rows = _normalise(table)
    counts = sorted({int(k) for k in (cells if cells is not None else _values(pc.unique(rows["cells"])))})
    per_deal = _per_deal(rows)
    n = len(per_deal)
    parts: list[pa.Table] = []
    for k in counts:
        at_k = rows.filter(pc.equal(rows["cells"], k)).select(
            ["deal_number", "outcome", "limit_reason", "error"]
        )
        t = per_deal.join(at_k, "deal_number", join_type="left outer").sort_by("deal_number")
        kk = pa.scalar(k, pa.int64())
        won = pc.fill_null(
            pc.or_kleene(pc.less_equal(t["solved_from"], kk), pc.less_equal(t["min_cells"], kk)), False
        )
        lost = pc.fill_null(
            pc.or_kleene(pc.greater_equal(t["unsolvable_to"], kk), pc.greater(t["min_cells"], kk)), False
        )
        row = t["outcome"]
        row_proof = pc.fill_null(pc.is_in(row, pa.array(["solved", "unsolvable"])), False)
        outcome = pc.if_else(
            row_proof,
            row,
            pc.if_else(won, pa.scalar("solved"), pc.if_else(lost, pa.scalar("unsolvable"), row)),
        )
        how = pc.if_else(
            row_proof,
            pa.scalar(PROVED),
            pc.if_else(
                pc.or_(won, lost),
                pa.scalar(INFERRED),
                pc.if_else(pc.is_valid(row), pa.scalar(PROVED), pa.scalar(None, pa.string())),
            ),
        )
        settled = pc.or_(row_proof, pc.or_(won, lost))
        parts.append(
            _table(
                {
                    "deal_number": t["deal_number"],
                    "cells": pa.array([k] * n, pa.int64()),
                    "outcome": outcome,
                    "how": how,
                    "limit_reason": pc.if_else(settled, pa.scalar(None, pa.string()), t["limit_reason"]),
                    "error": pc.if_else(settled, pa.scalar(None, pa.string()), t["error"]),
                }
            )
        )
    if not parts:
        return _table(
            {
                "deal_number": pa.array([], pa.int64()),
                "cells": pa.array([], pa.int64()),
                "outcome": pa.array([], pa.string()),
                "how": pa.array([], pa.string()),
                "limit_reason": pa.array([], pa.string()),
                "error": pa.array([], pa.string()),
            }
        )
    return pa.concat_tables(parts).combine_chunks()


def deal_minimum(table: pa.Table, cells: Sequence[int]) -> pa.Table:
    """One row per deal of a min-cells run: ``deal_number, min_cells, status``.

    `status` is ``found`` (the minimum is known), ``above`` (not won with the
    most cells tried, `max(cells)`, so the minimum is larger) or
    ``undetermined`` (a limit or an error left a smaller count open).
    """
    grid = deal_cells(table, cells)
    per_deal = _per_deal(_normalise(table))
    top = max(cells) if cells else 0
    at_top = grid.filter(pc.equal(grid["cells"], top)).select(["deal_number", "outcome"])
    t = per_deal.join(at_top, "deal_number", join_type="left outer").sort_by("deal_number")
    lost_at_top = pc.fill_null(pc.equal(t["outcome"], "unsolvable"), False)
    status = pc.if_else(
        pc.is_valid(t["min_cells"]),
        pa.scalar("found"),
        pc.if_else(lost_at_top, pa.scalar("above"), pa.scalar("undetermined")),
    )
    return _table({"deal_number": t["deal_number"], "min_cells": t["min_cells"], "status": status})


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


def _cells_line(grid: pa.Table, k: int) -> CellsLine:
    at = grid.filter(pc.equal(grid["cells"], k))
    outcome = _values(at["outcome"])
    how = _values(at["how"])
    deal = _values(at["deal_number"])
    reason = _values(at["limit_reason"])
    error = _values(at["error"])
    counts = dict.fromkeys(OUTCOMES, 0)
    inferred = dict.fromkeys(OUTCOMES, 0)
    unsolvable: list[int] = []
    limits: list[tuple[int, str]] = []
    errors: list[tuple[int, str]] = []
    not_tried = 0
    for d, o, h, r, e in zip(deal, outcome, how, reason, error, strict=True):
        if o is None:
            not_tried += 1
            continue
        counts[o] = counts.get(o, 0) + 1
        if h == INFERRED:
            inferred[o] = inferred.get(o, 0) + 1
        if o == "unsolvable":
            unsolvable.append(d)
        elif o == "limit":
            limits.append((d, r or "?"))
        elif o == "error":
            errors.append((d, (e or "").splitlines()[0] if e else ""))
    return CellsLine(
        cells=k,
        deals=len(deal),
        counts=counts,
        inferred=inferred,
        unsolvable=tuple(unsolvable),
        limits=tuple(limits),
        errors=tuple(errors),
        not_tried=not_tried,
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
    counts = sorted({int(k) for k in (cells if cells is not None else _values(pc.unique(table["cells"])))})
    grid = deal_cells(table, counts)
    deals = len(pc.unique(table["deal_number"])) if len(table) else 0
    n_declared = sum(b - a + 1 for a, b in declared) if declared else None
    deal_text = (
        ",".join(str(a) if a == b else f"{a}-{b}" for a, b in declared)
        if declared
        else deal_ranges(_values(pc.unique(table["deal_number"])))
    )
    lines = tuple(_cells_line(grid, k) for k in counts)
    if not min_cells:
        return Headline(label, deals, n_declared, deal_text, lines, False)
    mins = deal_minimum(table, counts)
    minimum: dict[str, int] = {str(k): 0 for k in counts}
    above: list[int] = []
    undetermined: list[int] = []
    for d, m, s in zip(
        _values(mins["deal_number"]),
        _values(mins["min_cells"]),
        _values(mins["status"]),
        strict=True,
    ):
        if s == "found":
            minimum[str(m)] = minimum.get(str(m), 0) + 1
        elif s == "above":
            above.append(d)
        else:
            undetermined.append(d)
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
        _open_reasons(grid, undetermined),
    )


def _open_reasons(grid: pa.Table, deals: Sequence[int]) -> tuple[tuple[int, str], ...]:
    """For each deal, the first count of cells a limit or an error left open."""
    if not deals:
        return ()
    open_ = grid.filter(
        pc.and_(
            pc.is_in(grid["deal_number"], pa.array(deals, pa.int64())),
            pc.is_in(grid["outcome"], pa.array(["limit", "error"])),
        )
    ).sort_by([("deal_number", "ascending"), ("cells", "ascending")])
    why: dict[int, str] = {}
    for d, k, o, r in zip(
        _values(open_["deal_number"]),
        _values(open_["cells"]),
        _values(open_["outcome"]),
        _values(open_["limit_reason"]),
        strict=True,
    ):
        if d not in why:
            why[d] = f"{o} at {k} cells" + (f": {r}" if o == "limit" and r else "")
    return tuple((d, why.get(d, "not tried")) for d in deals)


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
    present), e.g. read with ``pyarrow.dataset.dataset(DIR / "chunks").to_table()``.

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
