"""Reports: loading run directories, the summaries, and report.html / report.md / CSV.

The runs are tiny Parquet fixtures written from real solver output
(`fixtures_runs`); expectations are computed from the Parquet files with
pyarrow, independently of the pandas code under test.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from fixtures_runs import FixtureRuns, config, shared_c2_report, shared_runs, write_run

import analyzer
from reports import cli, load, plots, report, summary

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


@pytest.mark.parametrize("text", ["0-5", "5-1", "abc", "1-", str(2**33)])
def test_bad_deal_ranges(text: str) -> None:
    with pytest.raises(analyzer.RangeError):
        load.parse_deals(text)


# --- summaries -------------------------------------------------------------------


def test_fixture_has_every_outcome(runs: FixtureRuns) -> None:
    assert set(outcomes_by_deal(runs.c2).values()) == {"solved", "unsolvable", "limit", "error"}


def test_outcome_table_counts_and_shares(runs: FixtureRuns) -> None:
    expected = Counter(outcomes_by_deal(runs.c2).values())
    table = summary.outcome_table(load.load_run(runs.c2)[0])
    assert len(table) == 1
    row = table.iloc[0]
    assert (row["variant"], row["cells"], row["move_rule"], row["rows"]) == ("freecell", 2, "product", 30)
    for o in ("solved", "unsolvable", "limit", "error"):
        assert row[o] == expected[o]
        assert row[f"{o}_share"] == pytest.approx(expected[o] / 30)


def test_outcome_table_per_cells(runs: FixtureRuns) -> None:
    table = summary.outcome_table(load.load_run(runs.min_cells)[0])
    assert table["cells"].tolist() == [0, 1, 2, 3]
    expected = Counter(int(str(r["cells"])) for r in rows_of(runs.min_cells))
    assert table["rows"].tolist() == [expected[k] for k in range(4)]


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
    assert blocks["rows"].sum() == 30
    assert blocks["error"].tolist() == [0, 1, 0]  # deal 13
    assert summary.block_table(frame, 1000)["rows"].tolist() == [30]


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
        assert f'src="{png}"' in html and f"({png})" in md
        assert (out / png).read_bytes().startswith(b"\x89PNG")
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
    assert csv[0].startswith("variant,cells,move_rule,rows,solved,unsolvable,limit,error")


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
    assert 'src="min_cells.png"' in html and 'id="min_cells-table"' in html
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
