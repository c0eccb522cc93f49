"""Deal ranges: parsing ``1-32000``, ``11982``, ``1-1000,5000-6000``, and the
set arithmetic a resumable run needs (what is missing, how to cut it into
chunks).

Ranges are inclusive at both ends, as users write them and as chunk file
names carry them (docs/DESIGN.md, "Runs on disk").

>>> parse_deals("1-1000,5000-6000")
(DealRange(1, 1000), DealRange(5000, 6000))
>>> format_deals(parse_deals("1-10,11-20,30"))
'1-20,30'
>>> [str(r) for r in split_chunks(parse_deals("995-2010"), 1000)]
['995-1000', '1001-2000', '2001-2010']
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from analyzer.cliframe import DEALS_EXAMPLE, parse_deal_span
from analyzer.errors import RangeError

#: Microsoft deals are numbered 1..2^33-1 (REFERENCE.md; DESIGN.md "Deal
#: generator note").
MIN_DEAL: Final = 1
MAX_DEAL: Final = 2**33 - 1

_EXAMPLE = DEALS_EXAMPLE


@dataclass(frozen=True, order=True)
class DealRange:
    """Deals ``start..end``, both inclusive; ``str`` gives the notation back.

    >>> DealRange(1, 32000), str(DealRange(1, 32000)), str(DealRange(7, 7))
    (DealRange(1, 32000), '1-32000', '7')
    >>> len(DealRange(1, 32000))
    32000
    """

    start: int
    end: int

    def __post_init__(self) -> None:
        for n in (self.start, self.end):
            if isinstance(n, bool) or not isinstance(n, int) or not MIN_DEAL <= n <= MAX_DEAL:
                raise RangeError(f"deal {n!r} is out of range: Microsoft deals are numbered {MIN_DEAL}..{MAX_DEAL}")
        if self.start > self.end:
            raise RangeError(f"deal range {self.start}-{self.end} is reversed: it must be written low-high")

    def __repr__(self) -> str:
        return f"DealRange({self.start}, {self.end})"

    def __str__(self) -> str:
        return str(self.start) if self.start == self.end else f"{self.start}-{self.end}"

    def __len__(self) -> int:
        return self.end - self.start + 1

    def __contains__(self, deal: object) -> bool:
        return isinstance(deal, int) and self.start <= deal <= self.end

    def deals(self) -> range:
        """The deal numbers, as a Python range."""
        return range(self.start, self.end + 1)


def _parse_part(part: str, whole: str) -> DealRange:
    start, end = parse_deal_span(part, whole)
    return DealRange(start, end)


def parse_deals(text: str) -> tuple[DealRange, ...]:
    """Parses DEALS: comma-separated ``N`` or ``A-B`` (inclusive), sorted,
    with adjacent ranges merged. Overlaps are refused (most likely a typo).
    Each item is read by `analyzer.cliframe.parse_deal_span`, the one
    reader of deal numbers (digits 0-9 only).

    >>> parse_deals("5000-6000, 1-1000")
    (DealRange(1, 1000), DealRange(5000, 6000))
    >>> parse_deals("1-100,50-60")
    Traceback (most recent call last):
    ...
    analyzer.errors.RangeError: deal ranges '1-100' and '50-60' overlap (deals 50-60)
    """
    if not text.strip():
        raise RangeError(f"no deals given: {_EXAMPLE}")
    parts = [(p.strip(), _parse_part(p, text)) for p in text.split(",")]
    parts.sort(key=lambda t: (t[1].start, t[1].end))
    for (ta, a), (tb, b) in itertools.pairwise(parts):
        if b.start <= a.end:
            both = DealRange(b.start, min(a.end, b.end))
            raise RangeError(f"deal ranges {ta!r} and {tb!r} overlap (deals {both})")
    return merge([r for _, r in parts])


def merge(ranges: Iterable[DealRange]) -> tuple[DealRange, ...]:
    """The union of `ranges` as sorted, disjoint, non-adjacent ranges.

    >>> merge([DealRange(5, 9), DealRange(1, 4), DealRange(8, 12)])
    (DealRange(1, 12),)
    """
    out: list[DealRange] = []
    for r in sorted(ranges):
        if out and r.start <= out[-1].end + 1:
            if r.end > out[-1].end:
                out[-1] = DealRange(out[-1].start, r.end)
        else:
            out.append(r)
    return tuple(out)


def subtract(ranges: Iterable[DealRange], covered: Iterable[DealRange]) -> tuple[DealRange, ...]:
    """The deals of `ranges` not in `covered`.

    >>> subtract([DealRange(1, 100)], [DealRange(11, 20), DealRange(50, 200)])
    (DealRange(1, 10), DealRange(21, 49))
    """
    cov = merge(covered)
    out: list[DealRange] = []
    for r in merge(ranges):
        lo = r.start
        for c in cov:
            if c.end < lo or c.start > r.end:
                continue
            if c.start > lo:
                out.append(DealRange(lo, c.start - 1))
            lo = c.end + 1
            if lo > r.end:
                break
        if lo <= r.end:
            out.append(DealRange(lo, r.end))
    return tuple(out)


def intersect(ranges: Iterable[DealRange], other: Iterable[DealRange]) -> tuple[DealRange, ...]:
    """The deals in both.

    >>> intersect([DealRange(1, 10)], [DealRange(5, 20)])
    (DealRange(5, 10),)
    """
    a = merge(ranges)
    return subtract(a, subtract(a, other))


def count(ranges: Iterable[DealRange]) -> int:
    """The number of distinct deals.

    >>> count(parse_deals("1-1000,5000-6000"))
    2001
    """
    return sum(len(r) for r in merge(ranges))


def split_chunks(ranges: Iterable[DealRange], size: int) -> list[DealRange]:
    """Cuts `ranges` into chunks on a fixed grid: every chunk lies inside one
    block ``k*size+1 .. (k+1)*size``, so the same deals always give the same
    chunk names whatever DEALS they were asked through (``1-1000`` now and
    ``1-2000`` later share the chunk ``1-1000``).

    >>> [str(r) for r in split_chunks([DealRange(1, 25)], 10)]
    ['1-10', '11-20', '21-25']
    """
    if size < 1:
        raise RangeError(f"chunk size must be at least 1, not {size}")
    out: list[DealRange] = []
    for r in merge(ranges):
        lo = r.start
        while lo <= r.end:
            hi = min(r.end, ((lo - 1) // size + 1) * size)
            out.append(DealRange(lo, hi))
            lo = hi + 1
    return out


def format_deals(ranges: Sequence[DealRange] | Iterable[DealRange], *, limit: int | None = None) -> str:
    """Writes ranges back as DEALS text; with `limit`, at most that many
    ranges followed by ``... (N more)``.

    >>> format_deals([DealRange(1, 5), DealRange(9, 9), DealRange(20, 30)], limit=2)
    '1-5,9, ... (1 more)'
    """
    rs = merge(ranges)
    if limit is not None and len(rs) > limit:
        return ",".join(str(r) for r in rs[:limit]) + f", ... ({len(rs) - limit} more)"
    return ",".join(str(r) for r in rs)


def ranges_of(deals: Iterable[int]) -> tuple[DealRange, ...]:
    """Compresses deal numbers into ranges.

    >>> ranges_of([3, 1, 2, 7])
    (DealRange(1, 3), DealRange(7, 7))
    """
    out: list[DealRange] = []
    for n in sorted(set(deals)):
        if out and n == out[-1].end + 1:
            out[-1] = DealRange(out[-1].start, n)
        else:
            out.append(DealRange(n, n))
    return tuple(out)
