"""Summaries of result rows: pure functions from DataFrames to DataFrames.

Every function takes rows shaped like `analyzer.schema` (any subset of runs)
and returns a new DataFrame with a stable row order, so the same input gives
the same tables, CSV and report bytes.

>>> import pandas as pd
>>> rows = pd.DataFrame({"deal_number": [1, 2, 3], "variant": "freecell", "cells": 4,
...     "move_rule": "product", "outcome": ["solved", "solved", "unsolvable"]})
>>> outcome_table(rows)[["cells", "rows", "solved", "unsolvable"]].to_dict("records")
[{'cells': 4, 'rows': 3, 'solved': 2, 'unsolvable': 1}]
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import numpy as np
import pandas as pd

from analyzer import schema

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
    """Categorical key columns as plain strings, so groupby sees only values present."""
    out = df.copy()
    for c in ("variant", "move_rule", "outcome", "limit_reason"):
        if c in out and isinstance(out[c].dtype, pd.CategoricalDtype):
            out[c] = out[c].astype(object)
    return out


def _counts(df: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Rows, count and share of each outcome per group."""
    d = _plain(df)
    counts = pd.crosstab([d[c] for c in by], d["outcome"]) if len(d) else pd.DataFrame()
    counts = counts.reindex(columns=list(schema.OUTCOMES), fill_value=0)
    counts.columns.name = None
    out = counts.reset_index() if len(d) else pd.DataFrame(columns=[*by, *schema.OUTCOMES])
    out.insert(len(by), "rows", out[list(schema.OUTCOMES)].sum(axis=1).astype("int64"))
    for o in schema.OUTCOMES:
        out[o] = out[o].astype("int64")
    for o in schema.OUTCOMES:
        out[f"{o}_share"] = (out[o] / out["rows"]).where(out["rows"] > 0, 0.0)
    return out.sort_values(by, kind="stable", ignore_index=True)


def outcome_table(df: pd.DataFrame) -> pd.DataFrame:
    """Count and share of solved / unsolvable / limit / error per variant,
    cells and move rule."""
    out = _counts(df, GROUP)
    out["cells"] = out["cells"].astype("int64")
    return out


def deals_with_outcome(df: pd.DataFrame, outcome: str) -> pd.DataFrame:
    """The rows with one outcome, by deal (e.g. the unsolvable deals)."""
    if outcome not in schema.OUTCOMES:
        raise ValueError(f"unknown outcome {outcome!r}; expected one of {', '.join(schema.OUTCOMES)}")
    extra = {"limit": ["limit_reason", "positions_expanded"], "error": ["error"]}.get(
        outcome, ["positions_expanded"]
    )
    cols = ["deal_number", *GROUP, *(c for c in extra if c in df)]
    rows = _plain(df.loc[df["outcome"] == outcome, cols])
    rows["cells"] = rows["cells"].astype("int64")
    return rows.sort_values(["deal_number", "cells"], kind="stable", ignore_index=True)


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
    """The `n` rows with the largest value of a measure (ties: lower deal first)."""
    m = measure(column)
    rows = _plain(df[df["outcome"].isin(m.outcomes) & df[column].notna()])
    rows = rows.sort_values([column, "deal_number", "cells"], ascending=[False, True, True], kind="stable")
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


def block_table(df: pd.DataFrame, block_size: int) -> pd.DataFrame:
    """Outcomes and difficulty per block of `block_size` deals (1-1000, 1001-2000, ...)."""
    if block_size < 1:
        raise ValueError(f"block size must be positive, not {block_size}")
    d = _plain(df)
    d["first_deal"] = (d["deal_number"] - 1) // block_size * block_size + 1
    by = ["first_deal", *GROUP]
    out = _counts(d, by)
    out.insert(1, "last_deal", out["first_deal"] + block_size - 1)
    out = out.drop(columns=[f"{o}_share" for o in schema.OUTCOMES if o != "solved"])
    stats = d.groupby(by, sort=True)
    if "solution_length_single" in d:
        solved = d[d["outcome"] == "solved"].groupby(by, sort=True)["solution_length_single"].median()
        out = out.merge(solved.rename("median_length_single").reset_index(), on=by, how="left")
    if "positions_expanded" in d:
        done = (
            d[d["outcome"].isin(["solved", "unsolvable"])]
            .groupby(by, sort=True)["positions_expanded"]
            .median()
        )
        out = out.merge(done.rename("median_positions_expanded").reset_index(), on=by, how="left")
    if "elapsed_s" in d:
        out = out.merge(stats["elapsed_s"].sum().rename("cpu_s").reset_index(), on=by, how="left")
    out["cells"] = out["cells"].astype("int64")
    return out.sort_values(by, kind="stable", ignore_index=True)


def min_cells_deals(df: pd.DataFrame) -> pd.DataFrame:
    """One row per deal (and variant, move rule) with its minimum number of
    cells; <NA> where the minimum was not determined."""
    d = _plain(df)
    keys = ["deal_number", "variant", "move_rule"]
    out = d.groupby(keys, sort=True)["min_cells"].min().reset_index()
    out["min_cells"] = out["min_cells"].astype("Int64")
    return out[["deal_number", "variant", "move_rule", "min_cells"]]


def min_cells_distribution(df: pd.DataFrame, levels: Sequence[int] = ()) -> pd.DataFrame:
    """Deals per minimum number of cells, and `undetermined` (a `limit` or
    `error` row left the minimum open). `levels` (the numbers of cells the
    run tried) are listed even when no deal has them."""
    per_deal = min_cells_deals(df)
    found = per_deal["min_cells"].astype("object").where(per_deal["min_cells"].notna(), UNDETERMINED)
    counts = found.value_counts()
    numeric = sorted({int(k) for k in counts.index if k != UNDETERMINED} | {int(k) for k in levels})
    order: list[object] = [*numeric, *([UNDETERMINED] if UNDETERMINED in counts.index else [])]
    total = int(counts.sum())
    n = [int(counts.get(k, 0)) for k in order]
    return pd.DataFrame(
        {
            "min_cells": [str(k) for k in order],
            "deals": n,
            "share": [c / total if total else 0.0 for c in n],
        }
    )


def compare_runs(runs: Sequence[tuple[str, pd.DataFrame]]) -> pd.DataFrame:
    """Side by side: one column per run, one row per figure."""
    figures: dict[str, dict[str, object]] = {}
    for label, df in runs:
        counts = df["outcome"].astype(object).value_counts()
        col: dict[str, object] = {"rows": len(df), "deals": int(df["deal_number"].nunique())}
        for o in schema.OUTCOMES:
            col[o] = int(counts.get(o, 0))
        for o in schema.OUTCOMES:
            col[f"{o}_share"] = int(counts.get(o, 0)) / len(df) if len(df) else 0.0
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

    from .load import load_runs

    def add(p: argparse.ArgumentParser) -> None:
        p.add_argument("dirs", nargs="+", type=Path, metavar="DIR", help="run directories")
        p.add_argument("--allow-mixed", action="store_true", help="accept runs of different configurations")

    def handle(args: argparse.Namespace) -> int:
        runs = load_runs(args.dirs, allow_mixed=args.allow_mixed, columns=[*GROUP, "outcome"])
        table = outcome_table(pd.concat([r.frame for r in runs], ignore_index=True))
        print(table.to_string(index=False))
        return 0

    return run_main(
        "python -m reports.summary", "Print the outcome table of run directories.", add, handle, argv
    )


if __name__ == "__main__":
    raise SystemExit(main())
