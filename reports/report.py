"""``freecell-analyzer report DIR... --out REPORT_DIR``: load → summarize → write.

Writes ``report.html``, one self-contained page (figures embedded, sortable
tables driven by a few lines of inline script, nothing fetched from the
network, so it can be mailed or moved alone), ``report.md`` with its PNG
figures beside it, and every table as CSV. Both pages are rendered from
Jinja2 templates (``reports/templates``). The output depends only on the
input rows and manifests: no clock is read, figures carry no metadata,
tables have a fixed row order. So the same input gives the same bytes.

The page opens with the answer (`analyzer.headline`), then sets the run's
figures beside the published ones (`reports.reference`). Every statistic
counts deals. Runs covering different deals are compared only on equal
footing: refused unless ``--normalise`` (shares of each run's own deals) or
``--common-deals`` (only the deals every run has), and the page says which.
"""

from __future__ import annotations

import argparse
import base64
import functools
import math
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import jinja2
import numpy as np
import pandas as pd
import pyarrow as pa

import analyzer
from analyzer import headline, schema
from analyzer._api import MAX_DEAL
from analyzer.cliframe import count_option
from analyzer.errors import storage_error

from . import plots, reference, summary
from .source import (
    Run,
    RunError,
    RunManifest,
    config_cells,
    count_deals,
    format_ranges,
    merge_ranges,
    read_runs,
)

#: Report files; a directory holding `HTML` is a report and may be rewritten.
HTML: Final = "report.html"
MARKDOWN: Final = "report.md"
#: Longest deal list shown in the page; the CSV beside it has every row.
SHOW_ROWS: Final = 100
#: Deals named in the headline before "... and N more" (all in the CSV).
HEADLINE_DEALS: Final = 25
#: Tables longer than this scroll inside a box of their own in the page.
LONG_TABLE: Final = 25
#: The solution text is never summarized: leave it on disk.
COLUMNS: Final = [c.name for c in schema.COLUMNS if c.name != "solution"]
#: Columns that hold identifiers or small counts, printed without separators.
_PLAIN_INTS: Final = frozenset({"deal_number", "first_deal", "last_deal", "rank", "cells", "min_cells"})
#: How runs covering different deals are compared (``--normalise``, ``--common-deals``).
FOOTINGS: Final = ("refuse", "normalise", "common")


# --- the report model ---------------------------------------------------------


@dataclass
class Table:
    """A table: raw values (written to CSV) shown formatted in the page."""

    id: str
    title: str
    frame: pd.DataFrame
    note: str = ""
    csv: bool = True
    show_rows: int | None = None


@dataclass
class Section:
    id: str
    title: str
    paragraphs: list[str] = field(default_factory=list)
    items: list[Table | plots.PlotFile] = field(default_factory=list)


@dataclass
class RunInput:
    """One run as the report sees it: its rows (restricted to the common deals
    under ``--common-deals``), the counts of cells it asked about, and the
    per-deal view."""

    run: Run
    frame: pd.DataFrame
    cells: tuple[int, ...]
    min_cells: bool
    grid: pd.DataFrame
    minimum: pd.DataFrame | None

    @property
    def label(self) -> str:
        return self.run.label


@dataclass
class Report:
    title: str
    lead: str
    footing: str
    headlines: list[headline.Headline]
    sections: list[Section]
    inputs: list[RunInput] = field(default_factory=list)
    block_size: int = 1000

    def tables(self) -> list[Table]:
        return [t for s in self.sections for t in s.items if isinstance(t, Table)]

    def section(self, id_: str) -> Section | None:
        return next((s for s in self.sections if s.id == id_), None)


# --- summarize -------------------------------------------------------------------


def _stack(inputs: Sequence[RunInput], fn: Callable[[RunInput], pd.DataFrame]) -> pd.DataFrame:
    """`fn` on each run, stacked, with a leading `run` column when there are several."""
    parts = []
    for r in inputs:
        part = fn(r)
        if len(inputs) > 1:
            part.insert(0, "run", r.label)
        parts.append(part)
    parts = [p for p in parts if len(p.columns)]
    if not parts:
        return pd.DataFrame()
    return pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]


