"""``freecell-analyzer report DIR... --out REPORT_DIR``: load → summarize → write.

Writes ``report.html`` with its PNG figures beside it, ``report.md`` (same
content, same figures) and every summary table as CSV. The output depends
only on the input rows and manifests: no clock is read, figures carry no
metadata, tables have a fixed row order. So the same input gives the same
bytes.
"""

from __future__ import annotations

import argparse
import functools
import html
import math
import shlex
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import numpy as np
import pandas as pd

import analyzer
from analyzer import schema
from analyzer._api import MAX_DEAL
from analyzer.cliframe import count_option
from analyzer.errors import storage_error

from . import plots, summary
from .load import (
    Run,
    RunError,
    RunManifest,
    config_cells,
    count_deals,
    format_ranges,
    load_runs,
)

#: Report files; a directory holding `HTML` is a report and may be rewritten.
HTML: Final = "report.html"
MARKDOWN: Final = "report.md"
#: Longest deal list shown in the page; the CSV beside it has every row.
SHOW_ROWS: Final = 100
#: Tables longer than this scroll inside a box of their own in the page.
LONG_TABLE: Final = 25
#: The solution text is never summarized: leave it on disk.
COLUMNS: Final = [c.name for c in schema.COLUMNS if c.name != "solution"]
#: Columns that hold identifiers or small counts, printed without separators.
_PLAIN_INTS: Final = frozenset({"deal_number", "first_deal", "last_deal", "rank", "cells", "min_cells"})


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
    #: For a min-cells section: the index of its run, whose bar chart `write` adds.
    min_cells_run: int | None = None


@dataclass
class Report:
    title: str
    lead: str
    sections: list[Section]

    def tables(self) -> list[Table]:
        return [t for s in self.sections for t in s.items if isinstance(t, Table)]


# --- summarize -------------------------------------------------------------------


def _stack(runs: Sequence[Run], fn: Callable[[pd.DataFrame], pd.DataFrame]) -> pd.DataFrame:
    """`fn` on each run, stacked, with a leading `run` column when there are several."""
    parts = []
    for r in runs:
        part = fn(r.frame)
        if len(runs) > 1:
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
        "coverage": f"{present:,} of {n_declared:,} deals ({100 * present / n_declared if n_declared else 0:.1f} %)",
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


def _with_outcome(df: pd.DataFrame, outcome: str) -> pd.DataFrame:
    return summary.deals_with_outcome(df, outcome)


def summarize(runs: Sequence[Run], *, top: int = 10, block_size: int | None = None) -> Report:
    """Every table of the report (figures are added by `write`)."""
    headers = {r.label: run_header(r) for r in runs}
    header = pd.DataFrame(
        {"field": list(next(iter(headers.values())))} | {k: list(v.values()) for k, v in headers.items()}
    )
    several = len(runs) > 1
    title = "FreeCell Analyzer report: " + (
        runs[0].label if not several else f"comparison of {len(runs)} runs"
    )
    deals = (
        format_ranges(runs[0].declared) if not several else "; ".join(format_ranges(r.declared) for r in runs)
    )
    lead = (
        f"Outcomes and difficulty of Microsoft deals {deals}. Outcomes: solved (a solution was found), "
        "unsolvable (exhaustive search proved there is none), limit (a search budget ran out first), "
        "error (the solver failed on that deal)."
    )
    sections = [Section("runs", "Runs", items=[Table("runs", "Run", header, csv=True)])]

    outcomes = Section("outcomes", "Outcomes")
    outcomes.items.append(
        Table("outcomes", "Outcomes per variant, cells and move rule", _stack(runs, summary.outcome_table))
    )
    for o, what in (
        ("unsolvable", "Unsolvable deals"),
        ("limit", "Deals that hit a limit"),
        ("error", "Deals with an error"),
    ):
        t = _stack(runs, functools.partial(_with_outcome, outcome=o))
        if len(t):
            outcomes.items.append(Table(o, f"{what} ({len(t):,})", t, show_rows=SHOW_ROWS))
        else:
            outcomes.paragraphs.append(f"No {o} rows.")
    sections.append(outcomes)

    difficulty = Section(
        "difficulty",
        "Difficulty",
        paragraphs=[
            "Solution lengths are measured on solved rows; positions expanded and solve time on searches "
            "that finished (solved or unsolvable). Solve time depends on the machine and its load."
        ],
    )
    difficulty.items.append(
        Table("difficulty", "Distribution per measure", _stack(runs, summary.difficulty_table))
    )
    difficulty.items.append(
        Table(
            "hardest",
            f"Hardest {top} deals by each measure",
            _stack(runs, lambda df: summary.hardest_table(df, top)),
        )
    )
    size = block_size or max(summary.auto_block_size(r.frame) for r in runs)
    difficulty.items.append(
        Table(
            "blocks", f"Per block of {size:,} deals", _stack(runs, lambda df: summary.block_table(df, size))
        )
    )
    sections.append(difficulty)

    for i, r in enumerate(runs):
        if not r.min_cells:
            continue
        suffix = "" if i == 0 else f"_{i + 1}"
        sec = Section(
            f"min-cells{suffix}", "Minimum cells" + (f": {r.label}" if several else ""), min_cells_run=i
        )
        sec.paragraphs.append(
            "The smallest number of cells with which each deal is won; every smaller number was proved unsolvable."
        )
        sec.items.append(
            Table(
                f"min_cells{suffix}",
                "Deals per minimum number of cells",
                summary.min_cells_distribution(r.frame, config_cells(r.config)),
            )
        )
        per_deal = summary.min_cells_deals(r.frame)
        sec.items.append(
            Table(
                f"min_cells_deals{suffix}",
                "Deals at each level (by minimum cells, then deal)",
                per_deal.sort_values(
                    ["min_cells", "deal_number"], kind="stable", na_position="last", ignore_index=True
                ),
                show_rows=SHOW_ROWS,
            )
        )
        sections.append(sec)

    if several:
        pairs = [(r.label, r.frame) for r in runs]
        diffs = summary.outcome_differences(pairs)
        labels = [r.label for r in runs]
        key = "deal" if "cells" not in diffs else "deal and number of cells"
        cmp = Section("comparison", "Comparison")
        cmp.paragraphs.append(
            f"{summary.common_deals(pairs):,} rows (matched by {key}) are in every run; "
            f"on {len(diffs):,} of them the outcome differs."
        )
        cmp.items.append(Table("comparison", "Side by side", summary.compare_runs(pairs)))
        if len(diffs):
            cmp.items.append(
                Table(
                    "difference_patterns",
                    "Differences by pattern",
                    summary.difference_patterns(diffs, labels),
                )
            )
            cmp.items.append(
                Table("outcome_differences", "Deals whose outcome differs", diffs, show_rows=SHOW_ROWS)
            )
        sections.append(cmp)
    return Report(title, lead, sections)


