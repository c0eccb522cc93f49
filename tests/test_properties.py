"""Property tests: the engine's rules against the independent verifier on
random reachable positions (hypothesis).

Positions come from random walks, biased towards the foundations and the
columns so that empty columns and long runs (the multi-card cases) show up,
from random deals under every preset, cell count and move rule, and from
positions along solutions, which have the emptiest boards."""

from __future__ import annotations

import functools
import random
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import analyzer
from analyzer import Board, Limits, Variant
from analyzer import verifier as V

MAX_DEAL = 2**33 - 1
PROPERTY_SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@dataclass(frozen=True)
class Rules:
    """The same rules on both sides."""

    engine: Variant
    verifier: V.VerifierVariant


@st.composite
def rules(draw: st.DrawFn) -> Rules:
    preset = draw(st.sampled_from(sorted(V.PRESETS)))
    base = V.PRESETS[preset]
    cells = draw(st.one_of(st.none(), st.integers(max(base.dealt_to_cells, 0), 8)))
    move_rule = draw(st.sampled_from(V.MOVE_RULES))
    return Rules(
        Variant.named(preset, cells=cells, move_rule=move_rule),
        V.make_variant(preset, cells=cells, move_rule=move_rule),
    )


def _weight(move: str) -> int:
    """Walk bias: foundation and column moves are likelier than cell moves."""
    source, dest = move[0], move[1]
    if dest == "h":
        return 12
    if dest.isdigit():
        return 6
    return 0 if not source.isdigit() else 1  # never cell to cell


def walk(board: Board, choices: list[int]) -> list[Board]:
    """The boards of a random walk from `board` (the start included)."""
    boards = [board]
    for choice in choices:
        weighted = [m for m in boards[-1].legal_moves() for _ in range(_weight(m))]
        if not weighted:
            break
        boards.append(boards[-1].apply(weighted[choice % len(weighted)]))
    return boards


@functools.cache
def solution_boards(n: int, variant: Variant) -> tuple[str, ...]:
    """Board texts along the engine's solution of deal `n` (just the start
    when the small budget runs out or the deal cannot be won)."""
    board = analyzer.deal(n, variant)
    result = analyzer.solve(board, limits=Limits(max_positions=300_000))
    texts = [str(board)]
    for move in result.solution:
        board = board.apply(move)
        texts.append(str(board))
    return tuple(texts)


@st.composite
def positions(draw: st.DrawFn) -> tuple[Rules, list[Board]]:
    """A variant and the boards of a walk from a random reachable position:
    a random deal's start, or a position along a solution of a small deal."""
    r = draw(rules())
    if draw(st.booleans()):
        texts = solution_boards(draw(st.sampled_from([1, 2, 3, 24, 617])), r.engine)
        start = Board(texts[draw(st.integers(0, len(texts) - 1))], r.engine)
    else:
        start = analyzer.deal(draw(st.one_of(st.integers(1, 32000), st.integers(1, MAX_DEAL))), r.engine)
    return r, walk(start, draw(st.lists(st.integers(0, 2**16), min_size=2, max_size=30)))


def to_position(board: Board, r: Rules) -> V.Position:
    return V.Position.from_text(str(board), r.verifier)


def _column(char: str) -> int:
    return V.COLUMN_DIGITS.index(char)


def check_legal_moves(board: Board, r: Rules) -> None:
    position = to_position(board, r)
    engine_moves = board.legal_moves()
    # Cell-to-cell moves are legal but pointless; neither side lists them
    # by default, and the engine must still accept them.
    verifier_moves = V.legal_moves(position, r.verifier)
    all_verifier_moves = V.legal_moves(position, r.verifier, include_cell_to_cell=True)
    assert len(set(engine_moves)) == len(engine_moves), engine_moves
    # Every engine move is legal for the verifier, with the same result.
    for move in engine_moves:
        V.check_move(position, move, r.verifier)
        assert str(board.apply(move)) == V.apply_move(position, move, r.verifier).to_text(), move
    # Every verifier move is accepted by the engine, with the same result.
    for move in all_verifier_moves:
        assert str(board.apply(move)) == V.apply_move(position, move, r.verifier).to_text(), move
    missing = set(verifier_moves) - set(engine_moves)
    extra = set(engine_moves) - set(verifier_moves)
    assert not missing and not extra, (str(board), r.verifier, missing, extra)
    assert board.is_won() == position.is_won()


