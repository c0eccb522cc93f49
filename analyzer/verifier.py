"""Independent pure-Python FreeCell rules and solution replayer.

This module is the project's trusted checker: every solution, move list and
deal the Rust engine produces can be re-derived here from the written rules
(``shared/REFERENCE.md``) and the design contract (``docs/DESIGN.md``).  It
deliberately imports nothing but the standard library -- never
``analyzer._engine`` -- so that a bug in the engine cannot hide itself.
Clarity beats speed throughout.

Conventions (DESIGN.md "Cards"): ``card = rank * 4 + suit``, rank 0..12
(A..K), suit 0..3 in the Microsoft order C D H S.  Indices are 0-based in
code; ``1``-``9``/``0``, ``a``-``k`` (no ``h``) and ``h`` appear only in
notation.

>>> report = replay(1, "", "freecell")
>>> report.won, report.reason
(False, 'all 0 moves legal but the game is not won')
>>> deal_position(617).columns[0][:3] == tuple(parse_card(c) for c in ("7D", "TD", "TH"))
True
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Final, Literal

__all__ = [
    "BOARD_FOUNDATION_ORDER",
    "BUILD_RULES",
    "CELL_LETTERS",
    "COLUMN_DIGITS",
    "EMPTY_RULES",
    "FOUNDATION_LETTER",
    "MAX_DEAL_NUMBER",
    "MOVE_RULES",
    "PRESETS",
    "RANKS",
    "SUITS",
    "BoardError",
    "CardError",
    "DealNumberError",
    "IllegalMoveError",
    "Location",
    "Move",
    "NotationError",
    "Position",
    "ReplayReport",
    "VariantError",
    "VerifierError",
    "VerifierVariant",
    "apply_move",
    "can_build_on",
    "card_rank",
    "card_suit",
    "check_deal_number",
    "check_move",
    "deal_position",
    "empty_helper_columns",
    "format_card",
    "is_red",
    "legal_moves",
    "make_variant",
    "microsoft_deal_order",
    "move_limit",
    "parse_card",
    "parse_move",
    "replay",
    "resolve_variant",
    "split_moves",
    "top_run_length",
]


# ---------------------------------------------------------------------------
# Errors.  The lead may later re-point these at ``analyzer.errors``; they stay
# importable from ``analyzer.verifier`` either way.
# ---------------------------------------------------------------------------


class VerifierError(ValueError):
    """Base class of every error the verifier raises."""


class CardError(VerifierError):
    """A card's text (or number) is not a card."""


class DealNumberError(VerifierError):
    """A Microsoft deal number is not an int in 1..8,589,934,591."""


class VariantError(VerifierError):
    """A variant name or field value is not allowed."""


class BoardError(VerifierError):
    """Board text or a position is malformed (bad line, duplicated or missing card)."""


class NotationError(VerifierError):
    """A move is not valid standard notation."""


class IllegalMoveError(VerifierError):
    """A well-formed move is not allowed in the position it is tried in.

    ``reason`` is the bare explanation (e.g. ``"7S cannot go onto 9H"``),
    ``move_text`` the move in notation.
    """

    def __init__(self, move_text: str, reason: str) -> None:
        super().__init__(f"move '{move_text}': {reason}")
        self.move_text = move_text
        self.reason = reason


# ---------------------------------------------------------------------------
# Cards
# ---------------------------------------------------------------------------

RANKS: Final = "A23456789TJQK"
SUITS: Final = "CDHS"
_SUIT_NAMES: Final = ("clubs", "diamonds", "hearts", "spades")
_CARD_RE: Final = re.compile(r"^(10|[A2-9TJQK])([CDHS])$")


def card_rank(card: int) -> int:
    """Rank 0..12 (A=0 .. K=12) of ``card``.

    >>> card_rank(parse_card("KS"))
    12
    """
    return card // 4


def card_suit(card: int) -> int:
    """Suit 0..3 (C, D, H, S) of ``card``.

    >>> card_suit(parse_card("AH"))
    2
    """
    return card % 4


def is_red(card: int) -> bool:
    """True for diamonds and hearts.

    >>> is_red(parse_card("QD")), is_red(parse_card("QS"))
    (True, False)
    """
    return card_suit(card) in (1, 2)


def parse_card(text: str) -> int:
    """Parse a card such as ``TD``, ``10d`` or ``as`` into 0..51.

    >>> parse_card("AC"), parse_card("10D"), parse_card("ks")
    (0, 37, 51)
    >>> parse_card("1D")
    Traceback (most recent call last):
    ...
    analyzer.verifier.CardError: '1D' is not a card (rank A23456789TJQK or 10, suit CDHS)
    """
    if not isinstance(text, str):
        raise CardError(f"{text!r} is not a card: expected a string")
    match = _CARD_RE.match(text.strip().upper())
    if match is None:
        raise CardError(f"{text!r} is not a card (rank A23456789TJQK or 10, suit CDHS)")
    rank_text, suit_text = match.groups()
    rank = 9 if rank_text == "10" else RANKS.index(rank_text)
    return rank * 4 + SUITS.index(suit_text)


def format_card(card: int) -> str:
    """Write a card in two characters (``T`` for ten).

    >>> format_card(37), format_card(0)
    ('TD', 'AC')
    """
    if isinstance(card, bool) or not isinstance(card, int) or not 0 <= card < 52:
        raise CardError(f"{card!r} is not a card number (0..51)")
    return RANKS[card_rank(card)] + SUITS[card_suit(card)]


# ---------------------------------------------------------------------------
# Microsoft deals
# ---------------------------------------------------------------------------

