"""Summaries of result rows: pure functions from DataFrames to DataFrames.

Every function takes rows shaped like `analyzer.schema` (any subset of runs)
and returns a new DataFrame with a stable row order, so the same input gives
the same tables, CSV and report bytes.

>>> import pandas as pd
>>> rows = pd.DataFrame({"deal_number": [1, 2, 3], "variant": "freecell", "cells": 4,
...     "move_rule": "product", "outcome": ["solved", "solved", "unsolvable"]})
>>> outcome_table(rows)[["cells", "deals", "solved", "unsolvable"]].to_dict("records")
[{'cells': 4, 'deals': 3, 'solved': 2, 'unsolvable': 1}]

Statistics count deals. The per-deal view `deal_cells` gives every deal one
outcome at every count of cells the run asked about (proved by a row of its
own, or inferred from another count); outcome tables, curves and lists read
it, so a min-cells run with several rows per deal, or one row per deal with
its minimum, is counted the same way. Difficulty measures are read on rows,
and each (configuration, number of cells) has one row per deal.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import numpy as np
import pandas as pd
import pyarrow as pa

from analyzer import headline, schema

#: The configuration of a row: outcome tables and plots group by it.
GROUP: Final = ["variant", "cells", "move_rule"]
#: Column of the min-cells table for deals whose minimum was not determined.
UNDETERMINED: Final = "undetermined"


@dataclass(frozen=True)
class Measure:
    """A difficulty measure: a result column, on the rows where it means something."""

    column: str
    title: str
    outcomes: tuple[str, ...]
    log: bool

    @property
    def unit(self) -> str:
        return schema.column(self.column).unit

    @property
    def axis_label(self) -> str:
        return f"{self.title} ({self.unit})" if self.unit else self.title


#: Lengths are of solutions, so of solved rows; search effort is read on the
#: searches that finished (solved or proved unsolvable): a `limit` row only
#: says the budget ran out. Positions and time span decades: log scale.
MEASURES: Final = (
    Measure("solution_length_single", "Solution length, single-card moves", ("solved",), log=False),
    Measure("solution_length_multi", "Solution length, multi-card moves as one", ("solved",), log=False),
    Measure("positions_expanded", "Positions expanded", ("solved", "unsolvable"), log=True),
    Measure("elapsed_s", "Solve time", ("solved", "unsolvable"), log=True),
)


def measure(column: str) -> Measure:
    for m in MEASURES:
        if m.column == column:
            return m
    raise KeyError(column)


def _plain(df: pd.DataFrame) -> pd.DataFrame:
    """Categorical key columns as plain strings, so groupby sees only values present.
    (A shallow copy: the caller's frame is left as it is.)"""
    out = df.copy(deep=False)
    for c in ("variant", "move_rule", "outcome", "limit_reason"):
        if c in out and isinstance(out[c].dtype, pd.CategoricalDtype):
            out[c] = out[c].astype(object)
    return out


def _cells_of(df: pd.DataFrame, cells: Sequence[int] | None) -> list[int]:
    return sorted({int(c) for c in (cells if cells is not None else df["cells"].unique())})


def deal_cells(df: pd.DataFrame, cells: Sequence[int] | None = None) -> pd.DataFrame:
    """Every deal at every count of `cells` (default: those in the rows), with
    its outcome and how it is known (`analyzer.headline.deal_cells`), and the
    configuration columns (variant, move rule) of the rows."""
    keep = [c for c in ("deal_number", "cells", "outcome", "limit_reason", "error", "min_cells") if c in df]
    table = pa.Table.from_pandas(_plain(df[keep]), preserve_index=False)
    grid = headline.deal_cells(table, _cells_of(df, cells)).to_pandas()
    for c in ("variant", "move_rule"):
        if c in df:
            values = df[c].astype(object).unique()
            grid[c] = values[0] if len(values) == 1 else "mixed"
    return grid


def deal_minimum(df: pd.DataFrame, cells: Sequence[int]) -> pd.DataFrame:
    """One row per deal of a min-cells run: its minimum and whether it was
    ``found``, is ``above`` the most cells tried, or ``undetermined``."""
    keep = [c for c in ("deal_number", "cells", "outcome", "limit_reason", "error", "min_cells") if c in df]
    table = pa.Table.from_pandas(_plain(df[keep]), preserve_index=False)
    out = headline.deal_minimum(table, list(cells)).to_pandas()
    out["min_cells"] = out["min_cells"].astype("Int64")
    return out


def _grids(
    df: pd.DataFrame, cells: Sequence[int] | None, grid: pd.DataFrame | None
) -> list[tuple[str, str, pd.DataFrame, pd.DataFrame]]:
    """(variant, move rule, rows, per-deal view) per configuration; `grid`, when
    given, is the view of `df` (one configuration) computed once by the caller."""
    d = _plain(df)
    out = []
    for (variant, move_rule), part in d.groupby(["variant", "move_rule"], sort=True):
        g = grid if grid is not None else deal_cells(part, cells)
        out.append((str(variant), str(move_rule), part, g))
    return out


def outcome_table(
    df: pd.DataFrame, cells: Sequence[int] | None = None, grid: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Deals with each outcome per variant, cells and move rule, and their
    shares. Counted on the per-deal view: ``solved_inferred`` and
    ``unsolvable_inferred`` say how many of them no row of that count proves
    (a min-cells run infers them from the deal's other counts);
    ``not_tried`` counts deals the run never settled at that count."""
    records: list[dict[str, object]] = []
    for variant, move_rule, _, g in _grids(df, cells, grid):
        for k, at in g.groupby("cells", sort=True):
            outcome = at["outcome"].astype(object)
            inferred = at["how"].astype(object) == headline.INFERRED
            n = len(at)
            rec: dict[str, object] = {
                "variant": variant,
                "cells": int(str(k)),
                "move_rule": move_rule,
                "deals": n,
            }
            for o in schema.OUTCOMES:
                rec[o] = int((outcome == o).sum())
            rec["not_tried"] = int(outcome.isna().sum())
            for o in ("solved", "unsolvable"):
                rec[f"{o}_inferred"] = int(((outcome == o) & inferred).sum())
            for o in schema.OUTCOMES:
                rec[f"{o}_share"] = int((outcome == o).sum()) / n if n else 0.0
            records.append(rec)
    columns = [
        *GROUP, "deals", *schema.OUTCOMES, "not_tried", "solved_inferred", "unsolvable_inferred",
        *(f"{o}_share" for o in schema.OUTCOMES),
    ]  # fmt: skip
    out = pd.DataFrame.from_records(records, columns=columns)
    return out.sort_values(GROUP, kind="stable", ignore_index=True)


def won_curve(
    df: pd.DataFrame, cells: Sequence[int] | None = None, grid: pd.DataFrame | None = None
) -> pd.DataFrame:
    """The share of deals won with k cells, for each k the run asked about:
    ``cells, deals, won, not_won, open, won_share, not_won_share`` (shares of
    the deals settled at that count)."""
    t = outcome_table(df, cells, grid)
    out = t[[*GROUP, "deals", "solved", "unsolvable"]].rename(
        columns={"solved": "won", "unsolvable": "not_won"}
    )
    out["open"] = t["limit"] + t["error"] + t["not_tried"]
    settled = (out["won"] + out["not_won"]).astype("float64")
    out["won_share"] = (out["won"] / settled).where(settled > 0)
    out["not_won_share"] = (out["not_won"] / settled).where(settled > 0)
    return out


def deals_with_outcome(
    df: pd.DataFrame, outcome: str, cells: Sequence[int] | None = None, grid: pd.DataFrame | None = None
) -> pd.DataFrame:
    """The deals with one outcome, by deal (e.g. the unsolvable deals).

    A run of one count of cells lists its rows; a run of several counts
    lists each deal once, at the most cells it tried (where unsolvable means
    not won with any count the run tried), with how that is known.
    """
    if outcome not in schema.OUTCOMES:
        raise ValueError(f"unknown outcome {outcome!r}; expected one of {', '.join(schema.OUTCOMES)}")
    counts = _cells_of(df, cells)
    if grid is None:
        grid = deal_cells(df, counts)
    at = grid[(grid["cells"] == counts[-1]) & (grid["outcome"].astype(object) == outcome)] if counts else grid
    cols = ["deal_number", *GROUP, "how"]
    if outcome == "limit":
        cols.append("limit_reason")
    if outcome == "error":
        cols.append("error")
    rows = at[[c for c in cols if c in at]].copy()
    if "positions_expanded" in df and outcome != "error" and len(rows):
        effort = _plain(df[df["deal_number"].isin(rows["deal_number"])])[
            ["deal_number", "cells", "positions_expanded"]
        ]
        rows = rows.merge(effort, on=["deal_number", "cells"], how="left")
    rows["cells"] = rows["cells"].astype("int64")
    return rows.sort_values(["deal_number"], kind="stable", ignore_index=True)


def _values(df: pd.DataFrame, m: Measure) -> pd.Series:
    rows = df[df["outcome"].isin(m.outcomes)]
    return rows[m.column].dropna().astype("float64")


def difficulty_table(df: pd.DataFrame) -> pd.DataFrame:
    """Distribution of every measure per configuration: count, mean and quantiles."""
    records: list[dict[str, object]] = []
    d = _plain(df)
    for key, part in d.groupby(GROUP, sort=True):
        for m in MEASURES:
            if m.column not in part:
                continue
            v = _values(part, m)
            q = v.quantile([0.5, 0.9, 0.99]) if len(v) else pd.Series([np.nan] * 3, index=[0.5, 0.9, 0.99])
            records.append(
                {
                    "measure": m.column,
                    "unit": m.unit,
                    **dict(zip(GROUP, key, strict=True)),
                    "on": "/".join(m.outcomes),
                    "count": len(v),
                    "min": v.min() if len(v) else np.nan,
                    "median": q[0.5],
                    "p90": q[0.9],
                    "p99": q[0.99],
                    "max": v.max() if len(v) else np.nan,
                    "mean": v.mean() if len(v) else np.nan,
                }
            )
    return pd.DataFrame.from_records(
        records,
        columns=["measure", "unit", *GROUP, "on", "count", "min", "median", "p90", "p99", "max", "mean"],
    )


def hardest(df: pd.DataFrame, column: str, n: int = 10) -> pd.DataFrame:
    """The `n` deals with the largest value of a measure, each deal once (at
    the count of cells where it was largest; ties: lower deal first)."""
    m = measure(column)
    rows = df[df["outcome"].isin(m.outcomes) & df[column].notna()]
    # a deal has at most one row per count of cells: the top n x counts rows hold n deals
    per_deal = max(1, int(rows["cells"].nunique())) if len(rows) else 1
    rows = _plain(rows.nlargest(n * per_deal, column, keep="all"))
    rows = rows.sort_values([column, "deal_number", "cells"], ascending=[False, True, True], kind="stable")
    rows = rows.drop_duplicates(["deal_number", "variant", "move_rule"], keep="first")
    cols = ["deal_number", *GROUP, "outcome", *(x.column for x in MEASURES if x.column in rows)]
    out = rows[cols].head(n).reset_index(drop=True)
    out.insert(0, "rank", np.arange(1, len(out) + 1))
    out["cells"] = out["cells"].astype("int64")
    return out


def hardest_table(df: pd.DataFrame, n: int = 10) -> pd.DataFrame:
    """`hardest` for every measure, stacked, with a `measure` column first."""
    parts = []
    for m in MEASURES:
        if m.column in df:
            h = hardest(df, m.column, n)
            h.insert(0, "measure", m.column)
            parts.append(h)
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def auto_block_size(df: pd.DataFrame, max_blocks: int = 100) -> int:
    """The smallest power of ten (at least 10) giving at most `max_blocks` blocks.

    >>> auto_block_size(pd.DataFrame({"deal_number": [1, 32000]}))
    1000
    """
    if not len(df):
        return 10
    lo, hi = int(df["deal_number"].min()), int(df["deal_number"].max())
    size = 10
    while (hi // size) - ((lo - 1) // size) > max_blocks:
        size *= 10
    return size


def block_table(
    df: pd.DataFrame, block_size: int, cells: Sequence[int] | None = None, grid: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Deals and difficulty per block of `block_size` deals (1-1000, 1001-2000, ...)
    and count of cells: outcomes counted on the per-deal view, the medians of
    solution length and positions expanded on the rows of that count."""
    if block_size < 1:
        raise ValueError(f"block size must be positive, not {block_size}")
    by = ["first_deal", *GROUP]
    parts = []
    d = _plain(df)
    for variant, move_rule, _, g in _grids(df, cells, grid):
        view = pd.DataFrame(
            {
                "first_deal": (g["deal_number"] - 1) // block_size * block_size + 1,
                "cells": g["cells"],
                "outcome": g["outcome"].astype(object).fillna("not_tried"),
            }
        )
        counts = (
            view.groupby(["first_deal", "cells", "outcome"], sort=True)
            .size()
            .unstack("outcome", fill_value=0)
        )
        counts = counts.reindex(columns=[*schema.OUTCOMES, "not_tried"], fill_value=0).astype("int64")
        counts.columns.name = None
        counts.insert(0, "deals", counts.sum(axis=1))
        counts = counts.reset_index()
        counts.insert(1, "variant", variant)
        counts.insert(3, "move_rule", move_rule)
        parts.append(counts)
    if not parts:
        return pd.DataFrame(columns=[*by, "last_deal", "deals", *schema.OUTCOMES])
    out = pd.concat(parts, ignore_index=True)
    out.insert(1, "last_deal", out["first_deal"] + block_size - 1)
    out["solved_share"] = (out["solved"] / out["deals"]).where(out["deals"] > 0, 0.0)
    d["first_deal"] = (d["deal_number"] - 1) // block_size * block_size + 1
    if "solution_length_single" in d:
        solved = d[d["outcome"] == "solved"].groupby(by, sort=True)["solution_length_single"].median()
        out = out.merge(solved.rename("median_length_single").reset_index(), on=by, how="left")
    if "positions_expanded" in d:
        done = d[d["outcome"].isin(["solved", "unsolvable"])].groupby(by, sort=True)["positions_expanded"]
        out = out.merge(done.median().rename("median_positions_expanded").reset_index(), on=by, how="left")
        out = out.merge(done.quantile(0.9).rename("p90_positions_expanded").reset_index(), on=by, how="left")
    if "elapsed_s" in d:
        out = out.merge(
            d.groupby(by, sort=True)["elapsed_s"].sum().rename("cpu_s").reset_index(), on=by, how="left"
        )
    out["cells"] = out["cells"].astype("int64")
    return out.sort_values(by, kind="stable", ignore_index=True)


def min_cells_deals(df: pd.DataFrame, cells: Sequence[int] = ()) -> pd.DataFrame:
    """One row per deal (and variant, move rule) with its minimum number of
    cells, <NA> where it was not found, and ``status``: ``found``, ``above``
    (not won with the most cells tried) or ``undetermined`` (a limit or an
    error left a smaller count open)."""
    d = _plain(df)
    parts = []
    for (variant, move_rule), part in d.groupby(["variant", "move_rule"], sort=True):
        m = deal_minimum(part, sorted({int(c) for c in cells} | {int(c) for c in part["cells"].unique()}))
        m.insert(1, "variant", str(variant))
        m.insert(2, "move_rule", str(move_rule))
        parts.append(m)
    if not parts:
        return pd.DataFrame(columns=["deal_number", "variant", "move_rule", "min_cells", "status"])
    return pd.concat(parts, ignore_index=True).sort_values(["deal_number"], kind="stable", ignore_index=True)


def min_cells_distribution(df: pd.DataFrame, levels: Sequence[int] = ()) -> pd.DataFrame:
    """Deals per minimum number of cells, then ``more than K`` (not won with
    the most cells tried) and ``undetermined`` (a `limit` or `error` row left
    the minimum open). `levels` (the numbers of cells the run tried) are
    listed even when no deal has them."""
    per_deal = min_cells_deals(df, levels)
    top = max([*levels, *(int(c) for c in df["cells"].unique())], default=0)
    above = f"more than {top}"
    label = per_deal["min_cells"].astype("object").where(per_deal["status"] == "found")
    label = label.where(per_deal["status"] != "above", above).where(
        per_deal["status"] != "undetermined", UNDETERMINED
    )
    counts = label.map(str).value_counts()
    numeric = sorted(
        {int(k) for k in counts.index if k not in (above, UNDETERMINED)} | {int(k) for k in levels}
    )
    order: list[object] = [*numeric, *(x for x in (above, UNDETERMINED) if x in counts.index)]
    total = int(counts.sum())
    n = [int(counts.get(str(k), 0)) for k in order]
    return pd.DataFrame(
        {
            "min_cells": [str(k) for k in order],
            "deals": n,
            "share": [c / total if total else 0.0 for c in n],
        }
    )


def compare_runs(runs: Sequence[tuple[str, pd.DataFrame]]) -> pd.DataFrame:
    """Side by side: one column per run, one row per figure. Outcomes are of
    deals at the most cells each run tried (``cells``); shares are of each
    run's own deals, so runs of different sizes compare on equal footing."""
    figures: dict[str, dict[str, object]] = {}
    for label, df in runs:
        counts_at = _cells_of(df, None)
        grid = deal_cells(df, counts_at[-1:])
        outcome = grid["outcome"].astype(object)
        n = len(grid)
        col: dict[str, object] = {
            "deals": n,
            "rows": len(df),
            "cells": counts_at[-1] if counts_at else np.nan,
        }
        for o in schema.OUTCOMES:
            col[o] = int((outcome == o).sum())
        for o in schema.OUTCOMES:
            col[f"{o}_share"] = int((outcome == o).sum()) / n if n else 0.0
        for m in MEASURES:
            if m.column in df:
                v = _values(df, m)
                col[f"median_{m.column}"] = v.median() if len(v) else np.nan
        if "elapsed_s" in df:
            col["cpu_s"] = float(df["elapsed_s"].sum())
        figures[label] = col
    out = pd.DataFrame(figures)
    out.index.name = "figure"
    return out.reset_index()


def _comparison_key(runs: Sequence[tuple[str, pd.DataFrame]]) -> list[str]:
    single = all(df["cells"].nunique() <= 1 for _, df in runs)
    return ["deal_number"] if single else ["deal_number", "cells"]


def outcome_differences(runs: Sequence[tuple[str, pd.DataFrame]]) -> pd.DataFrame:
    """Deals present in every run whose outcome is not the same in all of them.

    Runs with one number of cells each (3 cells against 4) are matched by
    deal; runs trying several numbers of cells are matched by deal and cells.
    """
    key = _comparison_key(runs)
    merged: pd.DataFrame | None = None
    for label, df in runs:
        part = _plain(df)[[*key, "outcome"]].rename(columns={"outcome": label})
        merged = part if merged is None else merged.merge(part, on=key, how="inner")
    if merged is None:
        return pd.DataFrame()
    labels = [label for label, _ in runs]
    differs = merged[labels].nunique(axis=1) > 1
    out = merged[differs].sort_values(key, kind="stable", ignore_index=True)
    if "cells" in out:
        out["cells"] = out["cells"].astype("int64")
    return out


def difference_patterns(differences: pd.DataFrame, labels: Sequence[str]) -> pd.DataFrame:
    """How many deals show each combination of differing outcomes."""
    if not len(differences):
        return pd.DataFrame(columns=[*labels, "deals"])
    out = differences.groupby(list(labels), sort=True).size().rename("deals").reset_index()
    return out.sort_values(["deals", *labels], ascending=[False, *[True] * len(labels)], ignore_index=True)


def common_deals(runs: Sequence[tuple[str, pd.DataFrame]]) -> int:
    """How many deals (or deal and cells pairs) every run has."""
    key = _comparison_key(runs)
    sets = [set(map(tuple, df[key].to_numpy().tolist())) for _, df in runs]
    return len(set.intersection(*sets)) if sets else 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m reports.summary DIR...``: the outcome table on stdout."""
    from analyzer.cliframe import run_main

    from .source import read_runs

    def add(p: argparse.ArgumentParser) -> None:
        p.add_argument("dirs", nargs="+", type=Path, metavar="DIR", help="run directories")
        p.add_argument("--allow-mixed", action="store_true", help="accept runs of different configurations")

    def handle(args: argparse.Namespace) -> int:
        runs = read_runs(args.dirs, allow_mixed=args.allow_mixed, columns=[*GROUP, "outcome", "min_cells"])
        table = outcome_table(pd.concat([r.frame for r in runs], ignore_index=True))
        print(table.to_string(index=False))
        return 0

    return run_main(
        "python -m reports.summary", "Print the outcome table of run directories.", add, handle, argv
    )


if __name__ == "__main__":
    raise SystemExit(main())
