"""Tests of the independent verifier (``analyzer.verifier``), which needs no engine."""

from __future__ import annotations

import ast
import re
import sys
from collections import deque
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analyzer import verifier as v
from analyzer.verifier import (
    PRESETS,
    BoardError,
    CardError,
    DealNumberError,
    IllegalMoveError,
    Location,
    Move,
    NotationError,
    Position,
    VariantError,
    VerifierError,
    VerifierVariant,
    apply_move,
    check_move,
    deal_position,
    format_card,
    legal_moves,
    make_variant,
    microsoft_deal_order,
    move_limit,
    parse_card,
    parse_move,
    replay,
)

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
VERIFIER_SOURCE = ROOT / "analyzer" / "verifier.py"


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


def read_deal_vectors() -> dict[int, list[list[str]]]:
    """Parse tests/data/deal_vectors.txt: 'deal N', then one line per column."""
    vectors: dict[int, list[list[str]]] = {}
    current: list[list[str]] | None = None
    for line in (DATA / "deal_vectors.txt").read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            current = None
            continue
        if line.startswith("deal "):
            current = vectors.setdefault(int(line.split()[1]), [])
            continue
        assert current is not None, f"column line outside a deal: {line!r}"
        current.append(line.split())
    return vectors


def make_position(columns: list[str], cells: str = "", n_cells: int = 4) -> Position:
    """A position from column texts (deepest card first) and cell texts.

    Each suit's foundation holds every card below the lowest one placed, and
    the cards left over go to the column written ``*`` (deepest first, ranks
    descending per suit in turn); that column must be given when any are left.
    """
    placed = [
        parse_card(t) for column in columns if column != "*" for t in column.split()
    ]
    cell_cards: list[int | None] = [
        None if t == "-" else parse_card(t) for t in cells.split()
    ]
    placed += [c for c in cell_cards if c is not None]
    heights = []
    for suit in range(4):
        ranks = [v.card_rank(c) for c in placed if v.card_suit(c) == suit]
        heights.append(min(ranks) if ranks else 13)
    rest = sorted(
        (
            c
            for c in range(52)
            if c not in placed and v.card_rank(c) >= heights[v.card_suit(c)]
        ),
        key=lambda c: (v.card_suit(c), -v.card_rank(c)),
    )
    cols: list[tuple[int, ...]] = []
    for column in columns:
        if column == "*":
            cols.append(tuple(rest))
        else:
            cols.append(tuple(parse_card(t) for t in column.split()))
    cell_cards += [None] * (n_cells - len(cell_cards))
    return Position(
        tuple(cols), tuple(cell_cards), (heights[0], heights[1], heights[2], heights[3])
    )


def census(position: Position) -> list[int]:
    """Every card of the position, computed independently of __post_init__."""
    cards = [c for column in position.columns for c in column]
    cards += [c for c in position.cells if c is not None]
    cards += [
        rank * 4 + suit
        for suit in range(4)
        for rank in range(position.foundations[suit])
    ]
    return sorted(cards)


FREECELL = make_variant("freecell")
DOUBLING = make_variant("freecell", move_rule="doubling")


def reason_of(position: Position, move: str, variant: VerifierVariant | str) -> str:
    with pytest.raises(IllegalMoveError) as info:
        check_move(position, move, variant)
    return info.value.reason


# ---------------------------------------------------------------------------
# import hygiene (the doctests run under pytest --doctest-modules)
# ---------------------------------------------------------------------------


def test_verifier_never_imports_the_engine() -> None:
    source = VERIFIER_SOURCE.read_text()
    import_lines = [
        line for line in source.splitlines() if re.match(r"\s*(import|from)\s", line)
    ]
    assert import_lines and not [
        line for line in import_lines if "engine" in line or "analyzer" in line
    ]
    assert "importlib" not in source and "__import__" not in source
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "no relative imports"
            assert node.module is not None
            names = [node.module]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            assert node.func.id not in ("__import__", "exec", "eval")
            continue
        else:
            continue
        for name in names:
            top = name.split(".")[0]
            assert top == "__future__" or top in sys.stdlib_module_names, name


def test_errors_are_value_errors() -> None:
    for error in (
        BoardError,
        CardError,
        DealNumberError,
        IllegalMoveError,
        NotationError,
        VariantError,
    ):
        assert issubclass(error, VerifierError)
    assert issubclass(VerifierError, ValueError)


# ---------------------------------------------------------------------------
# cards
# ---------------------------------------------------------------------------


def test_card_encoding() -> None:
    assert [parse_card(t) for t in ("AC", "AD", "AH", "AS", "2C", "KS")] == [
        0,
        1,
        2,
        3,
        4,
        51,
    ]
    assert (
        parse_card("TD")
        == parse_card("10D")
        == parse_card("10d")
        == parse_card("td")
        == 37
    )
    assert [format_card(c) for c in range(52)] == [
        r + s for r in v.RANKS for s in v.SUITS
    ]
    for card in range(52):
        assert parse_card(format_card(card)) == card