# --- formatting ------------------------------------------------------------------


def _is_missing(v: object) -> bool:
    if v is None or v is pd.NA:
        return True
    return isinstance(v, float) and math.isnan(v)


def _fmt_value(v: object, column: str) -> str:
    """One cell as text: shares in %, counts with separators, deal numbers bare."""
    if _is_missing(v):
        return ""
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, bool):
        return "yes" if v else "no"
    if column.endswith("share"):
        return f"{100 * float(v):.1f} %"  # type: ignore[arg-type]
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


def display_rows(t: Table) -> tuple[list[str], list[list[str]], list[bool]]:
    """Header, formatted rows (capped at `show_rows`) and which columns are numeric."""
    df = t.frame
    shown = df if t.show_rows is None else df.head(t.show_rows)
    cols = [str(c) for c in df.columns]
    rows: list[list[str]] = []
    for rec in shown.itertuples(index=False, name=None):
        row = []
        for c, v in zip(cols, rec, strict=True):
            # the side-by-side table holds one figure per row: format by the figure
            fmt_as = str(rec[0]) if cols[0] == "figure" and c != "figure" else c
            row.append(_fmt_value(v, fmt_as))
        rows.append(row)
    numeric = [pd.api.types.is_numeric_dtype(df[c]) and c not in ("deal_number",) for c in df.columns]
    if cols and cols[0] == "figure":
        numeric = [False, *[True] * (len(cols) - 1)]
    return cols, rows, numeric


def _table_note(t: Table) -> str:
    notes = [t.note] if t.note else []
    if t.show_rows is not None and len(t.frame) > t.show_rows:
        notes.append(f"First {t.show_rows:,} of {len(t.frame):,} rows; all of them in {t.id}.csv.")
    elif t.csv:
        notes.append(f"Also in {t.id}.csv.")
    return " ".join(notes)


def _md_cell(s: str) -> str:
    return s.replace("|", "\\|").replace("\n", " ")


def render_markdown(report: Report) -> str:
    out = [f"# {report.title}", "", report.lead, ""]
    for s in report.sections:
        out += [f"## {s.title}", ""]
        for p in s.paragraphs:
            out += [p, ""]
        for item in s.items:
            if isinstance(item, Table):
                cols, rows, numeric = display_rows(item)
                out += [f"### {item.title}", ""]
                if not rows:
                    out += ["(none)", ""]
                    continue
                out.append("| " + " | ".join(_md_cell(c) for c in cols) + " |")
                out.append("|" + "|".join("---:" if n else "---" for n in numeric) + "|")
                out += ["| " + " | ".join(_md_cell(v) for v in r) + " |" for r in rows]
                out += ["", _table_note(item), ""]
            else:
                out += [f"![{item.title}]({item.name})", "", f"*{item.caption}*", ""]
    return "\n".join(out).rstrip() + "\n"


