"""Run directories and their manifest, ``run.json`` (docs/DESIGN.md, "Runs on
disk"): which checks an output directory must pass before a run writes into
it, and how the manifest is read and updated (atomically, by rename).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from analyzer.schema import SCHEMA_VERSION

from .chunks import CHUNKS_DIR, parse_chunk_name
from .config import Provenance, RunConfig, canonical_json
from .errors import ConfigError, RunDirError
from .ranges import DealRange, format_deals, merge, parse_deals

MANIFEST: Final = "run.json"


def now_iso() -> str:
    """The current UTC time, ISO 8601 to the second."""
    return dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


@dataclass
class RunRecord:
    """One invocation of ``run`` on the directory (resumes add one each)."""

    started_at: str
    finished_at: str | None = None
    wall_s: float | None = None
    status: str = "running"
    deals: str = ""


@dataclass
class Manifest:
    """The content of ``run.json``."""

    config: RunConfig
    deals: tuple[DealRange, ...]
    chunk_size: int
    provenance: Provenance
    command: list[str]
    runs: list[RunRecord] = field(default_factory=list)
    schema_version: str = SCHEMA_VERSION

    @property
    def config_hash(self) -> str:
        return self.config.config_hash()

    def to_json(self) -> str:
        d = {
            "schema_version": self.schema_version,
            **self.provenance.as_dict(),
            "config": self.config.to_dict(),
            "config_hash": self.config_hash,
            "deals": format_deals(self.deals),
            "chunk_size": self.chunk_size,
            "command": self.command,
            "runs": [dataclasses.asdict(r) for r in self.runs],
        }
        return json.dumps(d, indent=2) + "\n"

    @classmethod
    def from_json(cls, text: str, where: str = MANIFEST) -> Manifest:
        """Parses run.json; raises `RunDirError` naming the file when it is
        not a manifest or its hash does not match its configuration."""
        try:
            d = json.loads(text)
            config = RunConfig.from_dict(d["config"])
            m = cls(
                config=config,
                deals=parse_deals(d["deals"]),
                chunk_size=int(d["chunk_size"]),
                provenance=Provenance(
                    str(d.get("package_version", "")), str(d.get("engine_version", "")), str(d.get("git_commit", ""))
                ),
                command=[str(a) for a in d.get("command", [])],
                runs=[RunRecord(**r) for r in d.get("runs", [])],
                schema_version=str(d.get("schema_version", "")),
            )
        except (ValueError, KeyError, TypeError, AttributeError, ConfigError) as e:
            raise RunDirError(f"{where} is not a run manifest ({type(e).__name__}: {e})") from e
        if d.get("config_hash") != m.config_hash:
            raise RunDirError(
                f"{where}: config_hash {d.get('config_hash')!r} is not the sha256 of its config "
                f"({m.config_hash}); the manifest was edited or damaged"
            )
        return m


def load_manifest(directory: Path) -> Manifest | None:
    """The manifest of `directory`, or ``None`` if it has none."""
    path = directory / MANIFEST
    try:
        text = path.read_text()
    except FileNotFoundError:
        return None
    except OSError as e:
        raise RunDirError(f"cannot read {path}: {e.strerror}") from e
    return Manifest.from_json(text, str(path))


def write_manifest(directory: Path, manifest: Manifest) -> None:
    """Writes run.json atomically (temporary file, then rename)."""
    path = directory / MANIFEST
    tmp = directory / f".{MANIFEST}.{os.getpid()}.tmp"
    tmp.write_text(manifest.to_json())
    os.replace(tmp, path)


def require_run_dir(directory: Path | str) -> Manifest:
    """The manifest of an existing run directory; raises `RunDirError`
    naming the path otherwise (for ``status`` and ``validate``)."""
    d = Path(directory)
    if not d.exists():
        raise RunDirError(f"{d} does not exist")
    if not d.is_dir():
        raise RunDirError(f"{d} is a file, not a run directory")
    m = load_manifest(d)
    if m is None:
        raise RunDirError(f"{d} is not a run directory: it has no {MANIFEST}")
    return m


def describe_config_difference(old: RunConfig, new: RunConfig) -> str:
    """Which parts of two configurations differ, for the refusal message.

    >>> from jobs.config import build_config
    >>> describe_config_difference(build_config(cells="4"), build_config(cells="3"))
    'cells [4] here vs [3] asked'
    """
    a, b = old.to_dict(), new.to_dict()
    parts = []
    for key in sorted(set(a) | set(b)):
        va, vb = a.get(key), b.get(key)
        if isinstance(va, dict) and isinstance(vb, dict):
            for sub in sorted(set(va) | set(vb)):
                if va.get(sub) != vb.get(sub):
                    parts.append(f"{key}.{sub} {canonical_json(va.get(sub))} here vs {canonical_json(vb.get(sub))} asked")
        elif va != vb:
            parts.append(f"{key} {canonical_json(va)} here vs {canonical_json(vb)} asked")
    return "; ".join(parts) or "identical"


def check_output_dir(directory: Path, config: RunConfig) -> Manifest | None:
    """Checks, without writing anything, that a run of `config` may write
    into `directory`: it does not exist, is empty, or is a run directory of
    the same configuration (whose manifest is returned). Raises
    `RunDirError` naming the path otherwise."""
    if directory.exists() and not directory.is_dir():
        raise RunDirError(f"output path {directory} is a file; --out needs a directory (it is created if missing)")
    if not directory.exists():
        parent = directory.parent
        while not parent.exists():
            parent = parent.parent
        if not parent.is_dir():
            raise RunDirError(f"cannot create {directory}: {parent} is a file")
        if not os.access(parent, os.W_OK):
            raise RunDirError(f"cannot create {directory}: {parent} is not writable")
        return None
    manifest = load_manifest(directory)
    if manifest is None:
        entries = sorted(p.name for p in directory.iterdir())
        if not entries:
            return None
        chunk_files = [n for n in entries if n == CHUNKS_DIR]
        what = "has a chunks/ directory but no run.json" if chunk_files else f"holds other files ({', '.join(entries[:3])})"
        raise RunDirError(f"output directory {directory} is not empty and not a run directory: it {what}")
    if manifest.config_hash != config.config_hash():
        raise RunDirError(
            f"output directory {directory} holds a run of another configuration "
            f"({describe_config_difference(manifest.config, config)}); "
            "use another --out, or the same options to resume it"
        )
    if not os.access(directory, os.W_OK):
        raise RunDirError(f"output directory {directory} is not writable")
    return manifest


def chunk_files(directory: Path) -> list[Path]:
    """Paths of files named like chunks (complete or not), sorted."""
    chunks = directory / CHUNKS_DIR
    if not chunks.is_dir():
        return []
    return sorted(p for p in chunks.iterdir() if parse_chunk_name(p.name) is not None)


def merged_deals(old: Sequence[DealRange], new: Sequence[DealRange]) -> tuple[DealRange, ...]:
    """All deals a directory has been asked for."""
    return merge([*old, *new])