def _limits_text(run: Run) -> str:
    limits = run.config.get("limits") or {}
    if not isinstance(limits, dict):
        return str(limits)
    return "; ".join(
        f"{k} {_fmt_value(v, k) if v is not None else 'none'}" for k, v in sorted(limits.items())
    )


def _rules_text(run: Run) -> str:
    v = run.config.get("variant") or {}
    if not isinstance(v, dict):
        return str(v)
    return (
        f"{v.get('name')}: {v.get('columns')} columns, build {v.get('build')}, empty column takes "
        f"{v.get('empty')}, {v.get('dealt_to_cells')} cards dealt to cells"
    )


def run_header(run: Run) -> dict[str, str]:
    """The facts of one run: versions, configuration, coverage, time."""
    ms = run.manifests
    declared = run.declared
    n_declared = count_deals(declared)
    present = int(run.frame["deal_number"].nunique())
    missing = run.missing()
    invocations = [i for m in ms for i in m.invocations]
    started = sorted(i.started_at for i in invocations if i.started_at)
    finished = sorted(i.finished_at for i in invocations if i.finished_at)
    shown_missing = format_ranges(missing[:20]) + (
        f" and {len(missing) - 20} more ranges" if len(missing) > 20 else ""
    )

    def each(get: Callable[[RunManifest], str]) -> str:
        return ", ".join(dict.fromkeys(get(m) for m in ms))

    return {
        "configuration": run.label,
        "directory": each(lambda m: m.path.name),
        "rules": _rules_text(run),
        "cells tried": ", ".join(str(c) for c in config_cells(run.config)),
        "per-deal minimum cells": "yes" if run.config.get("min_cells") else "no",
        "move rule": str((run.config.get("variant") or {}).get("move_rule", "")),
        "limits per search": _limits_text(run),
        "deals": format_ranges(declared),
        "rows": f"{len(run.frame):,}",
        "coverage": f"{present:,} of {n_declared:,} deals ({headline.share_text(present, n_declared)})",
        "missing deals": shown_missing or "none",
        "package version": each(lambda m: m.package_version or "unknown"),
        "engine version": each(lambda m: m.engine_version or "unknown"),
        "git commit": each(lambda m: m.git_commit or "unknown"),
        "schema version": each(lambda m: m.schema_version or "unknown"),
        "configuration hash": run.config_hash,
        "invocations": f"{len(invocations)} ({', '.join(i.status or '?' for i in invocations)})",
        "started": started[0] if started else "unknown",
        "finished": finished[-1] if finished else "unknown",
        "wall time (s)": _fmt_value(sum(m.wall_s for m in ms), "wall_s"),
        "CPU time in the solver (s)": _fmt_value(float(run.frame["elapsed_s"].sum()), "cpu_s"),
        "command": " ; ".join(dict.fromkeys(shlex.join(m.command) for m in ms if m.command)) or "unknown",
    }


def _prepare(run: Run, frame: pd.DataFrame) -> RunInput:
    cells = tuple(sorted({*config_cells(run.config), *(int(c) for c in frame["cells"].unique())}))
    min_cells = run.min_cells
    grid = summary.deal_cells(frame, cells)
    minimum = summary.deal_minimum(frame, cells) if min_cells else None
    return RunInput(run, frame, cells, min_cells, grid, minimum)


