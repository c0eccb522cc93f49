"""The `freecell-analyzer` command line, run as a user runs it (a subprocess),
plus a few in-process checks of `analyzer.cli.main` for what a subprocess
cannot provoke (Ctrl-C, an engine failure, subcommands of other packages)."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import types
from pathlib import Path

import pytest

import analyzer
from analyzer import cli
from analyzer import verifier as V
from analyzer.errors import EngineError

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
PREFIX = "freecell-analyzer: error: "

DEAL_617_ROWS = """\
7D TD TH KD 4C 4S JD
AD 7S QC 5H QS TS KS
5C QD 3H 9S 9C 2H KC
3S AC 9D 3C 9H 5D 4H
5S 6D 6S 8S 7C JC
8C 8H 8D 7H 6H 6C
2D AS 3D 4D 2C JH
AH KH TC JS 2S QH
"""


def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "analyzer.cli", *map(str, args)],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
        timeout=120,
    )


def call(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """`cli.main` in this process (much faster than a subprocess; the same
    code path: `main` catches what it reports)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main([str(a) for a in args])
    return subprocess.CompletedProcess(list(map(str, args)), code, out.getvalue(), err.getvalue())


def assert_one_line_error(done: subprocess.CompletedProcess[str], *needles: str) -> str:
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(PREFIX), lines[0]
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


def known_moves(n: int) -> list[str]:
    """The moves of tests/data/known_solution_N.txt (its first line is N)."""
    first, *moves = (DATA / f"known_solution_{n}.txt").read_text().split()
    assert int(first) == n
    return moves


# ---------------------------------------------------------------------------
# deal
# ---------------------------------------------------------------------------


def test_deal_617_rows_is_the_reference_vector() -> None:
    done = run("deal", "617", "--format", "rows")
    assert (done.returncode, done.stdout, done.stderr) == (0, DEAL_617_ROWS, "")


def test_deal_default_format_is_the_reference_vector() -> None:
    done = run("deal", "617")
    assert (done.returncode, done.stdout, done.stderr) == (0, DEAL_617_ROWS, "")


def test_deal_text_format_is_board_text() -> None:
    done = run("deal", "617", "--format", "text")
    assert done.returncode == 0
    assert done.stdout == str(analyzer.deal(617))
    assert done.stdout.startswith("Foundations: H-0 C-0 D-0 S-0\nFreecells:  -  -  -  -\n: 7D TD TH")


def test_deal_json() -> None:
    done = run("deal", "6000000000", "--variant", "forecell", "--format", "json")
    assert done.returncode == 0
    doc = json.loads(done.stdout)
    board = analyzer.deal(6000000000, "forecell")
    assert doc["deal_number"] == 6000000000
    assert doc["columns"] == board.columns and doc["cells"] == board.cells
    assert doc["foundations"] == {"C": 0, "D": 0, "H": 0, "S": 0}
    assert doc["variant"] == {
        "name": "forecell",
        "cells": 4,
        "columns": 8,
        "build": "alternate",
        "empty": "kings",
        "move_rule": "product",
        "dealt_to_cells": 4,
    }


def test_deal_with_cells() -> None:
    done = run("deal", "1", "--cells", "2", "--format", "text")
    assert done.returncode == 0
    assert "Freecells:  -  -\n" in done.stdout


def test_deal_0_is_bad_input() -> None:
    assert_one_line_error(run("deal", "0"), "deal number 0", "1..8589934591")


# ---------------------------------------------------------------------------
# verify
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("n", [617, 1])
def test_verify_a_known_solution_file(n: int) -> None:
    done = run("verify", str(n), DATA / f"known_solution_{n}.txt")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith(f"won in {len(known_moves(n))} moves")
    assert done.stderr == ""


def test_verify_a_board_file_and_a_string_of_moves(tmp_path: Path) -> None:
    board = tmp_path / "617.board"
    board.write_text(str(analyzer.deal(617)))
    done = run("verify", board, " ".join(known_moves(617)))
    assert done.returncode == 0 and done.stdout.startswith("won in"), done.stdout + done.stderr


