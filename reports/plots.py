"""Plots of difficulty and minimum cells, drawn with matplotlib's Agg backend.

Figures are built with `matplotlib.figure.Figure` (no pyplot state, no GUI)
under matplotlib's default style with a fixed hash salt and no PNG metadata,
so the same data gives the same PNG bytes.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Final, cast

import matplotlib

matplotlib.use("Agg")

import numpy as np
import numpy.typing as npt
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from .load import cells_phrase
from .summary import GROUP, MEASURES, Measure

#: Figure size in inches at `DPI`: 1100 x 420 pixels, legible at 100 % zoom.
SIZE: Final = (11.0, 4.2)
DPI: Final = 100
#: An ECDF of a million points draws no better than one of this many quantiles.
ECDF_POINTS: Final = 2001
#: Data spanning more than this ratio (two decades) gets a log axis.
LOG_SPAN: Final = 100.0

Values = npt.NDArray[np.float64]


@dataclass(frozen=True)
class PlotFile:
    """A written figure: file name (beside the report), title and caption."""

    name: str
    title: str
    caption: str


@contextmanager
def _style() -> Iterator[None]:
    """matplotlib defaults, whatever the user's matplotlibrc, plus fixed salt."""
    with matplotlib.rc_context():
        matplotlib.rcdefaults()
        matplotlib.rcParams.update(
            {
                "svg.hashsalt": "freecell-analyzer",
                "path.simplify": True,
                "axes.grid": True,
                "grid.alpha": 0.3,
                "axes.titlesize": "medium",
                "figure.titlesize": "large",
            }
        )
        yield


def _save(fig: Figure, path: Path) -> None:
    # metadata None drops the "Software" entry: bytes depend only on the data.
    fig.savefig(path, format="png", dpi=DPI, metadata={"Software": None})


def _ecdf(v: Values) -> tuple[Values, Values]:
    x = np.sort(v)
    if len(x) > ECDF_POINTS:
        p = np.linspace(0.0, 1.0, ECDF_POINTS)
        return np.quantile(x, p, method="inverted_cdf"), p
    return x, np.arange(1, len(x) + 1, dtype=np.float64) / len(x)


def _bins(values: Sequence[Values], log: bool) -> Values:
    """Bin edges: about sqrt(n) bins, 10 to 40 of them; one per integer when
    there are enough rows to fill them (e.g. solution lengths of many deals)."""
    allv = np.concatenate(values)
    lo, hi = float(allv.min()), float(allv.max())
    k = int(min(40, max(10, np.sqrt(len(allv)))))
    if log:
        if lo == hi:
            return np.array([lo / 1.5, hi * 1.5])
        return np.geomspace(lo, hi, k + 1)
    if lo == hi:
        return np.array([lo - 0.5, hi + 0.5])
    if np.all(allv == np.round(allv)) and hi - lo <= 80 and len(allv) >= 10 * (hi - lo + 1):
        return np.arange(lo - 0.5, hi + 1.5, 1.0)
    return np.linspace(lo, hi, k + 1)


def wants_log(values: Sequence[Values]) -> bool:
    """True when positive data spans more than two decades."""
    allv = np.concatenate(values) if values else np.array([])
    allv = allv[allv > 0]
    return bool(len(allv)) and float(allv.max()) / float(allv.min()) > LOG_SPAN


def histogram_ecdf(
    series: Mapping[str, Values], m: Measure, path: Path, *, subtitle: str = ""
) -> PlotFile | None:
    """A histogram (left) and an ECDF (right) of one measure, one line per series."""
    series = {k: np.asarray(v, dtype=np.float64) for k, v in series.items()}
    log = m.log or wants_log(list(series.values()))
    dropped = 0
    if log:
        kept = {k: v[v > 0] for k, v in series.items()}
        dropped = sum(len(v) - len(kept[k]) for k, v in series.items())
        series = kept
    series = {k: v for k, v in series.items() if len(v)}
    if not series:
        return None
    with _style():
        fig = Figure(figsize=SIZE)
        # fixed margins: constrained layout would draw every figure twice
        fig.subplots_adjust(left=0.06, right=0.985, bottom=0.13, top=0.86, wspace=0.16)
        hist_ax, ecdf_ax = fig.subplots(1, 2)
        bins = _bins(list(series.values()), log)
        for label, v in series.items():
            hist_ax.hist(v, bins=bins, histtype="step", linewidth=1.5, label=f"{label} (n={len(v):,})")
            x, p = _ecdf(v)
            ecdf_ax.step(x, p, where="post", linewidth=1.5, label=label)
        for ax in (hist_ax, ecdf_ax):
            ax.set_xlabel(m.axis_label + (", log scale" if log else ""))
            if log:
                ax.set_xscale("log")
        hist_ax.set_ylabel("rows (count)")
        hist_ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        hist_ax.set_title("Histogram")
        ecdf_ax.set_ylabel("share of rows at or below x")
        ecdf_ax.set_ylim(0, 1.02)
        ecdf_ax.set_title("Empirical cumulative distribution (ECDF)")
        hist_ax.legend(loc="best", fontsize="small")
        on = " or ".join(m.outcomes)
        title = f"{m.title}: {on} rows"
        fig.suptitle(title + (f" — {subtitle}" if subtitle else ""))
        _save(fig, path)
    caption = f"{m.axis_label} of {on} rows."
    if dropped:
        caption += f" {dropped} rows with value 0 are left out of the log scale."
    return PlotFile(path.name, title, caption)