def footing(runs: Sequence[Run], mode: str) -> tuple[list[pd.DataFrame], str]:
    """The rows each run is compared on, and the sentence saying how.

    Runs covering the same deals compare as they are. Otherwise `mode`
    decides: ``refuse`` raises `RunError`; ``normalise`` keeps every run's
    deals and compares shares of each run's own deals; ``common`` keeps only
    the deals every run has results for.
    """
    if mode not in FOOTINGS:
        raise ValueError(f"footing {mode!r}: expected one of {', '.join(FOOTINGS)}")
    frames = [r.frame for r in runs]
    if len(runs) < 2:
        return frames, ""
    ranges = [r.declared for r in runs]
    if all(x == ranges[0] for x in ranges):
        return frames, f"Every run covers the same deals ({format_ranges(ranges[0])})."
    described = "; ".join(f"{r.label}: {format_ranges(r.declared)}" for r in runs)
    if mode == "refuse":
        raise RunError(
            f"the runs cover different deals ({described}); pass --normalise to compare shares of each run's "
            "own deals, or --common-deals to compare only the deals every run has"
        )
    if mode == "normalise":
        return frames, (
            f"The runs cover different deals ({described}). Normalised (--normalise): comparisons use shares of "
            "each run's own deals and histograms show shares; counts are each run's own and are not compared."
        )
    common = functools.reduce(np.intersect1d, [f["deal_number"].unique() for f in frames])
    if not len(common):
        raise RunError(f"--common-deals: the runs have no deal in common ({described})")
    kept = [f[f["deal_number"].isin(common)].reset_index(drop=True) for f in frames]
    ranges_text = format_ranges(merge_ranges((int(d), int(d)) for d in common))
    return kept, (
        f"The runs cover different deals ({described}). Only the {len(common):,} deals every run has are "
        f"compared (--common-deals): {ranges_text}."
    )


def _run_headline(r: RunInput) -> headline.Headline:
    keep = [
        c for c in ("deal_number", "cells", "outcome", "limit_reason", "error", "min_cells") if c in r.frame
    ]
    table = pa.Table.from_pandas(summary._plain(r.frame[keep]), preserve_index=False)
    return headline.headline(
        table, label=r.label, cells=r.cells, min_cells=r.min_cells, declared=r.run.declared
    )


def _comparisons(inputs: Sequence[RunInput]) -> pd.DataFrame:
    figures = [
        reference.RunFigures(
            label=r.label,
            variant=r.run.config.get("variant") or {},
            cells=r.cells,
            grid=r.grid,
            declared=r.run.declared,
            minimum=r.minimum,
        )
        for r in inputs
    ]
    return reference.runs_table(figures)


def _deals_with(r: RunInput, outcome: str) -> pd.DataFrame:
    return summary.deals_with_outcome(r.frame, outcome, r.cells, r.grid)


def _won_by_run(inputs: Sequence[RunInput]) -> pd.DataFrame:
    """Deals won with k cells, one row per run and one column per count of cells."""
    rows = []
    for r in inputs:
        curve = summary.won_curve(r.frame, r.cells, r.grid)
        row: dict[str, object] = {"run": r.label, "deals": len(r.grid["deal_number"].unique())}
        for _, c in curve.iterrows():
            row[f"won_share_{int(c['cells'])}"] = c["won_share"]
        rows.append(row)
    out = pd.DataFrame(rows)
    share_cols = sorted(
        (c for c in out.columns if c.startswith("won_share_")), key=lambda c: int(c.rsplit("_", 1)[1])
    )
    return out[["run", "deals", *share_cols]]


