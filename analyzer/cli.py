"""The ``freecell-analyzer`` command line (docs/DESIGN.md, "Subcommands").

This module owns the main parser and the ``deal``, ``verify`` and ``solve``
subcommands. ``jobs.cli`` (``run``, ``status``, ``validate``, ``plan``)
and ``reports.cli`` (``report``, ``publish``) add their own subcommands
through ``register(subparsers)`` when they can be imported; the command
works without them. ``reports.cli.extend`` lends ``validate`` the check
of a published dataset (`_EXTENDS`). Every subcommand is built with `analyzer.cliframe` (its
parser class, options, argument parsers and exit-code epilogue), and every
handler is ``args.func(args) -> int``, the exit code:

    0    success (for ``solve``: solved, or proved unsolvable)
    1    failure (an illegal solution, an engine error)
    2    bad usage or input (one line on stderr, no traceback)
    3    incomplete but resumable (a search budget ran out)
    130  interrupted (Ctrl-C)
    143  terminated (SIGTERM; ``run`` handles it as Ctrl-C)

>>> main(["deal", "617", "--format", "rows"])  # doctest: +ELLIPSIS
7D TD TH KD 4C 4S JD
...
AH KH TC JS 2S QH
0
"""

from __future__ import annotations

import argparse
import atexit
import dataclasses
import importlib
import json
import os
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final, NoReturn

from . import __version__, _engine, verifier
from ._api import (
    MOVE_RULES,
    PRESET_NAMES,
    Board,
    Limits,
    SolveProgress,
    SolveResult,
    Variant,
    deal,
    min_cells,
    solve,
)
from .cliframe import (
    EXIT_CODES_HELP,
    MAX_LIMIT,
    MAX_SECONDS,
    PROG,
    Parser,
    add_json_option,
    add_limit_options,
    add_subcommand,
    add_verbosity_options,
    excerpt,
    excerpt_path,
    guarded,
    looks_like_deal_number,
    option,
    parse_and_run,
    parse_cell_count,
    parse_deal_number,
    parse_move_rule,
    parse_variant,
)
from .errors import (
    EXIT_FAILURE,
    EXIT_INCOMPLETE,
    EXIT_OK,
    AnalyzerError,
    BoardError,
    DealNumberError,
    EngineError,
    UsageError,
)

if TYPE_CHECKING:
    from .cliframe import Subparsers

# Subcommands that other packages register (DESIGN.md), with the extra that
# installs what they need; used to explain a subcommand that is missing.
_PLUGINS: dict[str, tuple[tuple[str, ...], str]] = {
    "jobs.cli": (("run", "status", "validate", "plan"), "ray"),
    "reports.cli": (("report", "publish"), "reports"),
}
#: Subcommands another package's module extends when it is there: reports
#: checks published datasets for `validate` (jobs knows only run directories).
_EXTENDS: dict[str, tuple[str, ...]] = {"reports.cli": ("validate",)}

#: ``verify`` reads at most this much of a solution (a file or the argument):
#: 100,000 moves of up to 6 characters and a space fit, a stray huge file
#: is refused before it is read.
VERIFY_MAX_BYTES: Final = 1 << 20
#: A board file is a few hundred bytes; this is far more than any needs.
MAX_BOARD_BYTES: Final = 64 << 10
#: ``verify`` replays at most this many moves; a longer list is refused
#: before any move is replayed. The engine's solutions have a median of
#: about 170 moves (the longest of MS 1..600 with 2 to 4 cells: 199), and
#: the verifier replays about 12,000 moves a second (99,999 moves took
#: 8.6 s of CPU on a shared 2-core machine), so the largest list accepted
#: takes seconds, not minutes.
VERIFY_MAX_MOVES: Final = 100_000
#: ``verify`` stops a replay that reaches one position more often than this:
#: a move list going round a cycle. Real solutions do come back to a
#: position (a card moved to a cell and straight back): of the engine's
#: 8,992 solutions of MS 1..3000 with 1 to 4 cells, 172 do, and the most
#: any position is reached is 3 times.
VERIFY_MAX_VISITS: Final = 8


# ---------------------------------------------------------------------------
# Argument helpers
# ---------------------------------------------------------------------------