@PROPERTY_SETTINGS
@given(positions())
def test_engine_and_verifier_agree_on_legal_moves(case: tuple[Rules, list[Board]]) -> None:
    r, boards = case
    for board in boards:
        check_legal_moves(board, r)


@pytest.mark.parametrize("move_rule", V.MOVE_RULES)
def test_legal_moves_agree_along_a_whole_solution(move_rule: str) -> None:
    """Deterministic cover of multi-card and `v<k>` moves, which the random
    walks reach less often: every position along a solution of deal 617."""
    r = Rules(Variant.named("freecell", move_rule=move_rule), V.make_variant("freecell", move_rule=move_rule))
    texts = solution_boards(617, r.engine)
    assert len(texts) > 50  # a real solution, not just the start
    for text in texts:
        check_legal_moves(Board(text, r.engine), r)


@PROPERTY_SETTINGS
@given(positions())
def test_multi_card_moves_never_exceed_the_move_rule(case: tuple[Rules, list[Board]]) -> None:
    r, boards = case
    for board in boards:
        position = to_position(board, r)
        for move in board.legal_moves():
            if not (move[0].isdigit() and move[1].isdigit()):
                continue
            source, dest = _column(move[0]), _column(move[1])
            after = board.apply(move)
            moved = len(after.columns[dest]) - len(board.columns[dest])
            assert moved == V.check_move(position, move, r.verifier) >= 1
            limit = V.move_limit(position, r.verifier, source, dest)
            assert limit is None or moved <= limit, (move, moved, limit)
            if r.verifier.move_rule == "single":
                assert moved == 1
            # The moved cards are a run per the variant's build rule.
            run = board.columns[source][-moved:]
            cards = [V.parse_card(c) for c in run]
            assert V.top_run_length(cards, r.verifier.build) == moved


def _permuted_text(position: V.Position, rng: random.Random) -> str:
    columns = list(position.columns)
    cells = list(position.cells)
    rng.shuffle(columns)
    rng.shuffle(cells)
    return V.Position(tuple(columns), tuple(cells), position.foundations).to_text()


def _canonical(position: V.Position) -> tuple[object, ...]:
    """Order-free form of a position, computed on the verifier's side."""
    return (
        tuple(sorted(position.columns)),
        tuple(sorted(-1 if c is None else c for c in position.cells)),
        position.foundations,
    )


@PROPERTY_SETTINGS
@given(positions(), st.randoms(use_true_random=False))
def test_canonical_key_ignores_column_and_cell_order_only(
    case: tuple[Rules, list[Board]], rng: random.Random
) -> None:
    r, boards = case
    seen: dict[bytes, tuple[object, ...]] = {}
    forms: dict[tuple[object, ...], bytes] = {}
    # The walk, and every child of its last board: the positions that are
    # closest to each other.
    for b in [*boards, *(boards[-1].apply(m) for m in boards[-1].legal_moves())]:
        position = to_position(b, r)
        key = b.canonical_key()
        permuted = Board(_permuted_text(position, rng), r.engine)
        assert permuted.canonical_key() == key
        assert permuted.fingerprint() == b.fingerprint()
        form = _canonical(position)
        assert seen.setdefault(key, form) == form, "one key for two distinct positions"
        assert forms.setdefault(form, key) == key, "two keys for one position"


@PROPERTY_SETTINGS
@given(positions())
def test_autoplay_moves_are_legal_foundation_moves(case: tuple[Rules, list[Board]]) -> None:
    r, boards = case
    board = boards[-1]
    after, moves = board.autoplay()
    report = V.replay(str(board), moves, r.verifier)
    assert report.illegal_index is None, report.reason
    assert report.final_board == str(after)
    assert all(m[1] == "h" for m in moves)