@pytest.mark.parametrize("text", ["", "1D", "11D", "TX", "ADX", "A", "0S", "ZZ", "A C"])
def test_bad_cards(text: str) -> None:
    with pytest.raises(CardError, match="is not a card"):
        parse_card(text)


def test_format_card_rejects_non_cards() -> None:
    for bad in (-1, 52, True):
        with pytest.raises(CardError):
            format_card(bad)


# ---------------------------------------------------------------------------
# deals
# ---------------------------------------------------------------------------

VECTORS = read_deal_vectors()


def test_vector_file_has_all_reference_deals() -> None:
    assert set(VECTORS) == {1, 617, 11982, 24, 1234567, 3000000000, 6000000000}


@pytest.mark.parametrize("deal_number", sorted(VECTORS))
def test_deal_vectors(deal_number: int) -> None:
    position = deal_position(deal_number)
    assert [[format_card(c) for c in column] for column in position.columns] == VECTORS[
        deal_number
    ]
    assert position.cells == (None,) * 4
    assert position.foundations == (0, 0, 0, 0)


@pytest.mark.parametrize(
    "bad", [0, -1, -(2**31), 2**33, 2**40, 1.0, 1.5, "5", None, True, False, [1]]
)
def test_bad_deal_numbers(bad: object) -> None:
    with pytest.raises(DealNumberError) as info:
        microsoft_deal_order(bad)  # type: ignore[arg-type]
    assert repr(bad) in str(info.value) or str(bad) in str(info.value)


@pytest.mark.parametrize(
    "good", [1, 32000, 2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**33 - 1]
)
def test_deal_number_range_edges(good: int) -> None:
    order = microsoft_deal_order(good)
    assert sorted(order) == list(range(52))


def test_the_three_branches_differ() -> None:
    # Above 2**31 the draws get bit 15 set, so deal n + 2**31 is not deal n.
    assert microsoft_deal_order(5) != microsoft_deal_order(5 + 2**31)
    assert microsoft_deal_order(5) != microsoft_deal_order(5 + 2**32)


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_preset_layouts(name: str) -> None:
    variant = PRESETS[name]
    position = deal_position(617, variant)
    order = microsoft_deal_order(617)
    to_columns = 52 - variant.dealt_to_cells
    assert len(position.columns) == variant.columns
    assert len(position.cells) == variant.cells
    assert position.cells[: variant.dealt_to_cells] == order[to_columns:]
    assert all(c is None for c in position.cells[variant.dealt_to_cells :])
    for i, card in enumerate(order[:to_columns]):
        column = position.columns[i % variant.columns]
        assert column[i // variant.columns] == card
    lengths = {len(column) for column in position.columns}
    assert (
        lengths
        == {
            "freecell": {6, 7},
            "bakers_game": {6, 7},
            "eight_off": {6},
            "forecell": {6},
            "seahaven_towers": {5},
            "relaxed_freecell": {6, 7},
        }[name]
    )


# ---------------------------------------------------------------------------
# variants
# ---------------------------------------------------------------------------


def test_presets_match_design_table() -> None:
    table = {
        "freecell": (4, 8, "alternate", "any", "product", 0),
        "bakers_game": (4, 8, "suit", "any", "product", 0),
        "eight_off": (8, 8, "suit", "kings", "product", 4),
        "forecell": (4, 8, "alternate", "kings", "product", 4),
        "seahaven_towers": (4, 10, "suit", "kings", "product", 2),
        "relaxed_freecell": (4, 8, "alternate", "any", "unlimited", 0),
    }
    assert set(PRESETS) == set(table)
    for name, fields in table.items():
        p = PRESETS[name]
        assert p.name == name
        assert (
            p.cells,
            p.columns,
            p.build,
            p.empty,
            p.move_rule,
            p.dealt_to_cells,
        ) == fields


def test_make_variant_overrides() -> None:
    variant = make_variant("freecell", cells=2, move_rule="doubling")
    assert (variant.name, variant.cells, variant.move_rule) == (
        "freecell",
        2,
        "doubling",
    )
    assert make_variant("bakers_game", cells=0).cells == 0
    with pytest.raises(VariantError, match="'nope'"):
        make_variant("nope")
    with pytest.raises(VariantError, match="dealt_to_cells"):
        make_variant("eight_off", cells=3)  # 4 cards are dealt to cells
    with pytest.raises(VariantError, match="cells"):
        make_variant("freecell", cells=11)
    with pytest.raises(VariantError, match="move_rule"):
        make_variant("freecell", move_rule="triple")
    with pytest.raises(VariantError, match="columns"):
        VerifierVariant(columns=0)
    with pytest.raises(VariantError, match="build"):
        VerifierVariant(build="colour")


# ---------------------------------------------------------------------------
# board text
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(PRESETS))
@pytest.mark.parametrize("deal_number", [1, 11982, 6000000000])
def test_board_text_round_trip(name: str, deal_number: int) -> None:
    position = deal_position(deal_number, name)
    text = position.to_text()
    assert Position.from_text(text, name) == position
    assert Position.from_text(text, name).to_text() == text
    assert Position.from_text(text) == position