def test_verify_an_illegal_move_names_its_number_the_move_and_why(tmp_path: Path) -> None:
    moves = known_moves(617)
    moves[9] = "1h"  # JD cannot go to the foundation at the start
    solution = tmp_path / "bad.txt"
    solution.write_text("617\n" + " ".join(moves) + "\n")
    done = run("verify", "617", solution)
    assert done.returncode == 1, done.stdout + done.stderr
    report = V.replay(617, moves)
    assert report.illegal_index == 10 and report.position_before is not None
    assert "move 10 '1h'" in done.stdout
    assert report.reason is not None and report.reason in done.stdout  # why
    assert report.position_before in done.stdout  # the position before it
    assert done.stderr == ""


def test_verify_a_bad_move_string() -> None:
    done = run("verify", "1", "8a 81")
    assert done.returncode == 1
    assert "move 2 '81': 7D cannot go onto 6S" in done.stdout


def test_verify_legal_but_not_won() -> None:
    done = run("verify", "617", " ".join(known_moves(617)[:10]))
    assert done.returncode == 1
    assert "not won" in done.stdout and "all 10 moves legal" in done.stdout


def test_verify_uses_the_move_rule() -> None:
    # A solution with multi-card moves is no solution when only single cards move.
    solved = analyzer.solve(617)
    assert solved.solution_length_single != solved.solution_length_multi
    moves = " ".join(solved.solution)
    assert run("verify", "617", moves).returncode == 0
    done = run("verify", "617", moves, "--move-rule", "single")
    # Which move fails first depends on the solution found: a run over the
    # limit, or (bare notation to an empty column carries the longest run
    # the rule allows) a later move that no longer fits.
    assert done.returncode == 1 and "illegal: move" in done.stdout
    assert "move rule single" in done.stdout


def test_verify_rejects_a_solution_for_another_deal() -> None:
    assert_one_line_error(call("verify", "1", DATA / "known_solution_617.txt"), "617", "deal 1")


# ---------------------------------------------------------------------------
# solve
# ---------------------------------------------------------------------------


def test_solve_617_json() -> None:
    done = run("solve", "617", "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert (doc["deal_number"], doc["outcome"], doc["cells"], doc["move_rule"]) == (
        617,
        "solved",
        4,
        "product",
    )
    assert doc["solution_length_multi"] == len(doc["solution"])
    assert doc["solution_length_single"] >= doc["solution_length_multi"]
    for key in ("positions_expanded", "positions_stored", "peak_bytes", "elapsed_s"):
        assert doc[key] >= 0
    assert doc["variant_rules"]["move_rule"] == "product"
    assert V.replay(617, doc["solution"]).won
    assert doc["solution"] == list(analyzer.solve(617).solution)


def test_solve_text() -> None:
    done = run("solve", "617")
    assert done.returncode == 0
    result = analyzer.solve(617)
    out = done.stdout
    assert "outcome: solved" in out
    assert f"{result.solution_length_multi} moves" in out
    assert f"{result.solution_length_single} single-card moves" in out
    assert "positions expanded" in out and "stored" in out and "peak memory" in out
    listed = [
        m
        for line in out.splitlines()
        if line.strip()[:1].isdigit() and ":" in line
        for m in line.split(":", 1)[1].split()
    ]
    assert listed == list(result.solution)
    assert max(len(line) for line in out.splitlines()) <= 110


def test_solve_proves_unsolvable_with_exit_0() -> None:
    done = run("solve", "617", "--cells", "3")
    assert done.returncode == 0
    assert "outcome: unsolvable" in done.stdout