MAX_DEAL_NUMBER: Final = 2**33 - 1
"""FreeCell Pro's numbering runs 1..8,589,934,591 (REFERENCE "Microsoft deal numbers")."""


def check_deal_number(deal_number: object) -> int:
    """Return ``deal_number`` if it is a valid Microsoft deal number, else raise.

    >>> check_deal_number(617)
    617
    >>> check_deal_number(0)
    Traceback (most recent call last):
    ...
    analyzer.verifier.DealNumberError: deal number 0 is out of range 1..8589934591
    """
    # bool is an int subclass; True is not a deal number.
    if isinstance(deal_number, bool) or not isinstance(deal_number, int):
        raise DealNumberError(
            f"deal number must be an int, got {deal_number!r} ({type(deal_number).__name__})"
        )
    if not 1 <= deal_number <= MAX_DEAL_NUMBER:
        raise DealNumberError(
            f"deal number {deal_number} is out of range 1..{MAX_DEAL_NUMBER}"
        )
    return deal_number


def _microsoft_draws(deal_number: int) -> Iterator[int]:
    """The generator's draws for ``deal_number`` (REFERENCE "Microsoft deal numbers").

    The state is kept modulo 2**32.  For the two branches below 2**32 this is
    the same as REFERENCE's ``mod 2**31``, because a draw only reads bits
    16..30 and the low bits of an LCG never depend on the high ones.  The third
    branch reads bit 31 (``& 0xffff``), and REFERENCE's own test vector for deal
    6,000,000,000 only comes out with the 32-bit state FreeCell Pro uses.
    """
    state = deal_number - 2**32 if deal_number >= 2**32 else deal_number
    while True:
        state = (214013 * state + 2531011) % 2**32
        if deal_number < 2**31:
            yield (state >> 16) & 0x7FFF
        elif deal_number < 2**32:
            yield ((state >> 16) & 0x7FFF) | 0x8000
        else:
            yield ((state >> 16) & 0xFFFF) + 1


def microsoft_deal_order(deal_number: int) -> tuple[int, ...]:
    """The 52 cards of Microsoft deal ``deal_number`` in the order they are dealt.

    >>> [format_card(c) for c in microsoft_deal_order(1)[:8]]
    ['JD', '2D', '9H', 'JC', '5D', '7H', '7C', '5H']
    """
    number = check_deal_number(deal_number)
    deck = list(range(52))  # AC, AD, AH, AS, 2C, ... KS
    dealt: list[int] = []
    draws = _microsoft_draws(number)
    while deck:
        j = next(draws) % len(deck)
        dealt.append(deck[j])
        deck[j] = deck[-1]  # move the last card into slot j, shrink by one
        deck.pop()
    return tuple(dealt)


# ---------------------------------------------------------------------------
# Variants (DESIGN.md "Variant (rules as data)")
# ---------------------------------------------------------------------------

BUILD_RULES: Final = ("alternate", "suit", "any")
EMPTY_RULES: Final = ("any", "kings", "none")
MOVE_RULES: Final = ("single", "product", "doubling", "unlimited")


