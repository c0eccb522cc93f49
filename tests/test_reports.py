"""Reports: loading run directories, the summaries, and report.html / report.md / CSV.

The runs are tiny Parquet fixtures written from real solver output
(`fixtures_runs`); expectations are computed from the Parquet files with
pyarrow, independently of the pandas code under test.
"""

from __future__ import annotations

import argparse
import base64
import json
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from fixtures_runs import FixtureRuns, config, shared_c2_report, shared_runs, synthetic_run, write_run

import analyzer
from analyzer import headline
from jobs.ranges import DealRange
from reports import cli, load, plots, reference, report, summary

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> FixtureRuns:
    return shared_runs(tmp_path_factory.getbasetemp() / "fixture-runs")


def rows_of(run_dir: Path) -> list[dict[str, object]]:
    """Every row of a run, straight from its data files (not through reports.load)."""
    rows: list[dict[str, object]] = []
    for f in sorted(run_dir.glob("deal_block=*/deals-*.parquet")):
        rows += pq.read_table(f).to_pylist()
    return rows


def outcomes_by_deal(run_dir: Path) -> dict[int, str]:
    return {int(str(r["deal_number"])): str(r["outcome"]) for r in rows_of(run_dir)}


@pytest.fixture(scope="module")
def c2_report(runs: FixtureRuns, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return shared_c2_report(tmp_path_factory.getbasetemp() / "fixture-runs")


# --- load ------------------------------------------------------------------------


def test_load_reads_every_row_and_ignores_temporary_files(runs: FixtureRuns) -> None:
    rows, meta = load.load_run(runs.c4)
    assert len(rows) == 30
    assert rows["deal_number"].tolist() == list(range(1, 31))
    assert meta.declared == ((1, 30),) and meta.invocations[0].status == "complete"
    [run] = load.load_runs([runs.c4])
    assert run.label == "freecell, 4 cells, product"
    assert run.missing() == ()
    assert any(p.name.startswith(".") for p in (runs.c4 / "deal_block=0").iterdir())


def test_load_reports_missing_deals_of_an_incomplete_run(runs: FixtureRuns) -> None:
    [run] = load.load_runs([runs.incomplete])
    assert run.missing() == ((11, 20),)
    assert len(run.frame) == 20


def test_same_configuration_in_two_directories_is_one_run(runs: FixtureRuns, tmp_path: Path) -> None:
    # The missing chunk of `incomplete` computed elsewhere: together they are the whole run.
    part = write_run(tmp_path / "part", analyzer.solve_range(11, 21, cells=4), config([4]), (11, 20))
    [run] = load.load_runs([runs.incomplete, part])
    assert run.missing() == ()
    assert run.frame["deal_number"].tolist() == list(range(1, 31))


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda d: d.mkdir(), "empty"),
        (lambda d: (d.mkdir(), (d / "notes.txt").write_text("x")), "no _run/run.json"),
        (lambda d: None, "no such directory"),
        (lambda d: d.write_text("x"), "not a directory"),
        (lambda d: (d.mkdir(), (d / "_run").mkdir(), (d / "_run" / "run.json").write_text("{")), "not a run manifest"),
        (lambda d: (d.mkdir(), (d / "run.json").write_text("{}")), "first format"),
    ],
)
def test_not_a_run_is_a_clear_error(tmp_path: Path, make: object, message: str) -> None:
    d = tmp_path / "bad"
    make(d)  # type: ignore[operator]
    with pytest.raises(analyzer.AnalyzerError, match=message):
        load.load_runs([d])


def test_run_without_results_is_a_clear_error(runs: FixtureRuns, tmp_path: Path) -> None:
    d = tmp_path / "fresh"
    (d / "_run").mkdir(parents=True)
    shutil.copy(runs.c4 / "_run" / "run.json", d / "_run" / "run.json")
    with pytest.raises(load.RunError, match="no results yet"):
        load.load_runs([d])


