"""``freecell-analyzer publish DIR --out DATASET_DIR``: a citable dataset.

A complete, valid run becomes ``DATASET_DIR/VERSION/`` in the Hugging Face layout:

```
README.md            dataset card (Hugging Face format: YAML header + body)
CITATION.cff         how to cite it
datapackage.json     Frictionless data package: sha256 of every resource, table schema
provenance/run.json  the run manifest, without local paths, host or user names
data/train-00000-of-00003.parquet ...  every row, sorted by deal then cells; zstd;
                     100-300 MB shards, row groups by deal range
SHA256SUMS           `sha256sum -c SHA256SUMS` checks every file above
```

Publishing streams: rows go from the run's data files (each read through
the one checked reader, `jobs.runformat.read_checked`) to the shards one
row group at a time, and the card's figures are accumulated on the way, so
memory does not grow with the run. A run that ``validate`` would call
invalid or incomplete is refused (exit 1) naming the file. Before the
version is renamed into place, what was written is checked again: every
shard re-read and its rows compared with the rows read from the run (a
digest of every row), the checksums, and a replay sample.

A published version is never edited: it is assembled in a hidden directory
of its own beside it and renamed into place (two publishers of one version:
one wins, the other is refused), its files are made read-only, and
publishing a version that exists is refused. `validate_dataset` checks a
published version (or every version under DATASET_DIR) against its
checksums, card and datapackage, streaming too; `freecell-analyzer
validate` calls it when `is_dataset` says the directory is one.

Everything written derives from the rows, the run manifest and
`analyzer.schema`, so publishing the same run twice gives the same bytes.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import errno
import hashlib
import json
import os
import re
import secrets
import shlex
import shutil
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as _pc
import pyarrow.parquet as pq

from analyzer import schema
from analyzer.cliframe import option
from analyzer.errors import EXIT_FAILURE, EXIT_OK, AnalyzerError, StorageError, storage_error
from analyzer.headline import HEADLINE_COLUMNS, Headline, combine, merge_parts, table_part
from jobs import runformat
from jobs.config import RunConfig
from jobs.ranges import DealRange, format_deals, intersect, parse_deals, subtract

from .load import (
    RunInvalidError,
    RunManifest,
    config_cells,
    describe_config,
    format_ranges,
    read_manifest,
)

#: pyarrow.compute without its stubs' overloads (they reject the Table columns used here).
pc: Any = _pc

CARD: Final = "README.md"
PACKAGE: Final = "datapackage.json"
CITATION: Final = "CITATION.cff"
#: The run manifest without local paths, host or user names. In a
#: subdirectory, so that no tool takes a published version for a run directory.
MANIFEST: Final = "provenance/run.json"
SUMS: Final = "SHA256SUMS"
DATA_DIR: Final = "data"
#: Shards aim at this size (the Hugging Face viewer and hub work best with
#: 100-300 MB Parquet files); a shard holds whole data files of the run.
SHARD_BYTES: Final = 200 * 10**6
#: Deal lists in the card stop here; the data has every row.
CARD_LIST: Final = 100
DEFAULT_VERSION: Final = "1.0.0"
DEFAULT_LICENSE: Final = "CC-BY-4.0"
DEFAULT_AUTHOR: Final = "FreeCell Analyzer contributors"
#: Solutions replayed through the independent verifier by `validate_dataset`
#: without ``--all`` (``validate --sample N`` sets it), and by `publish` on what it wrote.
REPLAY_SAMPLE: Final = 100
#: Frictionless names: lowercase letters, digits, '-', '_', '.'.
_NAME: Final = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
_VERSION: Final = re.compile(r"^[0-9A-Za-z][0-9A-Za-z.+_-]*$")
_SHARD: Final = re.compile(r"train-(\d{5})-of-(\d{5})\.parquet")


class PublishError(AnalyzerError):
    """A run that cannot be published as asked, or a dataset that is not one."""


@dataclass(frozen=True)
class License:
    spdx: str
    hf: str  # the identifier the Hugging Face card's `license:` field uses
    title: str
    url: str


LICENSES: Final = {
    lic.spdx: lic
    for lic in (
        License(
            "CC-BY-4.0",
            "cc-by-4.0",
            "Creative Commons Attribution 4.0",
            "https://creativecommons.org/licenses/by/4.0/",
        ),
        License(
            "CC0-1.0",
            "cc0-1.0",
            "Creative Commons Zero v1.0 Universal",
            "https://creativecommons.org/publicdomain/zero/1.0/",
        ),
        License(
            "CC-BY-SA-4.0",
            "cc-by-sa-4.0",
            "Creative Commons Attribution Share Alike 4.0",
            "https://creativecommons.org/licenses/by-sa/4.0/",
        ),
        License(
            "ODC-By-1.0",
            "odc-by",
            "Open Data Commons Attribution License v1.0",
            "https://opendatacommons.org/licenses/by/1-0/",
        ),
        License(
            "ODbL-1.0",
            "odbl",
            "Open Data Commons Open Database License v1.0",
            "https://opendatacommons.org/licenses/odbl/1-0/",
        ),
        License(
            "PDDL-1.0",
            "pddl",
            "Open Data Commons Public Domain Dedication and License",
            "https://opendatacommons.org/licenses/pddl/1-0/",
        ),
        License("MIT", "mit", "MIT License", "https://opensource.org/licenses/MIT"),
    )
}


def license_of(text: str) -> License:
    for lic in LICENSES.values():
        if text.lower() in (lic.spdx.lower(), lic.hf):
            return lic
    raise PublishError(f"--license {text!r}: expected one of {', '.join(LICENSES)}")


def size_category(rows: int) -> str:
    """The Hugging Face `size_categories` bucket of a row count.

    >>> size_category(30), size_category(32000), size_category(1_000_000)
    ('n<1K', '10K<n<100K', '1M<n<10M')
    """
    bounds = [(10**3, "n<1K"), (10**4, "1K<n<10K"), (10**5, "10K<n<100K"), (10**6, "100K<n<1M"),
              (10**7, "1M<n<10M"), (10**8, "10M<n<100M"), (10**9, "100M<n<1B"), (10**10, "1B<n<10B"),
              (10**11, "10B<n<100B"), (10**12, "100B<n<1T")]  # fmt: skip
    for bound, name in bounds:
        if rows < bound:
            return name
    return "n>1T"


def default_name(config: Mapping[str, Any], deals: str) -> str:
    """E.g. ``freecell-4-cells-product-deals-1-32000``."""
    slug = re.sub(r"[^a-z0-9]+", "-", f"{describe_config(config)} deals {deals}".lower())
    return slug.strip("-")


def sha256_file(path: Path) -> str:
    return runformat.sha256_file(path)[0]


def shard_name(i: int, n: int) -> str:
    """``data/train-00000-of-00003.parquet`` (the Hugging Face layout)."""
    return f"{DATA_DIR}/train-{i:05d}-of-{n:05d}.parquet"


def plan_shards(entries: Sequence[runformat.FileEntry], target: int = SHARD_BYTES) -> list[list[runformat.FileEntry]]:
    """Consecutive data files grouped into shards of about `target` bytes.

    >>> e = [runformat.FileEntry(f"x{i}", i, i, 1, 150, "0" * 64, {}, "") for i in range(1, 6)]
    >>> [len(s) for s in plan_shards(e, 300)]
    [2, 2, 1]
    """
    shards: list[list[runformat.FileEntry]] = []
    size = 0
    for e in entries:
        if not shards or (size and size + e.bytes > target):
            shards.append([])
            size = 0
        shards[-1].append(e)
        size += e.bytes
    return shards


# --- user-supplied text ---------------------------------------------------------


def fence(text: str, info: str = "") -> list[str]:
    """`text` in a Markdown code fence longer than any run of backticks in
    it, so nothing in it can close the fence (CommonMark, "Fenced code blocks").

    >>> fence("a ``` b")
    ['````', 'a ``` b', '````']
    """
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return [ticks + info, text, ticks]


def inline(text: str) -> str:
    """`text` as inline code that no character in it can break out of.

    >>> inline("a`b")
    '`` a`b ``'
    """
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    return f"{ticks} {text} {ticks}" if longest else f"`{text}`"


def _one_line(option: str, text: str) -> str:
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in text):
        raise PublishError(f"{option} {text!r}: control characters (such as a newline) are not allowed")
    return text.strip()


def public_command(argv: Sequence[str]) -> list[str]:
    """A recorded command without local paths or addresses: the program by
    its name, ``--out`` by the directory's last component, ``--address`` as
    ADDRESS, any other absolute path by its last component.

    >>> public_command(["/home/me/venv/bin/freecell-analyzer", "run", "1-9", "--out", "/home/me/runs/a", "--address=10.1.2.3:6379"])
    ['freecell-analyzer', 'run', '1-9', '--out', 'a', '--address=ADDRESS']
    """
    out: list[str] = []
    hide_next: str | None = None
    for i, a in enumerate(argv):
        if hide_next is not None:
            out.append("ADDRESS" if hide_next == "--address" else Path(a).name or a)
            hide_next = None
            continue
        if a in ("--out", "-o", "--address"):
            hide_next = a
            out.append(a)
            continue
        opt, eq, val = a.partition("=")
        if eq and opt in ("--out", "--address"):
            out.append(f"{opt}={'ADDRESS' if opt == '--address' else Path(val).name}")
        elif i == 0 or a.startswith("/") or a.startswith("~"):
            out.append(Path(a).name or a)
        else:
            out.append(a)
    return out


def public_manifest(run_dir: Path) -> bytes:
    """The run's manifest as published: every command through
    `public_command`, and no process ids."""
    d = json.loads(runformat.manifest_path(run_dir).read_text())
    for h in d.get("history", []):
        h["command"] = public_command(h.get("command", []))
        h.pop("pid", None)
    return (json.dumps(d, indent=2) + "\n").encode()


# --- streaming statistics -------------------------------------------------------------


def _hist_add(h: np.ndarray, values: np.ndarray) -> np.ndarray:
    if not len(values):
        return h
    add = np.bincount(values.astype(np.int64), minlength=len(h))
    if len(add) > len(h):
        h = np.concatenate([h, np.zeros(len(add) - len(h), dtype=np.int64)])
    h[: len(add)] += add
    return h


def _hist_quantile(h: np.ndarray, q: float) -> float:
    """The q-quantile of integer values from their histogram, interpolated
    linearly between order statistics as pandas' default does."""
    n = int(h.sum())
    if not n:
        return float("nan")
    cum = np.cumsum(h)
    pos = q * (n - 1)
    lo, hi = int(np.floor(pos)), int(np.ceil(pos))
    a = int(np.searchsorted(cum, lo + 1))
    b = int(np.searchsorted(cum, hi + 1))
    return a + (b - a) * (pos - lo)