def _check_int(name: str, value: object, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise VariantError(f"{name} must be an int, got {value!r}")
    if not low <= value <= high:
        raise VariantError(f"{name} must be in {low}..{high}, got {value}")


@dataclass(frozen=True)
class VerifierVariant:
    """Rules as data, with the fields of DESIGN.md's Variant table.

    >>> VerifierVariant(cells=5).cells
    5
    >>> VerifierVariant(move_rule="fast")
    Traceback (most recent call last):
    ...
    analyzer.verifier.VariantError: move_rule must be one of single, product, doubling, unlimited; got 'fast'
    """

    name: str = "custom"
    cells: int = 4
    columns: int = 8
    build: str = "alternate"
    empty: str = "any"
    move_rule: str = "product"
    dealt_to_cells: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise VariantError(f"name must be a non-empty string, got {self.name!r}")
        _check_int("cells", self.cells, 0, 10)
        _check_int("columns", self.columns, 1, 10)
        for field_name, allowed in (
            ("build", BUILD_RULES),
            ("empty", EMPTY_RULES),
            ("move_rule", MOVE_RULES),
        ):
            value = getattr(self, field_name)
            if value not in allowed:
                raise VariantError(
                    f"{field_name} must be one of {', '.join(allowed)}; got {value!r}"
                )
        _check_int("dealt_to_cells", self.dealt_to_cells, 0, self.cells)


PRESETS: Final[dict[str, VerifierVariant]] = {
    "freecell": VerifierVariant("freecell", 4, 8, "alternate", "any", "product", 0),
    "bakers_game": VerifierVariant("bakers_game", 4, 8, "suit", "any", "product", 0),
    "eight_off": VerifierVariant("eight_off", 8, 8, "suit", "kings", "product", 4),
    "forecell": VerifierVariant("forecell", 4, 8, "alternate", "kings", "product", 4),
    "seahaven_towers": VerifierVariant(
        "seahaven_towers", 4, 10, "suit", "kings", "product", 2
    ),
    # fc-solve's and PySol's "relaxed": multi-card moves not limited by free
    # space.  (Seed 002's "any card in empty columns" is plain FreeCell.)
    "relaxed_freecell": VerifierVariant(
        "relaxed_freecell", 4, 8, "alternate", "any", "unlimited", 0
    ),
}


def make_variant(
    preset: str = "freecell", *, cells: int | None = None, move_rule: str | None = None
) -> VerifierVariant:
    """A preset, optionally with another number of cells or move rule.

    The name stays the preset's name (results record ``cells`` and
    ``move_rule`` separately).

    >>> make_variant("freecell", cells=5, move_rule="doubling")
    VerifierVariant(name='freecell', cells=5, columns=8, build='alternate', empty='any', move_rule='doubling', dealt_to_cells=0)
    """
    if preset not in PRESETS:
        raise VariantError(f"unknown variant {preset!r}; presets: {', '.join(PRESETS)}")
    variant = PRESETS[preset]
    changes: dict[str, object] = {}
    if cells is not None:
        changes["cells"] = cells
    if move_rule is not None:
        changes["move_rule"] = move_rule
    return dataclasses.replace(variant, **changes)  # type: ignore[arg-type]


def resolve_variant(variant: VerifierVariant | str) -> VerifierVariant:
    """Accept a variant or a preset name.

    >>> resolve_variant("bakers_game").build
    'suit'
    """
    if isinstance(variant, VerifierVariant):
        return variant
    if isinstance(variant, str):
        return make_variant(variant)
    raise VariantError(f"expected a VerifierVariant or a preset name, got {variant!r}")


# ---------------------------------------------------------------------------
# Positions and board text (DESIGN.md "Board text (fc-solve format)")
# ---------------------------------------------------------------------------

BOARD_FOUNDATION_ORDER: Final = (2, 0, 1, 3)
"""Suits in the order the ``Foundations:`` line writes them: H C D S."""

# Foundation heights are written the way fc-solve writes them: 0, then the
# rank of the top card (A 2 .. 9 T J Q K).  Reading also accepts 0..13 and '-'.
_FOUNDATION_TEXT: Final = ("0", *tuple(RANKS))


def _parse_foundation_height(text: str, line: str) -> int:
    value = text.upper()
    if value in ("-", "0"):
        return 0
    if value.isdigit():
        height = int(value)
        if 0 <= height <= 13:
            return height
    elif value in RANKS:
        return RANKS.index(value) + 1
    raise BoardError(f"bad foundation height {text!r} in line {line!r}")


@dataclass(frozen=True)
class Position:
    """A FreeCell position: columns (deepest card first), cells, foundations.

    ``foundations[s]`` is how many cards of suit ``s`` (C D H S order) are on
    their foundation.  Every one of the 52 cards must be somewhere exactly
    once, which ``__post_init__`` checks.

    >>> Position.from_text("Foundations: H-K C-K D-K S-Q\\nFreecells:  KS  -\\n:\\n").cells
    (51, None)
    >>> Position.from_text("Foundations: H-K C-K D-K S-Q\\n: KS KS\\n")
    Traceback (most recent call last):
    ...
    analyzer.verifier.BoardError: card KS appears twice: in column 1 and in column 1
    """

    columns: tuple[tuple[int, ...], ...]
    cells: tuple[int | None, ...]
    foundations: tuple[int, int, int, int] = (0, 0, 0, 0)

    def __post_init__(self) -> None:
        if not isinstance(self.columns, tuple) or not all(
            isinstance(column, tuple) for column in self.columns
        ):
            raise BoardError("columns must be a tuple of tuples of cards")
        if not isinstance(self.cells, tuple):
            raise BoardError("cells must be a tuple")
        # Notation has letters for at most 10 cells and digits for 10 columns.
        if len(self.cells) > len(CELL_LETTERS):
            raise BoardError(f"{len(self.cells)} cells; at most {len(CELL_LETTERS)}")
        if not 1 <= len(self.columns) <= len(COLUMN_DIGITS):
            raise BoardError(
                f"{len(self.columns)} columns; need 1..{len(COLUMN_DIGITS)}"
            )
        if not isinstance(self.foundations, tuple) or len(self.foundations) != 4:
            raise BoardError(f"foundations must be 4 heights, got {self.foundations!r}")
        for height in self.foundations:
            if (
                isinstance(height, bool)
                or not isinstance(height, int)
                or not 0 <= height <= 13
            ):
                raise BoardError(f"foundation height {height!r} is not in 0..13")
        where: dict[int, str] = {}
        for suit, height in enumerate(self.foundations):
            for rank in range(height):
                where[rank * 4 + suit] = "on the foundation"
        placed: list[tuple[int | None, str]] = [
            (card, f"in column {COLUMN_DIGITS[index]}")
            for index, column in enumerate(self.columns)
            for card in column
        ]
        placed += [
            (card, f"in cell {CELL_LETTERS[index]}")
            for index, card in enumerate(self.cells)
        ]
        for card, place in placed:
            if card is None:
                if place.startswith("in column"):
                    raise BoardError(f"None {place}")
                continue
            format_card(card)  # raises CardError (a ValueError) for a non-card
            if card in where:
                raise BoardError(
                    f"card {format_card(card)} appears twice: {where[card]} and {place}"
                )
            where[card] = place
        for card in range(52):
            if card not in where:
                raise BoardError(f"card {format_card(card)} is missing")

    # -- reading and writing -------------------------------------------------

    @classmethod
    def from_text(
        cls, text: str, variant: VerifierVariant | str | None = None
    ) -> Position:
        """Read fc-solve board text (DESIGN.md "Board text").

        ``Foundations:`` and ``Freecells:`` lines are optional; foundation
        entries come in any order with ``0``/``-`` for empty (rank letters
        as fc-solve writes them, or heights 0..13); column lines may omit the
        leading ``: `` (an empty column must be written ``:``); blank lines are
        skipped.  Cells: listed in order with ``-`` for an empty one, or in
        fc-solve's fixed-width form (4 characters per cell, blank when empty).
        With a ``variant`` the position gets exactly ``variant.cells`` cells
        (missing trailing cells are empty) and must have ``variant.columns``
        columns.  Without one, the cells are those listed (4 if there is no
        ``Freecells:`` line).

        >>> p = Position.from_text(deal_position(24).to_text())
        >>> p == deal_position(24)
        True
        """
        if not isinstance(text, str):
            raise BoardError(f"board text must be a string, got {text!r}")
        wanted = resolve_variant(variant) if variant is not None else None
        foundations: list[int] | None = None
        cells: list[int | None] | None = None
        columns: list[tuple[int, ...]] = []
        for raw_line in text.splitlines():
            line = raw_line.rstrip()
            if not line.strip():
                continue
            stripped = line.strip()
            if stripped.lower().startswith("foundations:"):
                if foundations is not None:
                    raise BoardError(f"second Foundations line {line!r}")
                foundations = cls._read_foundations(stripped)
            elif stripped.lower().startswith("freecells:"):
                if cells is not None:
                    raise BoardError(f"second Freecells line {line!r}")
                cells = cls._read_cells(raw_line.split(":", 1)[1].rstrip("\r\n"), line)
            else:
                body = stripped.removeprefix(":")
                try:
                    columns.append(tuple(parse_card(token) for token in body.split()))
                except CardError as error:
                    raise BoardError(f"bad column line {line!r}: {error}") from None
        if cells is None:
            cells = [None] * (wanted.cells if wanted is not None else 4)
        if wanted is not None:
            if len(columns) != wanted.columns:
                raise BoardError(
                    f"board has {len(columns)} columns but variant {wanted.name!r} "
                    f"has {wanted.columns}"
                )
            extra = cells[wanted.cells :]
            if any(card is not None for card in extra):
                raise BoardError(
                    f"board has {sum(c is not None for c in cells)} cards in cells "
                    f"beyond the variant's {wanted.cells} cells"
                )
            cells = cells[: wanted.cells] + [None] * (wanted.cells - len(cells))
        height = foundations if foundations is not None else [0, 0, 0, 0]
        return cls(
            tuple(columns), tuple(cells), (height[0], height[1], height[2], height[3])
        )

    @staticmethod
    def _read_foundations(line: str) -> list[int]:
        heights: dict[int, int] = {}
        for token in line.split(":", 1)[1].split():
            match = re.fullmatch(r"([CDHScdhs])-(\S+)", token)
            if match is None:
                raise BoardError(f"bad foundation entry {token!r} in line {line!r}")
            suit = SUITS.index(match.group(1).upper())
            if suit in heights:
                raise BoardError(f"suit {SUITS[suit]} given twice in line {line!r}")
            heights[suit] = _parse_foundation_height(match.group(2), line)
        return [heights.get(suit, 0) for suit in range(4)]

    @staticmethod
    def _read_cells(rest: str, line: str) -> list[int | None]:
        tokens = rest.split()
        slots = [rest[i : i + 4] for i in range(0, len(rest), 4)]
        fixed_width = "-" not in tokens and all(
            slot.strip() == "" or re.fullmatch(r" {1,2}\S{2,3}", slot) is not None
            for slot in slots
        )
        try:
            if fixed_width:  # fc-solve's own output: "  JD      8H"
                return [parse_card(slot) if slot.strip() else None for slot in slots]
            return [None if token == "-" else parse_card(token) for token in tokens]
        except CardError as error:
            raise BoardError(f"bad Freecells line {line!r}: {error}") from None

    def to_text(self) -> str:
        """Write fc-solve board text; ``from_text`` reads it back exactly.

        >>> print(deal_position(24, "forecell").to_text(), end="")
        Foundations: H-0 C-0 D-0 S-0
        Freecells:  2H  QD  3D  AS
        : 4C 2C 9C 8C QS 4S
        : 5H QH 3C AC 3H 4H
        : QC 9S 6H 9H 3S KS
        : 5D 2S JC 5C JH 6D
        : 2D KD TH TC TD 8D
        : 7H JS KH TS KC 7C
        : AH 5S 6S AD 8H JD
        : 7S 6C 7D 4D 8S 9D
        """
        foundations = " ".join(
            f"{SUITS[suit]}-{_FOUNDATION_TEXT[self.foundations[suit]]}"
            for suit in BOARD_FOUNDATION_ORDER
        )
        cells = "".join(
            "  " + ("-" if card is None else format_card(card)) for card in self.cells
        )
        lines = [f"Foundations: {foundations}", f"Freecells:{cells}"]
        for column in self.columns:
            lines.append(
                ": " + " ".join(format_card(c) for c in column) if column else ":"
            )
        return "\n".join(lines) + "\n"

    def __str__(self) -> str:
        return self.to_text()

    def is_won(self) -> bool:
        """True when all 52 cards are on the foundations.

        >>> deal_position(1).is_won()
        False
        """
        return self.foundations == (13, 13, 13, 13)

    def empty_cells(self) -> int:
        """Number of empty cells."""
        return sum(card is None for card in self.cells)

    def empty_columns(self) -> int:
        """Number of empty columns."""
        return sum(not column for column in self.columns)


def deal_position(
    deal_number: int, variant: VerifierVariant | str = "freecell"
) -> Position:
    """The start position of a Microsoft deal under ``variant``'s layout.

    DESIGN.md: the first ``52 - dealt_to_cells`` dealt cards go round-robin to
    the columns (card ``i`` to column ``i % columns``, each growing upwards),
    the last ``dealt_to_cells`` to cells 0, 1, ... in order.

    >>> [format_card(c) for c in deal_position(1).columns[7]]
    ['5H', '3H', '3C', '7S', '7D', 'TC']
    >>> [len(column) for column in deal_position(1, "seahaven_towers").columns]
    [5, 5, 5, 5, 5, 5, 5, 5, 5, 5]
    """
    rules = resolve_variant(variant)
    order = microsoft_deal_order(deal_number)
    to_columns = 52 - rules.dealt_to_cells
    columns: list[list[int]] = [[] for _ in range(rules.columns)]
    for i, card in enumerate(order[:to_columns]):
        columns[i % rules.columns].append(card)
    cells: list[int | None] = list(order[to_columns:])
    cells += [None] * (rules.cells - len(cells))
    return Position(tuple(tuple(column) for column in columns), tuple(cells))


# ---------------------------------------------------------------------------
# Moves and notation (DESIGN.md "Moves and notation")
# ---------------------------------------------------------------------------

COLUMN_DIGITS: Final = "1234567890"
"""Column ``i`` is written ``COLUMN_DIGITS[i]``: 1..9, then 0 for the 10th."""
CELL_LETTERS: Final = "abcdefgijk"
"""Cell ``i`` is written ``CELL_LETTERS[i]``; ``h`` is skipped (it is the foundation)."""
FOUNDATION_LETTER: Final = "h"

LocationKind = Literal["column", "cell", "foundation"]
_MOVE_RE: Final = re.compile(r"([0-9a-gi-k]|h)([0-9a-gi-k]|h)(?:v([0-9]{1,6}))?")


@dataclass(frozen=True)
class Location:
    """A column, a cell (0-based ``index``) or the foundations.

    >>> Location("cell", 7).notation()
    'i'
    """

    kind: LocationKind
    index: int = 0

    def notation(self) -> str:
        if self.kind == "column":
            return COLUMN_DIGITS[self.index]
        if self.kind == "cell":
            return CELL_LETTERS[self.index]
        return FOUNDATION_LETTER

    @classmethod
    def from_notation(cls, char: str) -> Location:
        if char == FOUNDATION_LETTER:
            return cls("foundation", 0)
        if char in COLUMN_DIGITS:
            return cls("column", COLUMN_DIGITS.index(char))
        if char in CELL_LETTERS:
            return cls("cell", CELL_LETTERS.index(char))
        raise NotationError(f"{char!r} is not a location (1-9, 0, {CELL_LETTERS}, h)")


@dataclass(frozen=True)
class Move:
    """A move: source, destination and, for column-to-column moves, an
    optional card count (the ``v<k>`` suffix).

    >>> Move.parse("36v2")
    Move.parse('36v2')
    >>> Move.parse("3h").dest
    Location(kind='foundation', index=0)
    """

    source: Location
    dest: Location
    count: int | None = None

    @classmethod
    def parse(cls, text: str) -> Move:
        """Parse standard notation (see :func:`parse_move`)."""
        return parse_move(text)

    def __str__(self) -> str:
        suffix = "" if self.count is None else f"v{self.count}"
        return self.source.notation() + self.dest.notation() + suffix

    def __repr__(self) -> str:
        return f"Move.parse({str(self)!r})"


def _short(text: str, limit: int = 20) -> str:
    """`text` quoted, cut to `limit` characters with its length named, so
    that a message never echoes a huge token.

    >>> _short("8h"), _short("x" * 100)
    ("'8h'", "'xxxxxxxxxxxxxxxxxxxx'... (100 characters)")
    """
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}... ({len(text):,} characters)"


