"""Typed wrappers over the native engine. Only plain values cross over."""

from __future__ import annotations

import dataclasses
import functools
import numbers
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Literal, TypeVar

from . import _engine
from .errors import DealNumberError, VariantError

if TYPE_CHECKING:
    import pyarrow as pa

MAX_DEAL = 2**33 - 1
Outcome = Literal["solved", "unsolvable", "limit", "error"]
BUILDS = ("alternate", "suit", "any")
EMPTIES = ("any", "kings", "none")
MOVE_RULES = ("single", "product", "doubling", "unlimited")
PRESET_NAMES = (
    "freecell",
    "bakers_game",
    "eight_off",
    "forecell",
    "seahaven_towers",
    "relaxed_freecell",
)


@dataclass(frozen=True)
class Variant:
    """The rules of one FreeCell-family game (docs/DESIGN.md, "Variant").

    >>> Variant.named("eight_off").cells
    8
    >>> Variant.named("freecell", cells=3, move_rule="doubling")
    Variant(name='freecell', cells=3, columns=8, build='alternate', empty='any', move_rule='doubling', dealt_to_cells=0)
    """

    name: str = "freecell"
    cells: int = 4
    columns: int = 8
    build: str = "alternate"
    empty: str = "any"
    move_rule: str = "product"
    dealt_to_cells: int = 0

    def __post_init__(self) -> None:
        if self.name not in (*PRESET_NAMES, "custom"):
            raise VariantError(f"unknown variant {self.name!r}; expected one of: {', '.join(PRESET_NAMES)}")
        for fname, allowed in (("build", BUILDS), ("empty", EMPTIES), ("move_rule", MOVE_RULES)):
            value = getattr(self, fname)
            if value not in allowed:
                raise VariantError(f"unknown {fname} {value!r}; expected one of: {', '.join(allowed)}")
        for fname, lo, hi in (("cells", 0, 10), ("columns", 4, 10), ("dealt_to_cells", 0, 10)):
            value = getattr(self, fname)
            if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
                raise VariantError(f"{fname} must be an integer in {lo}..{hi}, not {value!r}")
        if self.dealt_to_cells > self.cells:
            raise VariantError(
                f"{self.name}: {self.dealt_to_cells} cards are dealt to cells but there are only {self.cells} cells"
            )

    @classmethod
    def named(cls, name: str, *, cells: int | None = None, move_rule: str | None = None) -> Variant:
        """A preset by name, with optional cell count and move rule."""
        v = _presets().get(name.strip().lower().replace("-", "_"))
        if v is None:
            raise VariantError(f"unknown variant {name!r}; expected one of: {', '.join(PRESET_NAMES)}")
        if cells is not None:
            v = dataclasses.replace(v, cells=cells)
        if move_rule is not None:
            v = dataclasses.replace(v, move_rule=move_rule)
        return v

    def as_tuple(self) -> tuple[str, int, int, str, str, str, int]:
        return (self.name, self.cells, self.columns, self.build, self.empty, self.move_rule, self.dealt_to_cells)

    @classmethod
    def _from_record(cls, r: _engine.VariantRecord) -> Variant:
        return cls(
            name=r.name,
            cells=r.cells,
            columns=r.columns,
            build=r.build,
            empty=r.empty,
            move_rule=r.move_rule,
            dealt_to_cells=r.dealt_to_cells,
        )

    def as_dict(self) -> dict[str, object]:
        return dataclasses.asdict(self)


VariantLike = Variant | str


@functools.cache
def _presets() -> dict[str, Variant]:
    """The engine's presets by name (asked once: `deal` is called in loops)."""
    return {r.name: Variant._from_record(r) for r in _engine.presets()}


def _variant(variant: VariantLike, cells: int | None = None, move_rule: str | None = None) -> Variant:
    if isinstance(variant, Variant):
        v = variant
        if cells is not None:
            v = dataclasses.replace(v, cells=cells)
        if move_rule is not None:
            v = dataclasses.replace(v, move_rule=move_rule)
        return v
    return Variant.named(variant, cells=cells, move_rule=move_rule)


def check_deal_number(n: object) -> int:
    """Returns `n` as an int if it is a deal number, else raises DealNumberError."""
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise DealNumberError(f"deal number must be an integer, not {n!r}")
    value = int(n)
    if not 1 <= value <= MAX_DEAL:
        raise DealNumberError(f"deal number {value} is out of range: Microsoft deals are numbered 1..{MAX_DEAL}")
    return value