def summarize(
    runs: Sequence[Run], *, top: int = 10, block_size: int | None = None, footing_mode: str = "refuse"
) -> Report:
    """Every table of the report (figures are added by `write`)."""
    frames, footing_text = footing(runs, footing_mode)
    inputs = [_prepare(r, f) for r, f in zip(runs, frames, strict=True)]
    several = len(runs) > 1
    title = "FreeCell Analyzer report: " + (
        runs[0].label if not several else f"comparison of {len(runs)} runs"
    )
    deals = (
        format_ranges(runs[0].declared) if not several else "; ".join(format_ranges(r.declared) for r in runs)
    )
    lead = (
        f"Outcomes and difficulty of Microsoft deals {deals}. Outcomes: solved (a solution was found and "
        "replays), unsolvable (an exhaustive search proved there is none), limit (a search budget ran out "
        "first), error (the solver failed on that deal). Every figure counts deals; a table of rows says so."
    )
    headlines = [_run_headline(r) for r in inputs]
    sections: list[Section] = []

    published = Section("published", "Published figures side by side")
    comparisons = _comparisons(inputs)
    if len(comparisons):
        published.paragraphs.append(
            "Ours beside every published figure that matches a run's rules, counts of cells and deals. agree: "
            "the same (deal by deal where the source lists deals); disagree: not the same (the deals are named); "
            "settled: the same wherever the source decided, and our proofs decide the deals it left "
            "intractable; open: some of our deals hit a limit, failed or are missing. A share of random deals "
            f"agrees when within {reference.SHARE_SIGMAS:g} standard errors. Sources are listed at the end."
        )
        published.items.append(Table("published", "Ours and published", comparisons))
    else:
        published.paragraphs.append(
            "No published figure matches these runs' rules, counts of cells and deals; the figures we know of "
            "are listed at the end."
        )
    sections.append(published)

    outcomes = Section(
        "outcomes",
        "Outcomes per number of cells",
        paragraphs=[
            "Deals, not rows: every deal once per number of cells the run asked about. Inferred: no row of that "
            "count proves it, another count does (a deal won with k cells is won with more; one that cannot be "
            "won with k cells cannot be won with fewer). Not tried: the run never settled that count."
        ],
    )
    outcomes.items.append(
        Table(
            "outcomes", "Deals per outcome", _stack(inputs, lambda r: summary.outcome_table(r.frame, r.cells, r.grid))
        )
    )
    if several or any(len(r.cells) > 1 for r in inputs):
        outcomes.items.append(
            Table(
                "won",
                "Share of deals won with k cells (of the deals settled at k)",
                _won_by_run(inputs),
                note="Shares of each run's own deals, so runs of different sizes compare.",
            )
        )
    for o, what in (
        ("unsolvable", "Unsolvable deals"),
        ("limit", "Deals that hit a limit, with the budget that ran out"),
        ("error", "Deals with an error"),
    ):
        t = _stack(inputs, functools.partial(_deals_with, outcome=o))
        multi = any(len(r.cells) > 1 for r in inputs)
        where = " (at the most cells each run tried)" if multi else ""
        if len(t):
            outcomes.items.append(Table(o, f"{what}{where}: {len(t):,}", t, show_rows=SHOW_ROWS))
        else:
            outcomes.paragraphs.append(f"No {o} deals{where}.")
    sections.append(outcomes)

    for i, r in enumerate(inputs):
        if not r.min_cells:
            continue
        suffix = "" if i == 0 else f"_{i + 1}"
        sec = Section(f"min-cells{suffix}", "Minimum cells" + (f": {r.label}" if several else ""))
        sec.paragraphs.append(
            "The smallest number of cells with which each deal is won; every smaller number was proved "
            "unsolvable. Counted in deals."
        )
        sec.items.append(
            Table(
                f"min_cells{suffix}",
                "Deals per minimum number of cells",
                summary.min_cells_distribution(r.frame, r.cells),
            )
        )
        per_deal = summary.min_cells_deals(r.frame, r.cells)
        sec.items.append(
            Table(
                f"min_cells_deals{suffix}",
                "Every deal's minimum (by minimum cells, then deal)",
                per_deal.sort_values(
                    ["min_cells", "deal_number"], kind="stable", na_position="last", ignore_index=True
                ),
                show_rows=SHOW_ROWS,
            )
        )
        sections.append(sec)

    size = block_size or max(summary.auto_block_size(r.frame) for r in inputs)
    difficulty = Section(
        "difficulty",
        "Difficulty",
        paragraphs=[
            "Solution lengths are measured on solved deals; positions expanded and solve time on searches that "
            "finished (solved or unsolvable). Each deal counts once per number of cells. Solve time depends on "
            "the machine and its load."
        ],
    )
    difficulty.items.append(
        Table(
            "difficulty",
            "Distribution per measure",
            _stack(inputs, lambda r: summary.difficulty_table(r.frame)),
        )
    )
    difficulty.items.append(
        Table(
            "blocks",
            f"Per block of {size:,} deals",
            _stack(inputs, lambda r: summary.block_table(r.frame, size, r.cells, r.grid)),
        )
    )
    difficulty.items.append(
        Table(
            "hardest",
            f"Hardest {top} deals by each measure (each deal once)",
            _stack(inputs, lambda r: summary.hardest_table(r.frame, top)),
        )
    )
    sections.append(difficulty)

    if several:
        pairs = [(r.label, r.frame) for r in inputs]
        diffs = summary.outcome_differences(pairs)
        labels = [r.label for r in inputs]
        key = "deal" if "cells" not in diffs else "deal and number of cells"
        cmp = Section("comparison", "Runs side by side")
        cmp.paragraphs.append(
            f"{summary.common_deals(pairs):,} rows (matched by {key}) are in every run; on {len(diffs):,} of them "
            "the outcome differs."
        )
        cmp.items.append(
            Table(
                "comparison",
                "Side by side (outcomes at the most cells each run tried; shares of each run's own deals)",
                summary.compare_runs(pairs),
            )
        )
        if len(diffs):
            cmp.items.append(
                Table(
                    "difference_patterns",
                    "Differences by pattern (rows)",
                    summary.difference_patterns(diffs, labels),
                )
            )
            cmp.items.append(
                Table("outcome_differences", "Rows whose outcome differs", diffs, show_rows=SHOW_ROWS)
            )
        sections.append(cmp)

    headers = {r.label: run_header(r.run) for r in inputs}
    header = pd.DataFrame(
        {"field": list(next(iter(headers.values())))} | {k: list(v.values()) for k, v in headers.items()}
    )
    sections.append(Section("runs", "Runs", items=[Table("runs", "Run", header)]))
    sections.append(
        Section(
            "sources",
            "Published figures we know of",
            paragraphs=["Shipped with the package (reports/data/published.toml), each with its source."],
            items=[Table("sources", "Reference table", reference.load().table())],
        )
    )
    return Report(title, lead, footing_text, headlines, sections, inputs, size)


