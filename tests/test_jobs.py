"""Tests of the batch layer that need no Ray: deal ranges, the run
configuration, chunk solving/writing/scanning, run directories, status,
validate and the command line's refusals of bad input (which all happen
before Ray would start). The Ray runs are in test_jobs_ray.py and
test_jobs_cluster.py."""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import analyzer
import jobs.check
import jobs.chunks
import jobs.cli
import jobs.config
import jobs.plan
import jobs.ranges
import jobs.run
import jobs.runformat
from analyzer import _engine, headline
from analyzer.cliframe import EXIT_CODES_HELP, Parser, dispatch
from analyzer.errors import RangeError, UsageError, VariantError
from analyzer.schema import COLUMNS, NONDETERMINISTIC, arrow_schema
from jobs import runformat
from jobs.chunks import solve_chunk
from jobs.config import Provenance, RunConfig, build_config, parse_cells
from jobs.errors import ConfigError, RunDirError
from jobs.ranges import DealRange, merge, parse_deals, split_chunks, subtract
from jobs.runformat import (
    META_KEYS,
    FileInvalid,
    Invocation,
    Manifest,
    data_relpath,
    read_checked,
    table_problems,
)
from jobs.task import EngineUnavailableError, require_engine

# ---------------------------------------------------------------------------
# Helpers shared with the Ray tests
# ---------------------------------------------------------------------------


def cli(argv: list[str]) -> int:
    """Runs a jobs subcommand the way `analyzer.cli.main` does: the frame's
    parser and wrapper around `jobs.cli.register` (a user mistake is one
    stderr line and exit 2)."""
    parser = Parser(prog="freecell-analyzer")
    jobs.cli.register(parser.add_subparsers(dest="command", required=True))
    return dispatch(parser, argv)


def dataset(run_dir: Path) -> pa.Table:
    """Every row of a run, as pyarrow.dataset reads it (temporary dot-files
    ignored), sorted by deal and cells, without machine-dependent columns."""
    table = ds.dataset(run_dir, format="parquet", partitioning="hive").to_table()
    keep = [c.name for c in COLUMNS if c.name not in NONDETERMINISTIC]
    return table.select(keep).cast(arrow_schema().remove_metadata().select(keep) if False else table.select(keep).schema).sort_by([("deal_number", "ascending"), ("cells", "ascending")])


def reference(deals: DealRange, config: RunConfig) -> pa.Table:
    """The rows a run must produce, computed here without Ray or files."""
    t = solve_chunk(deals.start, deals.end, config)
    keep = [c.name for c in COLUMNS if c.name not in NONDETERMINISTIC]
    return t.select(keep).replace_schema_metadata(None)


def make_run_dir(path: Path, deals: str, config: RunConfig, file_deals: int) -> Path:
    """A run directory written without Ray, through `jobs.runformat`."""
    ranges = parse_deals(deals)
    history = [Invocation("run", ["test"], deals, "2026-01-01T00:00:00Z", status="complete")]
    m = runformat.create_run(path, config, ranges, file_deals=file_deals, history=history)
    index = runformat.IndexWriter(path)
    for r in runformat.file_units(ranges, file_deals):
        runformat.add_file(path, m, r, [solve_chunk(r.start, r.end, config)], index)
    index.close()
    return path


def tree(path: Path) -> list[tuple[str, int, int]]:
    """Names, sizes and mtimes under `path`: to prove nothing was written."""
    if path.is_file():
        st_ = path.stat()
        return [(path.name, st_.st_size, st_.st_mtime_ns)]
    # The lock file (and so the mtime of _run/) is touched by every driver, refused or not.
    return sorted(
        (str(p.relative_to(path)), p.stat().st_size, p.stat().st_mtime_ns)
        for p in path.rglob("*")
        if p.name not in ("_run", "lock")
    )


FAST = build_config(max_positions=50_000)


@pytest.fixture(scope="module")
def fast_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_run_dir(tmp_path_factory.mktemp("fast") / "run", "1-12", FAST, 5)


# ---------------------------------------------------------------------------
# Ranges
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1-32000", [(1, 32000)]),
        ("11982", [(11982, 11982)]),
        ("1-1000,5000-6000", [(1, 1000), (5000, 6000)]),
        (" 5000-6000 , 1-1000 ", [(1, 1000), (5000, 6000)]),
        ("1-10,11-20", [(1, 20)]),
        ("8589934591", [(8589934591, 8589934591)]),
    ],
)
def test_parse_deals(text: str, expected: list[tuple[int, int]]) -> None:
    assert [(r.start, r.end) for r in parse_deals(text)] == expected


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("0-5", "'0-5': deal 0 is out of range"),
        ("5-1", "'5-1' is reversed"),
        ("abc", "'abc' is not a deal range"),
        ("8589934592", "deal 8589934592 is out of range"),
        ("1-8589934592", "deal 8589934592 is out of range"),
        ("", "no deals given"),
        ("1,,2", "'' in '1,,2' is not a deal range"),
        ("-5", "'-5' is not a deal range"),
        ("1-100,50-60", "'1-100' and '50-60' overlap (deals 50-60)"),
        ("7,7", "'7' and '7' overlap"),
        ("1.5", "'1.5' is not a deal range"),
    ],
)
def test_parse_deals_rejects(text: str, needle: str) -> None:
    with pytest.raises(RangeError) as e:
        parse_deals(text)
    assert needle in str(e.value)
    assert "\n" not in str(e.value)