def test_board_text_exact_format() -> None:
    position = make_position(
        ["KS QH", "*", "", "", "", "", "", ""], "KD - 9C", n_cells=4
    )
    assert position.to_text() == (
        "Foundations: H-J C-8 D-Q S-Q\n"
        "Freecells:  KD  -  9C  -\n"
        ": KS QH\n"
        ": KC QC JC TC KH\n"
        ":\n:\n:\n:\n:\n:\n"
    )
    text = position.to_text()
    assert Position.from_text(text).to_text() == text
    assert make_position(["*"], "", n_cells=0).to_text().splitlines()[1] == "Freecells:"


def test_board_text_reading_variations() -> None:
    expected = deal_position(24)
    lines = expected.to_text().splitlines()
    bare = "\n".join(line.removeprefix(": ") for line in lines[2:])
    assert Position.from_text(bare) == expected
    assert Position.from_text(bare, "freecell") == expected
    shuffled = "Foundations: S-0 D-- C-0 H-0\n\n" + "\n".join(lines[1:]) + "\n\n"
    assert Position.from_text(shuffled) == expected
    # fc-solve writes foundation ranks as letters and empty cells as blanks.
    fc_solve = (
        "Foundations: H-0 C-0 D-0 S-A \n"
        "Freecells:      JD          \n"
        ": 4C 2C 9C 8C QS 4S 2H\n: 5H QH 3C AC 3H 4H QD\n: QC 9S 6H 9H 3S KS 3D\n"
        ": 5D 2S JC 5C JH 6D\n: 2D KD TH TC TD 8D\n: 7H JS KH TS KC 7C\n"
        ": AH 5S 6S AD 8H\n: 7S 6C 7D 4D 8S 9D\n"
    )
    position = Position.from_text(fc_solve, "freecell")
    assert position.cells == (None, parse_card("JD"), None, None)
    assert position.foundations == (0, 0, 0, 1)
    assert Position.from_text(position.to_text()) == position
    numeric = Position.from_text(fc_solve.replace("S-A", "S-1").replace("10", "T"))
    assert numeric.foundations == (0, 0, 0, 1)


def test_board_text_missing_cells_are_padded_for_a_variant() -> None:
    text = (
        deal_position(24).to_text().replace("Freecells:  -  -  -  -", "Freecells:  -")
    )
    assert (
        Position.from_text(text, make_variant("freecell", cells=6)).cells == (None,) * 6
    )
    assert Position.from_text(text).cells == (None,)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: t.replace("4C 2C", "4C 4C"), "appears twice"),
        (lambda t: t.replace(" 2H\n", "\n"), "2H is missing"),
        (lambda t: t.replace("4C 2C", "4C XX"), "bad column line"),
        (lambda t: t.replace("H-0", "H-14"), "foundation height"),
        (lambda t: t.replace("H-0", "H-0 H-0"), "twice"),
        (lambda t: t.replace("H-0", "H-A"), "appears twice"),
        (lambda t: t.replace("H-0", "X-0"), "foundation entry"),
        (lambda t: t.replace("  -  -  -  -", "  QQ  -  -  -"), "Freecells"),
        (lambda t: t + "Foundations: H-0\n", "second Foundations"),
        (lambda t: t + ": \n", "9 columns"),
    ],
)
def test_bad_board_text(edit: object, message: str) -> None:
    text = edit(deal_position(24).to_text())  # type: ignore[operator]
    with pytest.raises(BoardError, match=message):
        Position.from_text(text, "freecell")


def test_board_text_too_many_cells_for_variant() -> None:
    text = deal_position(24, "eight_off").to_text()
    with pytest.raises(BoardError, match="beyond"):
        Position.from_text(text, make_variant("freecell", cells=2))


# ---------------------------------------------------------------------------
# notation
# ---------------------------------------------------------------------------


def test_location_letters() -> None:
    assert [Location("column", i).notation() for i in range(10)] == list("1234567890")
    assert [Location("cell", i).notation() for i in range(10)] == list("abcdefgijk")
    assert Location("foundation").notation() == "h"
    for char in "1234567890abcdefgijkh":
        assert Location.from_notation(char).notation() == char


@pytest.mark.parametrize(
    ("text", "source", "dest", "count"),
    [
        ("3a", Location("column", 2), Location("cell", 0), None),
        ("a3", Location("cell", 0), Location("column", 2), None),
        ("8h", Location("column", 7), Location("foundation"), None),
        ("kh", Location("cell", 9), Location("foundation"), None),
        ("ih", Location("cell", 7), Location("foundation"), None),
        ("09", Location("column", 9), Location("column", 8), None),
        ("36v2", Location("column", 2), Location("column", 5), 2),
        ("36V12", Location("column", 2), Location("column", 5), 12),
        (" 3A ", Location("column", 2), Location("cell", 0), None),
    ],
)
def test_parse_move(
    text: str, source: Location, dest: Location, count: int | None
) -> None:
    move = parse_move(text)
    assert move == Move(source, dest, count)
    assert parse_move(str(move)) == move
    assert eval(repr(move), {"Move": Move}) == move


