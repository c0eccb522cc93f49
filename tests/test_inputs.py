"""Every subcommand reads what users type through one set of parsers
(`analyzer.cliframe`): deal numbers and ranges, counts, sizes, seconds and
cells, with the digits 0-9 only and every limit range-checked. Bad input is
one short line on stderr and exit 2, before anything is written and before
Ray starts; `verify` caps its input.

The numbered cases of issue 28 ("Inputs", 7, 8, 10, 12) are here, each run
as the issue ran it; most in this process (`analyzer.cli.main`, the same
code path as the command), the issue's own command lines also in a real
process."""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import jobs.run
from analyzer import cli, cliframe
from analyzer.cliframe import MAX_LIMIT, Parser
from analyzer.errors import AnalyzerError

ROOT = Path(__file__).resolve().parent.parent
PREFIX = "freecell-analyzer: error: "
TWO_64 = str(2**64)  # one more than the largest budget
#: A message quotes at most a short excerpt of what was typed.
LONGEST_LINE = 400


def call(*args: str | Path) -> subprocess.CompletedProcess[str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main([str(a) for a in args])
    return subprocess.CompletedProcess(list(map(str, args)), code, out.getvalue(), err.getvalue())


def run(*args: str | Path, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "analyzer.cli", *map(str, args)],
        capture_output=True,
        text=True,
        check=False,
        cwd=cwd,
        timeout=120,
    )


def one_line_error(done: subprocess.CompletedProcess[str], *needles: str) -> str:
    assert done.returncode == 2, (done.returncode, done.stdout[:500], done.stderr[:2000])
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr[:2000]
    line = lines[0]
    assert line.startswith(PREFIX) and "Traceback" not in line, line
    assert len(line) <= LONGEST_LINE, line
    for needle in needles:
        assert needle in line, (needle, line)
    return line