def _read_text(path: Path, what: str, cap: int) -> str:
    """The UTF-8 text of `path`, refused when larger than `cap` bytes (read
    in a bounded way, so a huge file or device is never loaded)."""
    try:
        with path.open("rb") as f:
            data = f.read(cap + 1)
        if len(data) > cap:
            raise AnalyzerError(
                f"{what} {excerpt_path(str(path))} is larger than {cap:,} bytes, the most {PROG} reads; "
                "is it the right file?"
            )
        return data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        raise AnalyzerError(f"cannot read {what} {excerpt_path(str(path))}: {reason}") from None


def _is_file(text: str) -> bool:
    """Whether `text` names a file; a string of moves may be too long to be a path."""
    try:
        return Path(text).is_file()
    except (OSError, ValueError):
        return False


def _start(text: str) -> int | str:
    """START of `solve`/`verify`: a deal number, or the text of a board file.
    Plain digits are a deal number; a file's name is a board; something
    else that looks like a number (``6_17``, ``+5``, ``٥``) is refused as
    a deal number."""
    if re.fullmatch(r"\s*[0-9]+\s*", text, re.ASCII):
        return parse_deal_number(text)
    if _is_file(text):
        return _read_text(Path(text), "board file", MAX_BOARD_BYTES)
    if looks_like_deal_number(text):
        return parse_deal_number(text)  # raises: not plain 0-9
    raise BoardError(f"{excerpt(text)} is neither a deal number nor a board file")


def _add_variant_options(p: argparse.ArgumentParser, *, move_rule: bool) -> None:
    p.add_argument(
        "--variant",
        type=option(parse_variant, "variant"),
        default="freecell",
        metavar="V",
        help=f"rules preset: {', '.join(PRESET_NAMES)} (default: freecell)",
    )
    p.add_argument(
        "--cells",
        type=option(parse_cell_count, "cells"),
        metavar="K",
        help="number of cells, 0..10 (default: the variant's own, 4 for freecell)",
    )
    if move_rule:
        p.add_argument(
            "--move-rule",
            type=option(parse_move_rule, "move rule"),
            metavar="R",
            help=f"multi-card move limit: {', '.join(MOVE_RULES)} (default: the variant's, product for freecell)",
        )


def _human_bytes(n: int) -> str:
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


# ---------------------------------------------------------------------------
# deal
# ---------------------------------------------------------------------------


def _cmd_deal(args: argparse.Namespace) -> int:
    variant = Variant.named(args.variant, cells=args.cells)
    number = parse_deal_number(args.deal)
    board = deal(number, variant)
    if args.format == "rows":
        sys.stdout.write(board.rows())
    elif args.format == "json":
        doc = {
            "deal_number": number,
            "variant": variant.as_dict(),
            "columns": board.columns,
            "cells": board.cells,
            "foundations": board.foundations,
        }
        print(json.dumps(doc))
    else:
        sys.stdout.write(str(board))
    return EXIT_OK


def _add_deal(subparsers: Subparsers) -> None:
    p = add_subcommand(
        subparsers,
        "deal",
        handler=_cmd_deal,
        summary="print a Microsoft deal",
        description=(
            "Print Microsoft deal N (1..8589934591, FreeCell Pro numbering) laid out\n"
            "for a variant. Formats: text (fc-solve board text), rows (only the\n"
            "columns, deepest card first, as in REFERENCE.md's test vectors; cards\n"
            "dealt to cells are not shown), json (columns, cells, foundations and\n"
            "the variant's rules)."
        ),
        examples="""
freecell-analyzer deal 617
freecell-analyzer deal 617 --format rows
freecell-analyzer deal 6000000000 --variant seahaven_towers --format json
freecell-analyzer deal 1 --cells 3 --format text > board.txt
""",
    )
    p.add_argument("deal", metavar="N", help="deal number, 1..8589934591")
    _add_variant_options(p, move_rule=False)
    p.add_argument(
        "--format",
        choices=("text", "rows", "json"),
        default="rows",
        help="rows: the columns, deepest card first, as REFERENCE.md prints deals (default); "
        "text: fc-solve board text (Foundations/Freecells lines); json",
    )


# ---------------------------------------------------------------------------
# verify
# ---------------------------------------------------------------------------

_PATHLIKE_RE = re.compile(r"[/\\]|\.(txt|sol|solution)$", re.IGNORECASE)