range_lists = st.lists(
    st.tuples(st.integers(1, 300), st.integers(0, 40)).map(lambda t: DealRange(t[0], t[0] + t[1])), max_size=6
)


@settings(max_examples=200, deadline=None)
@given(range_lists, range_lists, st.integers(1, 37))
def test_range_arithmetic(a: list[DealRange], b: list[DealRange], size: int) -> None:
    deals_a = {n for r in a for n in r.deals()}
    deals_b = {n for r in b for n in r.deals()}
    assert {n for r in merge(a) for n in r.deals()} == deals_a
    assert {n for r in subtract(a, b) for n in r.deals()} == deals_a - deals_b
    chunks = split_chunks(a, size)
    seen = [n for r in chunks for n in r.deals()]
    assert sorted(seen) == sorted(deals_a)  # every deal exactly once
    for r in chunks:  # on the fixed grid: one block of `size` each
        assert (r.start - 1) // size == (r.end - 1) // size


def test_split_chunks_grid_is_stable() -> None:
    assert split_chunks(parse_deals("1-2000"), 1000)[0] == split_chunks(parse_deals("1-1000"), 1000)[0]
    assert [str(r) for r in split_chunks(parse_deals("995-1003"), 1000)] == ["995-1000", "1001-1003"]


# ---------------------------------------------------------------------------
# Configuration
# ---------------------------------------------------------------------------


def test_config_json_and_hash() -> None:
    c = build_config("freecell", cells="0-5", max_positions=1000)
    d = json.loads(c.canonical_json())
    assert set(d) == {"variant", "cells", "min_cells", "limits"}  # DESIGN.md "Runs on disk"
    assert d["cells"] == [0, 1, 2, 3, 4, 5] and d["min_cells"] is False
    assert d["variant"] == analyzer.Variant.named("freecell").as_dict()
    assert d["limits"] == {"max_positions": 1000, "max_bytes": 2**30, "max_disk": 8 * 2**30, "max_seconds": None}
    assert RunConfig.from_dict(d) == c
    assert c.config_hash() == build_config("FreeCell", cells="0-5", max_positions=1000).config_hash()
    assert c.config_hash() != build_config("freecell", cells="0-4", max_positions=1000).config_hash()
    assert c.config_hash() != build_config("freecell", cells="0-5", move_rule="doubling").config_hash()
    assert "fail_deals" not in d
    assert json.loads(build_config(fail_deals=[9, 3]).canonical_json())["fail_deals"] == [3, 9]


def test_min_cells_config() -> None:
    c = build_config("freecell", min_cells=True)
    assert c.min_cells and c.cells == tuple(range(0, 9)) and c.rows_per_deal() is None
    assert build_config("seahaven_towers", min_cells=True, max_cells=5).cells == (2, 3, 4, 5)


@pytest.mark.parametrize(
    ("kwargs", "error", "needle"),
    [
        ({"variant": "klondike"}, VariantError, "unknown variant 'klondike'"),
        ({"move_rule": "fast"}, VariantError, "unknown move rule 'fast'"),
        ({"cells": "5-1"}, ConfigError, "'5-1' is reversed"),
        ({"cells": "11"}, ConfigError, "cells must be at most 10"),
        ({"cells": "x"}, ConfigError, "'x' is not a number of cells"),
        ({"variant": "eight_off", "cells": "2"}, ConfigError, "eight_off deals 4 cards to cells"),
        ({"cells": "4", "min_cells": True}, ConfigError, "cannot be used together"),
        ({"max_cells": 5}, ConfigError, "--max-cells needs --min-cells"),
        ({"max_positions": 0}, ConfigError, "--max-positions must be in 1..18446744073709551615"),
        ({"max_bytes": 2**64}, ConfigError, "--max-bytes must be in 1..18446744073709551615"),
        ({"max_seconds": -1.0}, ConfigError, "--max-seconds must be more than 0"),
        ({"max_seconds": float("inf")}, ConfigError, "--max-seconds must be more than 0 and at most"),
    ],
)
def test_config_rejects(kwargs: dict[str, object], error: type[Exception], needle: str) -> None:
    with pytest.raises(error) as e:
        build_config(**kwargs)  # type: ignore[arg-type]
    assert needle in str(e.value)


def test_parse_cells() -> None:
    assert parse_cells("4") == (4,)
    assert parse_cells("0-5") == (0, 1, 2, 3, 4, 5)


def test_task_memory_follows_limits() -> None:
    small, big = build_config(max_bytes=2**20), build_config(max_bytes=2**32)
    assert small.task_memory() < big.task_memory()
    assert big.task_memory() > 2**32  # the budget plus overhead


def test_provenance() -> None:
    p = Provenance.current()
    assert p.package_version == analyzer.__version__
    assert p.engine_version == _engine.__version__
    assert p.git_commit == "" or len(p.git_commit) == 40


# ---------------------------------------------------------------------------
# Chunks
# ---------------------------------------------------------------------------