# --- formatting ------------------------------------------------------------------


def _is_missing(v: object) -> bool:
    if v is None or v is pd.NA:
        return True
    return isinstance(v, float) and math.isnan(v)


def _fmt_value(v: object, column: str, decimals: int | None = None) -> str:
    """One cell as text: shares in % (never rounded to 0 or 100), counts with
    separators, deal numbers bare."""
    if _is_missing(v):
        return ""
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, bool):
        return "yes" if v else "no"
    if column.endswith("share") or column.startswith("won_share_"):
        return headline.percent_text(float(v), decimals)  # type: ignore[arg-type]
    if isinstance(v, int):
        return str(v) if column in _PLAIN_INTS else f"{v:,}"
    if isinstance(v, float):
        if v.is_integer() and abs(v) < 1e15 and column not in ("elapsed_s", "cpu_s"):
            return str(int(v)) if column in _PLAIN_INTS else f"{int(v):,}"
        if abs(v) >= 100:
            return f"{v:,.0f}"
        if abs(v) >= 1:
            return f"{v:.2f}"
        return f"{v:.3g}"
    return str(v)


def _is_share(column: str) -> bool:
    return column.endswith("share") or column.startswith("won_share_")


def display_rows(t: Table) -> tuple[list[str], list[list[str]], list[bool]]:
    """Header, formatted rows (capped at `show_rows`) and which columns are numeric.
    A share column gets the decimals its smallest share needs, for every cell."""
    df = t.frame
    shown = df if t.show_rows is None else df.head(t.show_rows)
    cols = [str(c) for c in df.columns]
    figure_rows = bool(cols) and cols[0] == "figure" and t.id == "comparison"
    decimals: dict[str, int] = {}
    for c in cols:
        if _is_share(c) and pd.api.types.is_numeric_dtype(df[c]):
            values = [float(x) for x in df[c] if not _is_missing(x)]
            decimals[c] = max((headline.percent_decimals(x) for x in values), default=1)
    rows: list[list[str]] = []
    for rec in shown.itertuples(index=False, name=None):
        row = []
        for c, v in zip(cols, rec, strict=True):
            # the side-by-side table holds one figure per row: format by the figure
            fmt_as = str(rec[0]) if figure_rows and c != "figure" else c
            row.append(_fmt_value(v, fmt_as, decimals.get(c)))
        rows.append(row)
    numeric = [pd.api.types.is_numeric_dtype(df[c]) and c not in ("deal_number",) for c in df.columns]
    if figure_rows:
        numeric = [False, *[True] * (len(cols) - 1)]
    return cols, rows, numeric