@dataclass
class _Measure:
    count: int = 0
    total: float = 0.0
    lo: float = float("inf")
    hi: float = float("-inf")
    hist: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    def add(self, v: np.ndarray, exact_hist: bool) -> None:
        if not len(v):
            return
        self.count += len(v)
        self.total += float(v.sum())
        self.lo = min(self.lo, float(v.min()))
        self.hi = max(self.hi, float(v.max()))
        if exact_hist:
            self.hist = _hist_add(self.hist, v)


#: Measures of the card's difficulty table: column, rows it is read on, and
#: whether quantiles are kept (exact, from a histogram of the integer values;
#: solution lengths are small integers, so this costs little memory).
CARD_MEASURES: Final = (
    ("solution_length_single", ("solved",), True),
    ("solution_length_multi", ("solved",), True),
    ("positions_expanded", ("solved", "unsolvable"), False),
    ("elapsed_s", ("solved", "unsolvable"), False),
)


@dataclass
class Stats:
    """The dataset's figures, accumulated one row group at a time (constant
    memory): rows and deals, outcomes per number of cells, the first deals of
    each rare outcome, difficulty measures, minimum cells, and a digest of
    every row (to compare what was written with what was read)."""

    rows: int = 0
    deals: int = 0
    by_cells: dict[int, dict[str, int]] = field(default_factory=dict)
    listed: dict[str, list[int]] = field(default_factory=lambda: {"unsolvable": [], "limit": [], "error": []})
    listed_total: dict[str, int] = field(default_factory=lambda: {"unsolvable": 0, "limit": 0, "error": 0})
    measures: dict[tuple[str, int], _Measure] = field(default_factory=dict)
    min_cells: dict[str, int] = field(default_factory=dict)
    digest: Any = field(default_factory=hashlib.sha256)
    _last_deal: dict[str, int] = field(default_factory=dict)
    #: The counts of cells the run asked about and whether it asked for each
    #: deal's minimum: what the answer (`headline`) is counted over.
    cells: tuple[int, ...] = ()
    min_cells_run: bool = False
    #: The answer so far, as a part (`analyzer.headline.Headline.part`).
    answer: dict[str, Any] | None = None

    #: Rows hashed at a time: the digest's pandas copy of the text columns is the
    #: largest allocation of publishing (a per-row hash, so slicing does not change it).
    DIGEST_ROWS: Final = 16_384

    def feed(self, t: pa.Table) -> None:
        """Takes one row group (whole deals, in deal order)."""
        if not t.num_rows:
            return
        if self.cells:
            cols = [c for c in HEADLINE_COLUMNS if c in t.column_names]
            piece = table_part(t.select(cols), cells=self.cells, min_cells=self.min_cells_run)
            self.answer = piece if self.answer is None else merge_parts(
                [self.answer, piece], cells=self.cells, min_cells=self.min_cells_run
            )
        for off in range(0, t.num_rows, self.DIGEST_ROWS):
            part = t.slice(off, self.DIGEST_ROWS).to_pandas()
            self.digest.update(pd.util.hash_pandas_object(part, index=False).to_numpy().tobytes())
            del part
        # Counted in numpy over outcome codes (no Python loop over rows: a
        # dataset may hold 10^9 of them).
        narrow = [c for c, _, _ in CARD_MEASURES]
        df = t.select(narrow).to_pandas()
        self.rows += t.num_rows
        deals = t.column("deal_number").to_numpy()
        first_rows = np.r_[True, deals[1:] != deals[:-1]]
        self.deals += int(first_rows.sum())
        code = np.asarray(
            pc.fill_null(pc.index_in(runformat.strings(t.column("outcome")), value_set=pa.array(schema.OUTCOMES)), -1)
            .to_numpy(zero_copy_only=False),
            dtype=np.int64,
        )
        cells = t.column("cells").to_numpy().astype(np.int64)
        for k in np.unique(cells):
            at = cells == k
            c = self.by_cells.setdefault(int(k), dict.fromkeys(schema.OUTCOMES, 0))
            for o, n in zip(schema.OUTCOMES, np.bincount(code[at & (code >= 0)], minlength=len(schema.OUTCOMES)), strict=False):
                c[o] = c.get(o, 0) + int(n)
            for col, on, exact in CARD_MEASURES:
                mask = at & np.isin(code, [schema.OUTCOMES.index(o) for o in on])
                v = df[col].to_numpy()[mask]
                v = v[~pd.isna(v)].astype(np.float64 if col == "elapsed_s" else np.int64)
                self.measures.setdefault((col, int(k)), _Measure()).add(v, exact)
        for o in self.listed:
            sel = deals[code == schema.OUTCOMES.index(o)]  # sorted: the reader checked the order
            ds = sel[np.r_[True, sel[1:] != sel[:-1]]] if len(sel) else sel
            if len(ds) and self._last_deal.get(o) == int(ds[0]):
                ds = ds[1:]  # the deal's rows began in the previous row group
            if len(ds):
                self.listed_total[o] += len(ds)
                room = max(0, CARD_LIST - len(self.listed[o]))
                self.listed[o] += [int(x) for x in ds[:room]]
                self._last_deal[o] = int(ds[-1])
        if "min_cells" in t.column_names:
            mc = pc.take(t.column("min_cells"), pa.array(np.flatnonzero(first_rows)))
            if mc.null_count:
                self.min_cells["undetermined"] = self.min_cells.get("undetermined", 0) + mc.null_count
            values, times = np.unique(np.asarray(mc.drop_null().to_numpy(zero_copy_only=False), dtype=np.int64), return_counts=True)
            for v, n in zip(values.tolist(), times.tolist(), strict=True):
                self.min_cells[str(v)] = self.min_cells.get(str(v), 0) + int(n)

    def outcome_counts(self) -> dict[str, int]:
        return {o: sum(c.get(o, 0) for c in self.by_cells.values()) for o in schema.OUTCOMES}

    def hexdigest(self) -> str:
        return str(self.digest.hexdigest())

    def headline(self, *, label: str, declared: Sequence[tuple[int, int]]) -> Headline:
        """The answer of the rows fed (`analyzer.headline.combine`)."""
        parts = [self.answer] if self.answer is not None else []
        return combine(parts, label=label, cells=self.cells, min_cells=self.min_cells_run, declared=declared)