def parse_move(text: str) -> Move:
    """Parse one move: two location characters and an optional ``v<k>``.

    Letters are case-insensitive.  ``v<k>`` is allowed only between columns.

    >>> str(parse_move("8H")), str(parse_move("0a")), str(parse_move("15v3"))
    ('8h', '0a', '15v3')
    >>> parse_move("3hv2")
    Traceback (most recent call last):
    ...
    analyzer.verifier.NotationError: bad move '3hv2': a card count v<k> is only for column-to-column moves
    """
    if not isinstance(text, str):
        raise NotationError(f"a move must be a string, got {text!r}")
    match = _MOVE_RE.fullmatch(text.strip().lower())
    if match is None:
        raise NotationError(
            f"bad move {_short(text)}: expected two of 1-9, 0 (columns), {CELL_LETTERS} (cells), "
            "h (foundation), optionally followed by v<count>"
        )
    source = Location.from_notation(match.group(1))
    dest = Location.from_notation(match.group(2))
    count: int | None = None
    if match.group(3) is not None:
        if source.kind != "column" or dest.kind != "column":
            raise NotationError(
                f"bad move {_short(text)}: a card count v<k> is only for column-to-column moves"
            )
        count = int(match.group(3))
        if count < 1:
            raise NotationError(f"bad move {_short(text)}: the card count must be at least 1")
    return Move(source, dest, count)