def test_solve_limit_exits_3() -> None:
    done = run("solve", "11982", "--max-positions", "50")
    assert done.returncode == 3
    assert "outcome: limit" in done.stdout and "--max-positions" in done.stdout
    doc = json.loads(run("solve", "11982", "--max-bytes", "1K", "--json").stdout)
    assert (doc["outcome"], doc["limit_reason"]) == ("limit", "bytes")


def test_solve_verbose_prints_progress_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    # A proof in 100 kB takes about 0.1 s: with a line every 2 ms it shows
    # the prover at work; without --verbose (and stderr not a terminal) the
    # same solve prints none, and stdout is the same but for -v's lines.
    monkeypatch.setattr(cli, "PROGRESS_EVERY", 0.002)
    loud = call("solve", "11982", "--max-bytes", "100K", "-v")
    quiet = call("solve", "11982", "--max-bytes", "100K")
    assert loud.returncode == quiet.returncode == 0
    lines = loud.stderr.splitlines()
    assert lines and all(line.startswith("progress: ") for line in lines), loud.stderr
    assert any(" 4 cells, prover (layer " in line and " disk" in line for line in lines), loud.stderr
    assert quiet.stderr == ""
    assert "outcome: unsolvable" in loud.stdout and "outcome: unsolvable" in quiet.stdout


def test_progress_line() -> None:
    p = analyzer.SolveProgress(754.2, "prover", 1, 1_230_012_345, 977_612_000, 13_000_000_000, 25_800_000_000, 38)
    assert cli._progress_line(p) == (
        "progress: 12 min 34 s, 1 cell, prover (layer 38): 1,230,012,345 expanded, "
        "977,612,000 stored, 12.1 GiB memory, 24.0 GiB disk"
    )
    p = analyzer.SolveProgress(9.9, "complete", 2, 5_000, 4_000, 2048, 0, 0)
    assert cli._progress_line(p) == (
        "progress: 9 s, 2 cells, complete search: 5,000 expanded, 4,000 stored, 2.0 KiB memory"
    )
    assert cli._progress_line(analyzer.SolveProgress(0.5, None, 0, 0, 0, 0, 0, 0)) == "progress: 0 s, starting"


def test_solve_show_prints_every_position() -> None:
    done = run("solve", "1", "--show")
    assert done.returncode == 0
    result = analyzer.solve(1)
    blocks = done.stdout.split("\nmove ")[1:]
    assert len(blocks) == len(result.solution)
    board = analyzer.deal(1)
    for number, (block, move) in enumerate(zip(blocks, result.solution, strict=True), start=1):
        board = board.apply(move)
        head, text = block.split("\n", 1)
        assert head.startswith(f"{number}: {move}")
        assert text.strip("\n") == str(board).strip("\n")
    assert board.is_won()


def test_solve_a_board_file(tmp_path: Path) -> None:
    board = tmp_path / "deal1.txt"
    board.write_text(str(analyzer.deal(1, cells=3)))
    done = run("solve", board, "--cells", "3", "--json")
    assert done.returncode == 0
    doc = json.loads(done.stdout)
    assert doc["deal_number"] is None
    assert doc["solution"] == list(analyzer.solve(1, cells=3).solution)


def test_solve_min_cells() -> None:
    done = run("solve", "1", "--min-cells")
    assert done.returncode == 0, done.stderr
    assert "minimum cells: 3 (solved with 3; proved unsolvable with 2" in done.stdout
    lines = [line.split()[:3] for line in done.stdout.splitlines()]
    assert [str(2), "unsolvable", "searched"] in lines and [str(3), "solved", "searched"] in lines
    for cells in range(2):
        assert [str(cells), "unsolvable", "inferred"] in lines
    assert [str(8), "solved", "inferred"] in lines
    doc = json.loads(run("solve", "1", "--min-cells", "--json").stdout)
    assert doc["min_cells"] == 3
    # Only the counts that decide: the minimum won, one fewer proved lost.
    outcomes = {r["cells"]: r["outcome"] for r in doc["results"]}
    assert outcomes == {2: "unsolvable", 3: "solved"}
    how = {c["cells"]: (c["outcome"], c["how"]) for c in doc["counts"]}
    assert how[0] == how[1] == ("unsolvable", "inferred") and how[2] == ("unsolvable", "searched")
    assert how[3] == ("solved", "searched") and how[8] == ("solved", "inferred")