def test_solve_chunk_matches_the_engine() -> None:
    config = build_config(cells="3-4", max_positions=50_000)
    table = solve_chunk(1, 6, config)
    assert table.schema.remove_metadata().equals(arrow_schema(), check_metadata=True)
    rows = table.to_pylist()
    assert [(r["deal_number"], r["cells"]) for r in rows] == [(n, k) for n in range(1, 7) for k in (3, 4)]
    for k in (3, 4):
        direct = analyzer.solve_range(1, 7, cells=k, limits=config.limits)
        for r, d in zip([r for r in rows if r["cells"] == k], direct, strict=True):
            assert r["outcome"] == d.outcome and r["variant"] == "freecell" and r["move_rule"] == "product"
            assert r["solution"] == (" ".join(d.solution) if d.outcome == "solved" else None)
            assert r["solution_length_single"] == d.solution_length_single
            assert r["solution_length_multi"] == d.solution_length_multi
            assert r["positions_expanded"] == d.positions_expanded
            assert r["positions_stored"] == d.positions_stored
            assert r["min_cells"] is None and r["error"] is None
    meta = table.schema.metadata
    assert {k.decode() for k in meta} >= set(META_KEYS)
    assert meta[b"fca.config"].decode() == config.canonical_json()
    assert meta[b"fca.config_hash"].decode() == config.config_hash()
    assert (meta[b"fca.deal_start"], meta[b"fca.deal_end"]) == (b"1", b"6")


def test_solve_chunk_has_the_engines_nulls_limits_and_errors() -> None:
    # A task's table is made from the engine's buffers (`analyzer.
    # solve_range_table`): every row as the engine's record has it, nulls,
    # limit reasons and error texts included.
    config = build_config(cells="4", max_positions=120, fail_deals=[5])
    rows = solve_chunk(1, 12, config).to_pylist()
    direct = analyzer.solve_range(1, 13, limits=config.limits, fail_deals=[5])
    assert {r["outcome"] for r in rows} == {"solved", "limit", "error"}
    for r, d in zip(rows, direct, strict=True):
        assert (r["deal_number"], r["outcome"], r["limit_reason"], r["error"]) == (d.deal_number, d.outcome, d.limit_reason, d.error)
        assert (r["solution_length_single"], r["solution_length_multi"]) == (d.solution_length_single, d.solution_length_multi)
        assert r["solution"] == (" ".join(d.solution) if d.outcome == "solved" else None)
        assert (r["positions_expanded"], r["peak_bytes"]) == (d.positions_expanded, d.peak_bytes)
        assert (r["attempts"], r["attempt_history"], r["min_cells"]) == (1, None, None)
    assert solve_chunk(7, 7, config).column("deal_number").to_pylist() == [7]