def split_moves(moves: str | Sequence[str]) -> list[str]:
    """A solution as a list of move texts (a string is split on whitespace).

    >>> split_moves(" 3a  8h\\n2h ")
    ['3a', '8h', '2h']
    """
    if isinstance(moves, str):
        return moves.split()
    return [str(move).strip() for move in moves]


# ---------------------------------------------------------------------------
# Rules
# ---------------------------------------------------------------------------


def can_build_on(card: int, target: int, build: str) -> bool:
    """Whether ``card`` may go onto ``target`` at the top of a column.

    Always one rank lower; ``alternate``: opposite colour, ``suit``: same
    suit, ``any``: any suit.

    >>> can_build_on(parse_card("7S"), parse_card("8H"), "alternate")
    True
    >>> can_build_on(parse_card("7S"), parse_card("8S"), "alternate")
    False
    """
    if card_rank(card) + 1 != card_rank(target):
        return False
    if build == "alternate":
        return is_red(card) != is_red(target)
    if build == "suit":
        return card_suit(card) == card_suit(target)
    if build == "any":
        return True
    raise VariantError(f"unknown build rule {build!r}")


def top_run_length(column: Sequence[int], build: str) -> int:
    """Length of the longest run at the top of ``column`` (0 if empty).

    >>> top_run_length([parse_card(c) for c in ("2C", "9H", "8S", "7D")], "alternate")
    3
    """
    if not column:
        return 0
    length = 1
    while length < len(column) and can_build_on(
        column[-length], column[-length - 1], build
    ):
        length += 1
    return length