class Board:
    """A position. Immutable: `apply` returns a new board.

    `str(board)` is the fc-solve board text; `repr(board)` rebuilds it.

    >>> b = deal(1)
    >>> b2 = b.apply(b.legal_moves()[0])
    >>> eval(repr(b2)) == b2
    True
    """

    __slots__ = ("_b", "variant")

    def __init__(self, text: str, variant: VariantLike = "freecell") -> None:
        self.variant = _variant(variant)
        self._b = _engine.board_from_text(text, self.variant)

    @classmethod
    def _wrap(cls, native: _engine.Board, variant: Variant) -> Board:
        obj = cls.__new__(cls)
        obj._b = native
        obj.variant = variant
        return obj

    @classmethod
    def from_text(cls, text: str, variant: VariantLike = "freecell") -> Board:
        return cls(text, variant)

    def __str__(self) -> str:
        return self._b.text()

    def __repr__(self) -> str:
        return f"Board({self._b.text()!r}, variant={self.variant!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Board) and self.variant == other.variant and self._b == other._b

    def __hash__(self) -> int:
        return hash(self._b)

    def rows(self) -> str:
        """Only the columns, deepest card first (REFERENCE.md's vector format)."""
        return self._b.rows()

    @property
    def columns(self) -> list[list[str]]:
        return self._b.columns()

    @property
    def cells(self) -> list[str | None]:
        return self._b.cells()

    @property
    def foundations(self) -> dict[str, int]:
        """Cards on each foundation by suit letter."""
        return dict(zip("CDHS", self._b.foundations(), strict=True))

    def legal_moves(self) -> list[str]:
        """Every legal move, in standard notation."""
        return self._b.legal_moves()

    def apply(self, move: str) -> Board:
        """The board after `move`; raises NotationError or IllegalMoveError."""
        return Board._wrap(self._b.apply(move), self.variant)

    def expand(self, move: str) -> list[str] | None:
        """The single-card moves that a multi-card move stands for."""
        return self._b.expand(move)

    def autoplay(self) -> tuple[Board, list[str]]:
        """Plays the safe automatic foundation moves."""
        b, moves = self._b.autoplay()
        return Board._wrap(b, self.variant), moves

    def is_won(self) -> bool:
        return self._b.is_won()

    def canonical_key(self) -> bytes:
        """Equal for positions that differ only by column or cell order."""
        return self._b.canonical_key()

    def fingerprint(self) -> int:
        return self._b.fingerprint()


def deal(n: int, variant: VariantLike = "freecell", *, cells: int | None = None) -> Board:
    """Microsoft deal `n` laid out for `variant`.

    >>> deal(11982).columns[0][:3]
    ['AH', '3D', 'KD']
    """
    v = _variant(variant, cells)
    return Board._wrap(_engine.deal(check_deal_number(n), v), v)


@dataclass(frozen=True)
class Limits:
    """Budgets for one search; hitting one gives outcome `limit`.

    `max_bytes` bounds memory, `max_disk` the spill files (the bottom of
    the complete search's path, and the prover's: the exhaustive search a
    solve falls back to when its memory runs out), `max_seconds` the time, `max_positions` (default: none) the
    positions stored. `spill_dir` only says where spill files go (default:
    the system's temporary directory); it never changes a result, so it
    takes no part in equality or a run's configuration.

    >>> Limits().max_disk == 8 << 30
    True
    """

    max_positions: int | None = None
    max_bytes: int = 1 << 30
    max_disk: int = 8 << 30
    max_seconds: float | None = None
    spill_dir: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if (
            (self.max_positions is not None and self.max_positions < 1)
            or self.max_bytes < 1
            or self.max_disk < 0
            or (self.max_seconds is not None and self.max_seconds <= 0)
        ):
            raise VariantError(f"limits must be positive: {self!r}")

    def as_tuple(self) -> tuple[int | None, int, int, float | None]:
        return (self.max_positions, self.max_bytes, self.max_disk, self.max_seconds)

    def _for_engine(self) -> Limits:
        """These limits with the spill directory resolved."""
        if self.spill_dir is not None:
            return self
        return dataclasses.replace(self, spill_dir=tempfile.gettempdir())