@pytest.mark.parametrize(
    "text",
    [
        "",
        "3",
        "3ab",
        "3l",
        "x1",
        "36v",
        "36v0",
        "3av1",
        "a3v2",
        "3hv1",
        "36 v2",
        "36w2",
    ],
)
def test_bad_notation(text: str) -> None:
    with pytest.raises(NotationError, match="bad move"):
        parse_move(text)


def test_split_moves() -> None:
    assert v.split_moves("3a 8h\n 2h\t") == ["3a", "8h", "2h"]
    assert v.split_moves(["3a", " 8h "]) == ["3a", "8h"]
    assert v.split_moves("") == []


# ---------------------------------------------------------------------------
# single-card moves
# ---------------------------------------------------------------------------


def simple_position() -> Position:
    #        1        2     3     4    5    6     7  8
    return make_position(
        ["KC 9H", "TS", "AS", "*", "", "8H", "QD", "2S"], "KD - 7C", n_cells=4
    )


def test_single_card_legal_moves() -> None:
    p = simple_position()
    assert check_move(p, "12", FREECELL) == 1  # 9H onto TS
    assert check_move(p, "3h", FREECELL) == 1  # AS to foundation
    assert check_move(p, "1b", FREECELL) == 1
    assert check_move(p, "15", FREECELL) == 1  # any card onto an empty column
    assert check_move(p, "a5", FREECELL) == 1
    assert check_move(p, "c6", FREECELL) == 1  # 7C onto 8H
    after = apply_move(p, "3h", FREECELL)
    assert after.foundations[3] == 1
    assert check_move(after, "8h", FREECELL) == 1  # then 2S


@pytest.mark.parametrize(
    ("move", "reason"),
    [
        ("21", "TS cannot go onto 9H"),
        ("8h", "2S cannot go to the foundation (the spades foundation needs AS)"),
        ("1a", "cell a is not free (it holds KD)"),
        ("b1", "cell b is empty"),
        ("51", "column 5 is empty"),
        ("h1", "cards never leave the foundations"),
        ("11", "column 1 is both source and destination"),
        ("19", "there is no column 9 (8 columns)"),
        ("1e", "there is no cell e (4 cells)"),
        ("a6", "KD cannot go onto 8H"),
        ("ah", "KD cannot go to the foundation (the diamonds foundation needs QD)"),
    ],
)
def test_single_card_illegal_moves(move: str, reason: str) -> None:
    assert reason_of(simple_position(), move, FREECELL) == reason


def test_no_free_cell() -> None:
    p = make_position(["KC", "*", "QH", "", "", "", "", ""], "KD KS KH JC")
    assert reason_of(p, "1b", FREECELL) == "no free cell (cell b holds KS)"
    p0 = make_position(["KC", "*", "QH", "", "", "", "", ""], "", n_cells=0)
    assert (
        reason_of(p0, "1a", make_variant("freecell", cells=0))
        == "there is no cell a (0 cells)"
    )


def test_foundation_complete() -> None:
    p = make_position(["KC", "*", "", "", "", "", "", ""])
    complete = apply_move(p, "1h", FREECELL)
    assert complete.foundations == (13, 13, 13, 13)
    assert complete.is_won()
    q = make_position(["QC KC", "*", "", "", "", "", "", ""])
    assert reason_of(q, "1h", FREECELL) == (
        "KC cannot go to the foundation (the clubs foundation needs QC)"
    )
    r = make_position(["KD", "*", "", "", "", "", "", ""], "AD")
    assert r.foundations[1] == 0
    done = make_position(["KH", "KC", "", "", "", "", "", ""])
    done = apply_move(done, "2h", FREECELL)
    assert done.foundations[0] == 13


def test_build_rules() -> None:
    p = make_position(["8H", "7H", "7S", "7D", "*", "", "", ""])
    bakers = make_variant("bakers_game")
    assert check_move(p, "21", bakers) == 1
    assert reason_of(p, "31", bakers) == "7S cannot go onto 8H"
    assert check_move(p, "31", FREECELL) == 1
    assert reason_of(p, "21", FREECELL) == "7H cannot go onto 8H"
    anything = VerifierVariant(build="any")
    for move in ("21", "31", "41"):
        assert check_move(p, move, anything) == 1


def test_empty_column_rules() -> None:
    p = make_position(["KS", "QH", "*", "", "", "", "", ""], "KH JC")
    forecell = make_variant("forecell")
    assert check_move(p, "14", forecell) == 1
    assert check_move(p, "a4", forecell) == 1
    assert (
        reason_of(p, "24", forecell) == "only a king may fill an empty column, not QH"
    )
    assert (
        reason_of(p, "b4", forecell) == "only a king may fill an empty column, not JC"
    )
    none = VerifierVariant(empty="none")
    assert (
        reason_of(p, "14", none) == "empty columns cannot be filled in variant 'custom'"
    )
    assert (
        reason_of(p, "a4", none) == "empty columns cannot be filled in variant 'custom'"
    )