def test_solve_min_cells_with_a_maximum() -> None:
    done = run("solve", "617", "--min-cells", "--max-cells", "3")
    assert done.returncode == 0
    assert "not won with up to 3 cells" in done.stdout
    assert run("solve", "617", "--min-cells", "--max-positions", "50").returncode == 3


# ---------------------------------------------------------------------------
# Bad input: one line on stderr, exit 2, never a traceback
# ---------------------------------------------------------------------------

BAD_INPUTS = [
    (["deal", "abc"], ["'abc'"]),
    (["deal", "-1"], ["-1"]),
    (["deal", "8589934592"], ["8589934592"]),
    (["deal", "617", "--format", "xml"], ["--format", "'xml'"]),
    (["deal", "5", "--cells", "x"], ["--cells", "'x'"]),
    (["deal", "5", "--cells", "11"], ["cells", "11"]),
    (["deal", "5", "--variant", "spider"], ["'spider'"]),
    (["deal", "1", "--variant", "eight_off", "--cells", "2"], ["eight_off", "2 cells"]),
    (["deal"], ["N"]),
    (["deal", "1", "--bogus"], ["--bogus"]),
    (["bogus"], ["'bogus'"]),
    ([], ["SUBCOMMAND"]),
    (["solve", "no-such-board.txt"], ["no-such-board.txt"]),
    (["solve", "617", "--move-rule", "fast"], ["--move-rule", "'fast'"]),
    (["solve", "617", "--max-positions", "0"], ["--max-positions", "'0'"]),
    (["solve", "617", "--max-bytes", "lots"], ["--max-bytes", "'lots'"]),
    (["solve", "617", "--max-seconds", "-1"], ["--max-seconds", "'-1'"]),
    (["solve", "617", "--max-cells", "5"], ["--max-cells", "--min-cells"]),
    (["solve", "617", "--min-cells", "--cells", "3"], ["--cells", "--min-cells"]),
    (["solve", "617", "--min-cells", "--max-cells", "99"], ["99"]),
    (["verify", "617", "missing-solution.txt"], ["missing-solution.txt"]),
    (["verify", "0", "8a"], ["deal number 0"]),
    (["verify", "617"], ["SOLUTION"]),
    (["verify", "617", "8a", "--variant", "spider"], ["'spider'"]),
]


@pytest.mark.parametrize(
    ("args", "needles"), BAD_INPUTS, ids=[" ".join(a) or "nothing" for a, _ in BAD_INPUTS]
)
def test_bad_input(args: list[str], needles: list[str]) -> None:
    assert_one_line_error(call(*args), *needles)


@pytest.mark.parametrize("args", [["deal", "abc"], ["solve", "617", "--max-bytes", "lots"], []])
def test_bad_input_in_a_real_process(args: list[str]) -> None:
    assert_one_line_error(run(*args))


@pytest.mark.parametrize("command", ["solve", "verify"])
def test_bad_board_file(tmp_path: Path, command: str) -> None:
    board = tmp_path / "bad.board"
    board.write_text(str(analyzer.deal(617)).replace("TD", "XX"))
    args: list[str | Path] = [command, board, *(["8a"] if command == "verify" else [])]
    assert_one_line_error(call(*args), "XX")


def test_min_cells_needs_a_deal_number(tmp_path: Path) -> None:
    board = tmp_path / "b.txt"
    board.write_text(str(analyzer.deal(617)))
    assert_one_line_error(call("solve", board, "--min-cells"), "--min-cells", str(board))


def test_unreadable_file(tmp_path: Path) -> None:
    binary = tmp_path / "binary.txt"
    binary.write_bytes(b"\xff\xfe\x00")
    assert_one_line_error(call("verify", "617", binary), "binary.txt")