def _read_solution(text: str) -> tuple[int | None, list[str]]:
    """(deal number named in the file's first line or None, the moves).
    Refuses more than `VERIFY_MAX_BYTES` of text or `VERIFY_MAX_MOVES` moves
    before any move is replayed."""
    if _is_file(text):
        body = _read_text(Path(text), "solution file", VERIFY_MAX_BYTES)
    elif _PATHLIKE_RE.search(text.strip()) is not None:
        raise AnalyzerError(f"solution file {excerpt_path(text)} does not exist")
    elif len(text.encode("utf-8", "surrogatepass")) > VERIFY_MAX_BYTES:
        raise AnalyzerError(f"the solution is longer than {VERIFY_MAX_BYTES:,} bytes, the most verify reads")
    else:
        body = text
    lines = [line for line in body.splitlines() if not line.lstrip().startswith("#")]
    header: int | None = None
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is not None and re.fullmatch(r"\s*[0-9]+\s*", lines[first], re.ASCII):
        # tests/data/known_solution_*.txt: a first line with the deal number.
        header = parse_deal_number(lines[first])
        del lines[first]
    moves = verifier.split_moves("\n".join(lines))
    if len(moves) > VERIFY_MAX_MOVES:
        raise AnalyzerError(
            f"the solution has {len(moves):,} moves; verify replays at most {VERIFY_MAX_MOVES:,} "
            "(the solutions the engine writes have a few hundred)"
        )
    return header, moves


def _cmd_verify(args: argparse.Namespace) -> int:
    rules = verifier.make_variant(args.variant, cells=args.cells, move_rule=args.move_rule)
    start = _start(args.start)
    header, moves = _read_solution(args.solution)
    if header is not None and isinstance(start, int) and header != start:
        raise DealNumberError(f"solution {excerpt_path(args.solution)} is for deal {header}, not deal {start}")
    report = verifier.replay(start, moves, rules, max_visits=VERIFY_MAX_VISITS)
    where = f"{rules.name}, {rules.cells} cells, move rule {rules.move_rule}"
    if report.won:
        print(f"won in {report.total_moves} moves ({where})")
        return EXIT_OK
    if report.illegal_index is not None:
        print(f"illegal: {report.reason} ({where})")
        if args.verbosity >= 0:
            print(f"position before move {report.illegal_index}:")
            sys.stdout.write(report.position_before or "")
    else:
        print(f"not won: {report.reason} ({where})")
        if args.verbosity >= 0:
            print("final position:" if report.repeated_index is None else "repeated position:")
            sys.stdout.write(report.final_board)
    return EXIT_FAILURE


def _add_verify(subparsers: Subparsers) -> None:
    p = add_subcommand(
        subparsers,
        "verify",
        handler=_cmd_verify,
        summary="check a solution with the independent verifier",
        description=(
            "Replay a solution with the independent pure-Python verifier\n"
            "(analyzer.verifier; it never uses the engine). START is a deal number\n"
            "or a board file; SOLUTION is a file or a string of moves in standard\n"
            "notation, separated by whitespace. A solution file may begin with a\n"
            "line holding only the deal number; lines starting with # are ignored.\n"
            "Prints 'won in N moves', or the first illegal move (its number, the\n"
            "move and why) with the position before it. A solution whose moves are\n"
            "all legal but which does not win also fails.\n"
            f"Limits: at most {VERIFY_MAX_BYTES:,} bytes of solution and {VERIFY_MAX_MOVES:,} moves\n"
            f"(refused before replaying, exit 2); board files of at most {MAX_BOARD_BYTES:,} bytes.\n"
            f"A replay that reaches one position more than {VERIFY_MAX_VISITS} times stops there\n"
            "(a cycle; exit 1).\n"
            "Exit 0 when the solution wins, 1 when it does not, 2 for unreadable input."
        ),
        examples="""
freecell-analyzer verify 617 tests/data/known_solution_617.txt
freecell-analyzer verify 1 "8a 81"
freecell-analyzer verify board.txt solution.txt --cells 3 --move-rule doubling
freecell-analyzer verify 617 solution.txt --quiet && echo valid
""",
    )
    p.add_argument("start", metavar="START", help="deal number or board file")
    p.add_argument("solution", metavar="SOLUTION", help="solution file or a string of moves")
    _add_variant_options(p, move_rule=True)
    add_verbosity_options(p, quiet="print only the verdict line, without the position")


# ---------------------------------------------------------------------------
# solve
# ---------------------------------------------------------------------------