def test_count_suffix_onto_non_empty_column_must_match() -> None:
    p = make_position(["9C 8H 7S", "8D", "*", "5C", "6D", "AH", "AD", "AC"])
    assert check_move(p, "12v1", FREECELL) == 1
    assert (
        reason_of(p, "12v2", FREECELL) == "the run that fits onto 8D has 1 card, not 2"
    )
    q = make_position(["9C 8H 7S", "9S", "*", "5C", "6D", "AH", "AD", "AC"])
    assert check_move(q, "12", FREECELL) == check_move(q, "12v2", FREECELL) == 2
    assert (
        reason_of(q, "12v3", FREECELL) == "the run that fits onto 9S has 2 cards, not 3"
    )


# ---------------------------------------------------------------------------
# multi-card moves and their limits
# ---------------------------------------------------------------------------

RUN = "KS QH JS TH 9S 8H 7S 6H 5S 4H 3S 2H"  # 12 cards, alternating


def run_position(n_empty_columns: int, free_cells: int, dest_top: str = "") -> Position:
    """Column 1 holds RUN; column 2 ``dest_top`` (or empty); then
    ``n_empty_columns`` other empty columns; the rest hold non-fitting cards."""
    fillers = ["AC", "AD", "2C", "2D", "3D"]  # never one higher than a card of RUN
    columns = ["QC " + RUN, dest_top, *([""] * n_empty_columns)]
    columns += [*fillers[:7 - len(columns)], "*"]
    cells = " ".join(["-"] * free_cells + ["AS", "AH", "4C", "6C"][: 4 - free_cells])
    return make_position(columns, cells)


def target_for_depth(depth: int) -> str:
    """A club or diamond one rank above RUN's card at ``depth`` (from the top)."""
    card = RUN.split()[::-1][depth - 1]
    return v.RANKS[v.RANKS.index(card[0]) + 1] + ("D" if card[1] == "S" else "C")


@pytest.mark.parametrize(
    ("rule", "free", "helpers", "limit"),
    [
        ("product", 4, 0, 5),
        ("doubling", 4, 0, 5),
        ("product", 4, 1, 10),
        ("doubling", 4, 1, 10),
        ("product", 0, 2, 3),
        ("doubling", 0, 2, 4),
        ("product", 1, 2, 6),
        ("doubling", 1, 2, 8),
        ("product", 2, 1, 6),
        ("doubling", 2, 1, 6),
        ("single", 4, 2, 1),
        ("product", 0, 0, 1),
    ],
)
def test_limit_onto_non_empty_column(
    rule: str, free: int, helpers: int, limit: int
) -> None:
    variant = make_variant("freecell", move_rule=rule)
    # A card one higher than the run's card at depth `limit` and depth `limit + 1`.
    for depth, legal in ((limit, True), (limit + 1, False)):
        p = run_position(helpers, free, target_for_depth(depth))
        assert move_limit(p, variant, 0, 1) == limit
        if legal:
            assert check_move(p, "12", variant) == depth
            after = apply_move(p, "12", variant)
            assert after.columns[1][-depth:] == p.columns[0][-depth:]
        else:
            assert reason_of(p, "12", variant) == (
                f"run of {depth} cards exceeds the {rule}-rule limit {limit}"
            )


@pytest.mark.parametrize(
    ("rule", "free", "others", "limit"),
    [
        ("product", 4, 0, 5),  # the destination is never a helper
        ("doubling", 4, 0, 5),
        ("product", 4, 1, 10),
        ("doubling", 4, 1, 10),
        ("product", 1, 2, 6),
        ("doubling", 1, 2, 8),
        ("product", 0, 0, 1),
        ("single", 4, 2, 1),
    ],
)
def test_limit_onto_empty_column(rule: str, free: int, others: int, limit: int) -> None:
    variant = make_variant("freecell", move_rule=rule)
    p = run_position(others, free)  # column 2 is the empty destination
    assert move_limit(p, variant, 0, 1) == limit
    assert check_move(p, "12", variant) == limit  # bare: the longest run allowed
    assert check_move(p, f"12v{limit}", variant) == limit
    assert check_move(p, "12v1", variant) == 1
    assert reason_of(p, f"12v{limit + 1}", variant) == (
        f"run of {limit + 1} cards exceeds the {rule}-rule limit {limit}"
    )
    moves = legal_moves(p, variant)
    assert "12" in moves
    assert [m for m in moves if m.startswith("12v")] == [
        f"12v{k}" for k in range(1, limit)
    ]


def test_doubling_twenty_with_two_helpers() -> None:
    p = run_position(3, 4)  # destination column 2 empty, plus 3 other empty columns
    assert move_limit(p, DOUBLING, 0, 1) == 5 * 2**3
    assert move_limit(p, DOUBLING, 0, 2) == 5 * 2**3
    q = run_position(2, 4, "AS")  # 2 helpers, non-empty destination
    assert move_limit(q, DOUBLING, 0, 1) == 20
    assert move_limit(q, FREECELL, 0, 1) == 15
    assert move_limit(q, make_variant("relaxed_freecell"), 0, 1) is None