_CSS: Final = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0; color: #1a1a1a; background: #fff; }
main { max-width: 1180px; margin: 0 auto; padding: 1.5rem; }
h1 { font-size: 1.6rem; margin-bottom: .3rem; } h2 { margin-top: 2.2rem; border-bottom: 1px solid #ccc; }
h3 { font-size: 1.05rem; margin-top: 1.4rem; }
nav ul { padding-left: 1.2rem; } nav li { display: inline; margin-right: 1rem; }
.scroll { overflow-x: auto; } .scroll.long { max-height: 32rem; overflow-y: auto; }
table { border-collapse: collapse; font-size: .88rem; margin: .4rem 0; }
th, td { border: 1px solid #ddd; padding: .25rem .5rem; text-align: left; vertical-align: top; white-space: nowrap; }
th { background: #f2f4f7; position: sticky; top: 0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr:nth-child(even) td { background: #fafafa; }
.note { color: #555; font-size: .85rem; margin: .2rem 0 1rem; }
figure { margin: 1rem 0 2rem; } figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { color: #444; font-size: .9rem; }
"""


def _png_size(path: Path) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk."""
    with path.open("rb") as f:
        head = f.read(24)
    width, height = struct.unpack(">II", head[16:24])
    return int(width), int(height)


def render_html(report: Report, out_dir: Path) -> str:
    e = html.escape
    out = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f'<meta name="generator" content="freecell-analyzer {e(analyzer.__version__)}">',
        f"<title>{e(report.title)}</title>",
        f"<style>{_CSS}</style>",
        "</head>",
        "<body>",
        "<main>",
        f"<h1>{e(report.title)}</h1>",
        f"<p>{e(report.lead)}</p>",
        "<nav><ul>"
        + "".join(f'<li><a href="#{e(s.id)}">{e(s.title)}</a></li>' for s in report.sections)
        + "</ul></nav>",
    ]
    for s in report.sections:
        out.append(f'<section id="{e(s.id)}">')
        out.append(f"<h2>{e(s.title)}</h2>")
        out += [f"<p>{e(p)}</p>" for p in s.paragraphs]
        for item in s.items:
            if isinstance(item, Table):
                cols, rows, numeric = display_rows(item)
                out.append(f"<h3>{e(item.title)}</h3>")
                scroll = "scroll long" if len(rows) > LONG_TABLE else "scroll"
                out.append(f'<div class="{scroll}"><table id="{e(item.id)}-table">')
                out.append("<thead><tr>" + "".join(f"<th>{e(c)}</th>" for c in cols) + "</tr></thead>")
                out.append("<tbody>")
                for r in rows:
                    cells = (
                        f'<td class="num">{e(v)}</td>' if n else f"<td>{e(v)}</td>"
                        for v, n in zip(r, numeric, strict=True)
                    )
                    out.append("<tr>" + "".join(cells) + "</tr>")
                out.append("</tbody></table></div>")
                note = _table_note(item)
                if note:
                    out.append(f'<p class="note">{e(note)}</p>')
            else:
                w, h = _png_size(out_dir / item.name)
                out.append(
                    f'<figure><img src="{e(item.name)}" alt="{e(item.title)}" width="{w}" height="{h}">'
                    f"<figcaption>{e(item.caption)}</figcaption></figure>"
                )
        out.append("</section>")
    out += ["</main>", "</body>", "</html>"]
    return "\n".join(out) + "\n"


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


def write(report: Report, runs: Sequence[Run], out: Path) -> Path:
    """Draws the figures into `report`, then writes every file. Returns report.html."""
    frames = [(r.label, r.frame) for r in runs]
    difficulty = next(s for s in report.sections if s.id == "difficulty")
    figures = plots.write_difficulty_plots(frames, out)
    if not figures:
        difficulty.paragraphs.append("No search finished (no solved or unsolvable rows): nothing to plot.")
    # figures go between the distribution table and the hardest deals
    difficulty.items[1:1] = figures
    for s in report.sections:
        if s.min_cells_run is not None:
            run = runs[s.min_cells_run]
            table = next(t for t in s.items if isinstance(t, Table))
            name = table.id + ".png"
            s.items.insert(1, plots.min_cells_bar(table.frame, out / name, subtitle=run.label))
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
) -> Path:
    """load → summarize → write. Returns the path of report.html."""
    if top < 1:
        raise RunError(f"--top must be at least 1, not {top}")
    if block_size is not None and block_size < 1:
        raise RunError(f"--block-size must be at least 1, not {block_size}")
    runs = load_runs(paths, allow_mixed=allow_mixed, columns=COLUMNS)
    rep = summarize(runs, top=top, block_size=block_size)
    out = Path(out)
    prepare_out_dir(out)
    return write(rep, runs, out)


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
        help="accept runs of different configurations (e.g. 3 and 4 cells) and compare them side by side",
    )
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
        help="deals per block in the per-block table (default: a power of ten giving at most 100 blocks)",
    )


def handler(args: argparse.Namespace) -> int:
    """``report``: prints the page's path. A run that ``validate`` would call
    invalid raises `RunInvalidError` (exit 1), an output that cannot be
    written `StorageError` (exit 3 when the disk is full, else 2)."""
    try:
        path = report(args.dirs, args.out, allow_mixed=args.allow_mixed, top=args.top, block_size=args.block_size)
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