def test_mixed_configurations_need_allow_mixed(runs: FixtureRuns) -> None:
    with pytest.raises(load.RunError, match="--allow-mixed") as e:
        load.load_runs([runs.c3, runs.c4])
    assert "3 cells" in str(e.value) and "4 cells" in str(e.value)
    both = load.load_runs([runs.c3, runs.c4], allow_mixed=True)
    assert [r.label for r in both] == ["freecell, 3 cells, product", "freecell, 4 cells, product"]


def test_a_chunk_of_another_configuration_is_refused(runs: FixtureRuns, tmp_path: Path) -> None:
    d = tmp_path / "mixed"
    shutil.copytree(runs.c4, d)
    shutil.copy(runs.c3 / "deal_block=0" / "deals-0000000011-0000000020.parquet", d / "deal_block=0")
    with pytest.raises(load.RunInvalidError, match=r"deals-0000000011-0000000020\.parquet"):
        load.load_runs([d])


def test_duplicate_rows_and_repeated_directories_are_refused(runs: FixtureRuns) -> None:
    with pytest.raises(load.RunError, match="given twice"):
        load.load_runs([runs.c4, runs.c4])
    with pytest.raises(load.RunError, match="share a deal"):
        load.load_runs([runs.c4, runs.incomplete])


@pytest.mark.parametrize("text", ["0-5", "5-1", "abc", "1-", str(2**33), "٥", "6_17"])
def test_bad_deal_ranges_are_refused_by_the_run_format(text: str, runs: FixtureRuns, tmp_path: Path) -> None:
    """reports reads no deal range itself: the run format's one reader
    (jobs.ranges.parse_deals, digits 0-9 only) refuses a bad one."""
    assert not hasattr(load, "parse_deals")
    d = tmp_path / "run"
    shutil.copytree(runs.c4, d)
    manifest = d / "_run" / "run.json"
    data = json.loads(manifest.read_text())
    data["deals"] = text
    manifest.write_text(json.dumps(data))
    with pytest.raises(load.RunError, match="RangeError"):
        load.read_manifest(d)


# --- summaries -------------------------------------------------------------------


def test_fixture_has_every_outcome(runs: FixtureRuns) -> None:
    assert set(outcomes_by_deal(runs.c2).values()) == {"solved", "unsolvable", "limit", "error"}


def test_outcome_table_counts_and_shares(runs: FixtureRuns) -> None:
    expected = Counter(outcomes_by_deal(runs.c2).values())
    table = summary.outcome_table(load.load_run(runs.c2)[0])
    assert len(table) == 1
    row = table.iloc[0]
    assert (row["variant"], row["cells"], row["move_rule"], row["deals"]) == ("freecell", 2, "product", 30)
    for o in ("solved", "unsolvable", "limit", "error"):
        assert row[o] == expected[o]
        assert row[f"{o}_share"] == pytest.approx(expected[o] / 30)


def test_outcome_table_per_cells_counts_deals_not_rows(runs: FixtureRuns) -> None:
    """A min-cells run has several rows per deal; every count of cells still has 12 deals,
    and what no row of that count proves is inferred from the deal's other counts."""
    table = summary.outcome_table(load.load_run(runs.min_cells)[0], [0, 1, 2, 3]).set_index("cells")
    assert table.index.tolist() == [0, 1, 2, 3]
    assert table["deals"].tolist() == [12] * 4
    rows = rows_of(runs.min_cells)
    assert 12 < len(rows) < 12 * 4  # several rows for some deals, but not one per count
    outcome = {(int(str(r["deal_number"])), int(str(r["cells"]))): str(r["outcome"]) for r in rows}
    for k in range(4):
        won = set()
        lost = set()
        for (d, c), o in outcome.items():
            if o == "solved" and c <= k:
                won.add(d)
            if o == "unsolvable" and c >= k:
                lost.add(d)
        assert table.loc[k, "solved"] == len(won), k
        assert table.loc[k, "unsolvable"] == len(lost), k
        proved = sum(1 for (d, c), o in outcome.items() if c == k and o == "solved")
        assert table.loc[k, "solved_inferred"] == len(won) - proved
        assert table.loc[k, ["solved", "unsolvable", "limit", "error", "not_tried"]].sum() == 12


