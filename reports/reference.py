"""Published figures, shipped with the package, and a run's figures set beside them.

The facts live in ``reports/data/published.toml`` with their sources (and
three deal lists beside it). `load` reads and checks them; `compare` takes the
per-deal view of one run and returns one row per published figure that
matches the run's variant, counts of cells and deals:

- ``agree``: ours equals the published figure (deal by deal where the source
  lists deals);
- ``disagree``: it does not (the deals that differ are named);
- ``settled``: it agrees wherever the source decided, and our proved results
  decide deals the source left "intractable";
- ``open``: it agrees wherever both decided, but some of our deals hit a
  limit, failed or are missing, so the figure is not complete yet.

A published share of random deals (Bryan's Baker's Game table) is compared as
a proportion: ``agree`` when the two shares are within three standard errors
of each other.

>>> ref = load()
>>> ref.fact("ms32000-min-cells").counts
{0: 69, 1: 6220, 2: 19092, 3: 6420, 4: 198, 5: 1}
>>> ref.fact("ms32000-min-cells").minimum_of(11982), ref.fact("ms32000-min-cells").minimum_of(617)
(5, 4)
"""

from __future__ import annotations

import functools
import math
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Final

import numpy as np
import numpy.typing as npt
import pandas as pd

import analyzer
from analyzer.headline import INFERRED, percent_text

DATA: Final = "data"
TABLE: Final = "published.toml"
#: Verdicts, in the order a reader meets them.
VERDICTS: Final = ("agree", "disagree", "settled", "open")
#: Two shares agree when they differ by at most this many standard errors.
SHARE_SIGMAS: Final = 3.0
#: Deals named in a note before "... and N more".
NOTE_DEALS: Final = 12
#: The rules that decide whether a deal can be won (the move rule does not,
#: except `unlimited`, which allows moves no sequence of single moves makes).
RULE_FIELDS: Final = ("columns", "build", "empty", "dealt_to_cells")

Ints = npt.NDArray[np.int64]


class ReferenceError(ValueError):
    """The shipped reference table is inconsistent (a packaging bug)."""


@dataclass(frozen=True)
class Source:
    id: str
    title: str
    author: str
    date: str
    url: str
    detail: str

    def cite(self) -> str:
        return f"{self.author} ({self.date}), {self.title}"


@dataclass(frozen=True)
class Fact:
    """One published figure (see published.toml for the kinds)."""

    id: str
    kind: str
    source: Source
    variant: str
    deals: tuple[int, int]
    cells: int | None = None
    outcome: str | None = None
    members: Ints = field(default_factory=lambda: np.array([], np.int64))
    minimum: npt.NDArray[np.int8] | None = None
    counts: Mapping[int, int] = field(default_factory=dict)
    value: int | None = None
    intractable: Ints = field(default_factory=lambda: np.array([], np.int64))
    intractable_count: int = 0
    shown: str = ""
    won: tuple[int, ...] = ()
    sample: int = 0
    note: str = ""

    def minimum_of(self, deal: int) -> int:
        if self.minimum is None or not self.deals[0] <= deal <= self.deals[1]:
            raise KeyError(deal)
        return int(self.minimum[deal - self.deals[0]])

    def describe(self) -> str:
        """The figure in words, e.g. ``deals unsolvable with 4 cells``."""
        cells = "" if self.cells is None else f" with {self.cells} cell{'s' if self.cells != 1 else ''}"
        what = {
            "min_cells": "deals per minimum number of cells",
            "share": f"share of random deals won{cells}",
        }.get(self.kind, f"deals {'won' if self.outcome == 'solved' else 'unsolvable'}{cells}")
        return f"{self.variant}: {what}"


@dataclass(frozen=True)
class Reference:
    sources: Mapping[str, Source]
    facts: tuple[Fact, ...]

    def fact(self, id_: str) -> Fact:
        for f in self.facts:
            if f.id == id_:
                return f
        raise KeyError(id_)

    def table(self) -> pd.DataFrame:
        """Every fact as one row, for the report's appendix and CSV."""
        rows = []
        for f in self.facts:
            if f.kind == "min_cells":
                value = "; ".join(f"{k}: {v:,}" for k, v in f.counts.items())
            elif f.kind == "deal_set":
                value = f"{len(f.members):,}" + (
                    f" (+{len(f.intractable)} intractable)" if len(f.intractable) else ""
                )
            elif f.kind == "count":
                value = f"{f.value:,}" + (
                    f" (+{f.intractable_count} intractable)" if f.intractable_count else ""
                )
            else:
                value = f"{f.shown} ({sum(f.won):,} of {f.sample * len(f.won):,})"
            rows.append(
                {
                    "figure": f.describe(),
                    "deals": "random deals" if f.kind == "share" else _range_text(f.deals),
                    "published": value,
                    "note": f.note,
                    "source": f.source.cite(),
                    "url": f.source.url,
                }
            )
        return pd.DataFrame(rows, columns=["figure", "deals", "published", "note", "source", "url"])


