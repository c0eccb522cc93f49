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

from .source import cells_phrase
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
    """A written figure: file name (beside the report), title, caption and its
    size in pixels (the page embeds the PNG itself)."""

    name: str
    title: str
    caption: str
    width: int = 0
    height: int = 0


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


def _save(fig: Figure, path: Path) -> tuple[int, int]:
    """Writes the PNG; returns its width and height in pixels."""
    # metadata None drops the "Software" entry: bytes depend only on the data.
    fig.savefig(path, format="png", dpi=DPI, metadata={"Software": None})
    w, h = fig.get_size_inches() * DPI
    return int(w + 0.5), int(h + 0.5)


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
        # several series may hold different numbers of deals: compare shares, not counts
        shares = len({len(v) for v in series.values()}) > 1
        for label, v in series.items():
            weights = np.full(len(v), 1.0 / len(v)) if shares else None
            hist_ax.hist(
                v, bins=bins, weights=weights, histtype="step", linewidth=1.5, label=f"{label} (n={len(v):,})"
            )
            x, p = _ecdf(v)
            ecdf_ax.step(x, p, where="post", linewidth=1.5, label=label)
        for ax in (hist_ax, ecdf_ax):
            ax.set_xlabel(m.axis_label + (", log scale" if log else ""))
            if log:
                ax.set_xscale("log")
        if shares:
            hist_ax.set_ylabel("share of each series' deals")
        else:
            hist_ax.set_ylabel("deals (count)")
            hist_ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        hist_ax.set_title("Histogram" + (" (shares: the series differ in size)" if shares else ""))
        ecdf_ax.set_ylabel("share of deals at or below x")
        ecdf_ax.set_ylim(0, 1.02)
        ecdf_ax.set_title("Empirical cumulative distribution (ECDF)")
        hist_ax.legend(loc="best", fontsize="small")
        on = " or ".join(m.outcomes)
        title = f"{m.title}: {on} deals"
        fig.suptitle(title + (f" — {subtitle}" if subtitle else ""))
        w, h = _save(fig, path)
    caption = f"{m.axis_label} of the {on} deals, each deal once per number of cells."
    if shares:
        caption += " The histogram shows shares of each series' deals, since the series differ in size."
    if dropped:
        caption += f" {dropped} deals with value 0 are left out of the log scale."
    return PlotFile(path.name, title, caption, w, h)


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
        w, h = _save(fig, path)
    return PlotFile(
        path.name,
        title,
        "Deals per minimum number of cells; 'more than K' where the most cells tried did not win, "
        "'undetermined' where a limit or error left it open.",
        w,
        h,
    )


def won_curve(curves: Mapping[str, pd.DataFrame], path: Path) -> PlotFile | None:
    """The share of deals won with k cells (left) and of deals not won, on a
    log scale where a handful in a million still shows (right); one line per run."""
    curves = {k: v.dropna(subset=["won_share"]) for k, v in curves.items()}
    curves = {k: v for k, v in curves.items() if len(v)}
    if not curves:
        return None
    with _style():
        fig = Figure(figsize=SIZE)
        fig.subplots_adjust(left=0.06, right=0.985, bottom=0.13, top=0.86, wspace=0.18)
        won_ax, lost_ax = fig.subplots(1, 2)
        any_lost = False
        for i, (label, c) in enumerate(curves.items()):
            # one colour per run in both panels, whether or not it has a point on the right
            color = f"C{i % 10}"
            marker = "osD^v<>ph*"[i // 10 % 10]
            x = c["cells"].to_numpy(dtype=np.float64)
            won = c["won_share"].to_numpy(dtype=np.float64)
            won_ax.plot(x, won, color=color, marker=marker, linewidth=1.5, label=label)
            lost = c["not_won_share"].to_numpy(dtype=np.float64)
            keep = lost > 0
            if keep.any():
                any_lost = True
                lost_ax.plot(x[keep], lost[keep], color=color, marker=marker, linewidth=1.5, label=label)
        for ax in (won_ax, lost_ax):
            ax.set_xlabel("cells (count)")
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        won_ax.set_ylabel("share of deals won")
        won_ax.set_ylim(-0.02, 1.02)
        won_ax.set_title("Deals won with k cells")
        won_ax.legend(loc="best", fontsize="small")
        lost_ax.set_ylabel("share of deals not won, log scale")
        lost_ax.set_title("Deals not won with k cells")
        if any_lost:
            lost_ax.set_yscale("log")
        else:
            lost_ax.text(
                0.5, 0.5, "every settled deal won", ha="center", va="center", transform=lost_ax.transAxes
            )
        title = "Fraction of deals won with k cells"
        fig.suptitle(title)
        w, h = _save(fig, path)
    return PlotFile(
        path.name,
        title,
        "Share of the deals settled at each number of cells (won, or proved unsolvable) that are won; "
        "right, the share not won on a log scale (counts of zero are not drawn).",
        w,
        h,
    )


def by_deal_number(blocks: Mapping[str, pd.DataFrame], path: Path, block_size: int) -> PlotFile | None:
    """Difficulty against deal number: per block of deals, the median and 90th
    percentile of positions expanded, and the median solution length."""
    blocks = {k: v for k, v in blocks.items() if len(v) and "median_positions_expanded" in v}
    if not blocks:
        return None
    with _style():
        fig = Figure(figsize=SIZE)
        fig.subplots_adjust(left=0.07, right=0.985, bottom=0.13, top=0.86, wspace=0.2)
        effort_ax, length_ax = fig.subplots(1, 2)
        for i, (label, b) in enumerate(blocks.items()):
            color = f"C{i % 10}"
            x = (b["first_deal"] + (block_size - 1) / 2).to_numpy(dtype=np.float64)
            med = b["median_positions_expanded"].to_numpy(dtype=np.float64)
            effort_ax.plot(x, med, color=color, linewidth=1.5, marker=".", label=f"{label}: median")
            if "p90_positions_expanded" in b:
                p90 = b["p90_positions_expanded"].to_numpy(dtype=np.float64)
                effort_ax.plot(
                    x, p90, color=color, linewidth=1.0, linestyle="--", label=f"{label}: 90th percentile"
                )
            if "median_length_single" in b:
                length = b["median_length_single"].to_numpy(dtype=np.float64)
                length_ax.plot(x, length, color=color, linewidth=1.5, marker=".", label=label)
        effort_ax.set_yscale("log")
        effort_ax.set_ylabel("positions expanded (positions), log scale")
        effort_ax.set_title("Search effort per block (solved or unsolvable deals)")
        length_ax.set_ylabel("median solution length (moves)")
        length_ax.set_title("Solution length per block (solved deals)")
        for ax in (effort_ax, length_ax):
            ax.set_xlabel(f"deal number (blocks of {block_size:,} deals)")
        effort_ax.legend(loc="best", fontsize="small")
        title = "Difficulty against deal number"
        fig.suptitle(title)
        w, h = _save(fig, path)
    return PlotFile(
        path.name,
        title,
        f"Per block of {block_size:,} deals: positions expanded (median, and 90th percentile dashed) and median "
        "solution length in single-card moves.",
        w,
        h,
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

    from .source import read_runs
    from .summary import min_cells_distribution

    def add(p: argparse.ArgumentParser) -> None:
        p.add_argument("dirs", nargs="+", type=Path, metavar="DIR", help="run directories")
        p.add_argument("--out", type=Path, required=True, help="directory for the PNG files")
        p.add_argument("--allow-mixed", action="store_true", help="accept runs of different configurations")

    def handle(args: argparse.Namespace) -> int:
        runs = read_runs(args.dirs, allow_mixed=args.allow_mixed)
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