def test_deal_lists(runs: FixtureRuns) -> None:
    frame = load.load_run(runs.c2)[0]
    by_deal = outcomes_by_deal(runs.c2)
    for o in ("unsolvable", "limit", "error"):
        listed = summary.deals_with_outcome(frame, o)["deal_number"].tolist()
        assert listed == sorted(n for n, x in by_deal.items() if x == o)
    errors = summary.deals_with_outcome(frame, "error")
    assert errors["deal_number"].tolist() == [13]  # injected by the fixture
    assert "injected failure" in errors["error"].iloc[0]
    limits = summary.deals_with_outcome(frame, "limit")
    assert set(limits["limit_reason"]) == {"positions"}


def test_hardest_is_sorted_with_ties_by_deal(runs: FixtureRuns) -> None:
    frame = load.load_run(runs.c2)[0]
    top = summary.hardest(frame, "solution_length_single", 5)
    values = top["solution_length_single"].tolist()
    assert values == sorted(values, reverse=True) and len(top) == 5
    assert set(top["outcome"]) == {"solved"}
    solved = [r for r in rows_of(runs.c2) if r["outcome"] == "solved"]
    best = max(solved, key=lambda r: (r["solution_length_single"], -int(str(r["deal_number"]))))
    assert top["deal_number"].iloc[0] == best["deal_number"]
    effort = summary.hardest(frame, "positions_expanded", 30)
    assert set(effort["outcome"]) <= {"solved", "unsolvable"}  # limit rows are capped, not hard
    assert summary.hardest_table(frame, 3)["measure"].value_counts().to_dict() == {
        m.column: 3 for m in summary.MEASURES
    }


def test_difficulty_table(runs: FixtureRuns) -> None:
    frame = load.load_run(runs.c2)[0]
    table = summary.difficulty_table(frame).set_index("measure")
    lengths = [int(str(r["solution_length_single"])) for r in rows_of(runs.c2) if r["outcome"] == "solved"]
    assert table.loc["solution_length_single", "count"] == len(lengths)
    assert table.loc["solution_length_single", "max"] == max(lengths)
    assert table.loc["elapsed_s", "unit"] == "seconds"


def test_blocks(runs: FixtureRuns) -> None:
    frame = load.load_run(runs.c2)[0]
    assert summary.auto_block_size(frame) == 10
    blocks = summary.block_table(frame, 10)
    assert blocks["first_deal"].tolist() == [1, 11, 21]
    assert blocks["last_deal"].tolist() == [10, 20, 30]
    assert blocks["deals"].sum() == 30
    assert blocks["error"].tolist() == [0, 1, 0]  # deal 13
    assert summary.block_table(frame, 1000)["deals"].tolist() == [30]
    per_count = summary.block_table(load.load_run(runs.min_cells)[0], 1000, [0, 1, 2, 3])
    assert per_count["deals"].tolist() == [12] * 4  # deals per count of cells, not rows


def test_min_cells_distribution(runs: FixtureRuns) -> None:
    frame = load.load_run(runs.min_cells)[0]
    per_deal: dict[int, object] = {}
    for r in rows_of(runs.min_cells):
        per_deal[int(str(r["deal_number"]))] = r["min_cells"]
    expected = Counter("undetermined" if v is None else str(v) for v in per_deal.values())
    dist = summary.min_cells_distribution(frame, [0, 1, 2, 3])
    assert dist["min_cells"].tolist()[:4] == ["0", "1", "2", "3"]
    assert dict(zip(dist["min_cells"], dist["deals"], strict=True)) == {
        k: expected.get(k, 0) for k in dist["min_cells"]
    }
    assert dist["deals"].sum() == 12
    assert "undetermined" in set(dist["min_cells"])  # the fixture's budget leaves some open
    deals = summary.min_cells_deals(frame)
    assert len(deals) == 12