def _sort_key(v: object) -> str:
    """The raw value a sortable column orders by (numbers as numbers)."""
    if _is_missing(v):
        return ""
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, bool):
        return str(int(v))
    if isinstance(v, int | float):
        return repr(float(v))
    return ""


def _table_note(t: Table) -> str:
    notes = [t.note] if t.note else []
    if t.show_rows is not None and len(t.frame) > t.show_rows:
        notes.append(
            f"First {t.show_rows:,} of {len(t.frame):,} rows shown (sorting orders those); all in {t.id}.csv."
        )
    elif t.csv:
        notes.append(f"Also in {t.id}.csv.")
    return " ".join(notes)


def table_view(t: Table) -> dict[str, Any]:
    """What the templates need of a table."""
    cols, rows, numeric = display_rows(t)
    shown = t.frame if t.show_rows is None else t.frame.head(t.show_rows)
    keys = [[_sort_key(v) for v in rec] for rec in shown.itertuples(index=False, name=None)]
    if t.id == "comparison":
        keys = [["", *[_sort_key(v) for v in rec[1:]]] for rec in shown.itertuples(index=False, name=None)]
    return {
        "kind": "table",
        "id": t.id,
        "title": t.title,
        "columns": cols,
        "numeric": numeric,
        "rows": [list(zip(r, k, strict=True)) for r, k in zip(rows, keys, strict=True)],
        "note": _table_note(t),
        "long": len(rows) > LONG_TABLE,
    }


def headline_view(h: headline.Headline, index: int = 0) -> dict[str, Any]:
    """What the templates need of a headline: numbers and deal lists, each
    with the CSV holding all of them."""
    cover = f"{h.deals:,} deals"
    if h.declared is not None and h.declared != h.deals:
        cover = (
            f"{h.deals:,} of {h.declared:,} deals have results ({headline.share_text(h.deals, h.declared)})"
        )
    suffix = "" if index == 0 else f"_{index + 1}"  # as the min-cells sections name their tables

    def deals(items: Sequence[str], csv: str, total: int) -> dict[str, Any]:
        shown = list(items[:HEADLINE_DEALS])
        return {"count": total, "shown": shown, "more": max(0, total - len(shown)), "csv": csv}

    lines = []
    for line in h.cells if not h.min_cells else ():
        lines.append(
            {
                "cells": line.cells,
                "title": f"With {line.cells} cell{'s' if line.cells != 1 else ''}"
                if len(h.cells) > 1
                else "",
                "outcomes": [
                    {
                        "name": o,
                        "count": line.counts.get(o, 0),
                        "count_text": f"{line.counts.get(o, 0):,}",
                        "share": line.share(o),
                        "inferred": line.inferred.get(o, 0),
                    }
                    for o in headline.OUTCOMES
                    if o != "error" or line.counts.get(o, 0)
                ],
                "not_tried": line.not_tried,
                "unsolvable": deals([str(d) for d in line.unsolvable], "unsolvable.csv", line.count("unsolvable")),
                "limit": deals([f"{d} ({why})" for d, why in line.limits], "limit.csv", line.count("limit")),
                "error": deals([str(d) for d, _ in line.errors], "error.csv", line.count("error")),
            }
        )
    return {
        "label": h.label,
        "deal_text": h.deal_text,
        "cover": cover,
        "min_cells": h.min_cells,
        "minimum": [
            {"level": k, "count": v, "count_text": f"{v:,}", "share": headline.share_text(v, h.deals)}
            for k, v in h.minimum.items()
        ],
        "top": h.cells[-1].cells if h.cells else 0,
        "above": deals([str(d) for d in h.above], f"min_cells_deals{suffix}.csv", len(h.above)),
        "undetermined": deals(
            [f"{d} ({why})" for d, why in h.undetermined], f"min_cells_deals{suffix}.csv", len(h.undetermined)
        ),
        "lines": lines,
    }


