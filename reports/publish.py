"""``freecell-analyzer publish DIR --out DATASET_DIR``: a citable dataset.

A complete run becomes ``DATASET_DIR/VERSION/``:

```
README.md            dataset card (Hugging Face format: YAML header + body)
CITATION.cff         how to cite it
datapackage.json     Frictionless data package: sha256 of every resource, table schema
provenance/run.json  the run manifest, byte for byte
data/results.parquet every row, sorted by deal then cells; zstd
SHA256SUMS           `sha256sum -c SHA256SUMS` checks every file above
```

A published version is never edited: the version is assembled in a hidden
directory beside it and renamed into place, its files are made read-only,
and publishing a version that exists is refused. `validate_dataset` checks
a published version (or every version under DATASET_DIR) against its
checksums, card and datapackage; `freecell-analyzer validate` calls it when
`is_dataset` says the directory is one.

Everything written derives from the rows, the run manifest and
`analyzer.schema`, so publishing the same run twice gives the same bytes.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shlex
import shutil
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from analyzer import schema, verifier
from analyzer.errors import AnalyzerError

from . import summary
from .load import (
    META_CONFIG,
    META_CONFIG_HASH,
    ROW_KEY,
    RunManifest,
    chunk_files,
    config_cells,
    count_deals,
    describe_config,
    format_ranges,
    missing_ranges,
    parse_deals,
    read_manifest,
    read_run_table,
)

DATA_FILE: Final = "data/results.parquet"
CARD: Final = "README.md"
PACKAGE: Final = "datapackage.json"
CITATION: Final = "CITATION.cff"
#: The run manifest, byte for byte. In a subdirectory, so that no tool takes
#: a published version for a run directory (and resumes a run into it).
MANIFEST: Final = "provenance/run.json"
SUMS: Final = "SHA256SUMS"
#: Rows per Parquet row group. A row with its solution text is ~0.5 kB, so a
#: group is ~50 MB before compression: large enough for fast scans, small
#: enough for readers that fetch one group at a time (the Hugging Face viewer
#: among them) and for deal-range filters to skip most of a big file.
ROW_GROUP_ROWS: Final = 100_000
#: Deal lists in the card stop here; the data has every row.
CARD_LIST: Final = 100
DEFAULT_VERSION: Final = "1.0.0"
DEFAULT_LICENSE: Final = "CC-BY-4.0"
DEFAULT_AUTHOR: Final = "FreeCell Analyzer contributors"
#: Solutions replayed through the independent verifier by `validate_dataset`.
REPLAY_SAMPLE: Final = 20
#: Frictionless names: lowercase letters, digits, '-', '_', '.'.
_NAME: Final = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
_VERSION: Final = re.compile(r"^[0-9A-Za-z][0-9A-Za-z.+_-]*$")


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
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


# --- the data --------------------------------------------------------------------


def _chunk_metadata(manifest: RunManifest) -> dict[str, str]:
    first = chunk_files(manifest.path)[0]
    meta = pq.read_schema(first).metadata or {}
    return {k.decode(): v.decode() for k, v in meta.items()}


def _check_complete(manifest: RunManifest, table: pa.Table) -> None:
    """A dataset has every declared deal, each once per number of cells."""
    deals = table["deal_number"].to_numpy()
    gaps = missing_ranges(manifest.declared, deals)
    if gaps:
        shown = format_ranges(gaps[:10]) + (" ..." if len(gaps) > 10 else "")
        raise PublishError(
            f"{manifest.path}: the run is incomplete (no rows for deals {shown}); "
            "finish it by running the same `freecell-analyzer run` command again, then publish"
        )
    keys = pd.DataFrame({"deal_number": deals, "cells": table["cells"].to_numpy()})
    dup = keys[keys.duplicated(keep=False)]
    if len(dup):
        first = dup.sort_values(list(ROW_KEY)).iloc[0]
        raise PublishError(
            f"{manifest.path}: deal {int(first['deal_number'])} has more than one row for "
            f"{int(first['cells'])} cells; run `freecell-analyzer validate`"
        )
    inside = np.zeros(len(deals), dtype=bool)
    for a, b in manifest.declared:
        inside |= (deals >= a) & (deals <= b)
    if not inside.all():
        raise PublishError(f"{manifest.path}: rows for deals outside the run's range {manifest.deals}")
    if not manifest.config.get("min_cells"):
        cells = config_cells(manifest.config)
        expected = count_deals(manifest.declared) * len(cells)
        if len(keys) != expected or not keys["cells"].isin(cells).all():
            raise PublishError(
                f"{manifest.path}: expected one row per deal and number of cells ({expected} rows), found {len(keys)}"
            )


def dataset_table(manifest: RunManifest, name: str, version: str) -> pa.Table:
    """Every row of the run, sorted by deal and cells, in the schema's types,
    with the run's file metadata plus the dataset's name and version."""
    table = read_run_table(manifest)
    _check_complete(manifest, table)
    table = table.sort_by([("deal_number", "ascending"), ("cells", "ascending")])
    table = table.unify_dictionaries().combine_chunks()
    chunk_meta = _chunk_metadata(manifest)
    declared = manifest.declared
    meta = {
        "fca.schema_version": manifest.schema_version or schema.SCHEMA_VERSION,
        "fca.package_version": manifest.package_version,
        "fca.engine_version": manifest.engine_version,
        "fca.git_commit": manifest.git_commit,
        META_CONFIG: chunk_meta[META_CONFIG],
        META_CONFIG_HASH: manifest.config_hash,
        "fca.deal_start": str(declared[0][0]),
        "fca.deal_end": str(declared[-1][1]),
        "fca.deals": format_ranges(declared),
        "fca.dataset_name": name,
        "fca.dataset_version": version,
    }
    return table.cast(schema.arrow_schema(meta))


def write_parquet(table: pa.Table, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(
        table,
        path,
        compression="zstd",
        row_group_size=ROW_GROUP_ROWS,
        write_statistics=True,
        write_page_index=True,
        sorting_columns=[pq.SortingColumn(0), pq.SortingColumn(table.schema.get_field_index("cells"))],
    )


# --- dataset card, datapackage, citation ---------------------------------------------


@dataclass(frozen=True)
class Dataset:
    """What the card, datapackage and citation are written from."""

    name: str
    version: str
    license: License
    author: str
    manifest: RunManifest
    frame: pd.DataFrame  # the published rows without solution text

    @property
    def title(self) -> str:
        return (
            f"FreeCell solvability of Microsoft deals {self.deals} ({describe_config(self.manifest.config)})"
        )

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
        counts = self.frame["outcome"].astype(object).value_counts()
        return {o: int(counts.get(o, 0)) for o in schema.OUTCOMES}


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
    return {
        "fields": [frictionless_field(c) for c in schema.COLUMNS],
        "primaryKey": ["deal_number", "variant", "cells", "move_rule"],
    }


def datapackage(ds: Dataset, hashes: Mapping[str, tuple[str, int]]) -> dict[str, Any]:
    """The Frictionless descriptor; `hashes` maps path → (sha256, bytes)."""
    data_sha, data_bytes = hashes[DATA_FILE]
    man_sha, man_bytes = hashes[MANIFEST]
    return {
        "name": ds.name,
        "title": ds.title,
        "version": ds.version,
        "description": f"Outcome of the FreeCell Analyzer solver on each Microsoft deal {ds.deals}; see README.md.",
        "licenses": [{"name": ds.license.spdx, "title": ds.license.title, "path": ds.license.url}],
        "keywords": ["freecell", "solitaire", "solvability", "combinatorial search"],
        "contributors": [{"title": ds.author, "role": "author"}],
        "created": ds.finished,
        "resources": [
            {
                "name": "results",
                "type": "table",
                "path": DATA_FILE,
                "format": "parquet",
                "mediatype": "application/vnd.apache.parquet",
                "bytes": data_bytes,
                "hash": f"sha256:{data_sha}",
                "schema": table_schema(),
            },
            {
                "name": "run-manifest",
                "path": MANIFEST,
                "format": "json",
                "mediatype": "application/json",
                "bytes": man_bytes,
                "hash": f"sha256:{man_sha}",
            },
        ],
        "fca": {
            "schema_version": ds.manifest.schema_version,
            "config_hash": ds.manifest.config_hash,
            "deals": ds.deals,
            "rows": len(ds.frame),
            "outcomes": ds.outcome_counts(),
        },
    }


def _md_table(frame: pd.DataFrame) -> list[str]:
    from .report import Table, display_rows

    cols, rows, numeric = display_rows(Table("t", "", frame))
    out = ["| " + " | ".join(cols) + " |", "|" + "|".join("---:" if n else "---" for n in numeric) + "|"]
    return out + ["| " + " | ".join(v.replace("|", "\\|") for v in r) + " |" for r in rows]


def _deal_list(numbers: Sequence[int]) -> str:
    shown = ", ".join(str(n) for n in numbers[:CARD_LIST])
    return shown + (f", ... ({len(numbers):,} in all)" if len(numbers) > CARD_LIST else "")


def _yaml_str(s: str) -> str:
    return json.dumps(s)  # a JSON string is a valid YAML double-quoted scalar


def dataset_card(ds: Dataset) -> str:
    """README.md in the Hugging Face dataset card format."""
    m = ds.manifest
    cfg = m.config
    counts = ds.outcome_counts()
    total = len(ds.frame)
    limits = cfg.get("limits") or {}
    variant = cfg.get("variant") or {}
    min_cells = bool(cfg.get("min_cells"))
    cells = config_cells(cfg)
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
        "    path: data/*.parquet",
        "---",
        "",
        f"# {ds.title}",
        "",
        "## What it is",
        "",
        f"One row per Microsoft FreeCell deal {ds.deals}"
        + (f" and number of cells ({', '.join(map(str, cells))})" if len(cells) > 1 else "")
        + f", under the rules of `{variant.get('name')}` with the `{variant.get('move_rule')}` move rule: "
        "whether the deal can be won, a solution when it can, and what the search cost. "
        + ("Each row also carries the deal's minimum number of cells (`min_cells`). " if min_cells else "")
        + "Deal numbers are those of the Microsoft FreeCell generator (1 to 8,589,934,591).",
        "",
        "```python",
        "import pandas as pd",
        f'df = pd.read_parquet("{DATA_FILE}")',
        "```",
        "",
        'It reads as well with `pyarrow.dataset.dataset("data/")`, DuckDB '
        '(`SELECT * FROM \'data/*.parquet\'`) and `datasets.load_dataset("parquet", data_files="data/*.parquet")`.',
        "",
        "## How it was produced",
        "",
        f"With FreeCell Analyzer {m.package_version or 'unknown'} (engine {m.engine_version or 'unknown'}"
        + (f", git commit `{m.git_commit}`" if m.git_commit else "")
        + f"; result schema version {m.schema_version or schema.SCHEMA_VERSION}), by the command:",
        "",
        "```sh",
        shlex.join(m.command) if m.command else "(not recorded)",
        "```",
        "",
        f"Configuration (hash `{m.config_hash}`):",
        "",
        "```json",
        json.dumps(cfg, indent=2, sort_keys=True),
        "```",
        "",
        "| invocation | started | finished | wall time (s) | status |",
        "|---:|---|---|---:|---|",
        *(
            f"| {i} | {inv.started_at} | {inv.finished_at} | {inv.wall_s:.1f} | {inv.status} |"
            for i, inv in enumerate(m.invocations, 1)
        ),
        "",
        f"`{MANIFEST}` is the run manifest as the run wrote it.",
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
        f"File `{DATA_FILE}`, sorted by `deal_number` then `cells`, zstd-compressed, "
        f"row groups of up to {ROW_GROUP_ROWS:,} rows. Parquet file metadata keys `fca.*` repeat the "
        "versions, configuration and deal range.",
        "",
        schema.markdown_table(),
        "",
        "## Summary statistics",
        "",
        "| figure | value |",
        "|---|---:|",
        f"| rows | {total:,} |",
        f"| deals | {int(ds.frame['deal_number'].nunique()):,} |",
        "",
        "| outcome | rows | share |",
        "|---|---:|---:|",
        *(
            f"| {o} | {counts[o]:,} | {100 * counts[o] / total if total else 0:.2f} % |"
            for o in schema.OUTCOMES
        ),
        "",
    ]
    if len(cells) > 1:
        lines += ["Per number of cells:", "", *_md_table(summary.outcome_table(ds.frame)), ""]
    lines += ["Difficulty:", "", *_md_table(summary.difficulty_table(ds.frame).drop(columns=["mean"])), ""]
    for o in ("unsolvable", "limit", "error"):
        rows = ds.frame[ds.frame["outcome"] == o]
        if len(rows):
            numbers = sorted({int(n) for n in rows["deal_number"]})
            lines += [f"Deals with outcome `{o}` ({len(numbers):,}): {_deal_list(numbers)}.", ""]
    if min_cells:
        lines += [
            "Minimum number of cells per deal:",
            "",
            *_md_table(summary.min_cells_distribution(ds.frame, cells)),
            "",
        ]
    nondet = ", ".join(f"`{c}`" for c in sorted(schema.NONDETERMINISTIC))
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
        "```bibtex",
        f"@dataset{{{re.sub(r'[^A-Za-z0-9]+', '_', ds.name)}_{re.sub(r'[^A-Za-z0-9]+', '_', ds.version)},",
        f"  title = {{{ds.title}}},",
        f"  author = {{{ds.author}}},",
        f"  version = {{{ds.version}}},",
        *([f"  year = {{{ds.released[:4]}}},"] if ds.released else []),
        f"  note = {{Dataset {ds.name}, license {ds.license.spdx}}}",
        "}",
        "```",
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


def publish(
    run_dir: Path | str,
    out: Path | str,
    *,
    name: str | None = None,
    version: str = DEFAULT_VERSION,
    license: str = DEFAULT_LICENSE,
    author: str = DEFAULT_AUTHOR,
) -> Path:
    """Publishes a complete run as ``out/version``; returns that directory."""
    lic = license_of(license)
    if not _VERSION.match(version):
        raise PublishError(f"--version {version!r}: use letters, digits and . + _ - (e.g. 1.0.0)")
    if not author.strip():
        raise PublishError("--author must not be empty")
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise PublishError(f"--out {out}: exists and is not a directory")
    target = out / version
    if target.exists():
        raise PublishError(
            f"{target} already exists: a published version is never changed; publish under a new --version"
        )
    manifest = read_manifest(Path(run_dir))
    name = name if name is not None else default_name(manifest.config, format_ranges(manifest.declared))
    if not _NAME.match(name):
        raise PublishError(f"--name {name!r}: use lowercase letters, digits and . _ - (a Frictionless name)")
    table = dataset_table(manifest, name, version)
    frame = table.drop_columns(["solution"]).to_pandas()
    ds = Dataset(name, version, lic, author.strip(), manifest, frame)

    out.mkdir(parents=True, exist_ok=True)
    tmp = out / f".{version}.partial"
    if tmp.exists():
        _make_writable(tmp)
        shutil.rmtree(tmp)
    try:
        tmp.mkdir()
        write_parquet(table, tmp / DATA_FILE)
        (tmp / MANIFEST).parent.mkdir()
        (tmp / MANIFEST).write_bytes(manifest.raw)
        hashes = {p: (sha256_file(tmp / p), (tmp / p).stat().st_size) for p in (DATA_FILE, MANIFEST)}
        (tmp / PACKAGE).write_text(json.dumps(datapackage(ds, hashes), indent=2) + "\n", encoding="utf-8")
        (tmp / CARD).write_text(dataset_card(ds), encoding="utf-8")
        (tmp / CITATION).write_text(citation_cff(ds), encoding="utf-8")
        for rel in (PACKAGE, CARD, CITATION):
            hashes[rel] = (sha256_file(tmp / rel), (tmp / rel).stat().st_size)
        (tmp / SUMS).write_text(sums_text(hashes), encoding="utf-8")
        for f in tmp.rglob("*"):
            if f.is_file():
                f.chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
        if target.exists():  # someone published it meanwhile
            raise PublishError(f"{target} already exists: a published version is never changed")
        os.rename(tmp, target)
    except BaseException:
        if tmp.exists():
            _make_writable(tmp)
            shutil.rmtree(tmp)
        raise
    return target


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


def validate_dataset(path: Path | str, *, replay: int = REPLAY_SAMPLE) -> list[str]:
    """Problems found in a published version (or in every version under
    `path`), as one line each; an empty list means the dataset is sound.

    Checks: every checksum in SHA256SUMS and datapackage.json, every file
    listed; the Parquet schema against `analyzer.schema`; rows sorted, no
    duplicates, no missing deal; the card's and datapackage's figures
    against the data; and `replay` solutions through `analyzer.verifier`.
    """
    p = Path(path)
    if not p.is_dir():
        raise PublishError(f"{p}: no such directory")
    if _is_version_dir(p):
        return _validate_version(p, replay)
    versions = sorted(
        c for c in p.iterdir() if c.is_dir() and not c.name.startswith(".") and _is_version_dir(c)
    )
    if not versions:
        raise PublishError(f"{p}: not a published dataset (no {PACKAGE} and {SUMS})")
    return [f"{v.name}: {problem}" for v in versions for problem in _validate_version(v, replay)]


def _validate_version(d: Path, replay: int) -> list[str]:
    problems: list[str] = []
    for required in (CARD, PACKAGE, CITATION, MANIFEST, SUMS, DATA_FILE):
        if not (d / required).is_file():
            problems.append(f"{required} is missing")
    problems += _check_sums(d)
    try:
        package = json.loads((d / PACKAGE).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        return [*problems, f"{PACKAGE}: not readable JSON ({e})"]
    problems += _check_package_resources(d, package)
    if not (d / DATA_FILE).is_file():
        return problems
    try:
        table = pq.read_table(d / DATA_FILE)
    except (OSError, pa.ArrowException) as e:
        return [*problems, f"{DATA_FILE}: not readable Parquet ({e})"]
    try:
        manifest = read_manifest((d / MANIFEST).parent)
    except AnalyzerError as e:
        return [*problems, f"{MANIFEST}: {e}"]
    problems += _check_table(table, manifest, package)
    problems += _check_card(d, table, package)
    problems += _check_replay(table, manifest, replay)
    return problems


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


def _check_package_resources(d: Path, package: Mapping[str, Any]) -> list[str]:
    problems: list[str] = []
    resources = package.get("resources")
    if not isinstance(resources, list) or not resources:
        return [f"{PACKAGE}: no resources"]
    paths = set()
    for r in resources:
        rel = str(r.get("path", ""))
        paths.add(rel)
        f = d / rel
        if not rel or not f.is_file():
            problems.append(f"{PACKAGE}: resource {r.get('name')!r} points at missing file {rel!r}")
            continue
        if r.get("bytes") != f.stat().st_size:
            problems.append(
                f"{PACKAGE}: {rel} has {f.stat().st_size} bytes, the package says {r.get('bytes')}"
            )
        if r.get("hash") != f"sha256:{sha256_file(f)}":
            problems.append(f"{PACKAGE}: sha256 of {rel} differs from the package's hash")
        if rel == DATA_FILE and r.get("schema") != table_schema():
            problems.append(f"{PACKAGE}: the table schema of {rel} differs from analyzer.schema")
    if DATA_FILE not in paths:
        problems.append(f"{PACKAGE}: no resource for {DATA_FILE}")
    if package.get("version") != d.name:
        problems.append(f"{PACKAGE}: version {package.get('version')!r} but the directory is {d.name!r}")
    return problems


def _check_table(table: pa.Table, manifest: RunManifest, package: Mapping[str, Any]) -> list[str]:
    problems: list[str] = []
    expected = schema.arrow_schema()
    for c in schema.COLUMNS:
        if c.name not in table.column_names:
            problems.append(f"{DATA_FILE}: no column {c.name}")
        elif table.schema.field(c.name).type != c.type:
            problems.append(
                f"{DATA_FILE}: column {c.name} is {table.schema.field(c.name).type}, expected {c.type}"
            )
    extra = [n for n in table.column_names if n not in expected.names]
    if extra:
        problems.append(f"{DATA_FILE}: unexpected columns {', '.join(extra)}")
    if problems:
        return problems
    meta = {k.decode(): v.decode() for k, v in (table.schema.metadata or {}).items()}
    if meta.get(META_CONFIG_HASH) != manifest.config_hash:
        problems.append(f"{DATA_FILE}: configuration hash differs from {MANIFEST}")
    if hashlib.sha256(meta.get(META_CONFIG, "").encode()).hexdigest() != manifest.config_hash:
        problems.append(f"{DATA_FILE}: {META_CONFIG} does not hash to the configuration hash")
    deals = table["deal_number"].to_numpy()
    cells = table["cells"].to_numpy()
    order = np.lexsort((cells, deals))
    if not np.array_equal(order, np.arange(len(order))):
        problems.append(f"{DATA_FILE}: rows are not sorted by deal_number, cells")
    keys = pd.DataFrame({"deal_number": deals, "cells": cells})
    dup = keys[keys.duplicated()]
    if len(dup):
        problems.append(
            f"{DATA_FILE}: {len(dup)} duplicate rows (first: deal {int(dup.iloc[0]['deal_number'])}, "
            f"{int(dup.iloc[0]['cells'])} cells)"
        )
    try:
        declared = parse_deals(meta.get("fca.deals", manifest.deals))
    except AnalyzerError as e:
        return [*problems, f"{DATA_FILE}: fca.deals: {e}"]
    gaps = missing_ranges(declared, deals)
    if gaps:
        problems.append(
            f"{DATA_FILE}: no rows for deals {format_ranges(gaps[:10])}{' ...' if len(gaps) > 10 else ''}"
        )
    inside = np.zeros(len(deals), dtype=bool)
    for a, b in declared:
        inside |= (deals >= a) & (deals <= b)
    if not inside.all():
        problems.append(
            f"{DATA_FILE}: {int((~inside).sum())} rows for deals outside {format_ranges(declared)}"
        )
    if not manifest.config.get("min_cells"):
        want = set(config_cells(manifest.config))
        if set(np.unique(cells).tolist()) - want or len(keys) != count_deals(declared) * len(want):
            problems.append(f"{DATA_FILE}: expected one row per deal for each of cells {sorted(want)}")
    problems += _check_invariants(table)
    facts = package.get("fca") or {}
    outcomes = table.column("outcome").to_pandas().astype(object).value_counts()
    actual = {o: int(outcomes.get(o, 0)) for o in schema.OUTCOMES}
    if facts.get("rows") != table.num_rows:
        problems.append(f"{PACKAGE}: says {facts.get('rows')} rows, the data has {table.num_rows}")
    if facts.get("outcomes") != actual:
        problems.append(f"{PACKAGE}: outcome counts {facts.get('outcomes')} differ from the data's {actual}")
    if facts.get("config_hash") != manifest.config_hash:
        problems.append(f"{PACKAGE}: configuration hash differs from {MANIFEST}")
    return problems


def _check_invariants(table: pa.Table) -> list[str]:
    """What each outcome implies about the other columns."""
    df = table.select(
        ["deal_number", "outcome", "solution", "solution_length_single", "limit_reason", "error"]
    ).to_pandas()
    df["outcome"] = df["outcome"].astype(object)
    rules = [
        ("solved rows without a solution or its length",
         (df["outcome"] == "solved") & (df["solution"].isna() | df["solution_length_single"].isna())),
        ("unsolved rows with a solution", (df["outcome"] != "solved") & df["solution"].notna()),
        ("limit rows without a limit_reason", (df["outcome"] == "limit") & df["limit_reason"].isna()),
        ("error rows without an error message", (df["outcome"] == "error") & df["error"].isna()),
    ]  # fmt: skip
    problems = []
    for what, bad in rules:
        if bad.any():
            problems.append(
                f"{DATA_FILE}: {int(bad.sum())} {what} (first: deal {int(df.loc[bad, 'deal_number'].iloc[0])})"
            )
    return problems


def _check_card(d: Path, table: pa.Table, package: Mapping[str, Any]) -> list[str]:
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
        problems.append(
            f"{CARD}: license {hl.group(1) if hl else None!r} does not match {PACKAGE}'s {lic_name!r}"
        )
    hs = re.search(r"^size_categories:\n- (\S+)$", header, re.M)
    if not hs or hs.group(1) != size_category(table.num_rows):
        problems.append(
            f"{CARD}: size category {hs.group(1) if hs else None!r} does not fit {table.num_rows} rows"
        )
    paths = re.findall(r"^\s+path: (\S+)$", header, re.M)
    if not paths or not all(list(d.glob(p)) == [d / DATA_FILE] for p in paths):
        problems.append(f"{CARD}: data_files {paths} do not match {DATA_FILE}")
    title = package.get("title", "")
    pn = re.search(r"^pretty_name: (.+)$", header, re.M)
    if not pn or pn.group(1) != _yaml_str(str(title)):
        problems.append(f"{CARD}: pretty_name differs from {PACKAGE}'s title")
    rows = re.search(r"^\| rows \| ([\d,]+) \|$", card, re.M)
    if not rows or int(rows.group(1).replace(",", "")) != table.num_rows:
        problems.append(f"{CARD}: the row count does not match the data ({table.num_rows})")
    outcomes = table.column("outcome").to_pandas().astype(object).value_counts()
    for o in schema.OUTCOMES:
        found = re.search(rf"^\| {o} \| ([\d,]+) \|", card, re.M)
        if not found or int(found.group(1).replace(",", "")) != int(outcomes.get(o, 0)):
            problems.append(f"{CARD}: the {o} count does not match the data ({int(outcomes.get(o, 0))})")
    if schema.markdown_table() not in card:
        problems.append(f"{CARD}: the schema table differs from analyzer.schema")
    if f"version: {_yaml_str(str(package.get('version')))}" not in cff.splitlines():
        problems.append(f"{CITATION}: version differs from {PACKAGE}")
    if f"title: {_yaml_str(str(title))}" not in cff.splitlines():
        problems.append(f"{CITATION}: title differs from {PACKAGE}")
    return problems


def _check_replay(table: pa.Table, manifest: RunManifest, sample: int) -> list[str]:
    """Replays up to `sample` solutions, evenly spread, through the verifier."""
    if sample <= 0:
        return []
    solved = table.filter(pc.equal(table["outcome"].cast(pa.string()), pa.scalar("solved")))
    if not solved.num_rows:
        return []
    picks = np.unique(np.linspace(0, solved.num_rows - 1, min(sample, solved.num_rows)).astype(np.int64))
    rows = solved.take(picks).select(["deal_number", "cells", "solution"]).to_pylist()
    v = dict(manifest.config.get("variant") or {})
    problems = []
    for r in rows:
        try:
            rules = verifier.VerifierVariant(**{**v, "cells": int(r["cells"])})
            rep = verifier.replay(int(r["deal_number"]), str(r["solution"]), rules)
        except (verifier.VerifierError, TypeError) as e:
            problems.append(f"{DATA_FILE}: deal {r['deal_number']}: cannot replay ({e})")
            continue
        if not rep.won:
            problems.append(
                f"{DATA_FILE}: deal {r['deal_number']} ({r['cells']} cells): solution fails: {rep.reason}"
            )
    return problems


# --- command line ----------------------------------------------------------------


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
        "--author", default=DEFAULT_AUTHOR, help=f"author for the citation (default {DEFAULT_AUTHOR!r})"
    )


def handler(args: argparse.Namespace) -> int:
    target = publish(
        args.dir, args.out, name=args.name, version=args.version, license=args.license, author=args.author
    )
    print(target)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m reports.publish DIR --out DATASET_DIR`` or
    ``python -m reports.publish --validate DATASET_DIR``."""
    import sys

    from analyzer.cliframe import run_main
    from analyzer.errors import EXIT_FAILURE

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