def test_run_longer_than_column_top_run() -> None:
    p = run_position(1, 4)
    assert (
        reason_of(p, "12v13", FREECELL)
        == "column 1 has a run of 12 cards, fewer than 13"
    )
    assert reason_of(p, "13v13", make_variant("relaxed_freecell")).startswith(
        "column 1 has"
    )


def test_unlimited_moves_whole_run() -> None:
    p = run_position(0, 0)  # no free cell, only the destination empty
    relaxed = make_variant("relaxed_freecell")
    assert check_move(p, "12", relaxed) == 12
    assert check_move(p, "12", FREECELL) == 1


def test_no_run_fits() -> None:
    p = run_position(0, 4, "5D")
    assert (
        reason_of(p, "12", FREECELL)
        == "no card of the run KS..2H in column 1 can go onto 5D"
    )


def test_kings_only_empty_columns_and_helpers() -> None:
    forecell = make_variant("forecell")
    p = make_position(
        ["QC KH QS JH TS", "", "", "*", "AC", "AD", "AH", "AS"], "- - - -"
    )
    # Empty columns do not help under `kings`: the limit is (1 + 4) * 1.
    assert v.empty_helper_columns(p, forecell, 0, 1) == 0
    assert move_limit(p, forecell, 0, 1) == 5
    assert check_move(p, "12", forecell) == 4  # the king-headed run
    assert check_move(p, "12v4", forecell) == 4
    assert (
        reason_of(p, "12v2", forecell) == "only a king may fill an empty column, not JH"
    )
    assert [m for m in legal_moves(p, forecell) if m.startswith("12")] == ["12"]
    tight = make_position(
        ["QC KH QS JH TS", "", "", "*", "AC", "AD", "AH", "AS"], "- - 2C 2D"
    )
    assert (
        reason_of(tight, "12", forecell)
        == "run of 4 cards exceeds the product-rule limit 3"
    )
    no_king = make_position(
        ["QC QS JH TS", "", "", "*", "AC", "AD", "AH", "AS"], "- - - -"
    )
    assert reason_of(no_king, "12", forecell).startswith(
        "only a king may fill an empty column"
    )


def single_card_reachable(
    start: Position, goal: Position, allowed: set[Location], rules: VerifierVariant
) -> bool:
    """Breadth-first search over single-card moves among ``allowed`` locations."""
    single = VerifierVariant(
        rules.name, rules.cells, rules.columns, rules.build, rules.empty, "single", 0
    )
    seen = {start}
    queue = deque([start])
    candidates = [Move(a, b) for a in allowed for b in allowed if a != b]
    while queue:
        position = queue.popleft()
        if position == goal:
            return True
        for move in candidates:
            try:
                after = apply_move(position, move, single)
            except IllegalMoveError:
                continue
            if after not in seen:
                seen.add(after)
                queue.append(after)
    return False


@pytest.mark.parametrize(
    ("free", "helpers"), [(0, 0), (1, 0), (2, 0), (0, 1), (1, 1), (0, 2), (1, 2)]
)
def test_doubling_rule_is_the_true_single_card_maximum(free: int, helpers: int) -> None:
    """A multi-card move within the doubling limit is a shorthand for single-card
    moves through cells and helper columns; one card more is not (REFERENCE)."""
    limit = (1 + free) * 2**helpers
    for depth, reachable in ((limit, True), (limit + 1, False)):
        p = run_position(helpers, free, target_for_depth(depth))
        goal_columns = list(p.columns)
        goal_columns[1] = p.columns[1] + p.columns[0][-depth:]
        goal_columns[0] = p.columns[0][:-depth]
        goal = Position(tuple(goal_columns), p.cells, p.foundations)
        allowed = {Location("column", i) for i in range(2 + helpers)}
        allowed |= {Location("cell", i) for i in range(free)}
        assert single_card_reachable(p, goal, allowed, DOUBLING) is reachable
        assert ((move_limit(p, DOUBLING, 0, 1) or 0) >= depth) is reachable


# ---------------------------------------------------------------------------
# legal move listing
# ---------------------------------------------------------------------------


def test_legal_moves_of_deal_1() -> None:
    moves = legal_moves(deal_position(1), FREECELL)
    assert moves == [f"{c}{x}" for c in "12345678" for x in "abcd"]


def test_legal_moves_lists_every_empty_cell_and_column() -> None:
    p = make_position(["KS QH", "", "AC", "", "*", "2D", "3D", "4D"], "- 9C - JD")
    moves = legal_moves(p, FREECELL)
    assert "3h" in moves and "1a" in moves and "1c" in moves and "1b" not in moves
    assert "12" in moves and "12v1" in moves and "14" in moves and "14v1" in moves
    assert "b2" in moves and "dh" not in moves
    assert "bc" not in moves
    assert "bc" in legal_moves(p, FREECELL, include_cell_to_cell=True)
    assert check_move(p, "bc", FREECELL) == 1
    for move in moves:
        check_move(p, move, FREECELL)


def test_won_position_has_no_moves() -> None:
    won = make_position([""] * 8)
    assert won.is_won()
    assert legal_moves(won, FREECELL) == []


# ---------------------------------------------------------------------------
# replay
# ---------------------------------------------------------------------------