# --- dataset card, datapackage, citation ---------------------------------------------


@dataclass(frozen=True)
class Dataset:
    """What the card, datapackage and citation are written from."""

    name: str
    version: str
    license: License
    author: str
    manifest: RunManifest
    stats: Stats
    shards: tuple[str, ...]
    #: For a subset (``publish --deals``): the run's own deals, of which
    #: `manifest.declared` holds the part published.
    subset_of: str | None = None

    @property
    def title(self) -> str:
        return f"FreeCell solvability of Microsoft deals {self.deals} ({describe_config(self.manifest.config)})"

    @property
    def deals(self) -> str:
        return format_ranges(self.manifest.declared)

    @property
    def finished(self) -> str:
        """When the run finished (the run's own timestamp; no clock is read)."""
        ends = sorted(i.finished_at for i in self.manifest.invocations if i.finished_at)
        return ends[-1] if ends else ""

    @property
    def released(self) -> str:
        """The date the run finished, YYYY-MM-DD, or empty."""
        m = re.match(r"\d{4}-\d{2}-\d{2}", self.finished)
        return m.group(0) if m else ""

    def outcome_counts(self) -> dict[str, int]:
        return self.stats.outcome_counts()


def frictionless_field(c: schema.Column) -> dict[str, Any]:
    """One Table Schema field from a schema column."""
    t = c.type.value_type if pa.types.is_dictionary(c.type) else c.type
    kind = "integer" if pa.types.is_integer(t) else "number" if pa.types.is_floating(t) else "string"
    f: dict[str, Any] = {"name": c.name, "type": kind, "description": c.description}
    if c.unit:
        f["unit"] = c.unit
    constraints: dict[str, Any] = {"required": not c.nullable}
    if c.name == "outcome":
        constraints["enum"] = list(schema.OUTCOMES)
    f["constraints"] = constraints
    return f


def table_schema() -> dict[str, Any]:
    # "nan": Frictionless reads Parquet through pandas, where a null in an
    # integer column (min_cells, solution lengths) becomes NaN; no string
    # column holds the text "nan".
    return {
        "fields": [frictionless_field(c) for c in schema.COLUMNS],
        "missingValues": ["", "nan"],
        "primaryKey": ["deal_number", "variant", "cells", "move_rule"],
    }


def datapackage(ds: Dataset, hashes: Mapping[str, tuple[str, int]]) -> dict[str, Any]:
    """The Frictionless descriptor; `hashes` maps path → (sha256, bytes).
    One resource per shard, each with the table schema."""
    man_sha, man_bytes = hashes[MANIFEST]
    resources: list[dict[str, Any]] = [
        {
            "name": f"results-{i:05d}",
            "type": "table",
            "path": path,
            "format": "parquet",
            "mediatype": "application/vnd.apache.parquet",
            # no "bytes": Frictionless's Parquet reader counts none and calls
            # any figure wrong; the size is in SHA256SUMS's file and fca.shards
            "hash": f"sha256:{hashes[path][0]}",
            "schema": table_schema(),
        }
        for i, path in enumerate(ds.shards)
    ]
    resources.append(
        {
            "name": "run-manifest",
            "path": MANIFEST,
            "format": "json",
            "mediatype": "application/json",
            "bytes": man_bytes,
            "hash": f"sha256:{man_sha}",
        }
    )
    return {
        "name": ds.name,
        "title": ds.title,
        "version": ds.version,
        "description": f"Outcome of the FreeCell Analyzer solver on each Microsoft deal {ds.deals}; see README.md.",
        "licenses": [{"name": ds.license.spdx, "title": ds.license.title, "path": ds.license.url}],
        "keywords": ["freecell", "solitaire", "solvability", "combinatorial search"],
        "contributors": [{"title": ds.author, "role": "author"}],
        "created": ds.finished,
        "resources": resources,
        "fca": {
            "schema_version": ds.manifest.schema_version,
            "config_hash": ds.manifest.config_hash,
            "deals": ds.deals,
            **({"subset_of": ds.subset_of} if ds.subset_of else {}),
            "rows": ds.stats.rows,
            "outcomes": ds.outcome_counts(),
            "row_digest": ds.stats.hexdigest(),
        },
    }


def _deal_list(numbers: Sequence[int], total: int) -> str:
    shown = ", ".join(str(n) for n in numbers[:CARD_LIST])
    return shown + (f", ... ({total:,} in all)" if total > len(numbers) else "")


def _yaml_str(s: str) -> str:
    return json.dumps(s)  # a JSON string is a valid YAML double-quoted scalar