def test_a_solving_task_imports_no_pandas(tmp_path: Path) -> None:
    # pyarrow imports pandas, when installed, on its first array made from
    # Python values (a third of a second of CPU in every Ray worker); a
    # task's table and part are made without one.
    code = (
        "import sys; from pathlib import Path; import jobs.chunks, jobs.runformat; from jobs.config import build_config\n"
        "t = jobs.chunks.solve_chunk(1, 30, build_config(cells='3-4'))\n"
        "jobs.runformat.write_part_file(Path(sys.argv[1]), [t], t.schema)\n"
        "print('pandas' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "p.part")], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout.strip()) == (0, "False"), done.stderr


def test_result_files_are_made_in_a_memory_pool_that_keeps_freed_memory() -> None:
    # A Ray worker (its first task checks the engine: `require_engine`, on a
    # cluster whose processes did not inherit the driver's environment) and
    # the driver (the CLI) make their Arrow buffers with the C library's
    # malloc, not pyarrow's default, which gives large freed buffers back to
    # the system; a pool the user names is kept.
    pool = "import pyarrow as pa; print(pa.default_memory_pool().backend_name)"
    env = {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"}
    for first in ("import jobs.task; jobs.task.require_engine()", "import analyzer.cli"):
        for named, want in ((None, "system"), ("mimalloc", "mimalloc")):
            e = env if named is None else {**env, "ARROW_DEFAULT_MEMORY_POOL": named}
            done = subprocess.run([sys.executable, "-c", f"{first}; {pool}"], capture_output=True, text=True, timeout=120, env=e)
            assert (done.returncode, done.stdout.strip()) == (0, want), (first, done.stderr)


def test_a_configuration_from_before_the_disk_budget_keeps_its_hash() -> None:
    # run.json of a run made before --max-disk existed: no max_disk, read as 0.
    old = {
        "variant": analyzer.Variant.named("freecell").as_dict(),
        "cells": [4],
        "min_cells": False,
        "limits": {"max_positions": 100_000_000, "max_bytes": 2**30, "max_seconds": None},
    }
    c = RunConfig.from_dict(old)
    assert c.limits.max_disk == 0
    assert json.loads(c.canonical_json()) == old
    assert c.config_hash() == hashlib.sha256(json.dumps(old, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def test_solve_chunk_min_cells() -> None:
    config = build_config(min_cells=True, max_cells=6, max_positions=20_000)
    rows = solve_chunk(1, 5, config).to_pylist()
    for n in range(1, 6):
        m = analyzer.min_cells(n, max_cells=6, limits=config.limits)
        mine = [r for r in rows if r["deal_number"] == n]
        searched = sorted((r.cells, r.outcome) for r in m.results)
        assert [(r["cells"], r["outcome"]) for r in mine] == searched
        assert {r["min_cells"] for r in mine} == {m.min_cells}
    assert table_problems(solve_chunk(1, 5, config), config) == []


@pytest.mark.parametrize("variant", sorted(p.name for p in _engine.presets()))
def test_every_preset_passes_the_row_checks(variant: str) -> None:
    # Relaxed FreeCell (the unlimited rule) solves deal 1 with a multi-card
    # move that has no single-card expansion: its single length is null,
    # which the checks allow under that rule only.
    config = build_config(variant, max_positions=20_000)
    t = solve_chunk(1, 8, config)
    assert table_problems(t, config) == []
    if config.variant.move_rule == "unlimited":
        assert None in t.column("solution_length_single").to_pylist()
        freecell = build_config(max_positions=20_000)
        claimed = t.set_column(1, "variant", pa.array(["freecell"] * t.num_rows).dictionary_encode())
        claimed = claimed.set_column(3, "move_rule", pa.array(["product"] * t.num_rows).dictionary_encode())
        assert any("single < multi" in p for p in table_problems(claimed, freecell))


def test_injected_failures_become_error_rows() -> None:
    config = build_config(max_positions=50_000, fail_deals=[2, 4])
    rows = solve_chunk(1, 5, config).to_pylist()
    errors = {r["deal_number"]: r["error"] for r in rows if r["outcome"] == "error"}
    assert set(errors) == {2, 4}
    assert "injected failure for deal 2" in errors[2]
    assert all(r["outcome"] != "error" for r in rows if r["deal_number"] in (1, 3, 5))
    mc = build_config(min_cells=True, max_cells=5, max_positions=20_000, fail_deals=[3])
    rows = solve_chunk(3, 4, mc).to_pylist()
    assert [r["outcome"] for r in rows if r["deal_number"] == 3] == ["error"]
    assert table_problems(solve_chunk(3, 4, mc), mc) == []


def test_parts_and_seal(tmp_path: Path) -> None:
    m = runformat.create_run(tmp_path, FAST, [DealRange(10, 19)], file_deals=10)
    p1 = runformat.write_part(tmp_path, solve_chunk(10, 14, FAST))
    p2 = runformat.write_part(tmp_path, solve_chunk(15, 19, FAST))
    assert p1.name == "deals-0000000010-0000000014.part"
    assert [p.name for p in (tmp_path / "_run" / "parts").iterdir() if p.name.startswith(".")] == []
    # Parts are read once, by the seal: an uncompressed Arrow stream with its
    # sha256 (`write_part_file`); the data file is zstd Parquet.
    raw = p1.read_bytes()
    assert raw.endswith(runformat.PART_MAGIC) and hashlib.sha256(raw[:-40]).digest() == raw[-40:-8]
    with pa.ipc.open_stream(pa.py_buffer(raw[:-40])) as reader:
        assert reader.read_all().num_rows == 5
    entry = runformat.seal(tmp_path, DealRange(10, 19), FAST, m.provenance, [(DealRange(10, 14), p1), (DealRange(15, 19), p2)])
    assert entry.file == "deal_block=0/deals-0000000010-0000000019.parquet" == data_relpath(DealRange(10, 19))
    assert entry.rows == 10 and not p1.exists() and not p2.exists()
    path = tmp_path / entry.file
    assert pq.ParquetFile(path).metadata.row_group(0).column(0).compression == "ZSTD"
    field = pq.read_schema(path).field("elapsed_s")
    assert field.metadata is not None and field.metadata[b"unit"] == b"seconds"
    assert runformat.check_file(path, FAST, entry=entry) == entry
    assert {k.decode() for k in pq.read_schema(path).metadata} >= set(META_KEYS)


def test_file_names() -> None:
    assert runformat.parse_file_name(".deals-0000000001-0000000005.parquet.1.1234abcd.tmp") is None
    assert runformat.parse_file_name("deals-0000000005-0000000001.parquet") is None
    assert runformat.parse_file_name("deals-0000000000-0000000001.parquet") is None
    assert runformat.parse_file_name("deals-1-5.parquet") is None
    with pytest.raises(ConfigError, match="must divide"):
        runformat.check_file_deals(3)


def corrupt_middle(path: Path) -> None:
    data = bytearray(path.read_bytes())
    mid = len(data) // 2
    data[mid : mid + 64] = bytes(b ^ 0x5A for b in data[mid : mid + 64])
    path.write_bytes(bytes(data))


def test_reader_refuses_bad_files(tmp_path: Path) -> None:
    run = make_run_dir(tmp_path / "run", "1-20", FAST, 5)
    index = runformat.read_index(run)
    files = sorted(index)
    corrupt_middle(run / files[0])
    with pytest.raises(FileInvalid, match="sha256 differs from the run index"):
        list(read_checked(run / files[0], FAST, entry=index[files[0]]))
    with pytest.raises(FileInvalid):  # without the index: page checksums or the decoder
        list(read_checked(run / files[0], FAST))
    t = solve_chunk(1, 4, FAST)
    for bad, needle in [
        (t.filter(pc.field("deal_number") != 3), "deals have no row"),
        (pa.concat_tables([t, t.slice(0, 1)]).sort_by([("deal_number", "ascending")]), "appears twice"),
    ]:
        path = tmp_path / "x" / "deals-0000000001-0000000004.part"
        path.parent.mkdir(exist_ok=True)
        runformat.write_part_file(path, [bad], bad.schema)
        with pytest.raises(FileInvalid, match=needle):
            list(read_checked(path, FAST, part=True))
    other = build_config(cells="3", max_positions=50_000)
    with pytest.raises(FileInvalid, match="differs from the run's"):
        list(read_checked(run / files[1], other))


def test_parts_are_checked_whole_and_old_parquet_parts_still_read(tmp_path: Path) -> None:
    """A part (an Arrow IPC stream with its sha256) is refused when any byte
    changed or its end is missing, before a row is read; a Parquet part of
    an earlier version (a run it began, resumed) reads as it did."""
    t = solve_chunk(1, 4, FAST)
    path = tmp_path / "x" / "deals-0000000001-0000000004.part"
    path.parent.mkdir()
    runformat.write_part_file(path, [t.slice(0, 2), t.slice(2)], t.schema)
    good = path.read_bytes()
    read = pa.concat_tables(read_checked(path, FAST, part=True))
    assert read.equals(t.replace_schema_metadata(None))
    assert len(list(read_checked(path, FAST, part=True))) == 2  # one row group per table written
    for at in (0, len(good) // 3, len(good) // 2, len(good) - 41, len(good) - 20):  # a byte of the stream or of its sha256
        flipped = bytearray(good)
        flipped[at] ^= 0x10
        path.write_bytes(bytes(flipped))
        with pytest.raises(FileInvalid, match="sha256 differs"):
            list(read_checked(path, FAST, part=True))
    for cut in (20, 8, len(good) - 5):
        path.write_bytes(good[:-cut])
        with pytest.raises(FileInvalid, match="end marker is missing"):
            list(read_checked(path, FAST, part=True))
    runformat.write_table_file(path, [t], t.schema, compression="none")  # a part as earlier versions wrote it
    assert path.read_bytes().startswith(b"PAR1")
    assert pa.concat_tables(read_checked(path, FAST, part=True)).equals(read)


def test_state_lists_without_reading(tmp_path: Path) -> None:
    run = make_run_dir(tmp_path / "run", "1-20", FAST, 5)
    block = run / "deal_block=0"
    (block / ".deals-0000000001-0000000005.parquet.1.abcd1234.tmp").write_bytes(b"partial")
    (run / "notes.txt").write_text("hi")
    (block / "deals-0000000006-0000000010.parquet").unlink()
    (block / "deals-0000000021-0000000030.parquet").mkdir()  # a directory named like a file
    state = runformat.run_state(run)
    assert state.covered() == (DealRange(1, 5), DealRange(11, 20))
    assert [e.file for e in state.lost] == ["deal_block=0/deals-0000000006-0000000010.parquet"]
    assert [p.name for p in state.disk.temp_files] == [".deals-0000000001-0000000005.parquet.1.abcd1234.tmp"]
    assert sorted(p.name for p in state.disk.strays) == ["deals-0000000021-0000000030.parquet", "notes.txt"]


# ---------------------------------------------------------------------------
# Run directories, status, validate
# ---------------------------------------------------------------------------


def test_manifest_round_trip(fast_dir: Path) -> None:
    m = runformat.load_manifest(fast_dir)
    assert m is not None
    raw = json.loads((fast_dir / "_run" / "run.json").read_text())
    assert set(raw) >= {
        "format_version", "schema_version", "package_version", "engine_version", "git_commit",
        "config", "config_hash", "deals", "layout", "history", "passes",
    }  # fmt: skip
    assert raw["deals"] == "1-12" and raw["layout"]["file_deals"] == 5
    assert Manifest.from_json(m.to_json(), "x").to_json() == m.to_json()
    raw["config"]["cells"] = [3]
    with pytest.raises(RunDirError, match="is not the sha256 of its config"):
        Manifest.from_json(json.dumps(raw), "x")


def test_first_format_is_refused_with_advice(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "chunks").mkdir()
    (tmp_path / "run.json").write_text("{}")
    assert cli(["status", str(tmp_path)]) == 2
    assert "first format" in capsys.readouterr().err


def test_status_and_validate_complete(fast_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(["status", str(fast_dir)]) == 0
    out = capsys.readouterr().out
    assert "coverage: 12/12 deals (100 %)" in out and "status: complete" in out
    assert cli(["validate", str(fast_dir), "--all"]) == 0
    out = capsys.readouterr().out
    assert "result: valid and complete" in out
    assert "every one" in out and "0 rejected" in out


def test_status_and_validate_incomplete(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = make_run_dir(tmp_path / "run", "1-15", FAST, 5)
    (run / "deal_block=0" / "deals-0000000006-0000000010.parquet").unlink()
    assert cli(["status", str(run)]) == 3
    out = capsys.readouterr().out
    assert "missing: 5 deals: 6-10" in out and "pending deal_block=0/deals-0000000006-0000000010.parquet" in out
    assert cli(["validate", str(run)]) == 3
    assert "result: incomplete (exit 3)" in capsys.readouterr().out


def test_status_counts_the_deals_of_unsealed_parts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A run stopped before sealing (a min-cells run seals nothing until a
    whole file span is done) still answers with what its parts hold: each
    part read through the checked reader, marked as not yet sealed; a part
    the reader refuses is named and not counted."""
    run = make_run_dir(tmp_path / "run", "1-20", FAST, 5)
    for name in ("deals-0000000011-0000000015.parquet", "deals-0000000016-0000000020.parquet"):
        (run / "deal_block=0" / name).unlink()
    runformat.write_part(run, solve_chunk(11, 13, FAST))
    runformat.write_part(run, solve_chunk(14, 15, FAST))
    whole = runformat.run_state(run)
    assert whole.headline().deals == 10 and [r for r, _ in whole.unsealed_parts()] == [DealRange(11, 13), DealRange(14, 15)]
    expected = headline.headline(solve_chunk(1, 15, FAST), label="", cells=[4])
    assert cli(["status", str(run)]) == 3
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith(": 15 of 20 deals have results (75.0 %); 5 of them in parts not yet sealed into data files")
    assert out[1] == expected.lines()[1]  # the counts of all 15 deals
    assert cli(["status", str(run), "--json"]) == 3
    doc = json.loads(capsys.readouterr().out)
    assert doc["headline"]["deals"] == 15 and doc["headline"]["deals_in_parts"] == 5
    # a part that fails the checked reader
    bad = run / "_run" / "parts" / "deals-0000000014-0000000015.part"
    bad.write_bytes(bad.read_bytes()[:-20])
    assert cli(["status", str(run)]) == 3
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith(": 13 of 20 deals have results (65.0 %); 3 of them in parts not yet sealed into data files")
    assert any(line.startswith("  (a part the checked reader refused, not counted above: ") and "deals-0000000014-0000000015.part" in line for line in out)


def test_validate_catches_wrong_data(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = make_run_dir(tmp_path / "run", "1-10", FAST, 5)
    path = run / "deal_block=0" / "deals-0000000001-0000000005.parquet"
    t = pq.read_table(path)
    rows = t.to_pylist()
    solved = next(i for i, r in enumerate(rows) if r["outcome"] == "solved")
    moves = rows[solved]["solution"].split()
    rows[solved]["solution"] = " ".join(moves[:-1])  # one move short: legal, but not won
    rows[solved]["solution_length_multi"] = len(moves) - 1
    pq.write_table(pa.Table.from_pylist(rows, schema=t.schema), path)
    assert cli(["validate", str(run), "--all"]) == 1
    out = capsys.readouterr().out
    assert "PROBLEM files: deal_block=0/deals-0000000001-0000000005.parquet: changed on disk since it was indexed" in out


def test_row_and_deal_invariants() -> None:
    good = solve_chunk(1, 3, FAST)
    assert table_problems(good, FAST) == []
    rows = good.to_pylist()
    cases: list[tuple[dict[str, object], str]] = [
        ({"solution": None}, "solved but without a well-formed solution"),
        ({"solution_length_multi": 3}, "move count differs from solution_length_multi"),
        ({"outcome": "unsolvable"}, "not solved but has a solution"),
        ({"outcome": "limit", "solution": None, "solution_length_single": None, "solution_length_multi": None},
         "limit without a reason"),
        ({"outcome": "error", "solution": None, "solution_length_single": None, "solution_length_multi": None},
         "error without a message"),
        ({"variant": "bakers_game"}, "variant is not the run's 'freecell'"),
        ({"min_cells": 3}, "min_cells in a run that did not ask for it"),
        ({"outcome": "won"}, "unknown outcome"),
        ({"elapsed_s": -1.0}, "elapsed_s is negative"),
        ({"attempts": 2}, "attempt_history"),
    ]  # fmt: skip
    for change, needle in cases:
        bad = pa.Table.from_pylist([{**rows[0], **change}, *rows[1:]], schema=good.schema)
        problems = table_problems(bad, FAST)
        assert any(needle in p for p in problems), (change, problems)
        assert problems[0].startswith("deal 1 with 4 cells")
    two = build_config(cells="3-4")
    r3, r4 = solve_chunk(1, 1, two).to_pylist()
    lose = pa.Table.from_pylist([r3, {**r4, "outcome": "unsolvable", "solution": None, "solution_length_single": None,
                                      "solution_length_multi": None}], schema=good.schema)  # fmt: skip
    assert "more cells cannot lose a deal" in table_problems(lose, two)[0]


def test_status_needs_a_run_dir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(["status", str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip() == f"freecell-analyzer: error: {tmp_path} is not a run directory: it has no _run/run.json"
    assert cli(["validate", str(tmp_path / "nope")]) == 2


# ---------------------------------------------------------------------------
# The command line: bad input -> one line, exit 2, nothing written (no Ray)
# ---------------------------------------------------------------------------


@pytest.fixture
def no_ray(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Fails the test if `run` gets as far as starting Ray."""

    def refuse(address: str | None, timeout: float = 0) -> bool:
        raise AssertionError("Ray was started for bad input")

    monkeypatch.setattr(jobs.run, "connect", refuse)
    yield


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["0-5"], "'0-5': deal 0 is out of range"),
        (["5-1"], "'5-1' is reversed"),
        (["abc"], "'abc' is not a deal range"),
        (["8589934592"], "deal 8589934592 is out of range"),
        (["1-10", "--variant", "klondike"], "unknown variant 'klondike'"),
        (["1-10", "--cells", "9-3"], "--cells: '9-3' is reversed"),
        (["1-10", "--max-positions", "0"], "--max-positions: '0': positions must be at least 1"),
    ],
)
def test_run_rejects_bad_input(
    tmp_path: Path, args: list[str], needle: str, no_ray: None, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert cli(["run", *args, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("freecell-analyzer: error: ") and needle in err
    assert not out.exists()


def test_run_refuses_a_file(tmp_path: Path, no_ray: None, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "results.parquet"
    f.write_bytes(b"not a directory")
    before = tree(tmp_path)
    assert cli(["run", "1-10", "--out", str(f)]) == 2
    assert "is a file" in capsys.readouterr().err
    assert tree(tmp_path) == before


def test_run_refuses_another_configuration(
    fast_dir: Path, no_ray: None, capsys: pytest.CaptureFixture[str]
) -> None:
    before = tree(fast_dir)
    assert cli(["run", "1-12", "--out", str(fast_dir), "--cells", "3", "--max-positions", "50000"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "holds a run of another configuration" in err
    assert tree(fast_dir) == before


def test_run_with_nothing_to_do_needs_no_ray(fast_dir: Path, no_ray: None) -> None:
    assert cli(["run", "1-12", "--out", str(fast_dir), "--max-positions", "50000"]) == 0
    m = runformat.load_manifest(fast_dir)
    assert m is not None and m.history[-1].status == "complete" and m.history[-1].command


def test_python_m_jobs_run_reports_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert jobs.run.main(["0-5", "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err == (
        "freecell-analyzer: error: python -m jobs.run: argument DEALS: deal range '0-5': deal 0 is out of range: "
        "Microsoft deals are numbered 1..8589934591\n"
    )


@pytest.mark.parametrize("command", ["run", "status", "validate"])
def test_help_documents_exit_codes(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli([command, "--help"]) == 0
    out = capsys.readouterr().out
    assert out.rstrip().endswith(EXIT_CODES_HELP) and "examples:" in out
    assert f"freecell-analyzer {command} " in out.split("examples:", 1)[1]
    codes = {"run": "0 1 2 3 130", "status": "0 2 3", "validate": "0 1 2 3"}[command]
    description = " ".join(out.split("examples:")[0].split())
    for code in codes.split():
        assert f" {code} " in description, code  # what each code means for this subcommand
    assert "--json" in out and "--quiet" in out and "--verbose" in out
    assert "--fail-deals" not in out


# ---------------------------------------------------------------------------
# Pieces of the driver that need no cluster
# ---------------------------------------------------------------------------


def test_missing_engine_fails_with_shipping_advice(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "analyzer._engine", None)  # the import now fails
    with pytest.raises(EngineUnavailableError) as e:
        require_engine()
    assert "runtime_env" in str(e.value) or "runtime-env" in str(e.value)
    assert "pip install" in str(e.value)
    assert jobs.run.classify_failure(e.value) == "environment"


def test_engine_version_mismatch() -> None:
    with pytest.raises(EngineUnavailableError, match=r"but the driver has 0\.0\.0-other"):
        require_engine("0.0.0-other")
    assert require_engine(_engine.__version__) == _engine.__version__


def test_failure_kinds() -> None:
    from ray import exceptions as rex

    classify = jobs.run.classify_failure
    assert classify(rex.WorkerCrashedError()) == "system"
    assert classify(rex.NodeDiedError("n")) == "system"  # type: ignore[no-untyped-call]
    assert classify(rex.RayTaskError("f", "tb", ValueError("bug"))) == "application"  # type: ignore[no-untyped-call]
    bad_install = rex.RayTaskError("f", "tb", ModuleNotFoundError("jobs"))  # type: ignore[no-untyped-call]
    assert classify(bad_install) == "environment"


def test_progress_lines() -> None:
    stream = io.StringIO()
    p = jobs.run.Progress(100, 20, {"solved": 20}, interval=3600, stream=stream)
    assert p.bar is None  # not a terminal
    p.advance(30, {"solved": 29, "limit": 1})
    assert stream.getvalue() == ""  # not yet due
    p.tick(force=True)
    line = stream.getvalue()
    assert "50/100 deals (50.0 %)" in line and "deals/s" in line and "ETA" in line
    assert "solved 49 unsolvable 0 limit 1 error 0" in line


def test_run_reads_sizes_like_solve() -> None:
    """`run` and `solve` share one parser: 1.5G is the same number of bytes."""
    parser = Parser(prog="freecell-analyzer run")
    jobs.run.add_run_arguments(parser)
    args = parser.parse_args(["1-3", "--out", "x", "--max-bytes", "1.5G", "--max-positions", "2.5M"])
    assert (args.max_bytes, args.max_positions) == (3 * 2**29, 2_500_000)
    with pytest.raises(UsageError, match="'lots' is not a number of bytes"):
        parser.parse_args(["1-3", "--out", "x", "--max-bytes", "lots"])


def test_readers_see_only_data_files(tmp_path: Path) -> None:
    """pd.read_parquet, pyarrow.dataset and DuckDB read the run directory as it is."""
    import duckdb
    import pandas as pd

    run = make_run_dir(tmp_path / "run", "1-5", FAST, 5)
    (run / "deal_block=0" / ".deals-0000000006-0000000010.parquet.1.ab12cd34.tmp").write_bytes(b"PAR1 partial")
    runformat.write_part(run, solve_chunk(6, 7, FAST))  # an unsealed part
    assert dataset(run).num_rows == 5
    assert len(pd.read_parquet(run)) == 5
    rel = duckdb.sql(f"SELECT count(*) FROM read_parquet('{run}/*/*.parquet', hive_partitioning=true)")
    assert rel is not None and rel.fetchall() == [(5,)]
    rel = duckdb.sql(f"SELECT count(*) FROM read_parquet('{run}/**/*.parquet')")
    assert rel is not None and rel.fetchall() == [(5,)]


def test_env_is_clean() -> None:
    """The jobs package imports no Ray at import time (status/validate work
    without it), and nothing of reports, at import or when it runs
    (reports reads what jobs writes, never the other way round)."""
    code = (
        "import sys, jobs.cli, jobs.check, jobs.run, jobs.plan, jobs.runformat, jobs.task; "
        "print('ray' in sys.modules, sorted(m for m in sys.modules if m.split('.')[0] == 'reports'))"
    )
    import subprocess

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=os.environ)
    assert out.stdout.strip() == "False []"
    for path in Path(jobs.cli.__file__).parent.glob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert "import reports" not in text and "from reports" not in text, path.name


def test_validate_of_a_run_loads_no_report_module(fast_dir: Path) -> None:
    """`validate RUN` through the main command line: reports lends validate
    its dataset check (reports.publish, which owns the dataset format)
    without the report page's modules (matplotlib)."""
    code = (
        "import sys; from analyzer import cli; code = cli.main(['validate', sys.argv[1], '--quiet']); "
        "print(code, sorted(m for m in ('reports.report', 'reports.plots', 'matplotlib') if m in sys.modules))"
    )
    import subprocess

    out = subprocess.run(
        [sys.executable, "-c", code, str(fast_dir)], capture_output=True, text=True, check=True, env=os.environ
    )
    assert out.stdout.splitlines()[-1] == "0 []", out.stdout + out.stderr


def test_plan_on_a_small_range(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(["plan", "1-50,1000001-1000050", "--sample", "20", "--cores", "4", "--max-positions", "50000"]) == 0
    out = capsys.readouterr().out
    assert "plan for 1-50,1000001-1000050 (100 deals)" in out
    assert "sample: 20 deals drawn uniformly at random from 1-50,1000001-1000050 (seed 0)" in out
    assert "deals/s per core" in out and "on 4 cores (--cores)" in out
    assert "2 data files of up to 1,000,000 deals" in out
    from jobs.plan import draw

    picks = draw(parse_deals("1-50,1000001-1000050"), 20, 0)
    assert len(set(picks)) == 20 and all(1 <= n <= 50 or 1000001 <= n <= 1000050 for n in picks)
    assert draw(parse_deals("7-9"), 10, 1) == [7, 8, 9]
    assert cli(["plan", "0-5"]) == 2


def test_copied_file_and_file_named_directory_never_leave_a_stuck_run(
    tmp_path: Path, no_ray: None, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 28's stuck state: status/validate and run must agree on what to do."""
    import shutil

    run_dir = make_run_dir(tmp_path / "run", "1-15", FAST, 5)
    block = run_dir / "deal_block=0"
    shutil.copy(block / "deals-0000000001-0000000005.parquet", block / "deals-0000000003-0000000007.parquet")
    (block / "deals-0000000016-0000000020.parquet").mkdir()
    assert cli(["status", str(run_dir)]) == 3
    out = capsys.readouterr().out
    assert "deals-0000000003-0000000007.parquet: a data file the index does not list (the next run checks it)" in out
    assert cli(["validate", str(run_dir)]) == 3
    capsys.readouterr()
    assert cli(["run", "1-15", "--out", str(run_dir), "--max-positions", "50000", "--file-deals", "5"]) == 0
    err = capsys.readouterr().err
    assert "deals-0000000003-0000000007.parquet: not a valid data file of this run" in err
    assert "deals-0000000016-0000000020.parquet is not part of the run" in err
    assert cli(["status", str(run_dir)]) == 0
    assert cli(["validate", str(run_dir)]) == 0


def test_run_writes_nothing_into_a_foreign_directory(tmp_path: Path, no_ray: None, capsys: pytest.CaptureFixture[str]) -> None:
    d = tmp_path / "mine"
    d.mkdir()
    (d / "notes.txt").write_text("x")
    before = tree(tmp_path)
    assert cli(["run", "1-10", "--out", str(d)]) == 2
    assert "not empty and not a run directory: it holds notes.txt" in capsys.readouterr().err
    assert tree(tmp_path) == before and not (d / "_run").exists()


@pytest.mark.parametrize(
    "config",
    [
        build_config(cells="3-4", max_positions=20_000, fail_deals=[11985]),
        build_config(cells="0", max_positions=50_000),
        build_config(variant="bakers_game", cells="2", max_positions=20_000),
    ],
    ids=["3-4-cells-limits-error", "0-cells-proofs", "bakers-game"],
)
def test_task_tables_from_columns_equal_the_rows(config: RunConfig) -> None:
    # solve_chunk builds fixed-cell tables from the engine's columns; the
    # same deals through SolveResult objects and results_table (the path of
    # min-cells and escalation rows) give the same table.
    deals = DealRange(11980, 11990)
    prov = Provenance.current()
    fast = solve_chunk(deals.start, deals.end, config, prov)
    rows = [
        jobs.chunks.Row(r)
        for k in config.cells
        for r in analyzer.solve_range(
            deals.start, deals.end + 1, config.variant, cells=k, limits=config.limits,
            fail_deals=[n for n in config.fail_deals if n in deals],
        )
    ]  # fmt: skip
    slow = jobs.chunks.results_table(rows, runformat.file_metadata(config, deals, prov))
    keep = [c.name for c in COLUMNS if c.name not in NONDETERMINISTIC]
    assert fast.schema.equals(slow.schema, check_metadata=True)
    assert fast.select(keep).to_pylist() == slow.select(keep).to_pylist()
    outcomes = set(fast.column("outcome").to_pylist())
    assert len(outcomes) >= 2, outcomes  # a mix, not one kind of row
    assert fast.num_rows == len(deals) * len(config.cells)