def _item_views(
    items: Sequence[Table | plots.PlotFile], out_dir: Path | None, embed: bool
) -> list[dict[str, Any]]:
    views: list[dict[str, Any]] = []
    for item in items:
        if isinstance(item, Table):
            views.append(table_view(item))
            continue
        src = item.name
        if embed and out_dir is not None:
            src = "data:image/png;base64," + base64.b64encode((out_dir / item.name).read_bytes()).decode(
                "ascii"
            )
        views.append(
            {
                "kind": "figure",
                "name": item.name,
                "src": src,
                "title": item.title,
                "caption": item.caption,
                "width": item.width,
                "height": item.height,
            }
        )
    return views


@functools.cache
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("reports", "templates"),
        autoescape=jinja2.select_autoescape(enabled_extensions=("html.j2",), default_for_string=False),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["md"] = lambda s: str(s).replace("|", "\\|").replace("\n", " ")
    env.filters["n"] = lambda k: f"{k:,}"  # a count of deals, as the headline writes it
    return env


def _context(report: Report, out_dir: Path | None, embed: bool) -> dict[str, Any]:
    return {
        "title": report.title,
        "lead": report.lead,
        "footing": report.footing,
        "version": analyzer.__version__,
        "headlines": [headline_view(h, i) for i, h in enumerate(report.headlines)],
        "sections": [
            {
                "id": s.id,
                "title": s.title,
                "paragraphs": s.paragraphs,
                "blocks": _item_views(s.items, out_dir, embed),
            }
            for s in report.sections
        ],
    }


def render_markdown(report: Report) -> str:
    text = _environment().get_template("report.md.j2").render(_context(report, None, embed=False))
    return text.rstrip() + "\n"


def render_html(report: Report, out_dir: Path) -> str:
    """The page, with every figure in `out_dir` embedded."""
    return _environment().get_template("report.html.j2").render(_context(report, out_dir, embed=True))


# --- write -----------------------------------------------------------------------


def prepare_out_dir(out: Path) -> None:
    """Creates `out`, or clears a previous report in it; refuses anything else."""
    if out.exists() and not out.is_dir():
        raise RunError(f"--out {out}: exists and is not a directory")
    if out.is_dir() and any(out.iterdir()):
        if not (out / HTML).is_file():
            raise RunError(
                f"--out {out}: the directory is not empty and holds no report; choose a new directory"
            )
        for p in out.iterdir():
            if p.is_file() and (p.suffix in (".png", ".csv") or p.name in (HTML, MARKDOWN)):
                p.unlink()
    out.mkdir(parents=True, exist_ok=True)


def write_csv(frame: pd.DataFrame, path: Path) -> None:
    frame.to_csv(path, index=False, lineterminator="\n", float_format="%.6g")


def _insert_after(section: Section | None, table_id: str, figures: Sequence[plots.PlotFile]) -> None:
    if section is None or not figures:
        return
    at = next((i for i, t in enumerate(section.items) if isinstance(t, Table) and t.id == table_id), -1)
    section.items[at + 1 : at + 1] = list(figures)