def _result_doc(result: SolveResult, variant: Variant) -> dict[str, object]:
    doc: dict[str, object] = dataclasses.asdict(result)
    doc["variant_rules"] = dataclasses.replace(variant, cells=result.cells).as_dict()
    return doc


def _statistics(r: SolveResult) -> str:
    disk = f", peak disk {_human_bytes(r.peak_disk_bytes)}" if r.peak_disk_bytes else ""
    return (
        f"{r.positions_expanded:,} positions expanded, {r.positions_stored:,} stored, "
        f"peak memory {_human_bytes(r.peak_bytes)}{disk}, {r.elapsed_s:.3f} s"
    )


def _outcome_line(r: SolveResult) -> str:
    if r.outcome == "solved":
        return "solved"
    if r.outcome == "unsolvable":
        return "unsolvable (proved: the search examined every reachable position)"
    if r.outcome == "limit":
        option = {"positions": "--max-positions", "bytes": "--max-bytes", "disk": "--max-disk", "time": "--max-seconds"}
        hint = option.get(r.limit_reason or "", "a larger limit")
        return f"limit ({r.limit_reason} budget ran out; not a verdict: run again with a larger {hint})"
    return f"error: {r.error}"


def _single_card(r: SolveResult) -> str:
    if r.solution_length_single is None:
        # `unlimited` runs may be longer than free space allows (DESIGN.md).
        return "not expressible in single-card moves"
    return f"{r.solution_length_single} single-card moves"


def _exit_for(outcome: str) -> int:
    return {"solved": EXIT_OK, "unsolvable": EXIT_OK, "limit": EXIT_INCOMPLETE}.get(outcome, EXIT_FAILURE)


def _wrapped_solution(solution: Sequence[str], per_line: int = 20) -> list[str]:
    """Moves in lines of `per_line`, each line led by its first move's number."""
    width = len(str(len(solution)))
    return [
        f"  {i + 1:>{width}}: " + " ".join(solution[i : i + per_line])
        for i in range(0, len(solution), per_line)
    ]


def _positions_after(start: Board, result: SolveResult) -> list[Board]:
    boards: list[Board] = []
    board = start
    for number, move in enumerate(result.solution, start=1):
        try:
            board = board.apply(move)
        except AnalyzerError as error:  # the engine's own solution: a bug, not a user mistake
            raise EngineError(
                f"the engine rejects move {number} {move!r} of its own solution: {error}"
            ) from None
        boards.append(board)
    return boards


#: Seconds between `solve`'s progress lines.
PROGRESS_EVERY: Final = 10.0

_STAGES: Final = {
    "portfolio": "portfolio",
    "complete": "complete search",
    "reserve": "reserve",
    "prover": "prover",
}


def _progress_line(p: SolveProgress) -> str:
    """One line on how far a running solve has got."""
    minutes, seconds = divmod(int(p.elapsed_s), 60)
    took = f"{minutes} min {seconds:02d} s" if minutes else f"{seconds} s"
    if p.stage is None:
        return f"progress: {took}, starting"
    stage = _STAGES.get(p.stage, p.stage)
    if p.stage == "prover":
        stage += f" (layer {p.layers})"
    disk = f", {_human_bytes(p.disk_bytes)} disk" if p.disk_bytes else ""
    return (
        f"progress: {took}, {p.cells} cell{'' if p.cells == 1 else 's'}, {stage}: "
        f"{p.positions_expanded:,} expanded, {p.positions_stored:,} stored, "
        f"{_human_bytes(p.bytes)} memory{disk}"
    )


def _progress_for(args: argparse.Namespace) -> Callable[[SolveProgress], None]:
    """What `solve` does with a long search's progress every
    `PROGRESS_EVERY` seconds: a line on stderr with --verbose, or on a
    terminal unless --quiet; else nothing. Either way the engine solves on a
    second thread while this one waits, so Ctrl-C ends even an hour-long
    proof at once (a signal reaches Python code only once the engine's call
    returns to it)."""
    if args.verbosity > 0 or (args.verbosity == 0 and sys.stderr.isatty()):
        return lambda p: print(_progress_line(p), file=sys.stderr, flush=True)
    return lambda p: None