def test_comparison_and_differences(runs: FixtureRuns) -> None:
    c2, c4 = load.load_runs([runs.c2, runs.c4], allow_mixed=True)
    pairs = [(c2.label, c2.frame), (c4.label, c4.frame)]
    a, b = outcomes_by_deal(runs.c2), outcomes_by_deal(runs.c4)
    diffs = summary.outcome_differences(pairs)
    assert diffs["deal_number"].tolist() == sorted(n for n in a if a[n] != b[n])
    assert diffs[c2.label].tolist() == [a[n] for n in diffs["deal_number"]]
    assert summary.common_deals(pairs) == 30
    side = summary.compare_runs(pairs).set_index("figure")
    assert side.loc["solved", c4.label] == 30
    assert side.loc["error", c2.label] == 1
    patterns = summary.difference_patterns(diffs, [c2.label, c4.label])
    assert patterns["deals"].sum() == len(diffs)


def test_comparison_of_multi_cells_runs_matches_deal_and_cells(runs: FixtureRuns) -> None:
    mc, c3 = load.load_runs([runs.min_cells, runs.c3], allow_mixed=True)
    pairs = [(mc.label, mc.frame), (c3.label, c3.frame)]
    # only the min-cells run's 3-cell rows meet the 3-cell run
    assert summary.common_deals(pairs) == int((mc.frame["cells"] == 3).sum())
    assert "cells" in summary.outcome_differences(pairs).columns


# --- plots -----------------------------------------------------------------------


def test_log_scale_only_when_data_spans_decades() -> None:
    import numpy as np

    assert plots.wants_log([np.array([1.0, 1000.0])])
    assert not plots.wants_log([np.array([90.0, 200.0])])


# --- report ----------------------------------------------------------------------


def test_report_files_and_contents(c2_report: Path, runs: FixtureRuns) -> None:
    out = c2_report.parent
    names = {p.name for p in out.iterdir()}
    assert {"report.html", "report.md", "outcomes.csv", "unsolvable.csv", "limit.csv", "error.csv"} <= names
    assert {"difficulty.csv", "hardest.csv", "blocks.csv", "runs.csv"} <= names
    pngs = {m.column + ".png" for m in summary.MEASURES}
    assert pngs <= names
    html = c2_report.read_text()
    md = (out / "report.md").read_text()
    assert 'id="outcomes-table"' in html
    for png in pngs:
        assert f'id="figure-{png}"' in html and f"({png})" in md
        assert (out / png).read_bytes().startswith(b"\x89PNG")
    # the page embeds every figure: the PNG beside it is for report.md
    embedded = re.findall(r'<img src="data:image/png;base64,([^"]+)"', html)
    assert sorted(base64.b64decode(b) for b in embedded) == sorted(p.read_bytes() for p in out.glob("*.png"))
    assert not re.search(r'(src|href)="(https?:)?//', html)  # nothing fetched from the network
    by_deal = outcomes_by_deal(runs.c2)
    unsolvable = [n for n, o in by_deal.items() if o == "unsolvable"]
    assert unsolvable and f"| {unsolvable[0]} | freecell | 2 | product |" in md
    assert "injected failure for deal 13" in html
    for text in (
        "0.1.0",
        "1-30",
        "coverage",
        "30 of 30 deals",
        "2024-05-01T10:00:00+00:00",
        "freecell-analyzer run 1-30",
    ):
        assert text in md, text
    assert "CPU time in the solver" in html and "wall time" in html
    csv = (out / "outcomes.csv").read_text().splitlines()
    assert csv[0].startswith("variant,cells,move_rule,deals,solved,unsolvable,limit,error")


def test_report_is_deterministic(c2_report: Path, runs: FixtureRuns, tmp_path: Path) -> None:
    again = report.report([runs.c2], tmp_path / "again").parent
    first = c2_report.parent
    assert sorted(p.name for p in again.iterdir()) == sorted(p.name for p in first.iterdir())
    for p in first.iterdir():
        assert (again / p.name).read_bytes() == p.read_bytes(), p.name