def _num(v: float, unit: str) -> str:
    if v != v or v in (float("inf"), float("-inf")):
        return ""
    if unit == "seconds":
        return f"{v:.4g}"
    return f"{v:,.1f}" if v != int(v) else f"{int(v):,}"


def _difficulty_lines(stats: Stats) -> list[str]:
    lines = [
        "| measure | cells | on | count | min | median | p90 | p99 | max | mean |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for col, on, exact in CARD_MEASURES:
        unit = schema.column(col).unit
        for (c, k), m in sorted(stats.measures.items()):
            if c != col or not m.count:
                continue
            q = [_num(_hist_quantile(m.hist, x), unit) for x in (0.5, 0.9, 0.99)] if exact else ["", "", ""]
            lines.append(
                f"| `{col}` ({unit}) | {k} | {'/'.join(on)} | {m.count:,} | {_num(m.lo, unit)} | {q[0]} | {q[1]} | {q[2]} | "
                f"{_num(m.hi, unit)} | {_num(m.total / m.count, unit)} |"
            )
    return lines


def card_answer(stats: Stats, config: Mapping[str, Any], declared: Sequence[tuple[int, int]]) -> list[str]:
    """The card's opening answer (`analyzer.headline`, counted in deals), as
    a fenced block: what `publish` writes and `validate` checks against the data."""
    h = stats.headline(label=describe_config(config), declared=declared)
    if h.min_cells:
        where = {"unsolvable": "the data (min_cells null)", "limit": "the data (min_cells null)"}
    else:
        where = {o: f"the data (outcome {o})" for o in ("unsolvable", "limit", "error")}
    return fence("\n".join(h.lines(csv=where)), "text")


def dataset_card(ds: Dataset) -> str:
    """README.md in the Hugging Face dataset card format. Every string a user
    chose (the author, the commands with their directory names) sits in a
    code fence or YAML string it cannot break out of."""
    m = ds.manifest
    cfg = m.config
    counts = ds.outcome_counts()
    total = ds.stats.rows
    limits = cfg.get("limits") or {}
    variant = cfg.get("variant") or {}
    min_cells = bool(cfg.get("min_cells"))
    cells = config_cells(cfg)
    commands = "\n".join(shlex.join(public_command(i.command)) for i in m.invocations if i.command) or "(not recorded)"
    lines = [
        "---",
        f"pretty_name: {_yaml_str(ds.title)}",
        f"license: {ds.license.hf}",
        "size_categories:",
        f"- {size_category(total)}",
        "tags:",
        *(f"- {t}" for t in ("freecell", "solitaire", "card-games", "combinatorial-search", "game-solving")),
        "configs:",
        "- config_name: default",
        "  data_files:",
        "  - split: train",
        f"    path: {DATA_DIR}/train-*.parquet",
        "---",
        "",
        f"# {ds.title}",
        "",
        "## The answer",
        "",
        "Deals, each counted once: "
        + (
            "how many have each minimum number of cells, and the deals not won with the most cells tried "
            "or left open by a limit."
            if min_cells
            else "how many are solved, proved unsolvable or stopped by a limit"
            + (" at each number of cells (a deal won with fewer cells is won with more, one lost with more "
               "is lost with fewer: counts marked inferred come from that)" if len(cells) > 1 else "")
            + ", and which deals are unsolvable or hit a limit (with the budget that ran out)."
        ),
        "",
        *card_answer(ds.stats, cfg, m.declared),
        "",
        "## What it is",
        "",
        *(
            [
                f"**A subset of its run**, asked for with `publish --deals`: deals {ds.deals} of the run's "
                f"{ds.subset_of}. The rest of the run is not in this dataset and nothing here speaks for it.",
                "",
            ]
            if ds.subset_of
            else []
        ),
        f"One row per Microsoft FreeCell deal {ds.deals}"
        + (f" and number of cells ({', '.join(map(str, cells))})" if len(cells) > 1 else "")
        + f", under the rules of `{variant.get('name')}` with the `{variant.get('move_rule')}` move rule: "
        "whether the deal can be won, a solution when it can, and what the search cost. "
        + ("Each row also carries the deal's minimum number of cells (`min_cells`). " if min_cells else "")
        + "Deal numbers are those of the Microsoft FreeCell generator (1 to 8,589,934,591).",
        "",
        "```python",
        "import pandas as pd",
        f'df = pd.read_parquet("{DATA_DIR}/")',
        "```",
        "",
        f'It reads as well with `pyarrow.dataset.dataset("{DATA_DIR}/")`, DuckDB '
        f"(`SELECT * FROM '{DATA_DIR}/*.parquet'`) and "
        f'`datasets.load_dataset("parquet", data_files="{DATA_DIR}/*.parquet")`.',
        "",
        "## How it was produced",
        "",
        f"With FreeCell Analyzer {m.package_version or 'unknown'} (engine {m.engine_version or 'unknown'}"
        + (f", git commit `{m.git_commit}`" if m.git_commit else "")
        + f"; result schema version {m.schema_version or schema.SCHEMA_VERSION}), by the commands, in order:",
        "",
        *fence(commands, "sh"),
        "",
        f"Configuration (hash `{m.config_hash}`):",
        "",
        *fence(json.dumps(cfg, indent=2, sort_keys=True), "json"),
        "",
        "| invocation | kind | deals | started | finished | wall time (s) | status |",
        "|---:|---|---|---|---|---:|---|",
        *(
            f"| {i} | {inv.kind} | {inv.deals} | {inv.started_at} | {inv.finished_at} | {inv.wall_s:.1f} | {inv.status} |"
            for i, inv in enumerate(m.invocations, 1)
        ),
        "",
    ]
    if m.passes:
        lines += [
            "Escalation passes re-solved the `limit` rows with larger budgets (`attempts`, `attempt_history`):",
            "",
            *(f"- pass {i}: {', '.join(f'{k} {v}' for k, v in p.items())}" for i, p in enumerate(m.passes, 1)),
            "",
        ]
    lines += [
        f"`{MANIFEST}` is the run manifest (commands without local paths or addresses).",
        "",
        "## Outcomes",
        "",
        "- `solved`: the solver found a solution; `solution` holds it in standard notation "
        "(replayable with `analyzer.verifier.replay`).",
        "- `unsolvable`: exhaustive search over single-card moves (plus safe automatic foundation moves) "
        "proved that no solution exists.",
        "- `limit`: a search budget ran out before either; `limit_reason` says which. Not a proof of anything.",
        "- `error`: the solver failed on this deal; `error` says how. The other rows are unaffected.",
        "",
        "## Limits used",
        "",
        "| budget per search | value |",
        "|---|---:|",
        *(f"| {k} | {'none' if v is None else f'{v:,}'} |" for k, v in sorted(limits.items())),
        "",
        "## Schema",
        "",
        f"Files `{DATA_DIR}/train-NNNNN-of-MMMMM.parquet` ({len(ds.shards)} shards), sorted by `deal_number` then "
        f"`cells`, zstd-compressed, row groups of up to {runformat.ROW_GROUP_DEALS:,} deals. Parquet file metadata "
        "keys `fca.*` repeat the versions, configuration and deal range.",
        "",
        schema.markdown_table(),
        "",
        "## Summary statistics",
        "",
        "Counts are of rows; a row is one deal at one number of cells.",
        "",
        "| figure | value |",
        "|---|---:|",
        f"| rows | {total:,} |",
        f"| deals | {ds.stats.deals:,} |",
        "",
        "| outcome | rows | share |",
        "|---|---:|---:|",
        *(f"| {o} | {counts[o]:,} | {100 * counts[o] / total if total else 0:.4f} % |" for o in schema.OUTCOMES),
        "",
    ]
    if len(cells) > 1:
        lines += ["Per number of cells:", "", "| cells | " + " | ".join(schema.OUTCOMES) + " |", "|---:|" + "---:|" * len(schema.OUTCOMES)]
        lines += [f"| {k} | " + " | ".join(f"{c.get(o, 0):,}" for o in schema.OUTCOMES) + " |" for k, c in sorted(ds.stats.by_cells.items())]
        lines.append("")
    lines += ["Difficulty (quantiles of solution lengths are exact; the other measures give count, min, max and mean):", "", *_difficulty_lines(ds.stats), ""]
    for o in ("unsolvable", "limit", "error"):
        if ds.stats.listed_total[o]:
            n = ds.stats.listed_total[o]
            lines += [f"Deals with outcome `{o}` ({n:,}): {_deal_list(ds.stats.listed[o], n)}.", ""]
    if min_cells:
        lines += ["Minimum number of cells per deal:", "", "| min_cells | deals |", "|---|---:|"]
        lines += [f"| {k} | {v:,} |" for k, v in sorted(ds.stats.min_cells.items(), key=lambda kv: (not kv[0].isdigit(), kv[0].zfill(3)))]
        lines.append("")
    nondet = ", ".join(f"`{c}`" for c in sorted(schema.NONDETERMINISTIC))
    bib = "\n".join(
        [
            f"@dataset{{{re.sub(r'[^A-Za-z0-9]+', '_', ds.name)}_{re.sub(r'[^A-Za-z0-9]+', '_', ds.version)},",
            f"  title = {{{ds.title}}},",
            f"  author = {{{ds.author}}},",
            f"  version = {{{ds.version}}},",
            *([f"  year = {{{ds.released[:4]}}},"] if ds.released else []),
            f"  note = {{Dataset {ds.name}, license {ds.license.spdx}}}",
            "}",
        ]
    )
    lines += [
        "## Caveats",
        "",
        f"- {nondet} depends on the machine and its load; every other column is a deterministic "
        "function of the deal and the configuration.",
        "- A solution is the first one the depth-first search found, not a shortest one.",
        "- `solution_length_single` counts automatic foundation moves, which are written out in `solution`.",
        "- `unsolvable` is proved by the engine's exhaustive search; solutions are checked by an "
        "independent verifier, but a proof of unsolvability is only as good as the engine.",
        "- `limit` rows are open questions: a larger budget may solve them or prove them unsolvable.",
        "- Under the `product` move rule a multi-card move is never longer than under the `doubling` rule, "
        "so solutions also replay under `doubling` but not the other way round.",
        "",
        "## Files and checksums",
        "",
        f"`{SUMS}` lists the sha256 of every file (`sha256sum -c {SUMS}`); `{PACKAGE}` is the "
        f"Frictionless data package with the same hashes and the table schema; `{CITATION}` gives the "
        "citation. A published version is never changed: corrections get a new version.",
        "",
        "## How to cite",
        "",
        *fence(bib, "bibtex"),
        "",
        f"License: {ds.license.title} ({ds.license.spdx}, {ds.license.url}).",
    ]
    return "\n".join(lines) + "\n"


def citation_cff(ds: Dataset) -> str:
    lines = [
        "cff-version: 1.2.0",
        'message: "If you use this dataset, please cite it as below."',
        "type: dataset",
        f"title: {_yaml_str(ds.title)}",
        f"version: {_yaml_str(ds.version)}",
        *([f"date-released: {_yaml_str(ds.released)}"] if ds.released else []),
        f"license: {ds.license.spdx}",
        "authors:",
        f"  - name: {_yaml_str(ds.author)}",
        "keywords:",
        *(f"  - {k}" for k in ("freecell", "solitaire", "solvability", "combinatorial search")),
        f"abstract: {_yaml_str('Outcome of the FreeCell Analyzer solver on each Microsoft deal ' + ds.deals + ': solved with a solution, proved unsolvable, limit or error.')}",
    ]
    return "\n".join(lines) + "\n"


def sums_text(hashes: Mapping[str, tuple[str, int]]) -> str:
    """`sha256sum` format: hash, two spaces, path; sorted by path."""
    return "".join(f"{h}  {p}\n" for p, (h, _) in sorted(hashes.items()))


# --- publish ---------------------------------------------------------------------


def _dataset_metadata(manifest: RunManifest, name: str, version: str, first: int, last: int) -> dict[str, str]:
    return {
        "fca.schema_version": manifest.schema_version or schema.SCHEMA_VERSION,
        "fca.package_version": manifest.package_version,
        "fca.engine_version": manifest.engine_version,
        "fca.git_commit": manifest.git_commit,
        "fca.config": RunConfig.from_dict(manifest.config).canonical_json(),
        "fca.config_hash": manifest.config_hash,
        "fca.deal_start": str(first),
        "fca.deal_end": str(last),
        "fca.deals": format_ranges(manifest.declared),
        "fca.dataset_name": name,
        "fca.dataset_version": version,
    }


def _storage(e: OSError, what: Path) -> StorageError:
    return storage_error(e, str(what))


def publish(
    run_dir: Path | str,
    out: Path | str,
    *,
    name: str | None = None,
    version: str = DEFAULT_VERSION,
    license: str = DEFAULT_LICENSE,
    author: str = DEFAULT_AUTHOR,
    replay: int = REPLAY_SAMPLE,
    deals: Sequence[DealRange] | None = None,
) -> Path:
    """Publishes a complete, valid run as ``out/version``; returns that
    directory. Raises `RunInvalidError` (exit 1) for a run ``validate`` would
    call invalid or incomplete, `PublishError` (exit 2) for bad options or
    an output that cannot be written.

    `deals` publishes only those deals of the run, which must be done and
    read clean (the files holding other deals are not read); the card and
    the metadata record the subset and the run's whole range."""
    lic = license_of(license)
    if not _VERSION.match(version):
        raise PublishError(f"--version {version!r}: use letters, digits and . + _ - (e.g. 1.0.0)")
    author = _one_line("--author", author)
    if not author:
        raise PublishError("--author must not be empty")
    out = Path(out)
    if out.is_symlink() and not out.exists():
        raise PublishError(f"--out {out}: a dangling symbolic link")
    if out.exists() and not out.is_dir():
        raise PublishError(f"--out {out}: exists and is not a directory")
    target = out / version
    if target.exists() or target.is_symlink():
        raise PublishError(
            f"{target} already exists{' (a dangling symbolic link)' if not target.exists() else ''}: "
            "a published version is never changed; publish under a new --version"
        )
    manifest = read_manifest(Path(run_dir))
    name = name if name is not None else default_name(manifest.config, format_ranges(manifest.declared))
    if not _NAME.match(name):
        raise PublishError(f"--name {name!r}: use lowercase letters, digits and . _ - (a Frictionless name)")
    subset_of = None
    try:
        state = runformat.checked_state(manifest.path, allow_missing=deals is not None)
    except AnalyzerError as e:
        raise RunInvalidError(str(e)) from None
    entries = list(state.sealed)
    if deals is not None:
        run_deals = [DealRange(a, b) for a, b in manifest.declared]
        outside = subtract(deals, run_deals)
        if outside:
            raise PublishError(f"--deals {format_deals(deals, limit=5)}: deals {format_deals(outside, limit=5)} are not in the run ({format_ranges(manifest.declared)})")
        missing = intersect(state.missing(), deals)
        if missing:
            raise RunInvalidError(f"{manifest.path}: --deals asks for deals not done yet: {format_deals(missing, limit=5)}")
        entries = [e for e in entries if intersect([DealRange(e.start, e.end)], deals)]
        subset_of = format_ranges(manifest.declared)
        manifest = dataclasses.replace(manifest, declared=tuple((r.start, r.end) for r in deals))
    shards = plan_shards(entries)
    paths = tuple(shard_name(i, len(shards)) for i in range(len(shards)))
    try:
        out.mkdir(parents=True, exist_ok=True)
        tmp = out / f".{version}.{os.getpid()}.{secrets.token_hex(4)}.partial"
        tmp.mkdir()
    except OSError as e:
        raise _storage(e, out) from None
    try:
        stats = Stats(cells=state.manifest.config.cells, min_cells_run=state.manifest.config.min_cells)
        (tmp / DATA_DIR).mkdir()
        for path, group in zip(paths, shards, strict=True):
            first, last = group[0].start, group[-1].end
            if deals is not None:
                first = max(first, min(r.start for r in deals))
                last = min(last, max(r.end for r in deals))
            meta = _dataset_metadata(manifest, name, version, first, last)
            if subset_of:
                meta["fca.subset_of"] = subset_of
            target_schema = schema.arrow_schema(meta)
            with pq.ParquetWriter(
                tmp / path, target_schema, compression="zstd", write_statistics=True, write_page_index=True,
                write_page_checksum=True,
                sorting_columns=[pq.SortingColumn(0), pq.SortingColumn(target_schema.get_field_index("cells"))],
            ) as w:  # fmt: skip
                for entry in group:
                    try:
                        for t in runformat.read_checked(manifest.path / entry.file, state.manifest.config, entry=entry):
                            if deals is not None:
                                t = _only(t, deals)
                                if not t.num_rows:
                                    continue
                            stats.feed(t)
                            w.write_table(t.cast(target_schema), row_group_size=t.num_rows)
                    except runformat.FileInvalid as e:
                        raise RunInvalidError(f"{manifest.path}: {entry.file}: {e.reason}; run `freecell-analyzer validate`") from None
        (tmp / MANIFEST).parent.mkdir()
        (tmp / MANIFEST).write_bytes(public_manifest(manifest.path))
        hashes = {p: runformat.sha256_file(tmp / p) for p in (*paths, MANIFEST)}
        ds = Dataset(name, version, lic, author, manifest, stats, paths, subset_of)
        (tmp / PACKAGE).write_text(json.dumps(datapackage(ds, hashes), indent=2) + "\n", encoding="utf-8")
        (tmp / CARD).write_text(dataset_card(ds), encoding="utf-8")
        (tmp / CITATION).write_text(citation_cff(ds), encoding="utf-8")
        for rel in (PACKAGE, CARD, CITATION):
            hashes[rel] = runformat.sha256_file(tmp / rel)
        (tmp / SUMS).write_text(sums_text(hashes), encoding="utf-8")
        # What was written, read back: every row (digest), checksums, card, a replay sample.
        problems = _validate_version(tmp, replay=replay, replay_all=False, expected_name=version)
        if problems:
            raise PublishError(f"the dataset written in {tmp.name} does not check out: {problems[0]}")
        for f in tmp.rglob("*"):
            if f.is_file():
                f.chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
        try:
            os.rename(tmp, target)
        except OSError as e:
            if e.errno in (errno.EEXIST, errno.ENOTEMPTY) or target.exists():
                raise PublishError(f"{target} was published meanwhile by another publish: a published version is never changed") from None
            raise
    except OSError as e:
        _remove(tmp)
        raise _storage(e, tmp) from None
    except BaseException:
        _remove(tmp)
        raise
    return target


def _only(t: pa.Table, deals: Sequence[DealRange]) -> pa.Table:
    """The rows of `t` whose deal is in `deals`."""
    d = t.column("deal_number")
    keep = None
    for r in deals:
        inside = pc.and_(pc.greater_equal(d, r.start), pc.less_equal(d, r.end))
        keep = inside if keep is None else pc.or_(keep, inside)
    return t.filter(keep) if keep is not None else t.slice(0, 0)


def _remove(d: Path) -> None:
    with contextlib.suppress(OSError):
        if d.exists():
            _make_writable(d)
            shutil.rmtree(d)


def _make_writable(d: Path) -> None:
    for p in d.rglob("*"):
        if p.is_file():
            p.chmod(p.stat().st_mode | stat.S_IWUSR)


# --- validate --------------------------------------------------------------------


def _is_version_dir(path: Path) -> bool:
    return (path / PACKAGE).is_file() and (path / SUMS).is_file()


def is_dataset(path: Path | str) -> bool:
    """True for a published version, or a directory of published versions."""
    p = Path(path)
    if not p.is_dir():
        return False
    return _is_version_dir(p) or any(
        _is_version_dir(c) for c in p.iterdir() if c.is_dir() and not c.name.startswith(".")
    )


def validate_dataset(
    path: Path | str, *, replay: int = REPLAY_SAMPLE, replay_all: bool = False, seed: int = 0
) -> list[str]:
    """Problems found in a published version (or in every version under
    `path`), as one line each; an empty list means the dataset is sound.

    Checks, streaming one row group at a time: every checksum in SHA256SUMS
    and datapackage.json, every file listed; each shard's schema against
    `analyzer.schema`; rows sorted across shards, no duplicates, no missing
    deal, the row invariants of `jobs.runformat.table_problems`; the card's
    and datapackage's figures (and the digest of every row) against the
    data; and `replay` solutions (every one with `replay_all`) through
    `analyzer.verifier`.
    """
    p = Path(path)
    if not p.is_dir():
        raise PublishError(f"{p}: no such directory")
    if _is_version_dir(p):
        return _validate_version(p, replay, replay_all, seed=seed)
    versions = sorted(c for c in p.iterdir() if c.is_dir() and not c.name.startswith(".") and _is_version_dir(c))
    if not versions:
        raise PublishError(f"{p}: not a published dataset (no {PACKAGE} and {SUMS})")
    return [f"{v.name}: {problem}" for v in versions for problem in _validate_version(v, replay, replay_all, seed=seed)]


def _validate_version(d: Path, replay: int, replay_all: bool, *, seed: int = 0, expected_name: str | None = None) -> list[str]:
    problems: list[str] = []
    for required in (CARD, PACKAGE, CITATION, MANIFEST, SUMS):
        if not (d / required).is_file():
            problems.append(f"{required} is missing")
    problems += _check_sums(d)
    try:
        package = json.loads((d / PACKAGE).read_text(encoding="utf-8"))
        shards = [str(r.get("path")) for r in package.get("resources", []) if r.get("format") == "parquet"]
    except (OSError, ValueError, AttributeError) as e:
        return [*problems, f"{PACKAGE}: not readable JSON ({e})"]
    problems += _check_package_resources(d, package, expected_name or d.name)
    try:
        m = runformat.Manifest.from_json((d / MANIFEST).read_text(encoding="utf-8"), MANIFEST)
    except (OSError, AnalyzerError) as e:
        return [*problems, f"{MANIFEST}: {e}"]
    if not shards or [s for s in shards if not _SHARD.fullmatch(Path(s).name)]:
        return [*problems, f"{PACKAGE}: no shards named {DATA_DIR}/train-NNNNN-of-MMMMM.parquet"]
    from jobs.check import Replayer

    stats = Stats(cells=m.config.cells, min_cells_run=m.config.min_cells)
    replayer = Replayer(m.config.variant.as_dict(), every=replay_all, sample=replay, seed=seed)
    facts = package.get("fca") or {}
    try:
        # A subset (`publish --deals`) holds the deals its package names, of the run's.
        declared = parse_deals(str(facts.get("deals"))) if facts.get("subset_of") else tuple(m.deals)
    except AnalyzerError as e:
        return [*problems, f"{PACKAGE}: the subset's deals do not read ({e})"]
    try:
        expect = [(r.start, r.end) for r in declared]
        next_deal: int | None = None
        ranges = list(declared)
        for s in shards:
            try:
                pf = pq.ParquetFile(d / s, page_checksum_verification=True)
            except (OSError, pa.ArrowException) as e:
                return [*problems, f"{s}: not readable Parquet ({e})"]
            # as the run reader: names, types, nullability (not descriptions)
            if not pf.schema_arrow.remove_metadata().equals(schema.arrow_schema(), check_metadata=False):
                return [*problems, f"{s}: columns differ from analyzer.schema"]
            meta = {k.decode(): v.decode() for k, v in (pf.schema_arrow.metadata or {}).items()}
            if meta.get("fca.config_hash") != m.config_hash:
                problems.append(f"{s}: configuration hash differs from {MANIFEST}")
            for i in range(pf.num_row_groups):
                try:
                    t = pf.read_row_group(i).replace_schema_metadata(None)
                except (OSError, pa.ArrowException) as e:
                    return [*problems, f"{s}: row group {i} unreadable ({e})"]
                bad = runformat.table_problems(t, m.config)
                if bad:
                    return [*problems, f"{s}: {bad[0]}"]
                deals = t.column("deal_number").to_numpy()
                if next_deal is None:
                    next_deal = ranges[0].start
                # deals must follow the declared ranges in order, each once (rows: as the run's config asks)
                uniq = deals[np.r_[True, deals[1:] != deals[:-1]]]
                i = 0
                while i < len(uniq):  # a stretch of consecutive deals at a time, within one declared range
                    while ranges and next_deal is not None and next_deal > ranges[0].end:
                        ranges.pop(0)
                        next_deal = ranges[0].start if ranges else None
                    if next_deal is None:
                        return [*problems, f"{s}: deal {int(uniq[i])} where no deal was due (rows repeated or out of order)"]
                    take = min(len(uniq) - i, ranges[0].end - next_deal + 1)
                    wrong = np.flatnonzero(uniq[i : i + take] != np.arange(next_deal, next_deal + take))
                    if len(wrong):
                        j = int(wrong[0])
                        return [*problems, f"{s}: deal {int(uniq[i + j])} where deal {next_deal + j} was due (rows missing, repeated or out of order)"]
                    next_deal += take
                    i += take
                per = m.config.rows_per_deal()
                if per is not None and len(deals) != per * len(uniq):
                    return [*problems, f"{s}: expected {per} rows per deal"]
                stats.feed(t)
                replayer.feed(
                    t.filter(pc.equal(runformat.strings(t.column("outcome")), "solved")).select(
                        ["deal_number", "cells", "solution", "solution_length_multi"]
                    )
                )
        while ranges and next_deal is not None and next_deal > ranges[0].end:
            ranges.pop(0)
            next_deal = ranges[0].start if ranges else None
        if ranges:
            problems.append(f"{DATA_DIR}: no rows from deal {next_deal} on (declared {format_ranges(expect)})")
        if facts.get("rows") != stats.rows:
            problems.append(f"{PACKAGE}: says {facts.get('rows')} rows, the data has {stats.rows}")
        if facts.get("outcomes") != stats.outcome_counts():
            problems.append(f"{PACKAGE}: outcome counts {facts.get('outcomes')} differ from the data's {stats.outcome_counts()}")
        if facts.get("row_digest") != stats.hexdigest():
            problems.append(f"{PACKAGE}: the digest of every row differs from the data's (rows changed)")
        if facts.get("config_hash") != m.config_hash:
            problems.append(f"{PACKAGE}: configuration hash differs from {MANIFEST}")
        problems += _check_card(d, stats, package, card_answer(stats, m.config.to_dict(), expect))
        problems += replayer.finish()
        return problems
    finally:
        replayer.close()


def _check_sums(d: Path) -> list[str]:
    problems: list[str] = []
    try:
        text = (d / SUMS).read_text(encoding="utf-8")
    except OSError:
        return problems
    listed: set[str] = set()
    for n, line in enumerate(text.splitlines(), 1):
        m = re.fullmatch(r"([0-9a-f]{64})  (\S.*)", line)
        if not m:
            problems.append(f"{SUMS} line {n}: not '<sha256>  <path>'")
            continue
        digest, rel = m.groups()
        if rel.startswith("/") or ".." in Path(rel).parts:
            problems.append(f"{SUMS} line {n}: path {rel!r} leaves the dataset")
            continue
        listed.add(rel)
        f = d / rel
        if not f.is_file():
            problems.append(f"{rel}: listed in {SUMS} but missing")
        elif sha256_file(f) != digest:
            problems.append(f"{rel}: sha256 differs from {SUMS} (the file changed after publishing)")
    for f in sorted(d.rglob("*")):
        rel = f.relative_to(d).as_posix()
        if f.is_file() and rel != SUMS and rel not in listed:
            problems.append(f"{rel}: not listed in {SUMS}")
    return problems


def _check_package_resources(d: Path, package: Mapping[str, Any], version: str) -> list[str]:
    problems: list[str] = []
    resources = package.get("resources")
    if not isinstance(resources, list) or not resources:
        return [f"{PACKAGE}: no resources"]
    for r in resources:
        rel = str(r.get("path", ""))
        f = d / rel
        if not rel or not f.is_file():
            problems.append(f"{PACKAGE}: resource {r.get('name')!r} points at missing file {rel!r}")
            continue
        if "bytes" in r and r.get("bytes") != f.stat().st_size:
            problems.append(f"{PACKAGE}: {rel} has {f.stat().st_size} bytes, the package says {r.get('bytes')}")
        if r.get("hash") != f"sha256:{sha256_file(f)}":
            problems.append(f"{PACKAGE}: sha256 of {rel} differs from the package's hash")
        if r.get("format") == "parquet" and r.get("schema") != table_schema():
            problems.append(f"{PACKAGE}: the table schema of {rel} differs from analyzer.schema")
    if package.get("version") != version:
        problems.append(f"{PACKAGE}: version {package.get('version')!r} but the directory is {version!r}")
    return problems


def _check_card(d: Path, stats: Stats, package: Mapping[str, Any], answer: Sequence[str] | None = None) -> list[str]:
    try:
        card = (d / CARD).read_text(encoding="utf-8")
        cff = (d / CITATION).read_text(encoding="utf-8")
    except OSError:
        return []
    problems: list[str] = []
    m = re.match(r"---\n(.*?)\n---\n", card, re.S)
    if not m:
        return [f"{CARD}: no YAML header between '---' lines"]
    header = m.group(1)
    lic_name = ((package.get("licenses") or [{}])[0]).get("name", "")
    lic = LICENSES.get(str(lic_name))
    hl = re.search(r"^license: (\S+)$", header, re.M)
    if lic is None or not hl or hl.group(1) != lic.hf:
        problems.append(f"{CARD}: license {hl.group(1) if hl else None!r} does not match {PACKAGE}'s {lic_name!r}")
    hs = re.search(r"^size_categories:\n- (\S+)$", header, re.M)
    if not hs or hs.group(1) != size_category(stats.rows):
        problems.append(f"{CARD}: size category {hs.group(1) if hs else None!r} does not fit {stats.rows} rows")
    paths = re.findall(r"^\s+path: (\S+)$", header, re.M)
    shards = sorted(str(r.get("path")) for r in package.get("resources", []) if r.get("format") == "parquet")
    if not paths or not all(sorted(x.relative_to(d).as_posix() for x in d.glob(p)) == shards for p in paths):
        problems.append(f"{CARD}: data_files {paths} do not match the shards")
    title = package.get("title", "")
    pn = re.search(r"^pretty_name: (.+)$", header, re.M)
    if not pn or pn.group(1) != _yaml_str(str(title)):
        problems.append(f"{CARD}: pretty_name differs from {PACKAGE}'s title")
    rows = re.search(r"^\| rows \| ([\d,]+) \|$", card, re.M)
    if not rows or int(rows.group(1).replace(",", "")) != stats.rows:
        problems.append(f"{CARD}: the row count does not match the data ({stats.rows})")
    counts = stats.outcome_counts()
    for o in schema.OUTCOMES:
        found = re.search(rf"^\| {o} \| ([\d,]+) \|", card, re.M)
        if not found or int(found.group(1).replace(",", "")) != counts[o]:
            problems.append(f"{CARD}: the {o} count does not match the data ({counts[o]})")
    if schema.markdown_table() not in card:
        problems.append(f"{CARD}: the schema table differs from analyzer.schema")
    if answer is not None and "\n".join(answer) not in card:
        problems.append(f"{CARD}: the answer (counts of deals, unsolvable and limit deals) does not match the data")
    if f"version: {_yaml_str(str(package.get('version')))}" not in cff.splitlines():
        problems.append(f"{CITATION}: version differs from {PACKAGE}")
    if f"title: {_yaml_str(str(title))}" not in cff.splitlines():
        problems.append(f"{CITATION}: title differs from {PACKAGE}")
    return problems


# --- command line ----------------------------------------------------------------


def check_dataset(args: argparse.Namespace) -> int | None:
    """``validate DIR`` when DIR is a published dataset (the hook
    `reports.cli.register` gives ``jobs.cli``'s ``validate``,
    `jobs.cli.DatasetCheck`): prints the problems and the verdict, or one
    JSON object with ``--json``, and returns the exit code (0 valid, 1 any
    problem); ``None`` when DIR is not a dataset."""
    import json

    from jobs.check import SHOW_PROBLEMS

    if not is_dataset(Path(args.dir)):
        return None
    problems = validate_dataset(Path(args.dir), replay=args.sample, replay_all=args.all, seed=args.seed)
    code = EXIT_FAILURE if problems else EXIT_OK
    if args.json:
        doc = {
            "command": "validate",
            "dataset": str(args.dir),
            "problems": problems,
            "result": "invalid" if problems else "valid",
            "exit_code": code,
        }
        print(json.dumps(doc))
        return code
    if args.verbosity >= 0:
        for line in problems if args.verbosity > 0 else problems[:SHOW_PROBLEMS]:
            print(line)
        if args.verbosity == 0 and len(problems) > SHOW_PROBLEMS:
            print(f"... and {len(problems) - SHOW_PROBLEMS} more (--verbose shows every one)")
    print(f"dataset {args.dir}: " + ("valid" if not problems else f"{len(problems)} problem(s)"))
    return code


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("dir", type=Path, metavar="DIR", help="a complete run directory")
    p.add_argument(
        "--out",
        type=Path,
        required=True,
        metavar="DATASET_DIR",
        help="the dataset; the version goes in DATASET_DIR/VERSION",
    )
    p.add_argument("--name", default=None, help="dataset name (default: from the configuration and deals)")
    p.add_argument(
        "--version",
        default=DEFAULT_VERSION,
        help=f"dataset version (default {DEFAULT_VERSION}); never overwritten",
    )
    p.add_argument(
        "--license", default=DEFAULT_LICENSE, help=f"one of {', '.join(LICENSES)} (default {DEFAULT_LICENSE})"
    )
    p.add_argument(
        "--author", default=DEFAULT_AUTHOR, help=f"author for the citation, one line (default {DEFAULT_AUTHOR!r})"
    )
    p.add_argument(
        "--deals",
        type=option(parse_deals, "deals"),
        metavar="DEALS",
        help="publish only these deals of the run (done, and read clean), e.g. 1-500000; the card records the subset",
    )


def handler(args: argparse.Namespace) -> int:
    """``publish``: prints the dataset's directory. A run that ``validate``
    would call invalid raises `RunInvalidError` (exit 1), an output that
    cannot be written `StorageError` (exit 3 when the disk is full, else 2)."""
    try:
        target = publish(
            args.dir,
            args.out,
            name=args.name,
            version=args.version,
            license=args.license,
            author=args.author,
            deals=args.deals,
        )
    except OSError as e:  # an output that cannot be written: one line
        raise storage_error(e, str(e.filename or args.out)) from None
    print(target)
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m reports.publish DIR --out DATASET_DIR`` or
    ``python -m reports.publish --validate DATASET_DIR``."""
    import sys

    from analyzer.cliframe import run_main

    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["--validate"]:

        def add(p: argparse.ArgumentParser) -> None:
            p.add_argument("--validate", type=Path, required=True, metavar="DATASET_DIR")

        def check(a: argparse.Namespace) -> int:
            problems = validate_dataset(a.validate)
            for line in problems:
                print(line)
            print(f"{a.validate}: {'ok' if not problems else f'{len(problems)} problems'}")
            return EXIT_FAILURE if problems else 0

        return run_main("python -m reports.publish", "Check a published dataset.", add, check, args)
    return run_main(
        "python -m reports.publish", "Publish a complete run as a dataset.", add_arguments, handler, args
    )


if __name__ == "__main__":
    raise SystemExit(main())