def write(report: Report, out: Path) -> Path:
    """Draws the figures into `report`, then writes every file. Returns report.html."""
    inputs = report.inputs
    frames = [(r.label, r.frame) for r in inputs]
    difficulty = report.section("difficulty")
    figures = plots.write_difficulty_plots(frames, out)
    if difficulty is not None and not figures:
        difficulty.paragraphs.append("No search finished (no solved or unsolvable deals): nothing to plot.")
    _insert_after(difficulty, "difficulty", figures)
    blocks: dict[str, pd.DataFrame] = {}
    for r in inputs:
        b = summary.block_table(r.frame, report.block_size, r.cells, r.grid)
        for k, part in b.groupby("cells", sort=True):
            if (
                part["median_positions_expanded"].notna().any()
                if "median_positions_expanded" in part
                else False
            ):
                name = r.label if len(r.cells) == 1 else f"{r.label}: {int(str(k))} cells"
                blocks[name] = part
    by_number = plots.by_deal_number(blocks, out / "by_deal_number.png", report.block_size)
    _insert_after(difficulty, "blocks", [by_number] if by_number else [])
    if len(inputs) > 1 or any(len(r.cells) > 1 for r in inputs):
        curve = plots.won_curve(
            {r.label: summary.won_curve(r.frame, r.cells, r.grid) for r in inputs}, out / "won_with_k_cells.png"
        )
        _insert_after(report.section("outcomes"), "won", [curve] if curve else [])
    for s in report.sections:
        if s.id.startswith("min-cells"):
            table = next(t for t in s.items if isinstance(t, Table))
            run = next(r for r in inputs if s.title.endswith(r.label)) if len(inputs) > 1 else inputs[0]
            _insert_after(
                s, table.id, [plots.min_cells_bar(table.frame, out / f"{table.id}.png", subtitle=run.label)]
            )
    for t in report.tables():
        if t.csv:
            write_csv(t.frame, out / f"{t.id}.csv")
    (out / MARKDOWN).write_text(render_markdown(report), encoding="utf-8")
    (out / HTML).write_text(render_html(report, out), encoding="utf-8")
    return out / HTML


def report(
    paths: Sequence[Path | str],
    out: Path | str,
    *,
    allow_mixed: bool = False,
    top: int = 10,
    block_size: int | None = None,
    footing_mode: str = "refuse",
) -> Path:
    """load → summarize → write. Returns the path of report.html."""
    if top < 1:
        raise RunError(f"--top must be at least 1, not {top}")
    if block_size is not None and block_size < 1:
        raise RunError(f"--block-size must be at least 1, not {block_size}")
    runs = read_runs(paths, allow_mixed=allow_mixed, columns=COLUMNS)
    rep = summarize(runs, top=top, block_size=block_size, footing_mode=footing_mode)
    out = Path(out)
    prepare_out_dir(out)
    return write(rep, out)


# --- command line ----------------------------------------------------------------


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "dirs", nargs="+", type=Path, metavar="DIR", help="run directories (several: a comparison)"
    )
    p.add_argument(
        "--out",
        type=Path,
        required=True,
        metavar="REPORT_DIR",
        help="where report.html, report.md, PNG and CSV files go",
    )
    p.add_argument(
        "--allow-mixed",
        action="store_true",
        help="accept runs of different configurations (variants, numbers of cells) and compare them in one page",
    )
    footing_group = p.add_mutually_exclusive_group()
    footing_group.add_argument(
        "--normalise",
        dest="footing",
        action="store_const",
        const="normalise",
        help="runs covering different deals: compare shares of each run's own deals (default: refuse)",
    )
    footing_group.add_argument(
        "--common-deals",
        dest="footing",
        action="store_const",
        const="common",
        help="runs covering different deals: compare only the deals every run has (default: refuse)",
    )
    p.set_defaults(footing="refuse")
    p.add_argument(
        "--top",
        type=count_option("deals", 1, 10_000),
        default=10,
        metavar="N",
        help="hardest N deals per measure, 1..10,000 (default 10)",
    )
    p.add_argument(
        "--block-size",
        type=count_option("deals", 1, MAX_DEAL),
        default=None,
        metavar="N",
        help="deals per block in the per-block table and plot (default: a power of ten giving at most 100 blocks)",
    )


def handler(args: argparse.Namespace) -> int:
    """``report``: prints the page's path. A run that ``validate`` would call
    invalid raises `RunInvalidError` (exit 1), an output that cannot be
    written `StorageError` (exit 3 when the disk is full, else 2)."""
    try:
        path = report(
            args.dirs,
            args.out,
            allow_mixed=args.allow_mixed,
            top=args.top,
            block_size=args.block_size,
            footing_mode=args.footing,
        )
    except OSError as e:  # an output that cannot be written: one line
        raise storage_error(e, str(e.filename or args.out)) from None
    print(path)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    from analyzer.cliframe import run_main

    return run_main(
        "python -m reports.report", __doc__.splitlines()[0] if __doc__ else "", add_arguments, handler, argv
    )


if __name__ == "__main__":
    raise SystemExit(main())