ENDGAME = [
    "KH QS",
    "*",
    "",
    "",
    "",
    "",
    "",
    "",
]  # junk column empty: only KH QS KS left


def test_short_win_replays_as_won() -> None:
    start = make_position(ENDGAME, "KS")
    assert start.foundations == (13, 13, 12, 11)
    for begin in (start, start.to_text()):
        report = replay(begin, "1h 1h ah", FREECELL)
        assert report.won
        assert report.moves_applied == report.total_moves == 3
        assert report.illegal_index is None and report.reason is None
        assert report.move_rule == "product"
        assert Position.from_text(report.final_board).is_won()


def test_replay_accepts_a_list_and_presets_by_name() -> None:
    start = make_position(ENDGAME, "KS")
    assert replay(start, ["1h", "1h", "ah"], "freecell").won
    assert replay(start.to_text(), ["1h", "1h", "ah"]).won


def test_replay_reports_the_first_illegal_move() -> None:
    start = deal_position(1)
    report = replay(1, "8a 8b 81 1h", FREECELL)
    assert not report.won
    assert report.moves_applied == 2
    assert report.total_moves == 4
    assert report.illegal_index == 3
    assert report.illegal_move == "81"
    assert report.reason == "move 3 '81': 7S cannot go onto 6S"
    before = apply_move(apply_move(start, "8a", FREECELL), "8b", FREECELL)
    assert report.position_before == before.to_text()


def test_replay_no_free_cell() -> None:
    report = replay(1, "1a 1b 1c 1d 2a", FREECELL)
    assert report.illegal_index == 5
    assert report.reason == "move 5 '2a': no free cell (cell a holds 6S)"


def test_replay_bad_notation_is_reported() -> None:
    report = replay(1, "8a zz", FREECELL)
    assert report.illegal_index == 2
    assert report.reason is not None and report.reason.startswith(
        "move 2 'zz': bad move 'zz'"
    )


def test_replay_multi_card_over_the_limit() -> None:
    p = run_position(1, 4)  # column 2 empty + 1 helper: product 10, bare move takes 10
    report = replay(p, "12v11", FREECELL)
    assert (
        report.reason
        == "move 1 '12v11': run of 11 cards exceeds the product-rule limit 10"
    )
    assert replay(p, "12v11", DOUBLING).reason == (
        "move 1 '12v11': run of 11 cards exceeds the doubling-rule limit 10"
    )


def test_replay_legal_but_not_won() -> None:
    report = replay(1, ["8a", "8b"], FREECELL)
    assert not report.won
    assert report.moves_applied == 2
    assert report.illegal_index is None
    assert report.reason == "all 2 moves legal but the game is not won"


def test_replay_moves_after_the_win_are_illegal() -> None:
    report = replay(make_position(ENDGAME, "KS"), "1h 1h ah ah", FREECELL)
    assert not report.won
    assert report.illegal_index == 4
    assert report.reason == "move 4 'ah': cell a is empty"


@pytest.mark.parametrize("bad", [0, -5, 2**33, True, 1.5, None])
def test_replay_bad_start(bad: object) -> None:
    with pytest.raises(DealNumberError):
        replay(bad, "", FREECELL)  # type: ignore[arg-type]


def test_replay_start_shape_must_match_variant() -> None:
    with pytest.raises(BoardError):
        replay(deal_position(1), "", make_variant("freecell", cells=5))
    with pytest.raises(BoardError):
        replay(deal_position(1).to_text(), "", "seahaven_towers")


def test_replay_stops_when_a_position_comes_back_too_often() -> None:
    """verify's early stop (issue 28, item 12): a cyclic move list ends at
    the move that reaches one position once more than allowed, instead of
    being replayed to its end."""
    moves = "8a " + " ".join(["ab", "ba"] * 50_000)
    report = replay(1, moves, FREECELL, max_visits=4)
    assert not report.won and report.illegal_index is None
    assert (report.moves_applied, report.repeated_index, report.total_moves) == (9, 9, 100_001)
    assert report.reason == (
        "move 9 'ba' reaches the position after move 1 for the 5th time "
        "(a cycle: the replay stops at a position's 5th visit)"
    )
    assert report.final_board == apply_move(deal_position(1), "8a", FREECELL).to_text()
    # A position reached again, but not too often, is fine; without the
    # option the whole list is replayed.
    assert replay(1, "8a ab ba ab", FREECELL, max_visits=2).reason == "all 4 moves legal but the game is not won"
    assert replay(1, "8a ab ba ab ba ab ba", FREECELL).reason == "all 7 moves legal but the game is not won"


def test_replay_visits_count_the_start_position() -> None:
    start = make_position(ENDGAME, "KS")
    report = replay(start, "ab ba ab ba 1h", FREECELL, max_visits=2)
    assert report.repeated_index == 4
    assert report.reason is not None
    assert report.reason.startswith("move 4 'ba' reaches the start position for the 3rd time")
    assert replay(start, "ab ba 1h 1h ah", FREECELL, max_visits=1).repeated_index == 2
    # A foundation move starts afresh: no position before it can come back.
    assert replay(start, "ab 1h 1h bh", FREECELL, max_visits=1).won