def _solve_one(args: argparse.Namespace, variant: Variant, limits: Limits) -> int:
    start = _start(args.start)
    board = deal(start, variant) if isinstance(start, int) else Board(start, variant)
    result = solve(
        start if isinstance(start, int) else board,
        variant,
        limits=limits,
        progress=_progress_for(args),
        progress_every=PROGRESS_EVERY,
    )
    boards = _positions_after(board, result) if args.show else []
    if args.json:
        doc = _result_doc(result, variant)
        if args.show:
            doc["start_board"] = str(board)
            doc["boards"] = [str(b) for b in boards]
        print(json.dumps(doc))
        return _exit_for(result.outcome)
    if args.verbosity < 0:
        print(f"outcome: {_outcome_line(result)}")
        return _exit_for(result.outcome)
    name = f"deal {start}" if isinstance(start, int) else f"board {excerpt_path(args.start)}"
    print(f"{name} ({variant.name}, {variant.cells} cells, move rule {variant.move_rule})")
    if args.verbosity > 0:
        print(_rules_line(variant))
        print(_limits_line(limits))
    print(f"outcome: {_outcome_line(result)}")
    if result.outcome == "solved":
        print(
            f"solution: {result.solution_length_multi} moves under the {variant.move_rule} rule "
            f"({sum(result.auto)} of them automatic foundation moves), {_single_card(result)}"
        )
        for line in _wrapped_solution(result.solution):
            print(line)
    print(f"statistics: {_statistics(result)}")
    if args.show:
        print("\nstart:")
        sys.stdout.write(str(board))
        auto = result.auto if len(result.auto) == len(result.solution) else (False,) * len(result.solution)
        for number, (move, after, is_auto) in enumerate(
            zip(result.solution, boards, auto, strict=True), start=1
        ):
            print(f"\nmove {number}: {move}" + (" (automatic)" if is_auto else ""))
            sys.stdout.write(str(after))
    return _exit_for(result.outcome)


def _solve_min_cells(args: argparse.Namespace, variant: Variant, limits: Limits) -> int:
    if args.cells is not None:
        raise UsageError("solve: --cells cannot be combined with --min-cells (use --max-cells)")
    if args.show:
        raise UsageError("solve: --show cannot be combined with --min-cells")
    start = _start(args.start)
    if not isinstance(start, int):
        raise UsageError(f"solve: --min-cells needs a deal number, not the board file {excerpt_path(args.start)}")
    max_cells = 8 if args.max_cells is None else args.max_cells
    answer = min_cells(
        start,
        variant,
        max_cells=max_cells,
        limits=limits,
        progress=_progress_for(args),
        progress_every=PROGRESS_EVERY,
    )
    results = sorted(answer.results, key=lambda r: r.cells)
    if any(r.outcome == "error" for r in results):
        code = EXIT_FAILURE
    elif answer.min_cells is None and any(r.outcome == "limit" for r in results):
        code = EXIT_INCOMPLETE
    else:
        code = EXIT_OK
    if args.json:
        doc = {
            "deal_number": start,
            "variant": variant.as_dict(),
            "max_cells": max_cells,
            "min_cells": answer.min_cells,
            "counts": [
                {"cells": k, "outcome": o, "how": h} for k, o, h in answer.by_count(variant.dealt_to_cells, max_cells)
            ],
            "results": [_result_doc(r, variant) for r in results],
        }
        print(json.dumps(doc))
        return code
    if answer.min_cells is not None:
        below = answer.min_cells - 1
        verdict = (
            f"minimum cells: {answer.min_cells} (solved with {answer.min_cells}; "
            + (f"proved unsolvable with {below}, so with fewer too)" if below >= variant.dealt_to_cells else "none fewer)")
        )
    elif code == EXIT_OK:
        verdict = f"minimum cells: none (not won with up to {max_cells} cells)"
    else:
        verdict = "minimum cells: unknown (a search did not finish; see below)"
    if args.verbosity < 0:
        print(verdict)
        return code
    print(f"deal {start} ({variant.name}, move rule {variant.move_rule})")
    if args.verbosity > 0:
        print(_rules_line(variant))
        print(_limits_line(limits))
    print(verdict)
    print(
        f"{'cells':>7}  {'outcome':<18} {'how':<9} {'moves':>6} {'single':>6} {'expanded':>12} {'stored':>12} "
        f"{'peak memory':>11} {'time':>9}"
    )
    by_cells = {r.cells: r for r in results}
    for k, inferred, how in answer.by_count(variant.dealt_to_cells, max_cells):
        r = by_cells.get(k)
        if r is None:
            print(f"{k:>7}  {inferred:<18} {how:<9}")
            continue
        outcome = f"limit ({r.limit_reason})" if r.outcome == "limit" else r.outcome
        moves = "-" if r.solution_length_multi is None else str(r.solution_length_multi)
        single = "-" if r.solution_length_single is None else str(r.solution_length_single)
        print(
            f"{r.cells:>7}  {outcome:<18} {'searched':<9} {moves:>6} {single:>6} {r.positions_expanded:>12,} "
            f"{r.positions_stored:>12,} {_human_bytes(r.peak_bytes):>11} {r.elapsed_s:>7.3f} s"
        )
    for r in results:
        if r.outcome in ("limit", "error"):
            print(f"{r.cells} cells: {_outcome_line(r)}")
    return code


