"""The answer every output opens with (issue 26, item 1): one headline,
computed once (`analyzer.headline`), that adds up from parts, so that
`status` and `run` print it from the run's index alone, the dataset card
from the rows it streams, and the report from its table, all the same.
Statuses are checked as `freecell-analyzer status` prints them."""

from __future__ import annotations

import itertools
import json
import shutil
from pathlib import Path

import pyarrow as pa
import pytest
from fixtures_runs import FixtureRuns, shared_runs
from test_inputs import call

from analyzer import headline
from analyzer.headline import HEADLINE_COLUMNS, KEEP
from jobs import runformat
from jobs.config import config_cells
from reports import load, publish


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> FixtureRuns:
    return shared_runs(tmp_path_factory.getbasetemp() / "fixture-runs")


def _whole(run_dir: Path) -> tuple[headline.Headline, pa.Table, load.Run]:
    run = load.load_runs([run_dir])[0]
    table = load.read_run_table(run.manifests[0], list(HEADLINE_COLUMNS))
    h = headline.headline(
        table, label=run.label, cells=config_cells(run.config), min_cells=run.min_cells, declared=run.declared
    )
    return h, table, run


@pytest.mark.parametrize("name", ["c4", "c2", "min_cells", "incomplete"])
def test_parts_add_up_to_the_headline_of_the_whole(runs: FixtureRuns, name: str) -> None:
    whole, table, run = _whole(getattr(runs, name))
    cells = config_cells(run.config)
    deals = table["deal_number"].to_pylist()
    starts = [i for i, d in enumerate(deals) if i == 0 or d != deals[i - 1]]
    cuts = [*starts[::3], len(deals)]  # parts of three deals each, rows of a deal together
    parts = [
        headline.table_part(table.slice(a, b - a), cells=cells, min_cells=run.min_cells)
        for a, b in itertools.pairwise(cuts)
    ]
    assert len(parts) > 2
    combined = headline.combine(parts, label=run.label, cells=cells, min_cells=run.min_cells, declared=run.declared)
    assert combined.text() == whole.text()
    assert combined.to_dict() == json.loads(json.dumps(whole.to_dict()))


def test_the_readme_shows_what_status_prints() -> None:
    """The README's example answer is what the headline of MS 1..32000
    (11982 the one unsolvable deal) prints."""
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    block = readme.split("freecell, 4 cells, product; MS deals 1-32000", 1)[1].split("```", 1)[0]
    t = pa.table(
        {
            "deal_number": list(range(1, 32001)),
            "cells": [4] * 32000,
            "outcome": ["unsolvable" if d == 11982 else "solved" for d in range(1, 32001)],
        }
    )
    text = headline.headline_text(t, label="freecell, 4 cells, product", cells=[4], declared=[(1, 32000)])
    assert "freecell, 4 cells, product; MS deals 1-32000" + block == text + "\n"


def test_long_lists_keep_their_first_deals_and_whole_counts() -> None:
    n = 100
    t = pa.table(
        {
            "deal_number": list(range(1, n + 1)),
            "cells": [0] * n,
            "outcome": ["unsolvable" if d % 2 else "limit" for d in range(1, n + 1)],
            "limit_reason": [None if d % 2 else "bytes" for d in range(1, n + 1)],
        }
    )
    whole = headline.headline(t, label="freecell, 0 cells, product", cells=[0], declared=[(1, n)])
    parts = [headline.table_part(t.slice(i, 10), cells=[0]) for i in range(0, n, 10)]
    assert all(len(p["cells"][0]["unsolvable"]) <= KEEP for p in parts)
    combined = headline.combine(parts, label="freecell, 0 cells, product", cells=[0], declared=[(1, n)])
    assert combined.text() == whole.text()
    line = combined.cells[0]
    assert (line.count("unsolvable"), line.count("limit"), len(line.unsolvable)) == (50, 50, KEEP)
    assert "unsolvable (50): 1, 3, 5," in combined.text() and "(first 20 of 50)" in combined.text()
    assert "limit (50): 2 (bytes), 4 (bytes)," in combined.text()


@pytest.mark.parametrize("name", ["c4", "c2", "min_cells"])
def test_the_index_holds_the_answer_of_every_file(runs: FixtureRuns, name: str) -> None:
    whole, _, _ = _whole(getattr(runs, name))
    state = runformat.run_state(getattr(runs, name))
    assert state.unanswered() == 0 and state.headline().text() == whole.text()


def test_status_opens_with_the_answer(runs: FixtureRuns) -> None:
    whole, _, _ = _whole(runs.c2)
    done = call("status", runs.c2)
    assert done.returncode == 0
    lines = done.stdout.splitlines()
    expected = whole.lines(csv={k: f"the report's {k}.csv" for k in ("unsolvable", "limit", "error")})
    assert lines[: len(expected)] == expected
    assert lines[0].startswith("freecell, 2 cells, product; MS deals 1-30: 30 deals")
    assert any(line.startswith("    unsolvable (") for line in lines) and any("(positions)" in line for line in lines)
    doc = json.loads(call("status", runs.c2, "--json").stdout)
    answer = doc["headline"]
    assert answer["text"] == expected and answer["label"] == "freecell, 2 cells, product"
    assert answer["deals"] == 30 and answer["files_not_counted"] == 0
    [line] = answer["cells"]
    assert line["counts"] == {o: whole.cells[0].count(o) for o in headline.OUTCOMES}
    assert line["unsolvable"] == list(whole.cells[0].unsolvable[:KEEP])


def test_status_of_an_incomplete_run_says_how_many_deals_have_results(runs: FixtureRuns) -> None:
    first = call("status", runs.incomplete).stdout.splitlines()[0]
    assert first == "freecell, 4 cells, product; MS deals 1-30: 20 of 30 deals have results (66.7 %)"


def test_a_min_cells_status_counts_deals_per_minimum(runs: FixtureRuns) -> None:
    whole, _, _ = _whole(runs.min_cells)
    out = call("status", runs.min_cells).stdout.splitlines()
    assert out[0] == "freecell, min cells 0-3, product; MS deals 1-12: 12 deals"
    assert out[1] == whole.lines()[1] and out[1].startswith("  minimum cells per deal: 0: ")


def test_the_card_opens_with_the_answer_and_validate_checks_it(runs: FixtureRuns, tmp_path: Path) -> None:
    whole, _, _ = _whole(runs.c2)
    d = publish.publish(runs.c2, tmp_path / "ds", replay=0)
    card = (d / "README.md").read_text()
    body = card.split("---\n", 2)[2]
    assert body.index("## The answer") < body.index("## What it is")
    where = {o: f"the data (outcome {o})" for o in ("unsolvable", "limit", "error")}
    assert "\n".join(whole.lines(csv=where)) in card
    assert publish.validate_dataset(d, replay=0) == []
    # an answer that does not match the data is found (the checksums are fixed up to isolate it)
    copy = tmp_path / "copy"
    shutil.copytree(d, copy)
    for f in copy.rglob("*"):
        f.chmod(0o644 if f.is_file() else 0o755)
    text = (copy / "README.md").read_text().replace(whole.lines(csv=where)[1], "  solved 30 (100 %)")
    (copy / "README.md").write_text(text)
    sums = (copy / "SHA256SUMS").read_text().splitlines()
    fixed = [
        f"{runformat.sha256_file(copy / 'README.md')}  README.md" if line.endswith("  README.md") else line
        for line in sums
    ]
    (copy / "SHA256SUMS").write_text("\n".join(fixed) + "\n")
    problems = publish.validate_dataset(copy, replay=0)
    assert any("the answer" in p for p in problems), problems