def _fills_empty(card: int, empty: str) -> bool:
    if empty == "any":
        return True
    if empty == "kings":
        return card_rank(card) == 12
    return False


def empty_helper_columns(
    position: Position, variant: VerifierVariant, source: int, dest: int
) -> int:
    """DESIGN.md's ``h``: empty columns other than ``source`` and ``dest``, and
    0 when ``variant.empty != "any"`` (a helper column must accept any card).

    >>> p = Position.from_text(
    ...     ": AC 2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC\\n: AD 2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD\\n"
    ...     ": AH 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH\\n: AS 2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS\\n"
    ...     ":\\n:\\n:\\n:\\n")
    >>> empty_helper_columns(p, make_variant("freecell"), 0, 4)
    3
    >>> empty_helper_columns(p, make_variant("forecell"), 0, 4)
    0
    """
    if variant.empty != "any":
        return 0
    return sum(
        1
        for index, column in enumerate(position.columns)
        if not column and index not in (source, dest)
    )


def move_limit(
    position: Position, variant: VerifierVariant, source: int, dest: int
) -> int | None:
    """Most cards one column-to-column move may carry (``None``: no limit).

    DESIGN.md "Multi-card move limit", with ``f`` empty cells and ``h`` from
    :func:`empty_helper_columns`: ``single`` 1, ``product`` ``(1+f)*(1+h)``,
    ``doubling`` ``(1+f)*2**h``, ``unlimited`` none.

    >>> move_limit(deal_position(1), make_variant("freecell"), 0, 1)
    5
    """
    free = position.empty_cells()
    helpers = empty_helper_columns(position, variant, source, dest)
    if variant.move_rule == "single":
        return 1
    if variant.move_rule == "product":
        return (1 + free) * (1 + helpers)
    if variant.move_rule == "doubling":
        return (1 + free) * (1 << helpers)  # (1 + f) * 2**h
    if variant.move_rule == "unlimited":
        return None
    raise VariantError(f"unknown move rule {variant.move_rule!r}")


def _check_shape(position: Position, variant: VerifierVariant) -> None:
    if len(position.columns) != variant.columns or len(position.cells) != variant.cells:
        raise BoardError(
            f"position has {len(position.columns)} columns and {len(position.cells)} cells "
            f"but variant {variant.name!r} has {variant.columns} and {variant.cells}"
        )


def _cards(count: int) -> str:
    return "1 card" if count == 1 else f"{count} cards"


def _describe_location(location: Location) -> str:
    if location.kind == "column":
        return f"column {location.notation()}"
    if location.kind == "cell":
        return f"cell {location.notation()}"
    return "the foundation"


def _exceeds(count: int, limit: int | None, variant: VerifierVariant) -> str | None:
    if limit is not None and count > limit:
        return (
            f"run of {count} cards exceeds the {variant.move_rule}-rule limit {limit}"
        )
    return None


def _why_not_empty(card: int, variant: VerifierVariant) -> str:
    if variant.empty == "none":
        return f"empty columns cannot be filled in variant {variant.name!r}"
    return f"only a king may fill an empty column, not {format_card(card)}"