def _rules_line(v: Variant) -> str:
    return (
        f"rules: {v.columns} columns, build {v.build}, empty columns take {v.empty}, "
        f"{v.dealt_to_cells} cards dealt to cells"
    )


def _limits_line(limits: Limits) -> str:
    seconds = "no time limit" if limits.max_seconds is None else f"{limits.max_seconds:g} s"
    positions = "no position limit" if limits.max_positions is None else f"{limits.max_positions:,} positions"
    return (
        f"limits: {positions}, {_human_bytes(limits.max_bytes)} memory, "
        f"{_human_bytes(limits.max_disk)} disk, {seconds}"
    )


def _cmd_solve(args: argparse.Namespace) -> int:
    if args.max_cells is not None and not args.min_cells:
        raise UsageError("solve: --max-cells needs --min-cells")
    variant = Variant.named(args.variant, cells=args.cells, move_rule=args.move_rule)
    defaults = Limits()
    limits = Limits(
        max_positions=defaults.max_positions if args.max_positions is None else args.max_positions,
        max_bytes=defaults.max_bytes if args.max_bytes is None else args.max_bytes,
        max_disk=defaults.max_disk if args.max_disk is None else args.max_disk,
        max_seconds=args.max_seconds,
        spill_dir=args.spill_dir,
    )
    if args.min_cells:
        return _solve_min_cells(args, variant, limits)
    return _solve_one(args, variant, limits)


def _add_solve(subparsers: Subparsers) -> None:
    p = add_subcommand(
        subparsers,
        "solve",
        handler=_cmd_solve,
        summary="solve a deal or a board",
        description=(
            "Solve a deal or a board with the engine. The outcome is one of solved\n"
            "(with the solution in standard notation), unsolvable (proved by an\n"
            "exhaustive search over single-card moves), limit (a budget ran out:\n"
            "this is no verdict; run again with larger limits) or error.\n"
            "Solutions are written with multi-card moves under the move rule;\n"
            "automatic foundation moves are written out like any other move.\n"
            "With --min-cells: the fewest cells that win the deal, with the\n"
            "outcome for every number of cells tried.\n"
            "Limits take the digits 0-9 with an optional suffix: positions K, M, G,\n"
            "T (powers of 1000: 2M, 1.5M), bytes K, M, G, T (powers of 1024: 512M,\n"
            f"1.5G), both at most {MAX_LIMIT:,}; seconds more than 0, at most {MAX_SECONDS:,}.\n"
            "Exit 0 when solved or proved unsolvable, 3 on limit, 1 on error."
        ),
        examples="""
freecell-analyzer solve 617
freecell-analyzer solve 617 --cells 3
freecell-analyzer solve 11982 --cells 5 --move-rule doubling --show
freecell-analyzer solve board.txt --variant bakers_game --max-seconds 60 --json
freecell-analyzer solve 617 --min-cells --max-cells 5
freecell-analyzer solve 11982 --quiet
""",
    )
    p.add_argument("start", metavar="DEAL_OR_BOARDFILE", help="deal number or board file")
    _add_variant_options(p, move_rule=True)
    add_limit_options(p)
    p.add_argument("--show", action="store_true", help="print the position after every move")
    add_json_option(p, "the result (the same fields as analyzer.SolveResult)")
    add_verbosity_options(
        p,
        quiet="print only the outcome line (with --min-cells: the minimum cells line)",
        verbose=(
            "also print the variant's rules and the limits in effect, and a progress line on "
            f"stderr every {PROGRESS_EVERY:g} s while the search runs (shown on a terminal anyway)"
        ),
    )
    p.add_argument(
        "--min-cells",
        action="store_true",
        help="find the fewest cells that win the deal (deal numbers only)",
    )
    p.add_argument(
        "--max-cells",
        type=option(parse_cell_count, "cells"),
        metavar="M",
        help="with --min-cells: the most cells to try, 0..10 (default: 8)",
    )