def test_a_huge_token_is_quoted_as_an_excerpt() -> None:
    token = "x" * 1_000_000
    report = replay(1, f"8a {token}", FREECELL)
    assert report.illegal_index == 2 and report.reason is not None
    assert len(report.reason) < 300 and "(1,000,000 characters)" in report.reason
    assert report.illegal_move == token  # the data keeps the whole token
    for text in ("12v" + "9" * 5000, "y" * 10_000):
        with pytest.raises(NotationError) as info:
            parse_move(text)
        assert len(str(info.value)) < 300


def known_solution_files() -> list[Path]:
    return sorted(DATA.glob("known_solution_*.txt"))


@pytest.mark.parametrize("path", known_solution_files(), ids=lambda p: p.name)
def test_known_solutions(path: Path) -> None:
    """Each file: the deal number on the first line (optionally followed by a
    preset name and a move rule), then the moves separated by whitespace.
    The solutions were found by a small best-first search over this module's
    own legal moves under the product rule."""
    first, *rest = path.read_text().splitlines()
    words = first.split()
    deal_number = int(words[0])
    preset = words[1] if len(words) > 1 else "freecell"
    variant = make_variant(preset, move_rule=words[2] if len(words) > 2 else None)
    moves = " ".join(rest)
    report = replay(deal_number, moves, variant)
    assert report.won, report.reason
    assert report.moves_applied == len(moves.split())
    assert replay(deal_number, moves, variant, max_visits=1).won  # no position twice
    if (
        variant.move_rule == "product"
    ):  # a product-rule solution replays under doubling too
        doubling = make_variant(preset, move_rule="doubling")
        assert replay(deal_number, moves, doubling).won
    # Dropping the last move leaves a legal but unfinished game.
    short = replay(deal_number, moves.split()[:-1], variant)
    assert not short.won
    assert (
        short.reason
        == f"all {len(moves.split()) - 1} moves legal but the game is not won"
    )


def test_known_solution_files_exist() -> None:
    assert len(known_solution_files()) >= 2


# ---------------------------------------------------------------------------
# property tests
# ---------------------------------------------------------------------------

deal_numbers = st.one_of(
    st.integers(1, 32000),
    st.integers(2**31, 2**32 - 1),
    st.integers(2**32, 2**33 - 1),
)
variants = st.builds(
    make_variant,
    st.sampled_from(sorted(PRESETS)),
    move_rule=st.sampled_from([None, "single", "product", "doubling", "unlimited"]),
)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(deal_numbers, variants, st.data())
def test_random_legal_walks_keep_every_card(
    deal_number: int, variant: VerifierVariant, data: st.DataObject
) -> None:
    position = deal_position(deal_number, variant)
    walked: list[str] = []
    for _ in range(data.draw(st.integers(0, 60), label="steps")):
        moves = legal_moves(position, variant)
        if not moves:
            break
        move = data.draw(st.sampled_from(moves), label="move")
        count = check_move(position, move, variant)
        after = apply_move(position, move, variant)
        assert census(after) == list(range(52))
        assert (
            sum(map(len, after.columns)) + (52 - after.empty_cells() - len(after.cells))
            >= 0
        )
        moved_to_foundation = sum(after.foundations) - sum(position.foundations)
        assert moved_to_foundation == (1 if move[1] == "h" else 0)
        if move[0].isdigit() and move[1].isdigit():
            limit = move_limit(position, variant, int(move[0]) - 1, int(move[1]) - 1)
            assert limit is None or count <= limit
        walked.append(move)
        position = after
        text = position.to_text()
        assert Position.from_text(text, variant) == position
        assert Position.from_text(text, variant).to_text() == text
    report = replay(deal_number, walked, variant)
    assert report.moves_applied == len(walked)
    assert report.final_board == position.to_text()


ALL_PAIRS = [
    a + b for a in "1234567890abcdefgijkh" for b in "1234567890abcdefgijkh" if a != b
]


@settings(max_examples=50, deadline=None)
@given(deal_numbers, variants, st.data())
def test_legal_moves_agree_with_check_move(
    deal_number: int, variant: VerifierVariant, data: st.DataObject
) -> None:
    position = deal_position(deal_number, variant)
    for _ in range(data.draw(st.integers(0, 30), label="steps")):
        moves = legal_moves(position, variant)
        if not moves:
            break
        position = apply_move(position, data.draw(st.sampled_from(moves)), variant)
    listed = set(legal_moves(position, variant, include_cell_to_cell=True))
    for text in ALL_PAIRS:
        try:
            check_move(position, text, variant)
            legal = True
        except IllegalMoveError:
            legal = False
        assert legal == (text in listed), text
    product = make_variant(variant.name, cells=variant.cells, move_rule="product")
    doubling = make_variant(variant.name, cells=variant.cells, move_rule="doubling")
    for source in range(variant.columns):
        for dest in range(variant.columns):
            if source != dest:
                assert (move_limit(position, product, source, dest) or 0) <= (
                    move_limit(position, doubling, source, dest) or 0
                )