def test_report_of_an_incomplete_run_says_what_is_missing(runs: FixtureRuns, tmp_path: Path) -> None:
    rep = report.summarize(load.load_runs([runs.incomplete], columns=report.COLUMNS))
    md = report.render_markdown(rep)
    assert "20 of 30 deals (66.7 %)" in md and "| missing deals | 11-20 |" in md


def test_min_cells_report(runs: FixtureRuns, tmp_path: Path) -> None:
    html = report.report([runs.min_cells], tmp_path / "r").read_text()
    for name in ("min_cells.png", "min_cells.csv", "min_cells_deals.csv"):
        assert (tmp_path / "r" / name).is_file()
    assert 'id="figure-min_cells.png"' in html and 'id="min_cells-table"' in html
    assert "undetermined" in html


def test_comparison_report_from_the_command_line(runs: FixtureRuns, tmp_path: Path) -> None:
    out = tmp_path / "cmp"
    argv = ["report", str(runs.c2), str(runs.c4), "--allow-mixed", "--out", str(out), "--top", "3"]
    assert main_like(argv) == 0
    html = (out / "report.html").read_text()
    assert 'id="comparison-table"' in html and 'id="outcome_differences-table"' in html
    diffs = (out / "outcome_differences.csv").read_text().splitlines()
    a, b = outcomes_by_deal(runs.c2), outcomes_by_deal(runs.c4)
    assert len(diffs) - 1 == sum(a[n] != b[n] for n in a)
    assert "run,variant,cells" in (out / "outcomes.csv").read_text()


def test_report_refuses_a_directory_that_is_not_a_report(runs: FixtureRuns, tmp_path: Path) -> None:
    (tmp_path / "precious.txt").write_text("keep me")
    with pytest.raises(analyzer.AnalyzerError, match="not empty"):
        report.report([runs.c4], tmp_path)
    assert (tmp_path / "precious.txt").read_text() == "keep me"


# --- command line ----------------------------------------------------------------


def main_like(argv: list[str]) -> int:
    """What analyzer.cli.main does with our subcommands (docs/DESIGN.md)."""
    parser = argparse.ArgumentParser(prog="freecell-analyzer")
    sub = parser.add_subparsers(dest="command", required=True)
    cli.register(sub)
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except analyzer.AnalyzerError as e:
        print(f"freecell-analyzer: error: {e}", file=sys.stderr)
        return 2