def _count_or_reason(
    position: Position, move: Move, variant: VerifierVariant
) -> int | str:
    """How many cards ``move`` carries, or why it is illegal."""
    source, dest = move.source, move.dest
    for location in (source, dest):
        if location.kind == "column" and not 0 <= location.index < variant.columns:
            return (
                f"there is no column {location.notation()} ({variant.columns} columns)"
            )
        if location.kind == "cell" and not 0 <= location.index < variant.cells:
            return f"there is no cell {location.notation()} ({variant.cells} cells)"
    if source.kind == "foundation":
        return "cards never leave the foundations"
    if source == dest:
        return f"{_describe_location(source)} is both source and destination"
    if move.count is not None and (source.kind != "column" or dest.kind != "column"):
        return "a card count applies only to column-to-column moves"

    # The card(s) to move.
    if source.kind == "cell":
        held = position.cells[source.index]
        if held is None:
            return f"cell {source.notation()} is empty"
        card = held
        source_column: tuple[int, ...] = ()
    else:
        source_column = position.columns[source.index]
        if not source_column:
            return f"column {source.notation()} is empty"
        card = source_column[-1]
    name = format_card(card)

    if dest.kind == "foundation":
        height = position.foundations[card_suit(card)]
        if height == card_rank(card):
            return 1
        needs = (
            "is complete"
            if height == 13
            else f"needs {RANKS[height]}{SUITS[card_suit(card)]}"
        )
        return f"{name} cannot go to the foundation (the {_SUIT_NAMES[card_suit(card)]} foundation {needs})"

    if dest.kind == "cell":
        occupant = position.cells[dest.index]
        if occupant is not None:
            if position.empty_cells() == 0:
                return f"no free cell (cell {dest.notation()} holds {format_card(occupant)})"
            return (
                f"cell {dest.notation()} is not free (it holds {format_card(occupant)})"
            )
        return 1

    dest_column = position.columns[dest.index]
    if source.kind == "cell":
        if dest_column:
            if can_build_on(card, dest_column[-1], variant.build):
                return 1
            return f"{name} cannot go onto {format_card(dest_column[-1])}"
        return 1 if _fills_empty(card, variant.empty) else _why_not_empty(card, variant)

    # Column to column: a run of the top k cards.
    run = top_run_length(source_column, variant.build)
    limit = move_limit(position, variant, source.index, dest.index)
    if dest_column:
        target = dest_column[-1]
        fitting = [
            k
            for k in range(1, run + 1)
            if can_build_on(source_column[-k], target, variant.build)
        ]
        if not fitting:
            if run == 1:
                return f"{name} cannot go onto {format_card(target)}"
            return (
                f"no card of the run {format_card(source_column[-run])}..{name} "
                f"in column {source.notation()} can go onto {format_card(target)}"
            )
        (count,) = fitting  # ranks fall by one along a run, so at most one fits
        if move.count is not None and move.count != count:
            return (
                f"the run that fits onto {format_card(target)} has {_cards(count)}, "
                f"not {move.count}"
            )
        return _exceeds(count, limit, variant) or count

    # Column to an empty column.
    if variant.empty == "none":
        return _why_not_empty(card, variant)
    if move.count is not None:
        count = move.count
        if count > run:
            return f"column {source.notation()} has a run of {_cards(run)}, fewer than {count}"
        bottom = source_column[-count]
        if not _fills_empty(bottom, variant.empty):
            return _why_not_empty(bottom, variant)
        return _exceeds(count, limit, variant) or count
    # Bare notation: the longest run allowed.
    fits = [
        k for k in range(1, run + 1) if _fills_empty(source_column[-k], variant.empty)
    ]
    if not fits:
        if run == 1:
            return _why_not_empty(card, variant)
        return (
            "only a king may fill an empty column, and the run "
            f"{format_card(source_column[-run])}..{name} in column {source.notation()} has none"
        )
    allowed = [k for k in fits if limit is None or k <= limit]
    if not allowed:  # only under ``kings``: the king sits deeper than the limit
        return f"run of {min(fits)} cards exceeds the {variant.move_rule}-rule limit {limit}"
    return max(allowed)


def check_move(
    position: Position, move: Move | str, variant: VerifierVariant | str
) -> int:
    """Return how many cards ``move`` carries, or raise :class:`IllegalMoveError`.

    >>> check_move(deal_position(1), "8a", "freecell")
    1
    >>> check_move(deal_position(1), "81", "freecell")
    Traceback (most recent call last):
    ...
    analyzer.verifier.IllegalMoveError: move '81': TC cannot go onto 6S
    """
    rules = resolve_variant(variant)
    _check_shape(position, rules)
    parsed = parse_move(move) if isinstance(move, str) else move
    result = _count_or_reason(position, parsed, rules)
    if isinstance(result, str):
        raise IllegalMoveError(str(parsed), result)
    return result


def apply_move(
    position: Position, move: Move | str, variant: VerifierVariant | str
) -> Position:
    """The position after a legal ``move``; raises :class:`IllegalMoveError` otherwise.

    >>> after = apply_move(deal_position(1), "8a", "freecell")
    >>> format_card(after.cells[0] or 0), after.columns[7][-1] == parse_card("7D")
    ('TC', True)
    """
    parsed = parse_move(move) if isinstance(move, str) else move
    count = check_move(position, parsed, variant)
    columns = [list(column) for column in position.columns]
    cells = list(position.cells)
    foundations = list(position.foundations)

    source, dest = parsed.source, parsed.dest
    if source.kind == "cell":
        held = cells[source.index]
        assert held is not None  # check_move guarantees it
        moving = [held]
        cells[source.index] = None
    else:
        moving = columns[source.index][-count:]
        del columns[source.index][-count:]

    if dest.kind == "foundation":
        foundations[card_suit(moving[0])] += 1
    elif dest.kind == "cell":
        cells[dest.index] = moving[0]
    else:
        columns[dest.index].extend(moving)
    return Position(
        tuple(tuple(column) for column in columns),
        tuple(cells),
        (foundations[0], foundations[1], foundations[2], foundations[3]),
    )


def legal_moves(
    position: Position,
    variant: VerifierVariant | str,
    *,
    include_cell_to_cell: bool = False,
) -> list[str]:
    """Every legal move of ``position`` in notation, with no pruning.

    Order: sources columns then cells; for each, the foundation, then columns,
    then cells.  Every empty cell is its own destination.  A column-to-empty-
    column move is listed for every allowed length: bare for the longest,
    ``v<k>`` for shorter ones.  Moves from a cell to another cell are legal
    but change nothing but the cell's letter; they are listed only with
    ``include_cell_to_cell=True``.

    >>> moves = legal_moves(deal_position(1), "freecell")
    >>> len(moves), moves[:5]
    (32, ['1a', '1b', '1c', '1d', '2a'])
    """
    rules = resolve_variant(variant)
    _check_shape(position, rules)
    sources = [Location("column", i) for i in range(rules.columns)]
    sources += [Location("cell", i) for i in range(rules.cells)]
    dests = [Location("foundation", 0)]
    dests += [Location("column", i) for i in range(rules.columns)]
    dests += [Location("cell", i) for i in range(rules.cells)]
    found: list[str] = []
    for source in sources:
        for dest in dests:
            if source == dest or (
                source.kind == "cell"
                and dest.kind == "cell"
                and not include_cell_to_cell
            ):
                continue
            move = Move(source, dest)
            result = _count_or_reason(position, move, rules)
            if isinstance(result, str):
                continue
            found.append(str(move))
            if (
                source.kind == "column"
                and dest.kind == "column"
                and not position.columns[dest.index]
            ):
                shorter = (Move(source, dest, k) for k in range(1, result))
                found += [
                    str(m)
                    for m in shorter
                    if not isinstance(_count_or_reason(position, m, rules), str)
                ]
    return found


