"""Publishing a run as a dataset, and validating a published dataset."""

from __future__ import annotations

import json
import shutil
import stat
import subprocess
from pathlib import Path

import duckdb
import pandas as pd
import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.parquet as pq
import pytest
from fixtures_runs import FixtureRuns, shared_runs

import analyzer
from analyzer import schema
from reports import cli, publish

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> FixtureRuns:
    return shared_runs(tmp_path_factory.getbasetemp() / "fixture-runs")


@pytest.fixture(scope="module")
def published(runs: FixtureRuns, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The c2 run (all four outcomes) published as version 1.0.0."""
    return publish.publish(runs.c2, tmp_path_factory.mktemp("dataset") / "ds")


def writable_copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    for p in dst.rglob("*"):
        p.chmod(p.stat().st_mode | stat.S_IWUSR)
    return dst


def header(card: str) -> dict[str, object]:
    yaml = pytest.importorskip("yaml")
    assert card.startswith("---\n")
    data = yaml.safe_load(card.split("---\n")[1])
    assert isinstance(data, dict)
    return data


def test_layout_and_read_only(published: Path) -> None:
    assert published.name == "1.0.0"
    files = sorted(p.relative_to(published).as_posix() for p in published.rglob("*") if p.is_file())
    assert files == sorted(
        [
            "CITATION.cff",
            "README.md",
            "SHA256SUMS",
            "data/train-00000-of-00001.parquet",
            "datapackage.json",
            "provenance/run.json",
        ]
    )
    for p in published.rglob("*"):
        if p.is_file():
            assert not p.stat().st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH), p


def test_round_trip_validates(published: Path) -> None:
    assert publish.is_dataset(published) and publish.is_dataset(published.parent)
    assert publish.validate_dataset(published) == []
    assert publish.validate_dataset(published.parent) == []


def test_is_dataset_is_false_for_runs_and_reports(runs: FixtureRuns, tmp_path: Path) -> None:
    assert not publish.is_dataset(runs.c4)
    assert not publish.is_dataset(tmp_path / "missing")
    with pytest.raises(analyzer.AnalyzerError, match="not a published dataset"):
        publish.validate_dataset(runs.c4)


def test_sha256sum_checks(published: Path) -> None:
    done = subprocess.run(["sha256sum", "-c", "SHA256SUMS"], cwd=published, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count(": OK") == 5


def test_parquet_loads_everywhere(published: Path, runs: FixtureRuns) -> None:
    path = published / "data" / "train-00000-of-00001.parquet"
    df = pd.read_parquet(published / "data")
    assert df["deal_number"].tolist() == list(range(1, 31))
    table = pads.dataset(published / "data", format="parquet").to_table()
    assert table.num_rows == 30
    assert table.schema.remove_metadata().equals(schema.arrow_schema())
    con = duckdb.connect()
    counts = dict(
        con.execute(f"SELECT outcome, count(*) FROM '{published}/data/*.parquet' GROUP BY ALL").fetchall()
    )
    original = pads.dataset(runs.c2, format="parquet", partitioning="hive").to_table()
    assert counts == original.column("outcome").to_pandas().astype(str).value_counts().to_dict()
    assert con.execute(f"SELECT min(deal_number), max(deal_number) FROM '{path}'").fetchone() == (1, 30)
    # same content as the run, row for row
    assert (
        table.select(["deal_number", "outcome", "solution"]).to_pylist()
        == original.sort_by("deal_number").select(["deal_number", "outcome", "solution"]).to_pylist()
    )


def test_parquet_metadata_and_layout(published: Path) -> None:
    f = pq.ParquetFile(published / "data" / "train-00000-of-00001.parquet")
    meta = {k.decode(): v.decode() for k, v in (f.schema_arrow.metadata or {}).items()}
    run = json.loads((published / "provenance" / "run.json").read_text())
    assert meta["fca.config_hash"] == run["config_hash"]
    assert meta["fca.deals"] == "1-30" and meta["fca.dataset_version"] == "1.0.0"
    assert f.metadata.row_group(0).column(0).compression == "ZSTD"
    assert (f.schema_arrow.field("elapsed_s").metadata or {})[b"unit"] == b"seconds"


def test_card(published: Path, runs: FixtureRuns) -> None:
    card = (published / "README.md").read_text()
    h = header(card)
    assert h["license"] == "cc-by-4.0"
    assert h["size_categories"] == ["n<1K"]
    assert "freecell" in h["tags"]  # type: ignore[operator]
    assert h["configs"] == [
        {"config_name": "default", "data_files": [{"split": "train", "path": "data/train-*.parquet"}]}
    ]
    assert "1-30" in str(h["pretty_name"])
    assert schema.markdown_table() in card
    for text in ("freecell-analyzer run 1-30", "engine 0.1.0", "max_positions | 20,000", "## How to cite"):
        assert text in card, text
    assert "Deals with outcome `error` (1): 13." in card
    run = json.loads((published / "provenance" / "run.json").read_text())
    assert run["config_hash"] == json.loads((runs.c2 / "_run" / "run.json").read_text())["config_hash"]
    assert all("pid" not in h for h in run["history"])


def test_datapackage(published: Path) -> None:
    pkg = json.loads((published / "datapackage.json").read_text())
    assert pkg["version"] == "1.0.0" and pkg["licenses"][0]["name"] == "CC-BY-4.0"
    [data] = [r for r in pkg["resources"] if r["name"] == "results-00000"]
    assert [f["name"] for f in data["schema"]["fields"]] == [c.name for c in schema.COLUMNS]
    assert data["hash"] == "sha256:" + publish.sha256_file(published / data["path"])
    outcome = next(f for f in data["schema"]["fields"] if f["name"] == "outcome")
    assert outcome["constraints"]["enum"] == list(schema.OUTCOMES)


def test_citation(published: Path) -> None:
    cff = header("---\n" + (published / "CITATION.cff").read_text() + "---\n")
    assert cff["cff-version"] == "1.2.0" and cff["type"] == "dataset"
    assert cff["version"] == "1.0.0" and cff["authors"] == [{"name": publish.DEFAULT_AUTHOR}]
    assert str(cff["date-released"]) == "2024-05-01"  # the run's own date, not today's


def test_published_version_is_never_rewritten(published: Path, runs: FixtureRuns) -> None:
    before = (published / "SHA256SUMS").read_bytes()
    with pytest.raises(analyzer.AnalyzerError, match="never changed"):
        publish.publish(runs.c4, published.parent, version="1.0.0")
    assert (published / "SHA256SUMS").read_bytes() == before
    assert not any(p.name.startswith(".") for p in published.parent.iterdir())


def test_publishing_is_deterministic(published: Path, runs: FixtureRuns, tmp_path: Path) -> None:
    again = publish.publish(runs.c2, tmp_path)
    assert (again / "SHA256SUMS").read_bytes() == (published / "SHA256SUMS").read_bytes()


def test_tampering_is_detected(published: Path, tmp_path: Path) -> None:
    copy = writable_copy(published, tmp_path / "1.0.0")
    card = copy / "README.md"
    card.write_text(card.read_text().replace("| solved | ", "| solved | 1"))
    problems = publish.validate_dataset(copy, replay=0)
    assert any("README.md: sha256 differs" in p for p in problems), problems
    assert any("solved count does not match" in p for p in problems), problems


def test_changed_data_is_detected(published: Path, tmp_path: Path) -> None:
    copy = writable_copy(published, tmp_path / "1.0.0")
    path = copy / "data" / "train-00000-of-00001.parquet"
    table = pq.read_table(path)
    keep = [i for i in range(table.num_rows) if i != 4]  # drop deal 5
    pq.write_table(table.take(keep), path, compression="zstd")
    (copy / "extra.txt").write_text("x")
    problems = publish.validate_dataset(copy, replay=0)
    text = "\n".join(problems)
    assert "data/train-00000-of-00001.parquet: sha256 differs" in text
    assert "deal 6 where deal 5 was due" in text
    assert "extra.txt: not listed in SHA256SUMS" in text


def test_duplicates_and_bad_solutions_are_detected(published: Path, tmp_path: Path) -> None:
    copy = writable_copy(published, tmp_path / "1.0.0")
    path = copy / "data" / "train-00000-of-00001.parquet"
    table = pq.read_table(path)
    rows = table.to_pylist()
    rows.insert(1, dict(rows[0]))
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), path)
    assert "rows per deal" in "\n".join(publish.validate_dataset(copy, replay=0))
    rows = table.to_pylist()
    first_solved = next(i for i, r in enumerate(rows) if r["outcome"] == "solved")
    moves = str(rows[first_solved]["solution"]).split()
    rows[first_solved]["solution"] = " ".join([moves[1], moves[0], *moves[2:]])
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), path)
    problems = "\n".join(publish.validate_dataset(copy, replay_all=True))
    assert f"deal {rows[first_solved]['deal_number']} with 2 cells: the verifier rejects the solution" in problems
    assert "the digest of every row differs" in problems


def test_min_cells_run_publishes_and_validates(runs: FixtureRuns, tmp_path: Path) -> None:
    d = publish.publish(runs.min_cells, tmp_path, name="ms-min-cells", version="0.1", license="CC0-1.0")
    assert publish.validate_dataset(d) == []
    card = (d / "README.md").read_text()
    assert "Minimum number of cells per deal" in card and header(card)["license"] == "cc0-1.0"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"license": "WTFPL"}, "--license"),
        ({"name": "Not A Name"}, "--name"),
        ({"version": "../x"}, "--version"),
    ],
)
def test_bad_options(runs: FixtureRuns, tmp_path: Path, kwargs: dict[str, str], message: str) -> None:
    with pytest.raises(analyzer.AnalyzerError, match=message):
        publish.publish(runs.c4, tmp_path, **kwargs)
    assert list(tmp_path.iterdir()) == []


def test_incomplete_run_is_refused(runs: FixtureRuns, tmp_path: Path) -> None:
    with pytest.raises(analyzer.AnalyzerError, match=r"incomplete \(10 deals missing: 11-20\)"):
        publish.publish(runs.incomplete, tmp_path / "ds")
    assert not (tmp_path / "ds" / "1.0.0").exists()


def test_cli(runs: FixtureRuns, published: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["publish", str(runs.c4), "--out", str(tmp_path), "--version", "2"]) == 0
    assert publish.validate_dataset(tmp_path / "2") == []
    assert cli.main(["publish", str(runs.c4), "--out", str(tmp_path), "--version", "2"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "never changed" in err
    copy = writable_copy(published, tmp_path / "tampered")
    (copy / "provenance" / "run.json").write_text("{}")
    assert publish.main(["--validate", str(copy)]) == 1  # python -m reports.publish --validate
    assert "provenance/run.json: sha256 differs" in capsys.readouterr().out


def test_validate_subcommand_checks_a_published_dataset(
    published: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from analyzer import cli as main_cli

    assert main_cli.main(["validate", str(published)]) == 0
    assert "valid" in capsys.readouterr().out
    copy = writable_copy(published, tmp_path / "1.0.0")
    (copy / "CITATION.cff").write_text("tampered\n")
    assert main_cli.main(["validate", str(copy)]) == 1
    assert "CITATION.cff: sha256 differs" in capsys.readouterr().out
    assert main_cli.main(["validate", str(copy), "--json", "--sample", "0"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert (doc["command"], doc["result"], doc["exit_code"]) == ("validate", "invalid", 1)
    assert any("CITATION.cff: sha256 differs" in p for p in doc["problems"])
    assert main_cli.main(["validate", str(published), "--quiet"]) == 0
    assert capsys.readouterr().out.count("\n") == 1


def _tool(name: str) -> str | None:
    local = Path(__file__).resolve().parent.parent / "build" / f"{name}-venv" / "bin" / name
    return shutil.which(name) or (str(local) if local.exists() else None)


@pytest.mark.parametrize("tool", ["frictionless", "cffconvert"])
def test_real_validators_accept_the_dataset(published: Path, tool: str) -> None:
    """Frictionless's validator on datapackage.json (every shard read against
    the table schema) and `cffconvert --validate` on CITATION.cff. `.ci/run`
    installs cffconvert in a venv of its own (build/cffconvert-venv): its pins
    (jsonschema<4) clash with Ray's."""
    import os

    exe = _tool(tool)
    if exe is None:
        if os.environ.get("CI"):
            pytest.fail(f"{tool} is not installed (.ci/run installs it)")
        pytest.skip(f"{tool} is not installed")
    argv = [exe, "validate", "datapackage.json"] if tool == "frictionless" else [exe, "--validate", "-i", "CITATION.cff"]
    done = subprocess.run(argv, cwd=published, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
