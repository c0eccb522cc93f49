"""The frame every ``freecell-analyzer`` subcommand is built on, and the one
reader of what users type (docs/DESIGN.md, "Subcommands and where they live").

- `Parser`: an `argparse.ArgumentParser` that raises `UsageError` instead of
  printing usage and exiting, so every user mistake becomes one line.
- `add_subcommand`: one subcommand with its summary, description, examples
  and the exit-code epilogue `EXIT_CODES_HELP` (one spelling, used by every
  subcommand and entry point).
- `guarded` / `dispatch` / `run_main`: the one wrapper that parses, runs the
  handler, and maps errors to exit codes (`analyzer.cli.main`, ``python -m
  jobs.run``, ``python -m reports.<module>``).
- `add_json_option`, `add_verbosity_options`: ``--json``, ``--quiet`` and
  ``--verbose`` spelled the same everywhere.
- The parsers of deal numbers and deal ranges, counts, sizes, seconds, cell
  counts, variants and move rules. Each accepts the ASCII digits ``0-9``
  only (no signs, ``_`` or ``,`` separators, or digits of other scripts),
  does its arithmetic on integers, and range-checks the value; a bad value
  raises an `AnalyzerError` whose message quotes at most a short excerpt of
  the input. `option` adapts one for ``argparse`` (``type=option(...)``).

A leaf: it imports only the standard library, `analyzer.errors`,
`analyzer.verifier` (for its error class) and constants of `analyzer._api`,
never a subcommand's module, so every CLI module can import it.

>>> parse_deal_number("617")
617
>>> parse_size("1.5G"), parse_count("20M"), parse_seconds("0.5")
(1610612736, 20000000, 0.5)
>>> parse_deal_number("6_17")
Traceback (most recent call last):
...
analyzer.errors.DealNumberError: '6_17' is not a deal number: write it with the digits 0-9 only (no signs, separators or other scripts)
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import textwrap
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Final, NoReturn, TypeAlias, TypeVar

from ._api import MAX_DEAL, MOVE_RULES, PRESET_NAMES, Limits
from .errors import (
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    AnalyzerError,
    DealNumberError,
    EngineError,
    RangeError,
    UsageError,
    VariantError,
)
from .verifier import VerifierError

PROG: Final = "freecell-analyzer"

#: The exit codes of every subcommand (docs/DESIGN.md, "Exit codes"); each
#: subcommand's description says which of them it uses and when.
EXIT_CODES_HELP: Final = """\
exit codes:
  0    success: done, complete or valid
  1    failure: a wrong result (an illegal solution, invalid data) or a bug
  2    bad usage or input: one line on stderr names the problem; nothing is written
  3    incomplete but resumable: run the same command again
  130  interrupted (Ctrl-C); finished work is kept
  143  terminated (SIGTERM); run handles it as Ctrl-C"""

#: The largest search budget: the engine counts positions and bytes in
#: unsigned 64-bit integers.
MAX_LIMIT: Final = 2**64 - 1
#: The largest number of seconds any option takes (about 31.7 years); a
#: larger one is a typo, and a float that large loses its meaning.
MAX_SECONDS: Final = 10**9
#: Cell counts a variant may have (DESIGN.md, "Variant": cells 0..10).
MAX_CELLS: Final = 10
#: Characters of a bad input quoted in a message.
EXCERPT: Final = 40
#: Characters of a file name quoted in a message.
PATH_EXCERPT: Final = 300
#: No number we read has more digits than this; a longer one is out of
#: range before it is converted (Python refuses int() of > 4300 digits).
_MAX_DIGITS: Final = 40

Handler: TypeAlias = Callable[[argparse.Namespace], int]
T = TypeVar("T")


# ---------------------------------------------------------------------------
# Messages
# ---------------------------------------------------------------------------


def excerpt(text: str, limit: int = EXCERPT) -> str:
    """`text` quoted as ``repr`` does, cut to `limit` characters with its
    length named, so a message never echoes a huge input.

    >>> excerpt("8a")
    "'8a'"
    >>> excerpt("x" * 1000, limit=5)
    "'xxxxx'... (1,000 characters)"
    """
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}... ({len(text):,} characters)"


def excerpt_path(path: str) -> str:
    """A file name for a message: quoted, cut only when absurdly long."""
    return excerpt(path, PATH_EXCERPT)


def one_line(error: BaseException) -> str:
    """An exception's message on one line (whitespace collapsed, at most
    1000 characters), or its class name when it has none."""
    line = " ".join(str(error).split()) or type(error).__name__
    return line if len(line) <= 1000 else line[:1000] + " ..."


def fail(message: str) -> None:
    """Prints ``freecell-analyzer: error: MESSAGE`` on stderr."""
    print(f"{PROG}: error: {message}", file=sys.stderr)


# ---------------------------------------------------------------------------
# Numbers
# ---------------------------------------------------------------------------

_UINT: Final = re.compile(r"[0-9]+", re.ASCII)
_QUANTITY: Final = re.compile(r"([0-9]+)(?:\.([0-9]+))?\s*([kmgt]?)(i?b)?", re.ASCII | re.IGNORECASE)
_DECIMAL: Final = re.compile(r"[0-9]+(?:\.[0-9]*)?|\.[0-9]+", re.ASCII)
_DIGITS_ONLY: Final = "write it with the digits 0-9 only (no signs, separators or other scripts)"


def _strip(text: str) -> str:
    return text.strip(" \t\r\n")


def _bounded(value: int | Fraction, text: str, what: str, lo: int, hi: int, unit: str = "") -> int:
    if value.denominator != 1:
        raise UsageError(f"{excerpt(text)} is not a whole number of {what}")
    n = int(value)
    if n < lo:
        raise UsageError(f"{excerpt(text)}: {what} must be at least {lo:,}{unit}")
    if n > hi:
        raise UsageError(f"{excerpt(text)}: {what} must be at most {hi:,}{unit}")
    return n


def parse_int(text: str, what: str, lo: int = 0, hi: int = MAX_LIMIT) -> int:
    """A whole number in ``lo..hi`` written with the digits 0-9.

    >>> parse_int("12", "chunks", lo=1)
    12
    >>> parse_int("-1", "cells")
    Traceback (most recent call last):
    ...
    analyzer.errors.UsageError: '-1' is not a number of cells: write it with the digits 0-9 only (no signs, separators or other scripts)
    """
    t = _strip(text)
    if _UINT.fullmatch(t) is None:
        raise UsageError(f"{excerpt(text)} is not a number of {what}: {_DIGITS_ONLY}")
    if len(t.lstrip("0")) > _MAX_DIGITS:
        raise UsageError(f"{excerpt(text)}: {what} must be at most {hi:,}")
    return _bounded(int(t), text, what, lo, hi)


def _quantity(text: str, what: str, base: int, lo: int, hi: int, bytes_: bool) -> int:
    t = _strip(text)
    m = _QUANTITY.fullmatch(t)
    if m is None or (m.group(4) and not bytes_):
        example = "512M, 1.5G or 1073741824" if bytes_ else "500000, 20M or 1.5G"
        raise UsageError(
            f"{excerpt(text)} is not a number of {what}: expected digits 0-9 with an optional "
            f"suffix K, M, G or T (e.g. {example})"
        )
    whole, frac, suffix = m.group(1), m.group(2) or "", m.group(3).upper()
    if len(whole.lstrip("0")) > _MAX_DIGITS or len(frac) > _MAX_DIGITS:
        raise UsageError(f"{excerpt(text)}: {what} must be at most {hi:,}")
    value = Fraction(int(whole + frac), 10 ** len(frac)) * base ** " KMGT".index(suffix or " ")
    return _bounded(value, text, what, lo, hi)


def parse_count(text: str, what: str = "positions", lo: int = 1, hi: int = MAX_LIMIT) -> int:
    """A count with an optional decimal suffix: K, M, G, T are powers of 1000.

    >>> parse_count("500"), parse_count("2k"), parse_count("1.5M")
    (500, 2000, 1500000)
    >>> parse_count("18446744073709551616")
    Traceback (most recent call last):
    ...
    analyzer.errors.UsageError: '18446744073709551616': positions must be at most 18,446,744,073,709,551,615
    """
    return _quantity(text, what, 1000, lo, hi, bytes_=False)


def parse_size(text: str, what: str = "bytes", lo: int = 1, hi: int = MAX_LIMIT) -> int:
    """A number of bytes with an optional binary suffix: K, M, G, T (also
    KiB, KB ...) are powers of 1024.

    >>> parse_size("1073741824"), parse_size("4G"), parse_size("512MiB"), parse_size("0.5k")
    (1073741824, 4294967296, 536870912, 512)
    >>> parse_size("1.3")
    Traceback (most recent call last):
    ...
    analyzer.errors.UsageError: '1.3' is not a whole number of bytes
    """
    return _quantity(text, what, 1024, lo, hi, bytes_=True)


def parse_seconds(text: str, what: str = "seconds", *, allow_zero: bool = False) -> float:
    """Seconds, a decimal number written with 0-9 and ``.``: more than 0
    (or 0 itself with `allow_zero`), at most `MAX_SECONDS`.

    >>> parse_seconds("60"), parse_seconds("0.25"), parse_seconds("0", allow_zero=True)
    (60.0, 0.25, 0.0)
    >>> parse_seconds("nan")
    Traceback (most recent call last):
    ...
    analyzer.errors.UsageError: 'nan' is not a number of seconds: expected digits 0-9 and a decimal point, e.g. 60 or 0.5
    """
    t = _strip(text)
    if _DECIMAL.fullmatch(t) is None:
        raise UsageError(f"{excerpt(text)} is not a number of {what}: expected digits 0-9 and a decimal point, e.g. 60 or 0.5")
    whole = t.split(".")[0].lstrip("0")
    value = float(t) if len(whole) <= _MAX_DIGITS else float("inf")
    if value > MAX_SECONDS:
        raise UsageError(f"{excerpt(text)}: {what} must be at most {MAX_SECONDS:,}")
    if value < 0 or (value == 0 and not allow_zero):
        raise UsageError(f"{excerpt(text)}: {what} must be more than 0")
    return value


# ---------------------------------------------------------------------------
# Deals
# ---------------------------------------------------------------------------

_SPAN: Final = re.compile(r"([0-9]+)(?:-([0-9]+))?", re.ASCII)
DEALS_EXAMPLE: Final = "expected N or A-B separated by commas, e.g. 11982, 1-32000 or 1-1000,5000-6000"


def _number_text(digits: str) -> str:
    """ASCII `digits` as a number in a message: whole when short, else cut.

    >>> _number_text("007"), _number_text("9" * 5000)
    ('7', '99999999999999999999... (5,000 digits)')
    """
    shown = digits.lstrip("0") or "0"
    return shown if len(shown) <= 20 else f"{shown[:20]}... ({len(shown):,} digits)"


def _deal_in_range(digits: str) -> int | None:
    """The deal number `digits` (ASCII) names, or None when out of range."""
    if len(digits.lstrip("0")) > len(str(MAX_DEAL)):
        return None
    n = int(digits)
    return n if 1 <= n <= MAX_DEAL else None


def looks_like_deal_number(text: str) -> bool:
    """Whether `text` is an attempt at a number: digits of any script, maybe
    with signs, separators or a point (so that START of ``solve``/``verify``
    reads it as a deal number, refused when it is not plain 0-9)."""
    t = _strip(text)
    return any(c.isdigit() for c in t) and all(c.isdigit() or c in "+-_,. " for c in t)


def parse_deal_number(text: str) -> int:
    """A Microsoft deal number, 1..8589934591, written with 0-9 only.

    >>> parse_deal_number("0")
    Traceback (most recent call last):
    ...
    analyzer.errors.DealNumberError: deal number 0 is out of range: Microsoft deals are numbered 1..8589934591
    """
    t = _strip(text)
    if _UINT.fullmatch(t) is None:
        raise DealNumberError(f"{excerpt(text)} is not a deal number: {_DIGITS_ONLY}")
    n = _deal_in_range(t)
    if n is None:
        raise DealNumberError(
            f"deal number {_number_text(t)} is out of range: Microsoft deals are numbered 1..{MAX_DEAL}"
        )
    return n


def parse_deal_span(part: str, whole: str | None = None) -> tuple[int, int]:
    """One item of DEALS: ``N`` or ``A-B`` (inclusive), as ``(A, B)``.
    `whole` is the DEALS text it came from, for the message.

    >>> parse_deal_span("1-32000"), parse_deal_span(" 617 ")
    ((1, 32000), (617, 617))
    >>> parse_deal_span("٥")
    Traceback (most recent call last):
    ...
    analyzer.errors.RangeError: '٥' is not a deal range: expected N or A-B separated by commas, e.g. 11982, 1-32000 or 1-1000,5000-6000 (digits 0-9 only)
    """
    p = _strip(part)
    m = _SPAN.fullmatch(p)
    if m is None:
        where = "" if whole is None or part == whole else f" in {excerpt(whole)}"
        raise RangeError(f"{excerpt(p)}{where} is not a deal range: {DEALS_EXAMPLE} (digits 0-9 only)")
    a, b = m.group(1), m.group(2) if m.group(2) is not None else m.group(1)
    bounds: list[int] = []
    for digits in (a, b):
        n = _deal_in_range(digits)
        if n is None:
            raise RangeError(
                f"deal range {excerpt(p)}: deal {_number_text(digits)} is out of range: "
                f"Microsoft deals are numbered 1..{MAX_DEAL}"
            )
        bounds.append(n)
    start, end = bounds
    if start > end:
        raise RangeError(f"deal range {excerpt(p)} is reversed: write it as {end}-{start}")
    return start, end


# ---------------------------------------------------------------------------
# Cells, variants, move rules
# ---------------------------------------------------------------------------


def parse_cell_count(text: str) -> int:
    """A number of cells, 0..10.

    >>> parse_cell_count("3")
    3
    """
    return parse_int(text, "cells", 0, MAX_CELLS)


def parse_cell_range(text: str) -> tuple[int, ...]:
    """``K`` or ``A-B``: the cell counts, each 0..10.

    >>> parse_cell_range("4"), parse_cell_range("0-5")
    ((4,), (0, 1, 2, 3, 4, 5))
    >>> parse_cell_range("5-1")
    Traceback (most recent call last):
    ...
    analyzer.errors.UsageError: '5-1' is reversed: write it as 1-5
    """
    t = _strip(text)
    m = re.fullmatch(r"([0-9]+)\s*(?:-\s*([0-9]+))?", t, re.ASCII)
    if m is None:
        raise UsageError(f"{excerpt(text)} is not a number of cells: expected K or A-B with the digits 0-9, e.g. 4 or 0-5")
    lo = parse_cell_count(m.group(1))
    hi = parse_cell_count(m.group(2)) if m.group(2) is not None else lo
    if lo > hi:
        raise UsageError(f"{excerpt(t)} is reversed: write it as {hi}-{lo}")
    return tuple(range(lo, hi + 1))


def parse_variant(text: str) -> str:
    """A preset name, case and ``-``/``_`` insensitive.

    >>> parse_variant("Bakers-Game")
    'bakers_game'
    """
    key = _strip(text).lower().replace("-", "_")
    if key not in PRESET_NAMES:
        raise VariantError(f"unknown variant {excerpt(text)}; expected one of: {', '.join(PRESET_NAMES)}")
    return key


def parse_move_rule(text: str) -> str:
    """A move rule: single, product, doubling or unlimited.

    >>> parse_move_rule("Doubling")
    'doubling'
    """
    key = _strip(text).lower()
    if key not in MOVE_RULES:
        raise VariantError(f"unknown move rule {excerpt(text)}; expected one of: {', '.join(MOVE_RULES)}")
    return key


def option(parse: Callable[[str], T], name: str | None = None) -> Callable[[str], T]:
    """`parse` as an ``argparse`` type: its message becomes argparse's, so
    the line reads ``SUBCOMMAND: argument --OPTION: MESSAGE``.

    >>> option(parse_cell_count)("11")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: '11': cells must be at most 10
    """

    def convert(text: str) -> T:
        try:
            return parse(text)
        except AnalyzerError as error:
            raise argparse.ArgumentTypeError(str(error)) from None

    convert.__name__ = name or parse.__name__.removeprefix("parse_")
    return convert


def count_option(what: str, lo: int = 1, hi: int = MAX_LIMIT) -> Callable[[str], int]:
    """An argparse type: a plain whole number of `what` in ``lo..hi``."""
    return option(lambda text: parse_int(text, what, lo, hi), what)


# ---------------------------------------------------------------------------
# Parsers and subcommands
# ---------------------------------------------------------------------------


class Parser(argparse.ArgumentParser):
    """Raises `UsageError` instead of printing usage and exiting, so that a
    user mistake is reported as one line with exit code 2."""

    def error(self, message: str) -> NoReturn:
        sub = self.prog.removeprefix(PROG).strip()
        raise UsageError(f"{sub}: {message}" if sub else message)


if TYPE_CHECKING:
    # What `register(subparsers)` receives (of `Parser`, or of a plain
    # ArgumentParser in tests); not subscriptable at run time.
    Subparsers: TypeAlias = argparse._SubParsersAction[Any]


def epilog(examples: str, notes: str = "") -> str:
    """The text after a subcommand's options: examples, notes, exit codes."""
    parts = [f"examples:\n{textwrap.indent(textwrap.dedent(examples).strip(), '  ')}"]
    if notes.strip():
        parts.append(textwrap.dedent(notes).strip())
    parts.append(EXIT_CODES_HELP)
    return "\n\n".join(parts)