# ---------------------------------------------------------------------------
# Help, version, entry points
# ---------------------------------------------------------------------------


def _subcommands() -> list[str]:
    parser, _ = cli.build_parser()
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return sorted(action.choices)


def test_our_subcommands_are_registered() -> None:
    assert {"deal", "verify", "solve"} <= set(_subcommands())


@pytest.mark.parametrize("command", ["deal", "verify", "solve"])
def test_help_has_examples_and_exit_codes(command: str) -> None:
    done = run(command, "--help")
    assert done.returncode == 0 and done.stderr == ""
    examples = done.stdout.split("examples:", 1)[1]
    assert f"freecell-analyzer {command} " in examples
    for code in ("0", "1", "2", "3", "130"):
        assert f"\n  {code} " in done.stdout, code


@pytest.mark.parametrize("command", sorted(set(_subcommands()) - {"deal", "verify", "solve"}))
def test_help_of_other_packages_subcommands_has_examples(command: str) -> None:
    done = call(command, "--help")
    assert done.returncode == 0
    assert f"freecell-analyzer {command}" in done.stdout.lower().split("examples:", 1)[1]


def test_main_help_and_version() -> None:
    done = call("--help")
    assert done.returncode == 0 and "examples:" in done.stdout and "exit codes:" in done.stdout
    done = run("--version")
    assert done.returncode == 0 and done.stdout.startswith(f"freecell-analyzer {analyzer.__version__}")


def test_the_console_script() -> None:
    script = shutil.which("freecell-analyzer")
    if script is None:
        pytest.skip("the freecell-analyzer console script is not on PATH")
    done = subprocess.run(
        [script, "deal", "617", "--format", "rows"], capture_output=True, text=True, check=False
    )
    assert (done.returncode, done.stdout) == (0, DEAL_617_ROWS)
    done = subprocess.run([script, "deal", "0"], capture_output=True, text=True, check=False)
    assert done.returncode == 2 and done.stdout == "" and len(done.stderr.splitlines()) == 1, done.stderr


_ENTRY = """
import atexit, sys
atexit.register(lambda: print("exit handlers ran"))
from analyzer.cli import entry
sys.argv = ["freecell-analyzer", *sys.argv[1:]]
entry()
"""


@pytest.mark.parametrize(("args", "code", "out"), [(["deal", "617", "--format", "rows"], 0, DEAL_617_ROWS), (["deal", "0"], 2, "")])
def test_the_console_scripts_exit_flushes_and_runs_the_exit_handlers(args: list[str], code: int, out: str) -> None:
    # the console script's entry ends the process without the interpreter's
    # teardown: its output and the exit handlers' are all there, its code too
    done = subprocess.run([sys.executable, "-c", _ENTRY, *args], capture_output=True, text=True, cwd=ROOT, check=False)
    assert (done.returncode, done.stdout) == (code, out + "exit handlers ran\n"), done.stderr