@dataclass(frozen=True)
class SolveResult:
    """The outcome of one search (docs/DESIGN.md, "Outcomes")."""

    deal_number: int | None
    variant: str
    cells: int
    move_rule: str
    outcome: Outcome
    limit_reason: str | None = None
    solution: tuple[str, ...] = ()
    auto: tuple[bool, ...] = field(default=(), repr=False)
    solution_length_single: int | None = None
    solution_length_multi: int | None = None
    positions_expanded: int = 0
    positions_stored: int = 0
    peak_bytes: int = 0
    peak_disk_bytes: int = 0
    elapsed_s: float = 0.0
    error: str | None = None

    @classmethod
    def _from_record(cls, n: int | None, v: Variant, r: _engine.SolveRecord) -> SolveResult:
        # Made without the dataclass's __init__, which sets each field of a
        # frozen dataclass through object.__setattr__: the same object (the
        # fields are all there is; no __post_init__), in half the time, which
        # counts when solve_range returns a million of them.
        res = object.__new__(cls)
        res.__dict__.update(
            deal_number=n,
            variant=v.name,
            cells=v.cells,
            move_rule=v.move_rule,
            outcome=r.outcome,
            limit_reason=r.limit_reason,
            solution=r.solution,
            auto=r.auto,
            solution_length_single=r.solution_length_single,
            solution_length_multi=r.solution_length_multi,
            positions_expanded=r.positions_expanded,
            positions_stored=r.positions_stored,
            peak_bytes=r.peak_bytes,
            peak_disk_bytes=r.peak_disk_bytes,
            elapsed_s=r.elapsed_s,
            error=r.error,
        )
        return res


@dataclass(frozen=True)
class MinCellsResult:
    """The fewest cells that win a deal, with the result for each count
    searched (the others are inferred: won with more cells than a count
    won, unsolvable with fewer than a count proved unsolvable)."""

    deal_number: int
    min_cells: int | None
    results: tuple[SolveResult, ...]

    @property
    def proved_unsolvable(self) -> int | None:
        """The largest count proved unsolvable, if any."""
        counts = [r.cells for r in self.results if r.outcome == "unsolvable"]
        return max(counts) if counts else None

    @property
    def solution(self) -> SolveResult | None:
        """The result that won with the fewest cells, if the minimum is known."""
        return next((r for r in self.results if r.cells == self.min_cells and r.outcome == "solved"), None)

    def by_count(self, lowest: int, highest: int) -> list[tuple[int, str, str]]:
        """``(cells, outcome, how)`` for every count `lowest..highest`: `how`
        is ``searched`` (the outcome of the search at that count),
        ``inferred`` (won with more cells than a count won; unsolvable with
        fewer than a count proved unsolvable) or ``open`` (outcome
        ``unknown``: a limit or an error left it).

        >>> [(k, o, h) for k, o, h in min_cells(1).by_count(0, 4)]  # doctest: +NORMALIZE_WHITESPACE
        [(0, 'unsolvable', 'inferred'), (1, 'unsolvable', 'inferred'), (2, 'unsolvable', 'searched'),
         (3, 'solved', 'searched'), (4, 'solved', 'inferred')]
        """
        searched = {r.cells: r.outcome for r in self.results}
        won = min((r.cells for r in self.results if r.outcome == "solved"), default=None)
        lost = self.proved_unsolvable
        out: list[tuple[int, str, str]] = []
        for k in range(lowest, highest + 1):
            if searched.get(k) in ("solved", "unsolvable"):
                out.append((k, searched[k], "searched"))
            elif won is not None and k > won:
                out.append((k, "solved", "inferred"))
            elif lost is not None and k < lost:
                out.append((k, "unsolvable", "inferred"))
            else:
                out.append((k, "unknown", "open"))
        return out


@dataclass(frozen=True)
class SolveProgress:
    """How far a running solve has got (`solve` and `min_cells` with
    `progress=`): the search running (`stage`: ``portfolio``, ``complete``,
    ``reserve`` or ``prover``, None before the first has reported), the
    cells of the game being solved, and that search's counts so far:
    positions expanded and stored, bytes of memory and of spill files held
    now, and the prover's layers started."""

    elapsed_s: float
    stage: str | None
    cells: int
    positions_expanded: int
    positions_stored: int
    bytes: int
    disk_bytes: int
    layers: int