@pytest.fixture
def no_ray(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Fails the test if `run` gets as far as starting Ray."""

    def refuse(address: str | None, timeout: float = 0.0) -> bool:
        raise AssertionError("Ray was started for bad input")

    monkeypatch.setattr(jobs.run, "connect", refuse)
    yield


# ---------------------------------------------------------------------------
# Issue 28 item 10: one reader of deal numbers, digits 0-9 only
# ---------------------------------------------------------------------------

ARABIC_FIVE = "\u0665"  # ٥, ARABIC-INDIC DIGIT FIVE: str.isdigit() and int() accept it
NOT_DEAL_NUMBERS = [ARABIC_FIVE, "6_17", "1,234", "+617", "-5", "６１７", "617.0", "6 17"]


@pytest.mark.parametrize("text", NOT_DEAL_NUMBERS)
@pytest.mark.parametrize("command", ["deal", "solve", "verify"])
def test_deal_numbers_take_ascii_digits_only(command: str, text: str) -> None:
    args = [command, text, *(["8a"] if command == "verify" else [])]
    one_line_error(call(*args), "not a deal number", "digits 0-9")


@pytest.mark.parametrize(
    "text", [*(t for t in NOT_DEAL_NUMBERS if t != "1,234"), f"1-{ARABIC_FIVE}", "1-1_000", "1 - 5", "1,2;3"]
)
def test_run_deals_take_ascii_digits_only(text: str, tmp_path: Path, no_ray: None) -> None:
    out = tmp_path / "out"
    one_line_error(call("run", text, "--out", out), "is not a deal range", "digits 0-9")
    assert not out.exists()


@pytest.mark.parametrize("command", ["deal", "solve"])
def test_a_huge_deal_number_is_out_of_range_not_a_traceback(command: str) -> None:
    line = one_line_error(call(command, "1" * 5000), "out of range", "(5,000 digits)")
    assert "1" * 100 not in line


def test_a_huge_deal_range_is_out_of_range(tmp_path: Path, no_ray: None) -> None:
    one_line_error(call("run", "1-" + "9" * 5000, "--out", tmp_path / "o"), "out of range", "(5,000 digits)")
    assert not (tmp_path / "o").exists()


def test_the_issue_commands_in_a_real_process(tmp_path: Path) -> None:
    one_line_error(run("run", ARABIC_FIVE, "--out", tmp_path / "x"), "is not a deal range")
    one_line_error(run("deal", "6_17"), "'6_17' is not a deal number")
    assert not (tmp_path / "x").exists()
    assert run("deal", "617").returncode == 0


# ---------------------------------------------------------------------------
# Issue 28 items 7 and 8: every limit range-checked, in solve and in run
# ---------------------------------------------------------------------------

BAD_LIMITS = [
    (["--max-positions", TWO_64], ["--max-positions", "at most 18,446,744,073,709,551,615"]),
    (["--max-positions", "18446744073.709551616G"], ["--max-positions", "at most"]),
    (["--max-positions", "0"], ["--max-positions", "at least 1"]),
    (["--max-positions", "1.5"], ["--max-positions", "not a whole number"]),
    (["--max-positions", "2_000_000"], ["--max-positions", "not a number of positions"]),
    (["--max-bytes", TWO_64], ["--max-bytes", "at most 18,446,744,073,709,551,615"]),
    (["--max-bytes", "99999999999999999999999G"], ["--max-bytes", "at most"]),
    (["--max-bytes", "16E"], ["--max-bytes", "not a number of bytes"]),
    (["--max-bytes", "9" * 5000], ["--max-bytes", "(5,000 characters)"]),
    (["--max-bytes", "-1"], ["--max-bytes"]),
    (["--max-seconds", "0"], ["--max-seconds", "more than 0"]),
    (["--max-seconds", "nan"], ["--max-seconds", "'nan' is not a number of seconds"]),
    (["--max-seconds", "inf"], ["--max-seconds", "'inf'"]),
    (["--max-seconds", "1e999"], ["--max-seconds", "'1e999'"]),
    (["--max-seconds", "1" * 400], ["--max-seconds", "at most 1,000,000,000"]),
    (["--cells", "99999999999999999999"], ["--cells", "at most 10"]),
    (["--min-cells", "--max-cells", "-1"], ["--max-cells", "'-1'"]),
    (["--min-cells", "--max-cells", "11"], ["--max-cells", "at most 10"]),
    (["--variant", "x" * 5000], ["--variant", "(5,000 characters)"]),
    (["--move-rule", "fast"], ["--move-rule", "unknown move rule 'fast'"]),
]


@pytest.mark.parametrize(("args", "needles"), BAD_LIMITS, ids=[" ".join(a)[:40] for a, _ in BAD_LIMITS])
def test_solve_range_checks_every_limit(args: list[str], needles: list[str]) -> None:
    one_line_error(call("solve", "1", *args), "solve: argument", *needles)


@pytest.mark.parametrize(("args", "needles"), BAD_LIMITS, ids=[" ".join(a)[:40] for a, _ in BAD_LIMITS])
def test_run_range_checks_every_limit_and_writes_nothing(
    args: list[str], needles: list[str], tmp_path: Path, no_ray: None
) -> None:
    out = tmp_path / "out"
    one_line_error(call("run", "1-3", "--out", out, *args), "run: argument", *needles)
    assert not out.exists()  # not locked to that configuration


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["--task-deals", "99999999999999999999"], ["--task-deals", "at most 1,000,000"]),
        (["--task-deals", "0"], ["--task-deals", "at least 1"]),
        (["--task-deals", "1_000"], ["--task-deals", "digits 0-9 only"]),
        (["--file-deals", "7"], ["--file-deals", "must divide 100,000,000"]),
        (["--file-deals", "1000000000"], ["--file-deals", "at most 100,000,000"]),
        (["--file-deals", "١٠٠٠"], ["--file-deals", "digits 0-9 only"]),
        (["--max-in-flight", "1000001"], ["--max-in-flight", "at most 100,000"]),
        (["--node-resource", "big mem", "--retry-limits"], ["--node-resource", "not a Ray resource name"]),
        (["--node-resource", "bigmem"], ["--node-resource needs --retry-limits"]),
        (["--stall-timeout", "-5"], ["--stall-timeout"]),
        (["--progress-interval", "nan"], ["--progress-interval"]),
    ],
)
def test_run_range_checks_its_execution_options(
    args: list[str], needles: list[str], tmp_path: Path, no_ray: None
) -> None:
    out = tmp_path / "out"
    one_line_error(call("run", "1-3", "--out", out, *args), *needles)
    assert not out.exists()


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["--sample", "0"], ["--sample", "at least 1"]),
        (["--sample", "2000000"], ["--sample", "at most 1,000,000"]),
        (["--cores", "0"], ["--cores", "at least 1"]),
        (["--cores", "+4"], ["--cores", "digits 0-9 only"]),
        (["--seed", "-1"], ["--seed"]),
        (["--max-positions", TWO_64], ["--max-positions", "at most"]),
        (["--cells", "11"], ["--cells", "at most 10"]),
    ],
)
def test_plan_range_checks_its_options(args: list[str], needles: list[str]) -> None:
    one_line_error(call("plan", "1-100", *args), "plan: argument", *needles)


def test_an_existing_run_directory_is_left_alone(tmp_path: Path, no_ray: None) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "note.txt").write_text("mine")
    one_line_error(call("run", "1-3", "--out", out, "--max-positions", TWO_64))
    assert sorted(p.name for p in out.iterdir()) == ["note.txt"]


def test_validate_sample_is_range_checked(tmp_path: Path) -> None:
    one_line_error(call("validate", tmp_path, "--sample", "9" * 5000), "--sample", "(5,000 characters)")
    one_line_error(call("validate", tmp_path, "--sample", "-1"), "--sample")


def test_the_issue_limits_in_a_real_process(tmp_path: Path) -> None:
    """Before: solve gave a traceback, and run wrote `error` rows with exit 0
    and locked the directory to that configuration."""
    one_line_error(run("solve", "1", "--min-cells", "--max-cells", "-1"), "--max-cells")
    one_line_error(run("solve", "1", "--max-bytes", "99999999999999999999999G"), "--max-bytes")
    one_line_error(run("solve", "1", "--max-positions", TWO_64), "--max-positions")
    out = tmp_path / "x"
    one_line_error(run("run", "1-3", "--out", out, "--max-positions", TWO_64), "--max-positions")
    one_line_error(run("run", "1-3", "--out", out, "--max-bytes", "99999999999999999999999G"), "--max-bytes")
    assert not out.exists()


def test_the_largest_budgets_are_accepted() -> None:
    done = call("solve", "617", "--max-positions", str(MAX_LIMIT), "--max-bytes", str(MAX_LIMIT), "--json")
    assert done.returncode == 0, done.stderr
    assert '"outcome": "solved"' in done.stdout


# ---------------------------------------------------------------------------
# One set of parsers: solve and run read every value the same way
# ---------------------------------------------------------------------------


def _solve_parser() -> Parser:
    parser, _ = cli.build_parser("solve")
    assert isinstance(parser, Parser)
    return parser


def _run_parser() -> Parser:
    parser = Parser(prog="freecell-analyzer run")
    jobs.run.add_run_arguments(parser)
    return parser


@pytest.mark.parametrize(
    ("option", "text", "value"),
    [
        ("--max-bytes", "1.5G", 3 * 2**29),
        ("--max-bytes", "512MiB", 2**29),
        ("--max-bytes", "1073741824", 2**30),
        ("--max-positions", "2.5M", 2_500_000),
        ("--max-positions", "500k", 500_000),
        ("--max-seconds", "0.5", 0.5),
        ("--max-seconds", "60", 60.0),
        ("--variant", "Bakers-Game", "bakers_game"),
        ("--move-rule", "DOUBLING", "doubling"),
    ],
)
def test_solve_and_run_read_values_alike(option: str, text: str, value: object) -> None:
    solve_args = _solve_parser().parse_args(["solve", "1", option, text])
    run_args = _run_parser().parse_args(["1-3", "--out", "x", option, text])
    dest = option.removeprefix("--").replace("-", "_")
    assert getattr(solve_args, dest) == getattr(run_args, dest) == value


@pytest.mark.parametrize(
    ("option", "text"), [("--max-seconds", "0"), ("--max-bytes", "1.3"), ("--max-positions", "1e6")]
)
def test_solve_and_run_refuse_values_alike(option: str, text: str) -> None:
    messages = []
    for parse, argv in ((_solve_parser().parse_args, ["solve", "1"]), (_run_parser().parse_args, ["1-3", "--out", "x"])):
        with pytest.raises(AnalyzerError) as info:
            parse([*argv, option, text])
        messages.append(str(info.value).split(": ", 1)[1])  # drop the subcommand
    assert messages[0] == messages[1]


# ---------------------------------------------------------------------------
# Issue 28 item 12: verify caps its input and stops a cycle early
# ---------------------------------------------------------------------------


def test_verify_refuses_a_huge_file_without_reading_it(tmp_path: Path) -> None:
    big = tmp_path / "big.txt"
    with big.open("wb") as f:  # 50 MB of one token, sparse: never read whole
        f.truncate(50_000_000)
    done = run("verify", "617", big)
    one_line_error(done, "larger than 1,048,576 bytes")


def test_verify_echoes_an_excerpt_of_a_bad_token(tmp_path: Path) -> None:
    token = tmp_path / "token.txt"
    token.write_text("y" * 1_000_000)
    done = run("verify", "617", token)
    assert done.returncode == 1 and done.stderr == ""
    assert "(1,000,000 characters)" in done.stdout
    assert done.stdout.count("y" * 100) == 0 and len(done.stdout) < 2000


def test_verify_refuses_more_moves_than_the_cap(tmp_path: Path) -> None:
    moves = tmp_path / "many.txt"
    moves.write_text("8a " + " ".join(["ab", "ba"] * 100_000))  # 600 KB, 200,001 moves
    one_line_error(call("verify", "1", moves), "200,001 moves", "at most 100,000")


def test_verify_stops_a_cycle_early(tmp_path: Path) -> None:
    moves = tmp_path / "cycle.txt"
    moves.write_text("8a " + " ".join(["ab", "ba"] * 49_999))  # 99,999 legal moves
    done = call("verify", "1", moves)
    assert done.returncode == 1 and done.stderr == ""
    first = done.stdout.splitlines()[0]
    assert first.startswith("not won: move 17 'ba' reaches the position after move 1 for the 9th time"), first
    assert "repeated position:" in done.stdout


def test_verify_a_solution_that_comes_back_to_a_position_now_and_then() -> None:
    """The engine's own solutions sometimes return to a position (deal 187
    with 4 cells, found by the replay with one visit allowed): verify wins."""
    import analyzer

    r = analyzer.solve(187)
    assert r.outcome == "solved"
    report = analyzer.verifier.replay(187, r.solution, max_visits=1)
    assert report.repeated_index is not None  # the solution does come back
    done = call("verify", "187", " ".join(r.solution))
    assert done.returncode == 0 and done.stdout.startswith("won in")


def test_verify_header_is_a_deal_number(tmp_path: Path) -> None:
    f = tmp_path / "sol.txt"
    f.write_text("1" * 5000 + "\n8a\n")
    one_line_error(call("verify", "617", f), "deal number", "out of range")


def test_verify_quotes_an_excerpt_of_a_bad_start() -> None:
    one_line_error(call("verify", "x" * 5000, "8a"), "neither a deal number nor a board file", "(5,000 characters)")


def test_excerpt() -> None:
    assert cliframe.excerpt("x" * 41) == "'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'... (41 characters)"
    assert cliframe.excerpt("٥") == "'٥'"