def test_ctrl_c_ends_a_long_proof_at_once() -> None:
    # 24966 with 1 cell is a proof of hours; interrupted once the solve is
    # under way, the command exits 130 at once, not when the engine returns:
    # the engine solves on a second thread. (Its spill files have no name,
    # so the kill below leaves none behind if it does not.)
    proc = subprocess.Popen(
        [sys.executable, "-m", "analyzer.cli", "solve", "24966", "--cells", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        tasks = Path(f"/proc/{proc.pid}/task")
        deadline = time.monotonic() + 30
        while len(list(tasks.iterdir())) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)  # until the solve's thread runs
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 130, err
    assert err.strip().endswith("interrupted") and out == ""


# ---------------------------------------------------------------------------
# In process: main() itself
# ---------------------------------------------------------------------------


def test_main_returns_the_exit_code(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["deal", "617", "--format", "rows"]) == 0
    assert capsys.readouterr().out == DEAL_617_ROWS
    assert cli.main(["deal", "0"]) == 2
    assert capsys.readouterr().err.startswith(PREFIX)
    assert cli.main(["deal", "--help"]) == 0


def test_ctrl_c_exits_130(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "solve", interrupted)
    assert cli.main(["solve", "617"]) == 130
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "interrupted" in err


def test_an_engine_failure_exits_1_without_a_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise EngineError("engine panic: deliberate")

    monkeypatch.setattr(cli, "solve", broken)
    assert cli.main(["solve", "617"]) == 1
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and err.startswith(PREFIX) and "deliberate" in err


def test_solve_error_outcome_exits_1(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    failed = analyzer.SolveResult(617, "freecell", 4, "product", "error", error="injected failure")
    monkeypatch.setattr(cli, "solve", lambda *a, **k: failed)
    assert cli.main(["solve", "617"]) == 1
    assert "error: injected failure" in capsys.readouterr().out


def test_subcommands_of_other_packages_are_registered(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
        p = subparsers.add_parser("run", help="fake")
        p.add_argument("deals")
        p.set_defaults(func=lambda args: 3 if args.deals == "1-10" else 0)

    fake = types.ModuleType("jobs.cli")
    fake.register = register  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "jobs.cli", fake)
    assert cli.main(["run", "1-10"]) == 3
    assert cli.main(["run"]) == 2  # argparse errors of their parsers: one line too
    assert len(capsys.readouterr().err.splitlines()) == 1


def test_missing_subcommands_of_other_packages(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "jobs.cli", None)  # import raises ImportError
    monkeypatch.setitem(sys.modules, "reports.cli", None)
    assert cli.main(["deal", "1", "--format", "rows"]) == 0  # works without them
    capsys.readouterr()
    assert cli.main(["run", "1-10"]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "'run' is not available" in err
    assert cli.main(["report"]) == 2
    assert "'report' is not available" in capsys.readouterr().err


def test_the_main_help_lists_every_subcommand_without_importing_pandas() -> None:
    # The list needs only each subcommand's summary; the report's modules
    # import pandas and matplotlib (about 2 s), which it must not wait for.
    code = (
        "import contextlib, io, sys\n"
        "from analyzer import cli\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):\n"
        "    cli.main(['--help'])\n"
        "print(sorted(m for m in ('pandas', 'matplotlib') if m in sys.modules))\n"
        "print(out.getvalue())\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    imported, _, page = done.stdout.partition("\n")
    assert imported == "[]"
    for name in ("deal", "verify", "solve", "run", "status", "validate", "plan", "report", "publish"):
        assert f"    {name} " in page, name


def test_solve_unlimited_has_no_single_card_length() -> None:
    done = call("solve", "1", "--move-rule", "unlimited")
    assert done.returncode == 0
    assert "not expressible in single-card moves" in done.stdout


def test_spill_files_vanish_when_a_proof_is_killed(tmp_path: Path) -> None:
    # 1968 with 1 cell needs a proof of tens of millions of positions: with
    # 32 MiB of memory it spills at once. Its spill files have no name, so a
    # kill leaves nothing behind in the spill directory.
    spill = tmp_path / "spill"
    spill.mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-m", "analyzer.cli", "solve", "1968", "--cells", "1", "--max-bytes", "32M", "--spill-dir", str(spill)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        fds = Path(f"/proc/{proc.pid}/fd")
        deadline = time.monotonic() + 120
        open_spills: list[str] = []
        while time.monotonic() < deadline and proc.poll() is None and not open_spills:
            time.sleep(0.2)
            with contextlib.suppress(OSError):
                open_spills = [t for t in (os.readlink(f) for f in fds.iterdir()) if t.startswith(str(spill))]
        assert open_spills, "the proof never opened a spill file"
        assert list(spill.iterdir()) == []  # open, but without a name
    finally:
        proc.kill()
        proc.wait()
    assert list(spill.iterdir()) == []