def test_cli_bad_inputs_exit_2_with_one_line(
    runs: FixtureRuns, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    not_run = tmp_path / "not_run"
    not_run.mkdir()
    (not_run / "data.csv").write_text("1,2\n")
    for argv in (
        ["report", str(empty), "--out", str(tmp_path / "o1")],
        ["report", str(not_run), "--out", str(tmp_path / "o2")],
        ["report", str(runs.c3), str(runs.c4), "--out", str(tmp_path / "o3")],
        ["publish", str(empty), "--out", str(tmp_path / "o4")],
    ):
        assert main_like(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("freecell-analyzer: error: "), err
        assert "Traceback" not in err
    assert not any((tmp_path / f"o{i}").exists() for i in range(1, 5))  # nothing written


def test_module_entry_point(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "reports.report", str(tmp_path / "nothing"), "--out", str(tmp_path / "x")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "no such directory" in done.stderr


def test_run_manifest_fields_used(runs: FixtureRuns) -> None:
    """The run.json fields reports rely on (docs/DESIGN.md, "Runs on disk")."""
    m = load.read_manifest(runs.c4)
    data = json.loads((runs.c4 / "_run" / "run.json").read_text())
    assert m.config == data["config"] and m.config_hash == data["config_hash"] and m.deals == "1-30"
    assert m.wall_s == 2.0 and m.invocations[0].status == "complete"


# --- the headline: rounding, deals not rows -----------------------------------------


@pytest.mark.parametrize(
    ("count", "total", "text"),
    [
        (1, 32000, "0.0031 %"),
        (31999, 32000, "99.9969 %"),
        (8, 1_000_000, "0.00080 %"),
        (999_992, 1_000_000, "99.99920 %"),
        (1, 8_589_934_591, "0.000000012 %"),
        (1, 2, "50.0 %"),
        (199, 32000, "0.62 %"),
        (0, 32000, "0 %"),
        (32000, 32000, "100 %"),
    ],
)
def test_percentages_never_hide_a_deal(count: int, total: int, text: str) -> None:
    assert headline.share_text(count, total) == text


def test_percentages_round_honestly_for_every_count() -> None:
    for total in (7, 300, 32000, 1_000_000):
        for count in {1, 2, 3, total // 3, total // 2, total - 2, total - 1}:
            text = headline.share_text(count, total)
            shown = float(text.split()[0])
            decimals = len(text.split()[0].partition(".")[2])
            assert 0 < shown < 100, text  # neither a share nor its complement rounds away
            assert abs(shown - 100 * count / total) <= 0.5 * 10**-decimals + 1e-12, text


def test_headline_of_a_run_lists_unsolvable_and_limit_deals(runs: FixtureRuns) -> None:
    run = load.load_runs([runs.c2])[0]
    by_deal = outcomes_by_deal(runs.c2)
    table = load.read_run_table(run.manifests[0])
    h = headline.headline(table, label=run.label, declared=run.declared)
    [line] = h.cells
    assert line.deals == 30 and h.deals == 30
    for o in ("solved", "unsolvable", "limit", "error"):
        assert line.counts[o] == sum(x == o for x in by_deal.values()), o
    assert list(line.unsolvable) == sorted(n for n, o in by_deal.items() if o == "unsolvable")
    assert [d for d, _ in line.limits] == sorted(n for n, o in by_deal.items() if o == "limit")
    assert {why for _, why in line.limits} == {"positions"}
    text = h.text()
    assert f"unsolvable ({len(line.unsolvable)}): {line.unsolvable[0]}" in text
    (first, _), (second, _) = line.limits[:2]
    assert f"limit ({len(line.limits)}): {first} (positions), {second} (positions)" in text


def test_the_answer_writes_large_counts_as_the_headline_does(tmp_path: Path) -> None:
    """2,000 `limit` deals: the page and the Markdown give the count with its
    thousands separator, as the headline's own line does."""
    run = synthetic_run(tmp_path / "run", DealRange(1, 2000), 1000)
    out = report.report([run], tmp_path / "rep").parent
    md = (out / "report.md").read_text()
    assert "2,000 limit" in md
    assert "- Limit, with the budget that ran out (2,000): 1 (positions), 2 (positions)" in md
    assert "- Unsolvable (0): none" in md
    html = (out / "report.html").read_text()
    assert 'Limit, with the budget that ran out (<span class="count">2,000</span>)' in html


def test_headline_of_a_min_cells_run_counts_deals_not_rows(runs: FixtureRuns) -> None:
    run = load.load_runs([runs.min_cells])[0]
    rows = rows_of(runs.min_cells)
    assert len(rows) > 12  # several rows per deal
    h = headline.headline(
        load.read_run_table(run.manifests[0]), label=run.label, cells=[0, 1, 2, 3], min_cells=True
    )
    assert h.deals == 12 and sum(h.minimum.values()) == 12
    per_deal = {int(str(r["deal_number"])): r["min_cells"] for r in rows}
    for k in range(4):
        assert h.minimum[str(k)] == sum(v == k for v in per_deal.values())
    assert h.minimum["undetermined"] == sum(v is None for v in per_deal.values())
    assert "12 deals" in h.text() and str(len(rows)) not in h.text().splitlines()[0]
    # the report's answer says the same, and its tables count deals
    rep = report.summarize(load.load_runs([runs.min_cells], columns=report.COLUMNS))
    md = report.render_markdown(rep)
    assert "Microsoft deals 1-12: 12 deals" in md
    assert next(t for t in rep.tables() if t.id == "min_cells").frame["deals"].sum() == 12


def test_headline_without_pandas_columns_it_does_not_need() -> None:
    import pyarrow as pa

    t = pa.table({"deal_number": list(range(1, 32001)), "cells": [4] * 32000, "outcome": ["solved"] * 32000})
    t = t.set_column(
        2, "outcome", pa.array(["unsolvable" if d == 11982 else "solved" for d in range(1, 32001)])
    )
    text = headline.headline_text(t, label="freecell, 4 cells, product", declared=[(1, 32000)])
    assert "solved 31,999 (99.9969 %); unsolvable 1 (0.0031 %)" in text
    assert "unsolvable (1): 11982" in text


# --- equal footing -----------------------------------------------------------------------


def test_runs_of_different_deals_are_refused_normalised_or_restricted(
    runs: FixtureRuns, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["report", str(runs.c3), str(runs.min_cells), "--allow-mixed"]
    assert main_like([*argv, "--out", str(tmp_path / "refused")]) == 2
    err = capsys.readouterr().err
    assert "cover different deals" in err and "--normalise" in err and "--common-deals" in err
    assert not (tmp_path / "refused").exists()

    assert main_like([*argv, "--normalise", "--out", str(tmp_path / "norm")]) == 0
    html = (tmp_path / "norm" / "report.html").read_text()
    assert 'id="footing"' in html and "Normalised (--normalise)" in html
    assert "1-30" in html and "1-12" in html

    assert main_like([*argv, "--common-deals", "--out", str(tmp_path / "common")]) == 0
    md = (tmp_path / "common" / "report.md").read_text()
    assert "Only the 12 deals every run has are compared (--common-deals): 1-12." in md
    outcomes = (tmp_path / "common" / "outcomes.csv").read_text().splitlines()
    assert all(",12," in line for line in outcomes[1:])  # 12 deals per run and count of cells

    [c3, _] = load.load_runs([runs.c3, runs.min_cells], allow_mixed=True)
    same, text = report.footing([c3], "refuse")
    assert text == "" and len(same[0]) == 30


# --- published figures --------------------------------------------------------------------


def _figures(
    deals: dict[int, str], cells: int, variant: str = "freecell", **kw: object
) -> reference.RunFigures:
    import pyarrow as pa

    table = pa.table(
        {"deal_number": list(deals), "cells": [cells] * len(deals), "outcome": list(deals.values())}
    )
    grid = headline.deal_cells(table, [cells]).to_pandas()
    return reference.RunFigures(
        label="test",
        variant=analyzer.Variant.named(variant).as_dict(),
        cells=(cells,),
        grid=grid,
        declared=((min(deals), max(deals)),),
        **kw,  # type: ignore[arg-type]
    )


def test_reference_table_is_consistent_with_its_sources() -> None:
    ref = reference.load()
    m = ref.fact("ms32000-min-cells")
    assert m.counts == {0: 69, 1: 6220, 2: 19092, 3: 6420, 4: 198, 5: 1}
    assert (m.minimum_of(1), m.minimum_of(617), m.minimum_of(11982)) == (3, 4, 5)  # REFERENCE.md
    four = ref.fact("fcpro-4cells-impossible-100m")
    assert four.members[:8].tolist() == [11982, 146692, 186216, 455889, 495505, 512118, 517776, 781948]
    assert int((four.members <= 1_000_000).sum()) == 8
    zero = ref.fact("fcpro-0cells-solvable-1m")
    assert len(zero.members) == 2174 and zero.intractable.tolist() == [798194]
    # two sources agree: the deals Pringle's table says need no cell are the zero-cell list's
    assert [d for d in zero.members.tolist() if d <= 32000] == [
        d for d in range(1, 32001) if m.minimum_of(d) == 0
    ]
    assert ref.fact("fcpro-4cells-impossible-all").value == 102075
    for f in ref.facts:
        assert f.source.url.startswith("http") and f.source.author


def test_a_table_that_disagrees_with_its_file_is_refused() -> None:
    ref = reference.load()
    raw = {"id": "x", "kind": "deal_set", "source": "fcpro-impossible", "variant": "freecell", "cells": 4,
           "outcome": "unsolvable", "deals": "1-100", "list": [5, 7], "count": 3}  # fmt: skip
    with pytest.raises(reference.ReferenceError, match="2 deals listed, the source says 3"):
        reference._fact(raw, ref.sources)


def test_reference_comparison_agree_disagree_settled_open() -> None:
    four = {d: "unsolvable" if d == 11982 else "solved" for d in range(11975, 11991)}
    rows = reference.compare(_figures(four, 4)).set_index("figure")
    fc_pro = rows.loc["freecell: deals unsolvable with 4 cells"]
    assert (fc_pro["ours"], fc_pro["published"], fc_pro["verdict"]) == ("1", "1", "agree")
    derived = rows.loc["freecell: deals unsolvable with 4 cells (from the minimum per deal)"]
    assert derived["verdict"] == "agree"

    wrong = {**four, 11982: "solved", 11983: "unsolvable"}
    rows = reference.compare(_figures(wrong, 4)).set_index("figure")
    row = rows.loc["freecell: deals unsolvable with 4 cells"]
    assert (
        row["verdict"] == "disagree"
        and "only ours: 11983" in row["note"]
        and "only published: 11982" in row["note"]
    )

    zero = {d: "unsolvable" for d in range(798190, 798200)}  # none of them wins with no cell
    rows = reference.compare(_figures(zero, 0)).set_index("figure")
    row = rows.loc["freecell: deals won with 0 cells"]
    assert row["verdict"] == "settled" and "798194 unsolvable" in row["note"]
    assert row["published"] == "0 (+1 intractable)"

    open_ = {**four, 11982: "limit"}
    rows = reference.compare(_figures(open_, 4)).set_index("figure")
    assert rows.loc["freecell: deals unsolvable with 4 cells", "verdict"] == "open"

    # only the rules decide: Baker's Game deals are not compared with FreeCell's
    assert not len(
        reference.compare(_figures(four, 4, "bakers_game")).query("figure.str.startswith('freecell')")
    )


def test_reference_shares_and_exact_ranges() -> None:
    won = {d: "solved" if d % 4 else "unsolvable" for d in range(1, 1001)}  # 75.0 % won
    rows = reference.compare(_figures(won, 4, "bakers_game")).set_index("figure")
    share = rows.loc["bakers_game: share of random deals won with 4 cells"]
    assert share["verdict"] == "agree" and share["ours"] == "75.0 % (750 of 1,000)"
    assert "bakers_game: deals won with 4 cells" not in rows.index  # published for 1..10,000,000 only
    fewer = {d: "solved" if d % 5 < 3 else "unsolvable" for d in range(1, 1001)}  # 60 %
    rows = reference.compare(_figures(fewer, 4, "bakers_game")).set_index("figure")
    assert rows.loc["bakers_game: share of random deals won with 4 cells", "verdict"] == "disagree"
    assert reference.share_verdict(29, 3_000_000, 29, 3_000_000)[0] == "agree"


def test_the_report_sets_ours_beside_published(runs: FixtureRuns, tmp_path: Path) -> None:
    html = report.report([runs.c3], tmp_path / "r").read_text()
    assert 'id="published-table"' in html and "Pringle" in html
    published = (tmp_path / "r" / "published.csv").read_text()
    # deals 1..30 with 3 cells: Pringle's table says every one of them wins
    assert (
        'deals unsolvable with 3 cells (from the minimum per deal),agree,0,0,0,3,"1-30; published for 1-32,000"'
        in published
    )
    assert 'id="sources-table"' in html and "jerrybryan.com" in html