# ---------------------------------------------------------------------------
# Replay
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ReplayReport:
    """The outcome of :func:`replay`.

    ``won``: every move was legal and the last position is won.
    ``moves_applied``: legal moves applied before stopping.
    On the first illegal move: ``illegal_index`` (1-based), ``illegal_move``,
    ``reason`` (``"move 12 '3a': no free cell ..."``) and ``position_before``
    (board text).  A legal replay that does not win has ``reason``
    ``"all N moves legal but the game is not won"``.
    With ``max_visits``, a replay that reaches one position more often than
    that stops there: ``repeated_index`` is the move that did it, ``reason``
    names the move after which the position was first reached, and
    ``final_board`` is that position.
    """

    won: bool
    moves_applied: int
    total_moves: int
    variant: VerifierVariant
    final_board: str
    illegal_index: int | None = None
    illegal_move: str | None = None
    reason: str | None = None
    position_before: str | None = None
    repeated_index: int | None = None

    @property
    def move_rule(self) -> str:
        """The move rule the replay used."""
        return self.variant.move_rule


def _start_position(start: int | Position | str, variant: VerifierVariant) -> Position:
    if isinstance(start, Position):
        _check_shape(start, variant)
        return start
    if isinstance(start, str):
        return Position.from_text(start, variant)
    if isinstance(start, bool) or not isinstance(start, int):
        raise DealNumberError(
            f"start must be a deal number, a Position or board text, got {start!r}"
        )
    return deal_position(start, variant)


def _position_key(position: Position) -> bytes:
    """The position as a short exact key (a column ends with 255, an empty
    cell is 254): equal keys, equal positions."""
    out = bytearray()
    for column in position.columns:
        out += bytes(column)
        out.append(255)
    out += bytes(254 if card is None else card for card in position.cells)
    out += bytes(position.foundations)
    return bytes(out)


def _ordinal(n: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``4th`` ... ``11th``, ``21st``.

    >>> [_ordinal(n) for n in (1, 2, 3, 4, 11, 12, 21)]
    ['1st', '2nd', '3rd', '4th', '11th', '12th', '21st']
    """
    if 10 <= n % 100 <= 20:
        return f"{n}th"
    return f"{n}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def replay(
    start: int | Position | str,
    moves: str | Sequence[str],
    variant: VerifierVariant | str = "freecell",
    *,
    max_visits: int | None = None,
) -> ReplayReport:
    """Replay ``moves`` from ``start`` (deal number, Position or board text).

    Bad notation is reported like an illegal move; a bad start raises.
    With ``max_visits`` the replay stops, not won, at the move that reaches
    one position (the start included) for the ``max_visits + 1``-th time:
    a move list going round a cycle ends there instead of being replayed to
    its end. (Once is not enough: solutions do return to a position now and
    then, e.g. a card moved to a cell and straight back.) Positions are
    remembered only since the last foundation move (no later position can
    equal one from before it).

    >>> r = replay(1, "8a 81", "freecell")
    >>> r.won, r.moves_applied, r.illegal_index, r.reason
    (False, 1, 2, "move 2 '81': 7D cannot go onto 6S")
    >>> r = replay(1, "8a ab ba ab ba ab", "freecell", max_visits=2)
    >>> r.won, r.moves_applied, r.repeated_index
    (False, 5, 5)
    >>> r.reason
    "move 5 'ba' reaches the position after move 1 for the 3rd time (a cycle: the replay stops at a position's 3rd visit)"
    """
    rules = resolve_variant(variant)
    position = _start_position(start, rules)
    texts = split_moves(moves)
    # position key -> (the move after which it was first reached, visits)
    seen: dict[bytes, tuple[int, int]] = {_position_key(position): (0, 1)}
    for number, text in enumerate(texts, start=1):
        try:
            position_after = apply_move(position, parse_move(text), rules)
        except (NotationError, IllegalMoveError) as error:
            detail = error.reason if isinstance(error, IllegalMoveError) else str(error)
            return ReplayReport(
                won=False,
                moves_applied=number - 1,
                total_moves=len(texts),
                variant=rules,
                final_board=position.to_text(),
                illegal_index=number,
                illegal_move=text,
                reason=f"move {number} {_short(text)}: {detail}",
                position_before=position.to_text(),
            )
        if max_visits is not None:
            if sum(position_after.foundations) != sum(position.foundations):
                seen.clear()
            key = _position_key(position_after)
            first, visits = seen.get(key, (number, 0))
            seen[key] = (first, visits + 1)
            if visits + 1 > max_visits:
                where = "the start position" if first == 0 else f"the position after move {first}"
                nth = _ordinal(visits + 1)
                return ReplayReport(
                    won=False,
                    moves_applied=number,
                    total_moves=len(texts),
                    variant=rules,
                    final_board=position_after.to_text(),
                    reason=(
                        f"move {number} {_short(text)} reaches {where} for the {nth} time "
                        f"(a cycle: the replay stops at a position's {nth} visit)"
                    ),
                    repeated_index=number,
                )
        position = position_after
    won = position.is_won()
    return ReplayReport(
        won=won,
        moves_applied=len(texts),
        total_moves=len(texts),
        variant=rules,
        final_board=position.to_text(),
        reason=None if won else f"all {len(texts)} moves legal but the game is not won",
    )