def min_cells_bar(dist: pd.DataFrame, path: Path, *, subtitle: str = "") -> PlotFile:
    """Deals per minimum number of cells (`summary.min_cells_distribution`)."""
    with _style():
        fig = Figure(figsize=(8.0, 4.2))
        fig.subplots_adjust(left=0.09, right=0.98, bottom=0.13, top=0.88)
        ax: Axes = fig.subplots()
        labels = [str(x) for x in dist["min_cells"]]
        counts = dist["deals"].to_numpy(dtype=np.int64)
        ax.set_axisbelow(True)
        ax.grid(axis="x", visible=False)
        bars = ax.bar(labels, counts, color="tab:blue")
        ax.bar_label(bars, labels=[f"{c:,}" for c in counts], padding=2)
        ax.set_xlabel("minimum number of cells that wins the deal (cells)")
        ax.set_ylabel("deals (count)")
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.margins(y=0.15)
        title = "Minimum number of cells per deal"
        fig.suptitle(title + (f" — {subtitle}" if subtitle else ""))
        _save(fig, path)
    return PlotFile(
        path.name,
        title,
        "Deals per minimum number of cells; 'undetermined' where a limit or error left it open.",
    )


def series_by_group(frames: Sequence[tuple[str, pd.DataFrame]], m: Measure) -> dict[str, Values]:
    """The values of a measure per configuration, labelled for a legend.

    One run with one configuration: its label. Otherwise one line per
    variant, cells and move rule (and run, when two runs share those).
    """
    out: dict[str, Values] = {}
    for run_label, df in frames:
        rows = df[df["outcome"].isin(m.outcomes)]
        groups = list(rows.groupby([rows[c].astype(object) for c in GROUP], sort=True))
        for key, part in groups:
            variant, cells, move_rule = cast(tuple[str, int, str], key)
            label = run_label if len(groups) == 1 else f"{variant}, {cells_phrase(int(cells))}, {move_rule}"
            if len(frames) > 1 and len(groups) > 1:
                label = f"{run_label}: {cells_phrase(int(cells))}"
            out[label] = part[m.column].dropna().to_numpy(dtype=np.float64)
    return out


def write_difficulty_plots(frames: Sequence[tuple[str, pd.DataFrame]], out_dir: Path) -> list[PlotFile]:
    """One histogram + ECDF figure per measure, written as PNG into `out_dir`."""
    files: list[PlotFile] = []
    for m in MEASURES:
        if all(m.column in df for _, df in frames):
            f = histogram_ecdf(series_by_group(frames, m), m, out_dir / f"{m.column}.png")
            if f is not None:
                files.append(f)
    return files


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m reports.plots DIR... --out PLOT_DIR``: only the figures."""
    from analyzer.cliframe import run_main

    from .load import load_runs
    from .summary import min_cells_distribution

    def add(p: argparse.ArgumentParser) -> None:
        p.add_argument("dirs", nargs="+", type=Path, metavar="DIR", help="run directories")
        p.add_argument("--out", type=Path, required=True, help="directory for the PNG files")
        p.add_argument("--allow-mixed", action="store_true", help="accept runs of different configurations")

    def handle(args: argparse.Namespace) -> int:
        runs = load_runs(args.dirs, allow_mixed=args.allow_mixed)
        args.out.mkdir(parents=True, exist_ok=True)
        files = write_difficulty_plots([(r.label, r.frame) for r in runs], args.out)
        for r in runs:
            if r.min_cells and len(runs) == 1:
                files.append(min_cells_bar(min_cells_distribution(r.frame), args.out / "min_cells.png"))
        for f in files:
            print(args.out / f.name)
        return 0

    return run_main("python -m reports.plots", "Draw the report's figures as PNG files.", add, handle, argv)


if __name__ == "__main__":
    raise SystemExit(main())