_T = TypeVar("_T")


def _watched(
    call: Callable[[_engine.Progress | None], _T],
    progress: Callable[[SolveProgress], None] | None,
    every: float,
) -> _T:
    """`call(watch)`, with `progress` called every `every` seconds while it
    runs (the engine solves on another thread, the GIL released). Watching
    never changes a result; an exception while waiting (Ctrl-C) stops the
    engine before it propagates."""
    if progress is None:
        return call(None)
    if not every > 0:
        raise ValueError(f"progress_every must be a positive number of seconds, not {every!r}")
    watch = _engine.Progress()
    outcome: list[_T] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            outcome.append(call(watch))
        except BaseException as e:  # handed to the caller's thread
            failure.append(e)

    start = time.monotonic()
    worker = threading.Thread(target=run, name="freecell-analyzer solve", daemon=True)
    worker.start()
    try:
        while True:
            worker.join(every)
            if not worker.is_alive():
                break
            stage, cells, expanded, stored, held, disk, layers = watch.snapshot()
            progress(SolveProgress(time.monotonic() - start, stage, cells, expanded, stored, held, disk, layers))
    except BaseException:
        # A Ctrl-C (or the callback's own error): the engine stops at its
        # next look at the clock, and nothing runs on behind the caller.
        watch.cancel()
        worker.join()
        raise
    if failure:
        raise failure[0]
    return outcome[0]


def solve(
    deal_or_board: int | Board,
    variant: VariantLike = "freecell",
    *,
    cells: int | None = None,
    move_rule: str | None = None,
    limits: Limits | None = None,
    progress: Callable[[SolveProgress], None] | None = None,
    progress_every: float = 10.0,
) -> SolveResult:
    """Solves a deal number or a board: `solved`, `unsolvable`, or `limit`.
    With `progress`, that function is called every `progress_every`
    seconds while the solve runs, with a `SolveProgress`.

    >>> solve(11982).outcome
    'unsolvable'
    """
    lim = (limits or Limits())._for_engine()
    n: int | None
    if isinstance(deal_or_board, Board):
        n = None
        v = _variant(deal_or_board.variant, cells, move_rule)
        board = Board(str(deal_or_board), v) if v != deal_or_board.variant else deal_or_board
        b = board._b
    else:
        n = check_deal_number(deal_or_board)
        v = _variant(variant, cells, move_rule)
        b = _engine.deal(n, v)
    return SolveResult._from_record(n, v, _watched(lambda w: _engine.solve(b, lim, w), progress, progress_every))


def solve_range(
    start: int,
    stop: int,
    variant: VariantLike = "freecell",
    *,
    cells: int | None = None,
    move_rule: str | None = None,
    limits: Limits | None = None,
    fail_deals: Sequence[int] = (),
) -> list[SolveResult]:
    """Solves deals ``start .. stop-1`` inside the engine, GIL released.

    A failure on one deal gives an ``error`` result for that deal only.
    `fail_deals` injects such failures (for tests of the batch layer).

    >>> [r.outcome for r in solve_range(1, 4)]
    ['solved', 'solved', 'solved']
    """
    span = _deal_span(start, stop)
    if span is None:
        return []
    v = _variant(variant, cells, move_rule)
    rows = _engine.solve_range(*span, v, (limits or Limits())._for_engine(), list(fail_deals))
    return [SolveResult._from_record(n, v, r) for n, r in rows]


def _deal_span(start: int, stop: int) -> tuple[int, int] | None:
    """Deals ``start .. stop-1`` checked (the first and the last), or None
    when there are none."""
    a, b = check_deal_number(start), int(stop)
    if b <= a:
        return None
    check_deal_number(b - 1)
    return a, b


#: The fields `solve_range_table` gives (`solve_range_columns`: one list each).
RANGE_COLUMNS: Final = (
    "deal_number", "outcome", "limit_reason", "solution", "solution_length_single", "solution_length_multi",
    "positions_expanded", "positions_stored", "peak_bytes", "elapsed_s", "error",
)  # fmt: skip