def _range(text: str) -> tuple[int, int]:
    a, _, b = str(text).partition("-")
    return int(a), int(b or a)


def _range_text(r: tuple[int, int]) -> str:
    return f"{r[0]:,}-{r[1]:,}" if r[0] != r[1] else f"{r[0]:,}"


def _data_lines(name: str) -> list[str]:
    text = resources.files(__package__ or "reports").joinpath(DATA, name).read_text(encoding="utf-8")
    return [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")]


def _fact(raw: Mapping[str, Any], sources: Mapping[str, Source]) -> Fact:
    kind = str(raw["kind"])
    fid = str(raw["id"])
    src = sources[str(raw["source"])]
    deals = _range(raw["deals"]) if "deals" in raw else (1, 2**33 - 1)
    common: dict[str, Any] = {
        "id": fid,
        "kind": kind,
        "source": src,
        "variant": str(raw["variant"]),
        "deals": deals,
        "cells": int(raw["cells"]) if "cells" in raw else None,
        "outcome": str(raw["outcome"]) if "outcome" in raw else None,
        "note": str(raw.get("note", "")),
    }
    if kind == "min_cells":
        digits = "".join(_data_lines(str(raw["file"])))
        minimum = np.frombuffer(digits.encode(), dtype=np.uint8).astype(np.int8) - ord("0")
        if len(minimum) != deals[1] - deals[0] + 1:
            raise ReferenceError(f"{fid}: {len(minimum)} deals in {raw['file']}, expected {deals}")
        counts = {int(k): int(v) for k, v in raw["counts"].items()}
        found = {int(k): int(v) for k, v in zip(*np.unique(minimum, return_counts=True), strict=True)}
        if found != counts:
            raise ReferenceError(f"{fid}: {raw['file']} counts {found}, the source says {counts}")
        return Fact(**common, minimum=minimum, counts=counts)
    if kind == "deal_set":
        listed = (
            [int(x) for x in raw["list"]]
            if "list" in raw
            else [int(x) for x in _data_lines(str(raw["file"]))]
        )
        members = np.array(sorted(listed), dtype=np.int64)
        if "count" in raw and len(members) != int(raw["count"]):
            raise ReferenceError(f"{fid}: {len(members)} deals listed, the source says {raw['count']}")
        if len(members) and not (deals[0] <= members[0] and members[-1] <= deals[1]):
            raise ReferenceError(f"{fid}: a listed deal lies outside {deals}")
        intractable = np.array(sorted(int(x) for x in raw.get("intractable", [])), dtype=np.int64)
        return Fact(**common, members=members, intractable=intractable)
    if kind == "count":
        return Fact(**common, value=int(raw["value"]), intractable_count=int(raw.get("intractable", 0)))
    if kind == "share":
        return Fact(
            **common,
            shown=str(raw["shown"]),
            won=tuple(int(x) for x in raw["won"]),
            sample=int(raw["sample"]),
        )
    raise ReferenceError(f"{fid}: unknown kind {kind!r}")


@functools.cache
def load() -> Reference:
    """The shipped reference table, checked against its own deal lists."""
    text = resources.files(__package__ or "reports").joinpath(DATA, TABLE).read_text(encoding="utf-8")
    data = tomllib.loads(text)
    sources = {
        k: Source(
            k, str(v["title"]), str(v["author"]), str(v["date"]), str(v["url"]), str(v.get("detail", ""))
        )
        for k, v in data["sources"].items()
    }
    return Reference(sources, tuple(_fact(raw, sources) for raw in data["facts"]))


# --- comparing a run -------------------------------------------------------------------


@dataclass(frozen=True)
class RunFigures:
    """What a comparison needs of one run.

    `grid` is the per-deal view (`analyzer.headline.deal_cells` as pandas:
    deal_number, cells, outcome, how); `minimum` the per-deal minimum of a
    min-cells run (deal_number, min_cells, status), else None; `declared` the
    deal ranges the run was asked for.
    """

    label: str
    variant: Mapping[str, Any]
    cells: tuple[int, ...]
    grid: pd.DataFrame
    declared: tuple[tuple[int, int], ...]
    minimum: pd.DataFrame | None = None


def same_rules(variant: Mapping[str, Any], preset: str) -> bool:
    """Whether a run's variant decides wins as the named preset does."""
    try:
        ref = analyzer.Variant.named(preset).as_dict()
    except (ValueError, KeyError):
        return False
    if str(variant.get("move_rule", "")) == "unlimited":
        return False
    return all(str(variant.get(k)) == str(ref[k]) for k in RULE_FIELDS)


def _deals_text(deals: Ints, fact_range: tuple[int, int]) -> str:
    if not len(deals):
        return "none"
    lo, hi = int(deals.min()), int(deals.max())
    text = f"{lo:,}-{hi:,}" if hi > lo else f"{lo:,}"
    if hi - lo + 1 != len(deals):
        text += f" ({len(deals):,} deals)"
    if (lo, hi) != fact_range:
        text += f"; published for {_range_text(fact_range)}"
    return text


def _names(deals: Iterable[int], limit: int = NOTE_DEALS) -> str:
    d = sorted(int(x) for x in deals)
    shown = ", ".join(str(x) for x in d[:limit])
    return shown + (f" and {len(d) - limit:,} more" if len(d) > limit else "")


def _row(
    fact: Fact, *, deals: str, ours: str, published: str, difference: str, verdict: str, note: str
) -> dict[str, str]:
    return {
        "figure": fact.describe(),
        "cells": "" if fact.cells is None else str(fact.cells),
        "deals compared": deals,
        "ours": ours,
        "published": published,
        "difference": difference,
        "verdict": verdict,
        "note": "; ".join(x for x in (note, fact.note) if x),
        "source": fact.source.cite(),
        "url": fact.source.url,
    }


#: The verdict right after the figure: it is what a reader looks for first.
COLUMNS: Final = [
    "figure",
    "verdict",
    "ours",
    "published",
    "difference",
    "cells",
    "deals compared",
    "note",
    "source",
    "url",
]


def _signed(n: int) -> str:
    return f"{n:+,}" if n else "0"


def _at(grid: pd.DataFrame, k: int, lo: int, hi: int) -> pd.DataFrame:
    g = grid[(grid["cells"] == k) & (grid["deal_number"] >= lo) & (grid["deal_number"] <= hi)]
    return g


def _set_rows(
    fact: Fact,
    run: RunFigures,
    k: int,
    outcome: str,
    published: Ints,
    intractable: Ints,
    *,
    label: str | None = None,
) -> dict[str, str] | None:
    """Ours against a published set of deals with `outcome` at `k` cells."""
    g = _at(run.grid, k, *fact.deals)
    if not len(g):
        return None
    deals = g["deal_number"].to_numpy(dtype=np.int64)
    status = g["outcome"].astype(object).to_numpy()
    ours = deals[status == outcome]
    open_ = deals[~np.isin(status, ["solved", "unsolvable"])]
    pub = published[np.isin(published, deals)]
    intr = intractable[np.isin(intractable, deals)]
    differ = np.setxor1d(ours, pub)
    differ = differ[~np.isin(differ, intr) & ~np.isin(differ, open_)]
    notes = []
    if len(differ):
        verdict = "disagree"
        only_ours = differ[np.isin(differ, ours)]
        only_pub = differ[~np.isin(differ, ours)]
        if len(only_ours):
            notes.append(f"only ours: {_names(only_ours)}")
        if len(only_pub):
            notes.append(f"only published: {_names(only_pub)}")
    elif len(open_):
        verdict = "open"
        notes.append(f"{len(open_):,} of our deals open (limit, error or not tried): {_names(open_)}")
    elif len(intr):
        verdict = "settled"
        decided = {int(d): str(o) for d, o in zip(deals, status, strict=True)}
        notes.append(
            "published intractable, ours proved: "
            + ", ".join(f"{int(d)} {decided[int(d)]}" for d in intr[:NOTE_DEALS])
        )
    else:
        verdict = "agree"
    inferred = int((g["how"].astype(object).to_numpy()[status == outcome] == INFERRED).sum())
    if inferred:
        notes.append(f"{inferred:,} of ours inferred from other counts of cells")
    pub_text = f"{len(pub):,}" + (f" (+{len(intr)} intractable)" if len(intr) else "")
    row = _row(
        fact,
        deals=_deals_text(deals, fact.deals),
        ours=f"{len(ours):,}",
        published=pub_text,
        difference=_signed(len(ours) - len(pub)),
        verdict=verdict,
        note="; ".join(notes),
    )
    if label:
        row["figure"] = label
        row["cells"] = str(k)
        row["note"] = "; ".join(notes)
    return row


def _min_cells_rows(fact: Fact, run: RunFigures) -> list[dict[str, str]]:
    assert fact.minimum is not None
    lo, hi = fact.deals
    rows: list[dict[str, str]] = []
    if run.minimum is not None:
        m = run.minimum[(run.minimum["deal_number"] >= lo) & (run.minimum["deal_number"] <= hi)]
        if not len(m):
            return []
        deals = m["deal_number"].to_numpy(dtype=np.int64)
        pub = fact.minimum[deals - lo].astype(np.int64)
        status = m["status"].astype(object).to_numpy()
        ours = m["min_cells"].astype("Int64").fillna(-1).to_numpy(dtype=np.int64)
        top = max(run.cells) if run.cells else 0
        found = status == "found"
        above = status == "above"
        wrong = deals[(found & (ours != pub)) | (above & (pub <= top))]
        open_ = deals[status == "undetermined"]
        for level in sorted(set(fact.counts) | {int(x) for x in ours[found]}):
            o = int((found & (ours == level)).sum())
            p = int((pub == level).sum())
            bad = wrong[np.isin(wrong, deals[(pub == level) | (found & (ours == level))])]
            notes = []
            if len(bad):
                verdict = "disagree"
                notes.append(f"deals that differ: {_names(bad)}")
            elif o != p and len(open_):
                verdict = "open"
                notes.append(f"{len(open_):,} of our deals undetermined: {_names(open_)}")
            elif o != p:
                verdict = "disagree" if level <= top else "open"
                if level > top:
                    notes.append(f"the run tried at most {top} cells")
            else:
                verdict = "agree"
            row = _row(
                fact,
                deals=_deals_text(deals, fact.deals),
                ours=f"{o:,}",
                published=f"{p:,}",
                difference=_signed(o - p),
                verdict=verdict,
                note="; ".join(notes),
            )
            row["figure"] = f"{fact.variant}: deals whose minimum is {level} cell{'s' if level != 1 else ''}"
            row["cells"] = str(level)
            row["note"] = "; ".join(notes)
            rows.append(row)
        return rows
    # a run at fixed counts of cells: the table says which deals each count cannot win
    for k in run.cells:
        g = _at(run.grid, k, lo, hi)
        if not len(g):
            continue
        deals = g["deal_number"].to_numpy(dtype=np.int64)
        unsolvable = deals[fact.minimum[deals - lo] > k]
        derived = _set_rows(
            fact,
            run,
            k,
            "unsolvable",
            unsolvable,
            np.array([], np.int64),
            label=f"{fact.variant}: deals unsolvable with {k} cell{'s' if k != 1 else ''} (from the minimum per deal)",
        )
        if derived:
            rows.append(derived)
    return rows


def _count_row(fact: Fact, run: RunFigures) -> dict[str, str] | None:
    assert fact.cells is not None and fact.value is not None and fact.outcome is not None
    if run.declared != (fact.deals,) or fact.cells not in run.cells:
        return None
    g = _at(run.grid, fact.cells, *fact.deals)
    status = g["outcome"].astype(object).to_numpy()
    ours = int((status == fact.outcome).sum())
    missing = fact.deals[1] - fact.deals[0] + 1 - len(g)
    open_ = int((~np.isin(status, ["solved", "unsolvable"])).sum()) + missing
    notes = []
    if open_:
        verdict = "open"
        notes.append(f"{open_:,} of our deals open or missing")
    elif fact.intractable_count:
        ok = fact.value <= ours <= fact.value + fact.intractable_count
        verdict = "settled" if ok else "disagree"
        if ok:
            notes.append(
                f"the {fact.intractable_count} published intractable deals: {ours - fact.value} {fact.outcome} "
                f"and {fact.value + fact.intractable_count - ours} not, by our proofs"
            )
    else:
        verdict = "agree" if ours == fact.value else "disagree"
    pub = f"{fact.value:,}" + (f" (+{fact.intractable_count} intractable)" if fact.intractable_count else "")
    return _row(
        fact,
        deals=_deals_text(g["deal_number"].to_numpy(dtype=np.int64), fact.deals),
        ours=f"{ours:,}",
        published=pub,
        difference=_signed(ours - fact.value),
        verdict=verdict,
        note="; ".join(notes),
    )


def _points(diff: float) -> str:
    """A difference of shares in percentage points: ``+1.54 points``, ``0 points``."""
    return "0 points" if diff == 0 else f"{100 * diff:+.3g} points"


def share_verdict(won: int, decided: int, pub_won: int, pub_n: int) -> tuple[str, float]:
    """``agree`` when two shares differ by at most `SHARE_SIGMAS` pooled standard errors.

    >>> share_verdict(750, 1000, 750611, 1000000)[0], share_verdict(600, 1000, 750611, 1000000)[0]
    ('agree', 'disagree')
    """
    p1, p2 = won / decided, pub_won / pub_n
    pooled = (won + pub_won) / (decided + pub_n)
    se = math.sqrt(max(pooled * (1 - pooled), 0.0) * (1 / decided + 1 / pub_n))
    z = abs(p1 - p2) / se if se > 0 else (0.0 if p1 == p2 else math.inf)
    return ("agree" if z <= SHARE_SIGMAS else "disagree"), z


def _share_row(fact: Fact, run: RunFigures) -> dict[str, str] | None:
    assert fact.cells is not None
    if fact.cells not in run.cells:
        return None
    g = run.grid[run.grid["cells"] == fact.cells]
    status = g["outcome"].astype(object).to_numpy()
    won = int((status == "solved").sum())
    decided = won + int((status == "unsolvable").sum())
    if not decided:
        return None
    pub_won, pub_n = sum(fact.won), fact.sample * len(fact.won)
    verdict, z = share_verdict(won, decided, pub_won, pub_n)
    open_ = len(g) - decided
    notes = [
        f"published: random deals; ours: Microsoft deals; {z:.1f} standard errors apart"
        + (f"; {open_:,} of our deals open, left out" if open_ else "")
    ]
    deals = g["deal_number"].to_numpy(dtype=np.int64)
    return _row(
        fact,
        deals=_deals_text(deals, (int(deals.min()), int(deals.max()))),
        ours=f"{percent_text(won / decided)} ({won:,} of {decided:,})",
        published=f"{fact.shown} ({pub_won:,} of {pub_n:,})",
        difference=_points(won / decided - pub_won / pub_n),
        verdict=verdict,
        note="; ".join(notes),
    )


def compare(run: RunFigures, reference: Reference | None = None) -> pd.DataFrame:
    """Every published figure that matches the run, ours beside it (`COLUMNS`)."""
    ref = reference or load()
    rows: list[dict[str, str]] = []
    deal_lo = int(run.grid["deal_number"].min()) if len(run.grid) else 0
    deal_hi = int(run.grid["deal_number"].max()) if len(run.grid) else -1
    for fact in ref.facts:
        if not same_rules(run.variant, fact.variant):
            continue
        if fact.kind != "share" and (deal_hi < fact.deals[0] or deal_lo > fact.deals[1]):
            continue
        if fact.kind == "min_cells":
            rows += _min_cells_rows(fact, run)
        elif fact.kind == "deal_set":
            assert fact.cells is not None and fact.outcome is not None
            if fact.cells in run.cells and (run.minimum is None or fact.cells <= max(run.cells)):
                row = _set_rows(fact, run, fact.cells, fact.outcome, fact.members, fact.intractable)
                if row:
                    rows.append(row)
        elif fact.kind == "count":
            row = _count_row(fact, run)
            if row:
                rows.append(row)
        elif fact.kind == "share":
            row = _share_row(fact, run)
            if row:
                rows.append(row)
    return pd.DataFrame(rows, columns=COLUMNS)


def runs_table(runs: Sequence[RunFigures], reference: Reference | None = None) -> pd.DataFrame:
    """`compare` for several runs, stacked with a leading ``run`` column when there are several."""
    parts = []
    for r in runs:
        t = compare(r, reference)
        if len(runs) > 1:
            t.insert(0, "run", r.label)
        parts.append(t)
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=COLUMNS)