# ---------------------------------------------------------------------------
# Parser and entry point
# ---------------------------------------------------------------------------


def _plugins_for(command: str | None) -> list[str]:
    """The modules to load for `command`: none for our own subcommands (so
    that `deal` never pays for importing Ray or pandas), the one that owns
    it, or all of them (for the main --help and unknown subcommands)."""
    if command in ("deal", "verify", "solve"):
        return []
    owners = [
        module
        for module, (commands, _) in _PLUGINS.items()
        if command in commands or command in _EXTENDS.get(module, ())
    ]
    return owners or list(_PLUGINS)


def build_parser(command: str | None = None) -> tuple[argparse.ArgumentParser, dict[str, str]]:
    """The parser, and the subcommands that could not be loaded (name → why).

    `command` (the subcommand about to run, if known) limits which other
    packages' subcommands are loaded; by default all are.
    """
    parser = Parser(
        prog=PROG,
        description=(
            "FreeCell Analyzer: deals, proved solvability and verified solutions\n"
            "of Microsoft FreeCell deals 1..8589934591 and related variants."
        ),
        epilog=(
            "examples:\n"
            "  freecell-analyzer deal 617\n"
            "  freecell-analyzer solve 617 --cells 3\n"
            "  freecell-analyzer verify 617 tests/data/known_solution_617.txt\n"
            "  freecell-analyzer SUBCOMMAND --help\n\n" + EXIT_CODES_HELP
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"{PROG} {__version__} (engine {_engine.__version__}, {_engine.build_profile()} build)",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="SUBCOMMAND", required=True)
    _add_deal(subparsers)
    _add_verify(subparsers)
    _add_solve(subparsers)
    unavailable: dict[str, str] = {}
    for module_name in _plugins_for(command):
        commands, extra = _PLUGINS[module_name]
        # Both steps may import optional packages (ray, pandas ...): a missing
        # one hides only these subcommands.
        only_extends = command in _EXTENDS.get(module_name, ()) and command not in commands
        try:
            module = importlib.import_module(module_name)
            if only_extends:
                module.extend(subparsers)
            elif command is None and hasattr(module, "register_brief"):
                # The main --help lists subcommands; their options are not
                # needed, and may cost imports (pandas, matplotlib).
                module.register_brief(subparsers)
            else:
                module.register(subparsers)
        except ImportError as error:
            if not only_extends:
                why = f"{module_name} cannot be imported ({error}); try: pip install 'freecell-analyzer[{extra}]'"
                unavailable.update(dict.fromkeys(commands, why))
    return parser, unavailable


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command line; returns the exit code (see the module docstring)."""
    args_list = list(sys.argv[1:] if argv is None else argv)

    def body() -> int:
        # The main parser's only options take no value: the first other
        # word is the subcommand.
        command = next((a for a in args_list if not a.startswith("-")), None)
        if command is None and not {"-h", "--help"} & set(args_list):
            command = "deal"  # --version, or no subcommand: nothing else to load
        parser, unavailable = build_parser(command)
        if command in unavailable:
            raise UsageError(f"subcommand {excerpt(command or '')} is not available: {unavailable[command or '']}")
        return parse_and_run(parser, args_list)

    return guarded(body)


def entry() -> NoReturn:
    """The ``freecell-analyzer`` console script: `main`, then an exit that
    skips the interpreter's teardown of its modules (0.2 s once Ray and
    pandas are loaded, as long as a 300-deal run's solving): the streams
    are flushed and the exit handlers run (Ray's, logging's, and the one
    that ends a local Ray start a run abandoned), as at a usual exit. An
    exit by `SystemExit` (``--help``, usage errors) is the usual one."""
    code = main()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: nothing more to write
            pass
    atexit._run_exitfuncs()
    os._exit(code)


__all__ = ["EXIT_CODES_HELP", "UsageError", "build_parser", "entry", "main", "parse_deal_number"]


if __name__ == "__main__":
    entry()