def solve_range_columns(
    start: int,
    stop: int,
    variant: VariantLike = "freecell",
    *,
    cells: int | None = None,
    move_rule: str | None = None,
    limits: Limits | None = None,
    fail_deals: Sequence[int] = (),
) -> dict[str, list[Any]]:
    """`solve_range`'s searches, their results as columns: a list per field
    of `RANGE_COLUMNS`, in the order of the deals, ``solution`` as the move
    texts joined by spaces (None unless solved): `solve_range_table`'s
    columns as lists.

    >>> c = solve_range_columns(1, 3)
    >>> c["deal_number"], c["outcome"]
    ([1, 2], ['solved', 'solved'])
    >>> c["solution"][0].split() == list(solve_range(1, 2)[0].solution)
    True
    """
    t = solve_range_table(start, stop, variant, cells=cells, move_rule=move_rule, limits=limits, fail_deals=fail_deals)
    return t.to_pydict()


def solve_range_table(
    start: int,
    stop: int,
    variant: VariantLike = "freecell",
    *,
    cells: int | None = None,
    move_rule: str | None = None,
    limits: Limits | None = None,
    fail_deals: Sequence[int] = (),
) -> pa.Table:
    """`solve_range`'s searches as an Arrow table of the `RANGE_COLUMNS`,
    typed as `analyzer.schema` declares them, made from the engine's own
    buffers: no Python object per deal, and no pandas (which
    ``pyarrow.array`` imports on its first call when it is installed). For
    writing tables of many results (the batch run's tasks).

    >>> t = solve_range_table(1, 3)
    >>> t.column("deal_number").to_pylist(), t.column("outcome").to_pylist(), t.schema.field("outcome").type
    ([1, 2], ['solved', 'solved'], DictionaryType(dictionary<values=string, indices=int8, ordered=0>))
    """
    import pyarrow as pa

    from .schema import column, string_array

    fields = [pa.field(name, column(name).type, nullable=column(name).nullable) for name in RANGE_COLUMNS]
    span = _deal_span(start, stop)
    if span is None:
        return pa.schema(fields).empty_table()
    v = _variant(variant, cells, move_rule)
    raw = _engine.solve_range_arrow(*span, v, (limits or Limits())._for_engine(), list(fail_deals))
    n: int = raw["n"]
    arrays: list[pa.Array[Any]] = []
    for f in fields:
        valid, offsets, values = raw[f.name]
        bufs = [None if valid is None else pa.py_buffer(valid), pa.py_buffer(values)]
        if offsets is not None:  # strings, with 64-bit offsets
            bufs.insert(1, pa.py_buffer(offsets))
            arrays.append(pa.Array.from_buffers(pa.large_string(), n, bufs).cast(f.type))
        elif pa.types.is_dictionary(f.type):  # codes into the engine's labels
            codes = pa.Array.from_buffers(pa.int8(), n, bufs)
            arrays.append(pa.DictionaryArray.from_arrays(codes, string_array(raw[f"{f.name}_labels"])))
        else:
            arrays.append(pa.Array.from_buffers(f.type, n, bufs))
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def min_cells(
    deal_number: int,
    variant: VariantLike = "freecell",
    *,
    max_cells: int = 8,
    move_rule: str | None = None,
    limits: Limits | None = None,
    progress: Callable[[SolveProgress], None] | None = None,
    progress_every: float = 10.0,
) -> MinCellsResult:
    """The smallest number of cells that wins the deal: solved with that
    many, and proved unsolvable with one fewer, which proves it for every
    smaller number too (a solution with fewer cells is one with more). Only
    the counts needed are searched, from 2 for games built in alternate
    colours (most deals need exactly 2); `results` holds them in the order
    searched, and the rest follow by inference. `progress` as for `solve`
    (its `cells` the count being searched).

    >>> m = min_cells(1)
    >>> m.min_cells, [(r.cells, r.outcome) for r in m.results]
    (3, [(2, 'unsolvable'), (3, 'solved')])
    >>> m.proved_unsolvable
    2
    """
    n = check_deal_number(deal_number)
    v = _variant(variant, None, move_rule)
    lim = (limits or Limits())._for_engine()
    best, rows = _watched(lambda w: _engine.min_cells(n, v, max_cells, lim, w), progress, progress_every)
    results = tuple(SolveResult._from_record(n, dataclasses.replace(v, cells=k), r) for k, r in rows)
    return MinCellsResult(n, best, results)
