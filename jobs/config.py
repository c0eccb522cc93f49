"""The configuration of a run, its canonical JSON and hash, and provenance.

Two runs share a directory only if their configurations hash the same
(docs/DESIGN.md, "Runs on disk"): the hash is the sha256 of the canonical
JSON (sorted keys, no spaces), so it does not depend on how the options
were spelled on the command line.

>>> c = build_config("freecell", cells="0-2")
>>> c.cells, c.min_cells, c.variant.move_rule
((0, 1, 2), False, 'product')
>>> c.canonical_json()[:60]
'{"cells":[0,1,2],"limits":{"max_bytes":1073741824,"max_disk"'
>>> len(c.config_hash())
64
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Final

import analyzer
from analyzer import Limits, Variant, _engine, cliframe
from analyzer._api import MOVE_RULES, PRESET_NAMES
from analyzer.cliframe import MAX_LIMIT, MAX_SECONDS, parse_cell_range
from analyzer.errors import AnalyzerError, VariantError

from .errors import ConfigError

#: Cell counts a variant may have (DESIGN.md, "Variant": cells 0..10).
MAX_CELLS: Final = cliframe.MAX_CELLS
#: Largest cell count `--min-cells` tries unless told otherwise; the
#: engine's own default (`analyzer.min_cells(max_cells=8)`).
DEFAULT_MAX_CELLS: Final = 8

#: Memory a task needs beyond the solver's byte budget: the worker process,
#: the engine's result rows and the Arrow table of one chunk. The budget
#: itself is scaled by 1.25 because the solver checks it between expansions
#: and was seen to overshoot it by up to ~13% (peak 1.21e9 for 2^30).
TASK_MEMORY_OVERHEAD: Final = 256 * 2**20
TASK_MEMORY_FACTOR: Final = 1.25


@dataclass(frozen=True)
class RunConfig:
    """What a run computes for every deal: the rules, which cell counts, and
    the per-deal search budgets.

    `cells` lists the counts solved for each deal; for a min-cells run it
    is the range the search may try (``dealt_to_cells..max_cells``).
    `fail_deals` (testing only) makes the engine fail on those deals; it is
    part of the configuration, and of its hash, only when not empty.
    """

    variant: Variant
    cells: tuple[int, ...]
    min_cells: bool
    limits: Limits
    fail_deals: tuple[int, ...] = ()

    def to_dict(self) -> dict[str, object]:
        """The ``config`` object of run.json and of the ``fca.config`` metadata."""
        d: dict[str, object] = {
            "variant": self.variant.as_dict(),
            "cells": list(self.cells),
            "min_cells": self.min_cells,
            "limits": limits_to_dict(self.limits),
        }
        if self.fail_deals:
            d["fail_deals"] = list(self.fail_deals)
        return d

    def canonical_json(self) -> str:
        """Sorted keys, no whitespace: equal configurations give equal text."""
        return canonical_json(self.to_dict())

    def config_hash(self) -> str:
        """sha256 hex of :meth:`canonical_json`."""
        return hashlib.sha256(self.canonical_json().encode()).hexdigest()

    @property
    def max_cells(self) -> int:
        """The largest cell count this configuration solves or may try."""
        return max(self.cells)

    def rows_per_deal(self) -> int | None:
        """Rows each deal gets: one per cell count, or ``None`` for min-cells
        runs (as many as the search tried)."""
        return None if self.min_cells else len(self.cells)

    def spilling_to(self, spill_dir: str | None) -> RunConfig:
        """This configuration with its searches spilling to `spill_dir` (not
        part of the configuration or its hash: it never changes a result)."""
        return dataclasses.replace(self, limits=dataclasses.replace(self.limits, spill_dir=spill_dir))

    def task_memory(self) -> int:
        """Bytes of memory a chunk task asks Ray for (one search at a time)."""
        return int(self.limits.max_bytes * TASK_MEMORY_FACTOR) + TASK_MEMORY_OVERHEAD

    def label(self) -> str:
        """The short label answers open with (`describe_config`).

        >>> build_config(cells="3").label()
        'freecell, 3 cells, product'
        """
        return describe_config(self.to_dict())

    def describe(self) -> str:
        """One line for logs: ``freecell (product), cells 4, max 100000000 positions``."""
        v = self.variant
        cells = f"min-cells {self.cells[0]}..{self.cells[-1]}" if self.min_cells else "cells " + _cells_text(self.cells)
        lim = self.limits
        secs = f", {lim.max_seconds} s" if lim.max_seconds is not None else ""
        positions = "" if lim.max_positions is None else f"{lim.max_positions} positions, "
        return f"{v.name} ({v.move_rule}), {cells}, limits {positions}{lim.max_bytes} bytes, {lim.max_disk} disk bytes{secs}"

    @classmethod
    def from_dict(cls, d: Mapping[str, object]) -> RunConfig:
        """Reads a configuration back from run.json or chunk metadata.

        >>> c = build_config("bakers_game", cells="3")
        >>> RunConfig.from_dict(json.loads(c.canonical_json())) == c
        True
        """
        try:
            vd = d["variant"]
            lim = d["limits"]
            if not isinstance(vd, Mapping) or not isinstance(lim, Mapping):
                raise TypeError("variant and limits must be objects")
            variant = Variant(**{str(k): v for k, v in vd.items()})
            limits = limits_from_dict(lim)
            cells = d["cells"]
            fail = d.get("fail_deals", [])
            if not isinstance(cells, list) or not isinstance(fail, list):
                raise TypeError("cells and fail_deals must be lists")
            config = cls(
                variant=variant,
                cells=tuple(_int(k) for k in cells),
                min_cells=bool(d["min_cells"]),
                limits=limits,
                fail_deals=tuple(_int(n) for n in fail),
            )
        except (KeyError, TypeError, ValueError) as e:
            raise ConfigError(f"not a run configuration ({type(e).__name__}: {e}): {dict(d)!r}") from e
        _check_cells(config.variant, config.cells)
        return config


#: The budgets of a configuration, as run.json, chunk metadata and the
#: attempt history write them. `spill_dir` is not among them: where spill
#: files go never changes a result.
LIMIT_KEYS: Final = ("max_positions", "max_bytes", "max_disk", "max_seconds")


def limits_to_dict(lim: Limits) -> dict[str, Any]:
    """`Limits` as a JSON object (keys `LIMIT_KEYS`; `None` is no budget).
    A disk budget of 0 is left out: runs made before the prover could spill
    have no ``max_disk``, and their configurations keep their hashes.

    >>> limits_to_dict(Limits(max_disk=0))
    {'max_positions': None, 'max_bytes': 1073741824, 'max_seconds': None}
    """
    d: dict[str, Any] = {"max_positions": lim.max_positions, "max_bytes": lim.max_bytes, "max_disk": lim.max_disk, "max_seconds": lim.max_seconds}
    if not lim.max_disk:
        del d["max_disk"]
    return d


def limits_from_dict(d: Mapping[str, Any], spill_dir: str | None = None) -> Limits:
    """`Limits` back from `limits_to_dict`'s object. A run written before
    the prover could spill has no ``max_disk``: its searches had none (0)."""
    return Limits(
        max_positions=None if d["max_positions"] is None else _int(d["max_positions"]),
        max_bytes=_int(d["max_bytes"]),
        max_disk=_int(d.get("max_disk", 0)),
        max_seconds=None if d["max_seconds"] is None else float(str(d["max_seconds"])),
        spill_dir=spill_dir,
    )


def _int(x: object) -> int:
    if isinstance(x, bool) or not isinstance(x, int):
        raise TypeError(f"expected an integer, not {x!r}")
    return x


def canonical_json(obj: object) -> str:
    """JSON with sorted keys and no whitespace.

    >>> canonical_json({"b": 1, "a": [1, 2]})
    '{"a":[1,2],"b":1}'
    """
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=False)


def _cells_text(cells: Sequence[int]) -> str:
    if len(cells) > 1 and list(cells) == list(range(cells[0], cells[-1] + 1)):
        return f"{cells[0]}-{cells[-1]}"
    return ",".join(str(k) for k in cells)


def _variant_of(config: Mapping[str, Any]) -> Mapping[str, Any]:
    v = config.get("variant", {})
    return v if isinstance(v, Mapping) else {}


def config_cells(config: Mapping[str, Any]) -> tuple[int, ...]:
    """The numbers of cells a configuration (as in run.json) tries."""
    cells = config.get("cells")
    if isinstance(cells, list | tuple) and cells:
        return tuple(int(c) for c in cells)
    return (int(_variant_of(config).get("cells", 4)),)


def cells_phrase(k: int) -> str:
    """``1 cell``, ``4 cells``."""
    return f"{k} cell" if k == 1 else f"{k} cells"


def describe_config(config: Mapping[str, Any]) -> str:
    """The short label of a configuration (as in run.json) that every
    answer opens with (``status``, ``run``, the report, the card), e.g.
    ``freecell, 4 cells, product``.

    >>> describe_config({"variant": {"name": "freecell", "move_rule": "product"}, "cells": [0, 1, 2, 3],
    ...                  "min_cells": True})
    'freecell, min cells 0-3, product'
    >>> describe_config({"variant": {"name": "seahaven_towers", "move_rule": "single"}, "cells": [0, 2, 3]})
    'seahaven_towers, cells 0, 2-3, single'
    """
    v = _variant_of(config)
    cells = config_cells(config)
    if len(cells) == 1:
        cells_text = cells_phrase(cells[0])
    else:
        spans: list[list[int]] = []
        for k in sorted(set(cells)):
            if spans and k == spans[-1][1] + 1:
                spans[-1][1] = k
            else:
                spans.append([k, k])
        ranges = ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in spans)
        cells_text = f"{'min cells' if config.get('min_cells') else 'cells'} {ranges}"
    return f"{v.get('name', '?')}, {cells_text}, {v.get('move_rule', '?')}"


def parse_cells(text: str) -> tuple[int, ...]:
    """Parses ``--cells``: one count ``K`` or a range ``A-B``
    (`analyzer.cliframe.parse_cell_range`).

    >>> parse_cells("4"), parse_cells("0-5")
    ((4,), (0, 1, 2, 3, 4, 5))
    >>> parse_cells("5-1")
    Traceback (most recent call last):
    ...
    jobs.errors.ConfigError: --cells '5-1' is reversed: write it as 1-5
    """
    try:
        return parse_cell_range(text)
    except AnalyzerError as e:
        raise ConfigError(f"--cells {e}") from None


def _check_cells(variant: Variant, cells: Sequence[int]) -> None:
    if not cells:
        raise ConfigError("a run needs at least one number of cells")
    if list(cells) != sorted(set(cells)):
        raise ConfigError(f"cells must be increasing and distinct, not {list(cells)}")
    for k in cells:
        if not 0 <= k <= MAX_CELLS:
            raise ConfigError(f"{k} cells is outside 0..{MAX_CELLS}")
        if k < variant.dealt_to_cells:
            raise ConfigError(
                f"{variant.name} deals {variant.dealt_to_cells} cards to cells, so it cannot be played with {k} cells"
            )


def build_config(
    variant: str = "freecell",
    *,
    cells: str | Sequence[int] | None = None,
    min_cells: bool = False,
    max_cells: int | None = None,
    move_rule: str | None = None,
    max_positions: int | None = None,
    max_bytes: int | None = None,
    max_seconds: float | None = None,
    max_disk: int | None = None,
    spill_dir: str | None = None,
    fail_deals: Sequence[int] = (),
) -> RunConfig:
    """The configuration for the ``run`` options; raises `VariantError` or
    `ConfigError` naming the bad option.

    >>> build_config("eight_off", min_cells=True).cells
    (4, 5, 6, 7, 8)
    >>> build_config("klondike")
    Traceback (most recent call last):
    ...
    analyzer.errors.VariantError: unknown variant 'klondike'; expected one of: freecell, bakers_game, eight_off, forecell, seahaven_towers, relaxed_freecell
    """
    key = variant.strip().lower().replace("-", "_")
    if key not in PRESET_NAMES:
        raise VariantError(f"unknown variant {variant!r}; expected one of: {', '.join(PRESET_NAMES)}")
    if move_rule is not None and move_rule not in MOVE_RULES:
        raise VariantError(f"unknown move rule {move_rule!r}; expected one of: {', '.join(MOVE_RULES)}")
    v = Variant.named(key, move_rule=move_rule)
    if min_cells:
        if cells is not None:
            raise ConfigError("--cells and --min-cells cannot be used together")
        top = DEFAULT_MAX_CELLS if max_cells is None else max_cells
        if not v.dealt_to_cells <= top <= MAX_CELLS:
            raise ConfigError(f"--max-cells {top} is outside {v.dealt_to_cells}..{MAX_CELLS} for {v.name}")
        ks = tuple(range(v.dealt_to_cells, top + 1))
    else:
        if max_cells is not None:
            raise ConfigError("--max-cells needs --min-cells")
        if cells is None:
            ks = (v.cells,)
        else:
            ks = parse_cells(cells) if isinstance(cells, str) else tuple(cells)
    _check_cells(v, ks)
    defaults = Limits()
    for name, value in (("--max-positions", max_positions), ("--max-bytes", max_bytes)):
        if value is not None and not 1 <= value <= MAX_LIMIT:
            raise ConfigError(f"{name} must be in 1..{MAX_LIMIT}, not {value}")
    if max_disk is not None and not 0 <= max_disk <= MAX_LIMIT:
        raise ConfigError(f"--max-disk must be in 0..{MAX_LIMIT}, not {max_disk}")
    if max_seconds is not None and not 0 < max_seconds <= MAX_SECONDS:
        raise ConfigError(f"--max-seconds must be more than 0 and at most {MAX_SECONDS}, not {max_seconds}")
    limits = Limits(
        max_positions=defaults.max_positions if max_positions is None else max_positions,
        max_bytes=defaults.max_bytes if max_bytes is None else max_bytes,
        max_disk=defaults.max_disk if max_disk is None else max_disk,
        max_seconds=max_seconds,
        spill_dir=spill_dir,
    )
    for n in fail_deals:
        if not 1 <= n <= analyzer._api.MAX_DEAL:
            raise ConfigError(f"--fail-deals: {n} is not a deal number")
    return RunConfig(v, ks, min_cells, limits, tuple(sorted(set(fail_deals))))


def config_from_args(args: Any, fail_deals: Sequence[int] = ()) -> RunConfig:
    """`build_config` from the options ``run`` and ``plan`` share (variant,
    cells, move rule and `analyzer.cliframe.add_limit_options`)."""
    return build_config(
        args.variant,
        cells=args.cells,
        min_cells=args.min_cells,
        max_cells=args.max_cells,
        move_rule=args.move_rule,
        max_positions=args.max_positions,
        max_bytes=args.max_bytes,
        max_seconds=args.max_seconds,
        max_disk=args.max_disk,
        spill_dir=getattr(args, "spill_dir", None),
        fail_deals=fail_deals,
    )


@dataclass(frozen=True)
class Provenance:
    """Versions recorded with every chunk and run (DESIGN.md metadata keys)."""

    package_version: str
    engine_version: str
    git_commit: str

    @classmethod
    def current(cls) -> Provenance:
        """This process's package and engine versions and git commit."""
        return cls(analyzer.__version__, _engine.__version__, git_commit())

    def as_dict(self) -> dict[str, str]:
        return dataclasses.asdict(self)


@cache
def git_commit() -> str:
    """The commit of the source tree the package runs from, or ``""`` when it
    is not a git checkout (an installed wheel, a Ray working_dir without
    ``.git``). ``FCA_GIT_COMMIT`` overrides it, for such deployments."""
    env = os.environ.get("FCA_GIT_COMMIT")
    if env is not None:
        return env.strip()
    root = Path(analyzer.__file__).resolve().parent.parent
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    commit = out.stdout.strip()
    return commit if out.returncode == 0 and re.fullmatch(r"[0-9a-f]{40}", commit) else ""