def add_subcommand(
    subparsers: Subparsers,
    name: str,
    *,
    summary: str,
    description: str,
    examples: str,
    handler: Handler,
    notes: str = "",
) -> argparse.ArgumentParser:
    """Adds subcommand `name`, whose ``--help`` shows `description`, the
    `examples`, `notes` and `EXIT_CODES_HELP`; `handler(args)` returns the
    exit code."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        name,
        help=summary,
        description=description,
        epilog=epilog(examples, notes),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.set_defaults(func=handler)
    return p


def standalone(prog: str, description: str, examples: str = "", notes: str = "") -> Parser:
    """The parser of a ``python -m ...`` entry point."""
    return Parser(
        prog=prog,
        description=description,
        epilog=epilog(examples, notes) if examples else EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def add_json_option(p: argparse._ActionsContainer, what: str) -> None:
    """``--json``: `what` as one JSON object on stdout instead of text."""
    p.add_argument("--json", action="store_true", help=f"print {what} as one JSON object on stdout instead of text")


def add_verbosity_options(p: argparse._ActionsContainer, *, quiet: str, verbose: str | None = None) -> None:
    """``-q/--quiet`` and (when `verbose` says what it adds) ``-v/--verbose``,
    exclusive: ``args.verbosity`` is -1, 0 or 1."""
    group = p.add_mutually_exclusive_group()
    group.add_argument("-q", "--quiet", dest="verbosity", action="store_const", const=-1, help=quiet)
    if verbose is not None:
        group.add_argument("-v", "--verbose", dest="verbosity", action="store_const", const=1, help=verbose)
    p.set_defaults(verbosity=0)


# ---------------------------------------------------------------------------
# Running: the one place errors become exit codes
# ---------------------------------------------------------------------------


def guarded(body: Callable[[], int]) -> int:
    """Runs `body` and returns its exit code; what it raises becomes one line
    on stderr and a documented exit code:

    - `AnalyzerError` (and the verifier's errors): the error's ``exit_code``
      (2, bad usage or input, unless a subclass says otherwise);
    - `EngineError`: 1, a bug in the engine;
    - Ctrl-C: 130; a closed stdout (``... | head``): 1, silently.
    """
    try:
        return body()
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except AnalyzerError as error:
        fail(one_line(error))
        return error.exit_code
    except VerifierError as error:
        fail(one_line(error))
        return EXIT_USAGE
    except EngineError as error:
        fail(f"engine failure (a bug; please report it): {one_line(error)}")
        return EXIT_FAILURE
    except BrokenPipeError:
        # The reader went away: stop quietly, and keep Python's own flush at
        # exit from failing on the same pipe.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_FAILURE


def parse_and_run(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> int:
    """Parses `argv` (``--help`` and ``--version`` exit 0 here) and runs the
    handler the subcommand set as ``func``. Call it inside `guarded`."""
    try:
        args = parser.parse_args(None if argv is None else list(argv))
    except SystemExit as done:  # --help, --version
        return done.code if isinstance(done.code, int) else EXIT_OK
    handler: Handler = args.func
    return handler(args)


def dispatch(parser: argparse.ArgumentParser, argv: Sequence[str] | None = None) -> int:
    """`parse_and_run` inside `guarded`: a whole command line's exit code."""
    return guarded(lambda: parse_and_run(parser, argv))


def run_main(
    prog: str,
    description: str,
    add_arguments: Callable[[argparse.ArgumentParser], None],
    handler: Handler,
    argv: Sequence[str] | None = None,
    *,
    examples: str = "",
) -> int:
    """A ``python -m ...`` entry point of one command: its parser, the
    handler, and the exit code from `dispatch`."""
    parser = standalone(prog, description, examples)
    add_arguments(parser)
    parser.set_defaults(func=handler)
    return dispatch(parser, argv)


__all__ = [
    "DEALS_EXAMPLE",
    "EXCERPT",
    "EXIT_CODES_HELP",
    "MAX_CELLS",
    "MAX_LIMIT",
    "MAX_SECONDS",
    "PROG",
    "Handler",
    "Parser",
    "add_json_option",
    "add_subcommand",
    "add_verbosity_options",
    "count_option",
    "dispatch",
    "epilog",
    "excerpt",
    "excerpt_path",
    "fail",
    "guarded",
    "looks_like_deal_number",
    "one_line",
    "option",
    "parse_and_run",
    "parse_cell_count",
    "parse_cell_range",
    "parse_count",
    "parse_deal_number",
    "parse_deal_span",
    "parse_int",
    "parse_move_rule",
    "parse_seconds",
    "parse_size",
    "parse_variant",
    "run_main",
    "standalone",
]


def _size_text(n: int) -> str:
    return f"{n >> 30}G" if n and n % (1 << 30) == 0 else str(n)


def add_limit_options(p: Any, *, per: str = "search") -> None:
    """The budgets of a search, one spelling for `solve`, `run` and `plan`
    (`p`: a parser or an argument group): ``--max-bytes``, ``--max-disk``,
    ``--max-seconds``, ``--max-positions`` and ``--spill-dir``, with the
    defaults of `analyzer.Limits`."""
    d = Limits()
    p.add_argument(
        "--max-bytes", type=option(parse_size, "bytes"), metavar="B",
        help=f"memory per {per}, K/M/G/T powers of 1024, e.g. 16G (default: {_size_text(d.max_bytes)})",
    )  # fmt: skip
    p.add_argument(
        "--max-disk", type=option(lambda text: parse_size(text, lo=0), "bytes"), metavar="B",
        help=f"disk per {per} for spill files (a proof that outgrows its memory goes on on disk); "
        f"0 keeps proofs in memory (default: {_size_text(d.max_disk)})",
    )  # fmt: skip
    p.add_argument(
        "--max-seconds", type=option(parse_seconds, "seconds"), metavar="S", help=f"seconds per {per} (default: none)"
    )
    p.add_argument(
        "--max-positions", type=option(parse_count, "positions"), metavar="N",
        help=f"positions stored per {per}, K/M/G/T powers of 1000, e.g. 2M (default: none)",
    )  # fmt: skip
    p.add_argument(
        "--spill-dir", metavar="DIR",
        help="where spill files go (default: the temporary directory); never changes a result, so not part of a run's configuration",
    )  # fmt: skip
