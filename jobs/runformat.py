"""The run directory, described once: layout, names, metadata keys, the
manifest and its history, the index of sealed files, the lock, and the one
checked reader of result files with its row invariants (docs/DESIGN.md,
"Runs on disk"). `jobs` writes runs through it; `status`, `validate`,
`reports.load`, `reports.publish` and the tests read them through it.

A run directory (format 2)::

    OUT/
      deal_block=0/deals-0000000001-0001000000.parquet    # sealed data files
      deal_block=0/deals-0001000001-0002000000.parquet
      ...
      deal_block=85/deals-8500000001-8589934591.parquet
      _run/run.json        # manifest: configuration, layout, every invocation
      _run/index.jsonl     # one line per sealed file: range, rows, bytes, sha256, outcomes
      _run/lock            # held (flock) by the driver writing the run; names its PID and host
      _run/parts/deals-A-B.part   # finished tasks' rows, not yet sealed into a data file

Readers that take a directory (``pd.read_parquet(OUT)``, ``pyarrow.dataset``,
DuckDB's ``read_parquet('OUT/*/*.parquet')``) see only the data files: the
``_run`` directory and dot-named temporary files are skipped by pyarrow, and
nothing outside ``deal_block=K/`` ends in ``.parquet``. ``deal_block`` is a
Hive partition key, ``(deal_number - 1) // 10**8``, so an engine can skip a
whole block by directory name; inside a block, files and row groups are in
deal order with min/max statistics.

>>> file_name(DealRange(1, 1_000_000))
'deals-0000000001-0001000000.parquet'
>>> data_relpath(DealRange(200_000_001, 200_001_000))
'deal_block=2/deals-0200000001-0200001000.parquet'
>>> parse_file_name("deals-0000000001-0001000000.parquet")
DealRange(1, 1000000)
>>> [str(u) for u in file_units([DealRange(999_990, 1_000_010)], 1_000_000)]
['999990-1000000', '1000001-1000010']
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import errno
import fcntl
import functools
import gc
import hashlib
import json
import os
import re
import secrets
import socket
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Final

from analyzer._lazy import LazyModule
from analyzer.errors import EXIT_FAILURE, AnalyzerError, storage_error
from analyzer.headline import HEADLINE_COLUMNS, Headline, combine, merge_parts, table_part
from analyzer.schema import OUTCOMES, SCHEMA_VERSION, arrow_schema

from .config import Provenance, RunConfig, canonical_json, limits_to_dict
from .errors import ConfigError, RunDirError
from .ranges import MAX_DEAL, DealRange, format_deals, intersect, merge, parse_deals, subtract

#: pyarrow.compute (typed Any: its stubs' overloads reject the Table columns used here),
#: pyarrow.parquet and pandas, imported when first used.
pc: Any = LazyModule("pyarrow.compute")
pq: Any = LazyModule("pyarrow.parquet")
pd: Any = LazyModule("pandas")
if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa
else:  # ``status`` reads the manifest and index alone
    np = LazyModule("numpy")
    pa = LazyModule("pyarrow")

# ---------------------------------------------------------------------------
# Layout
# ---------------------------------------------------------------------------

#: Version of this layout; run.json carries it. Version 1 (``run.json`` and
#: ``chunks/`` at the top) is recognised and refused with advice.
FORMAT_VERSION: Final = 2
CONTROL_DIR: Final = "_run"
MANIFEST: Final = "run.json"
INDEX: Final = "index.jsonl"
LOCK: Final = "lock"
PARTS_DIR: Final = "parts"
#: Deals an escalation pass (``--retry-limits``) has re-solved, one part per
#: deal, until they are written into their data file.
RETRY_DIR: Final = "retry"
#: Deals per Hive partition directory ``deal_block=K`` (86 blocks cover 1..2^33-1).
PARTITION_DEALS: Final = 10**8
PARTITION_KEY: Final = "deal_block"
#: Deals per sealed data file for one row per deal: ~150-250 MB of zstd
#: Parquet with solutions (about 200 bytes a row compressed, measured on
#: MS 1..1,000,000). Runs with several rows per deal use a tenth.
DEFAULT_FILE_DEALS: Final = 10**6
#: Deals per Parquet row group inside a data file (the unit readers skip by).
ROW_GROUP_DEALS: Final = 100_000
#: Limit reasons a ``limit`` row may carry.
LIMIT_REASONS: Final = ("positions", "bytes", "disk", "time")

_FILE = re.compile(r"deals-(\d{10})-(\d{10})\.parquet")
_PART = re.compile(r"deals-(\d{10})-(\d{10})\.part")
_BLOCK = re.compile(rf"{PARTITION_KEY}=(\d+)")
_TEMP_SUFFIX: Final = ".tmp"

#: Parquet file (key-value) metadata on every data file and part.
META_KEYS: Final = (
    "fca.format_version",
    "fca.schema_version",
    "fca.package_version",
    "fca.engine_version",
    "fca.git_commit",
    "fca.config",
    "fca.config_hash",
    "fca.deal_start",
    "fca.deal_end",
)


def partition_of(deal: int) -> int:
    """The ``deal_block`` of a deal.

    >>> partition_of(1), partition_of(100_000_000), partition_of(100_000_001), partition_of(MAX_DEAL)
    (0, 0, 1, 85)
    """
    return (deal - 1) // PARTITION_DEALS


def file_name(deals: DealRange) -> str:
    return f"deals-{deals.start:010d}-{deals.end:010d}.parquet"


def part_name(deals: DealRange) -> str:
    return f"deals-{deals.start:010d}-{deals.end:010d}.part"


def part_path(out: Path, deals: DealRange, *, retry: bool = False) -> Path:
    """Where the part of `deals` is (`write_part`); with `retry`, an
    escalation pass's retry part."""
    return control(out) / (RETRY_DIR if retry else PARTS_DIR) / part_name(deals)


def _parse(pattern: re.Pattern[str], name: str) -> DealRange | None:
    m = pattern.fullmatch(name)
    if m is None:
        return None
    start, end = int(m.group(1)), int(m.group(2))
    if not 1 <= start <= end <= MAX_DEAL:
        return None
    return DealRange(start, end)


def parse_file_name(name: str) -> DealRange | None:
    """The deals a data file name claims, or ``None``."""
    return _parse(_FILE, name)


def parse_part_name(name: str) -> DealRange | None:
    return _parse(_PART, name)


def data_relpath(deals: DealRange) -> str:
    """``deal_block=K/deals-A-B.parquet``, relative to the run directory."""
    return f"{PARTITION_KEY}={partition_of(deals.start)}/{file_name(deals)}"


def control(out: Path) -> Path:
    return out / CONTROL_DIR


def default_file_deals(config: RunConfig) -> int:
    """Deals per data file for `config`: 10^6 for one row per deal, 10^5
    otherwise (several cell counts, or min-cells runs)."""
    return DEFAULT_FILE_DEALS if config.rows_per_deal() == 1 else DEFAULT_FILE_DEALS // 10


def check_file_deals(n: int) -> int:
    """A file span must divide the partition so no file crosses a block."""
    if n < 1 or PARTITION_DEALS % n:
        raise ConfigError(f"--file-deals {n} must divide {PARTITION_DEALS:,} (e.g. 1000000, 100000 or 1000)")
    return n


def file_units(ranges: Iterable[DealRange], file_deals: int) -> Iterator[DealRange]:
    """Cuts `ranges` lazily on the file grid ``k*file_deals+1 .. (k+1)*file_deals``:
    every unit becomes one data file. Lazy, so the whole deal range costs no memory."""
    for r in merge(ranges):
        lo = r.start
        while lo <= r.end:
            hi = min(r.end, ((lo - 1) // file_deals + 1) * file_deals)
            yield DealRange(lo, hi)
            lo = hi + 1


def now_iso() -> str:
    """The current UTC time, ISO 8601 to the second."""
    return dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


# ---------------------------------------------------------------------------
# Atomic writes
# ---------------------------------------------------------------------------


def temp_path(final: Path) -> Path:
    """A dot-named temporary beside `final`, unique per writer; readers and
    directory scans skip it, and ``run`` deletes leftovers while it holds the lock."""
    return final.with_name(f".{final.name}.{os.getpid()}.{secrets.token_hex(4)}{_TEMP_SUFFIX}")


def is_temp(name: str) -> bool:
    return name.startswith(".") and name.endswith(_TEMP_SUFFIX)


def fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_atomic(final: Path, write: Callable[[IO[bytes]], None]) -> None:
    """Writes through `write` into a temporary file, fsyncs it and renames it
    to `final`; on any failure the temporary file is removed."""
    tmp = temp_path(final)
    try:
        with open(tmp, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, final)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    fsync_dir(final.parent)


def write_text_atomic(final: Path, text: str) -> None:
    def write(f: IO[bytes]) -> None:
        f.write(text.encode())

    write_atomic(final, write)


# ---------------------------------------------------------------------------
# The manifest (_run/run.json) and its history
# ---------------------------------------------------------------------------


@dataclass
class Invocation:
    """One invocation of ``run`` on the directory, with its own status:
    ``running`` while its driver holds the lock, then ``complete``,
    ``incomplete``, ``stalled``, ``interrupted``, ``failed`` or ``killed``
    (the driver ended without saying; found by the next one)."""

    kind: str  # "run" or "retry-limits"
    command: list[str]
    deals: str
    started_at: str
    pid: int = 0
    limits: dict[str, Any] | None = None
    finished_at: str | None = None
    wall_s: float | None = None
    status: str = "running"
    deals_done: int = 0


@dataclass
class Manifest:
    """The content of ``_run/run.json``."""

    config: RunConfig
    deals: tuple[DealRange, ...]
    file_deals: int
    provenance: Provenance
    history: list[Invocation] = field(default_factory=list)
    #: Escalation passes' budgets, in order (attempt k+1 used passes[k]).
    passes: list[dict[str, Any]] = field(default_factory=list)
    schema_version: str = SCHEMA_VERSION

    @property
    def config_hash(self) -> str:
        return self.config.config_hash()

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": "freecell-analyzer run",
            "format_version": FORMAT_VERSION,
            "schema_version": self.schema_version,
            **self.provenance.as_dict(),
            "config": self.config.to_dict(),
            "config_hash": self.config_hash,
            "deals": format_deals(self.deals),
            "layout": {
                "file_deals": self.file_deals,
                "partition_deals": PARTITION_DEALS,
                "partition_key": PARTITION_KEY,
                "row_group_deals": ROW_GROUP_DEALS,
            },
            "passes": self.passes,
            "history": [dataclasses.asdict(r) for r in self.history],
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2) + "\n"

    @classmethod
    def from_json(cls, text: str, where: str) -> Manifest:
        try:
            d = json.loads(text)
            if not isinstance(d, dict):
                raise TypeError("not a JSON object")
            version = d.get("format_version")
            if version != FORMAT_VERSION:
                raise RunDirError(f"{where}: run format {version!r}; this version reads format {FORMAT_VERSION}")
            layout = d["layout"]
            m = cls(
                config=RunConfig.from_dict(d["config"]),
                deals=parse_deals(d["deals"]),
                file_deals=check_file_deals(int(layout["file_deals"])),
                provenance=Provenance(
                    str(d.get("package_version", "")), str(d.get("engine_version", "")), str(d.get("git_commit", ""))
                ),
                history=[Invocation(**r) for r in d.get("history", [])],
                passes=[dict(p) for p in d.get("passes", [])],
                schema_version=str(d.get("schema_version", "")),
            )
        except RunDirError:
            raise
        except (ValueError, KeyError, TypeError, AttributeError, AnalyzerError) as e:
            raise RunDirError(f"{where} is not a run manifest ({type(e).__name__}: {e})") from e
        if d.get("config_hash") != m.config_hash:
            raise RunDirError(
                f"{where}: config_hash {d.get('config_hash')!r} is not the sha256 of its config; "
                "the manifest was edited or damaged"
            )
        if m.schema_version != SCHEMA_VERSION:
            raise RunDirError(
                f"{where}: result schema version {m.schema_version!r}, this version writes {SCHEMA_VERSION!r}; "
                "read it with the version that wrote it, or run it again into a new directory"
            )
        return m

    def attempt_limits(self, attempt: int) -> dict[str, Any]:
        """The budgets attempt `attempt` (1-based) searched under."""
        if attempt == 1:
            return limits_dict(self.config)
        return dict(self.passes[attempt - 2])


def limits_dict(config: RunConfig) -> dict[str, Any]:
    return limits_to_dict(config.limits)


def manifest_path(out: Path) -> Path:
    return control(out) / MANIFEST


def legacy_message(out: Path) -> str | None:
    """Advice for a directory of the first layout (run.json and chunks/ at the top)."""
    if (out / "run.json").is_file() or (out / "chunks").is_dir():
        return (
            f"{out} is a run directory of the first format (run.json and chunks/ at its top), which this "
            "version no longer reads; run the same deals again into a new --out (every deal is recomputed), "
            "or read its chunks with the version that wrote it"
        )
    return None


def load_manifest(out: Path) -> Manifest | None:
    """The manifest of `out`, or ``None`` if it has none."""
    path = manifest_path(out)
    try:
        text = path.read_text()
    except FileNotFoundError:
        legacy = legacy_message(out)
        if legacy:
            raise RunDirError(legacy) from None
        return None
    except (OSError, UnicodeDecodeError) as e:
        raise RunDirError(f"cannot read {path}: {e}") from e
    return Manifest.from_json(text, str(path))


def write_manifest(out: Path, manifest: Manifest) -> None:
    """Writes ``_run/run.json`` atomically; `StorageError` when it cannot."""
    try:
        control(out).mkdir(parents=True, exist_ok=True)
        write_text_atomic(manifest_path(out), manifest.to_json())
    except OSError as e:
        raise storage_error(e, f"{manifest_path(out)}") from e


def require_run_dir(directory: Path | str) -> Manifest:
    """The manifest of an existing run directory; `RunDirError` naming the path otherwise."""
    d = Path(directory)
    if not d.exists():
        raise RunDirError(f"{d} does not exist")
    if not d.is_dir():
        raise RunDirError(f"{d} is a file, not a run directory")
    m = load_manifest(d)
    if m is None:
        raise RunDirError(f"{d} is not a run directory: it has no {CONTROL_DIR}/{MANIFEST}")
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


# ---------------------------------------------------------------------------
# The lock
# ---------------------------------------------------------------------------


class RunLockedError(RunDirError):
    """Another driver holds the run directory."""


@dataclass
class RunLock:
    """An OS file lock (``flock``) on ``_run/lock``, held by the driver for
    its whole life. The OS releases it when the process ends however it
    ends, so a killed driver's lock is free at once; the file keeps the last
    holder's PID and host, which the next driver reports when it takes over.
    On storage whose flock is local to each node (some NFS setups), run every
    driver of a directory on one node."""

    path: Path
    fd: int
    previous: dict[str, Any] | None

    @classmethod
    def acquire(cls, out: Path) -> RunLock:
        path = control(out) / LOCK
        try:
            control(out).mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:
            raise storage_error(e, str(path)) from e
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            holder = _read_holder(fd)
            os.close(fd)
            if e.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise RunLockedError(f"{out} is in use by {describe_holder(holder)}; wait for it, or use another --out") from None
            raise storage_error(e, str(path)) from e
        previous = _read_holder(fd)
        me = {"pid": os.getpid(), "host": socket.gethostname(), "since": now_iso()}
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, (json.dumps(me) + "\n").encode(), 0)
            os.fsync(fd)
        except OSError as e:
            os.close(fd)
            raise storage_error(e, str(path)) from e
        return cls(path, fd, previous)

    def reserve(self, nbytes: int) -> None:
        """Pads the lock file with `nbytes` of zeros after the holder's line:
        space held back so that the final status can still be written when
        the run's own output fills the disk. `StorageError` when the disk
        has not that much room now."""
        line = len(_holder_line(self.fd)) + 1
        try:
            os.pwrite(self.fd, bytes(nbytes), line)
            os.fsync(self.fd)
        except OSError as e:
            self.free_reserve()
            raise storage_error(e, str(self.path)) from e

    def free_reserve(self) -> None:
        """Gives the reserved space back (before the last manifest write)."""
        with contextlib.suppress(OSError):
            os.ftruncate(self.fd, len(_holder_line(self.fd)) + 1)

    def release(self) -> None:
        if self.fd >= 0:
            with contextlib.suppress(OSError):
                fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)
            self.fd = -1


def _holder_line(fd: int) -> bytes:
    """The lock file's first line, the holder's JSON (a reserve of zeros may
    follow it)."""
    return os.pread(fd, 4096, 0).split(b"\n", 1)[0]


def _read_holder(fd: int) -> dict[str, Any] | None:
    try:
        raw = _holder_line(fd)
        d = json.loads(raw.decode()) if raw.strip() else None
    except (OSError, ValueError):
        return None
    return d if isinstance(d, dict) else None


def describe_holder(holder: Mapping[str, Any] | None) -> str:
    if not holder:
        return "another driver"
    return f"the driver with PID {holder.get('pid')} on host {holder.get('host')} (since {holder.get('since')})"


def lock_holder(out: Path) -> dict[str, Any] | None:
    """Who holds the run's lock now, or ``None`` if nobody does (read-only probe)."""
    path = control(out) / LOCK
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            return _read_holder(fd) or {}
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


# ---------------------------------------------------------------------------
# The index of sealed data files (_run/index.jsonl)
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class FileEntry:
    """One sealed data file as the index records it. `headline` is the
    file's part of the run's answer (`analyzer.headline.Headline.part`:
    deals per outcome at each count of cells, the first unsolvable and
    limit deals), so ``status`` and ``run`` print the answer of the whole
    run from the index alone."""

    file: str  # relative path: deal_block=K/deals-A-B.parquet
    start: int
    end: int
    rows: int
    bytes: int
    sha256: str
    outcomes: Mapping[str, int]
    config_hash: str
    headline: Mapping[str, Any] | None = None

    @functools.cached_property
    def deals(self) -> DealRange:
        return DealRange(self.start, self.end)

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self) | {"outcomes": dict(self.outcomes)}, sort_keys=True)

    @classmethod
    def from_json(cls, line: str) -> FileEntry:
        return cls.from_dict(json.loads(line))

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> FileEntry:
        """An entry from its parsed JSON; `ValueError` (or `KeyError`,
        `TypeError`) when it is not a well-formed entry."""
        e = cls(
            file=str(d["file"]),
            start=int(d["start"]),
            end=int(d["end"]),
            rows=int(d["rows"]),
            bytes=int(d["bytes"]),
            sha256=str(d["sha256"]),
            outcomes={str(k): int(v) for k, v in d["outcomes"].items()},
            config_hash=str(d["config_hash"]),
            headline=d.get("headline"),
        )
        if e.file != data_relpath(e.deals) or _SHA256.fullmatch(e.sha256) is None:
            raise ValueError(f"entry for {e.file} is inconsistent")
        return e


_SHA256: Final = re.compile(r"[0-9a-f]{64}")


def index_path(out: Path) -> Path:
    return control(out) / INDEX


def read_index(out: Path) -> dict[str, FileEntry]:
    """The index: file → its latest entry. Lines that do not parse (a
    driver killed while appending) are skipped; the files they would name
    show up as unindexed and are checked by the next ``run``."""
    try:
        with open(index_path(out), encoding="utf-8", errors="replace") as f:
            lines = [line for line in f.read().splitlines() if line.strip()]
    except FileNotFoundError:
        return {}
    except OSError as e:
        raise RunDirError(f"cannot read {index_path(out)}: {e.strerror}") from e
    # The parse makes ~50 objects per line and no cycles: the cyclic
    # collector, which would run hundreds of times over them, waits.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _parse_index(lines)
    finally:
        if collecting:
            gc.enable()


def _parse_index(lines: Sequence[str]) -> dict[str, FileEntry]:
    try:
        # One parse of the whole index (a full-range run has 8,590 lines,
        # which ``status`` reads at every call); line by line when some line
        # is damaged, so that a damaged line never merges with its neighbour.
        parsed: list[Any] = json.loads("[" + ",".join(lines) + "]")
        if len(parsed) != len(lines):
            raise ValueError("a line holds no single object")
    except ValueError:
        parsed = []
        for line in lines:
            try:
                parsed.append(json.loads(line))
            except ValueError:
                continue
    entries: dict[str, FileEntry] = {}
    for d in parsed:
        try:
            entry = FileEntry.from_dict(d)
        except (ValueError, KeyError, TypeError, AttributeError, AnalyzerError):
            continue
        entries[entry.file] = entry
    return entries


class IndexWriter:
    """Appends entries to the index (the driver alone, under the lock)."""

    def __init__(self, out: Path) -> None:
        self.path = index_path(out)
        try:
            self.f = open(self.path, "a", encoding="utf-8")
        except OSError as e:
            raise storage_error(e, str(self.path)) from e

    def append(self, entry: FileEntry) -> None:
        try:
            self.f.write(entry.to_json() + "\n")
            self.f.flush()
            os.fsync(self.f.fileno())
        except OSError as e:
            raise storage_error(e, str(self.path)) from e

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.f.close()


def rewrite_index(out: Path, entries: Iterable[FileEntry]) -> None:
    """Replaces the index with `entries` (one line per file), atomically."""
    text = "".join(e.to_json() + "\n" for e in sorted(entries, key=lambda e: e.start))
    try:
        write_text_atomic(index_path(out), text)
    except OSError as e:
        raise storage_error(e, str(index_path(out))) from e


@dataclass
class DiskListing:
    """What the directory holds besides the index: data files (by relative
    path, with sizes), parts, temporaries and strays."""

    files: dict[str, int] = field(default_factory=dict)
    parts: list[tuple[DealRange, Path]] = field(default_factory=list)
    #: Deals re-solved by an escalation pass, not yet in their data file.
    retry_parts: list[tuple[DealRange, Path]] = field(default_factory=list)
    temp_files: list[Path] = field(default_factory=list)
    strays: list[Path] = field(default_factory=list)


def list_disk(out: Path) -> DiskListing:
    """Lists the partition directories and parts (names and sizes; no file is opened)."""
    d = DiskListing()
    try:
        top = list(os.scandir(out))
    except FileNotFoundError:
        return d
    for entry in sorted(top, key=lambda e: e.name):
        if entry.name == CONTROL_DIR:
            continue
        if is_temp(entry.name):
            d.temp_files.append(Path(entry.path))
            continue
        block = _BLOCK.fullmatch(entry.name)
        if block is None or not entry.is_dir(follow_symlinks=False):
            d.strays.append(Path(entry.path))
            continue
        for f in sorted(os.scandir(entry.path), key=lambda e: e.name):
            deals = parse_file_name(f.name)
            if is_temp(f.name):
                d.temp_files.append(Path(f.path))
            elif (
                deals is None
                or not f.is_file(follow_symlinks=False)
                or partition_of(deals.start) != int(block.group(1))
                or partition_of(deals.end) != int(block.group(1))
            ):
                d.strays.append(Path(f.path))
            else:
                d.files[f"{entry.name}/{f.name}"] = f.stat(follow_symlinks=False).st_size
    for name, found in ((PARTS_DIR, d.parts), (RETRY_DIR, d.retry_parts)):
        try:
            for f in sorted(os.scandir(control(out) / name), key=lambda e: e.name):
                deals = parse_part_name(f.name)
                if is_temp(f.name):
                    d.temp_files.append(Path(f.path))
                elif deals is not None and f.is_file(follow_symlinks=False):
                    found.append((deals, Path(f.path)))
                else:
                    d.strays.append(Path(f.path))
        except FileNotFoundError:
            pass
    for f in os.scandir(control(out)) if control(out).is_dir() else ():
        if is_temp(f.name):
            d.temp_files.append(Path(f.path))
    return d


@dataclass
class RunState:
    """The run as the index and a directory listing show it, without opening
    a data file: what ``status`` prints and ``run`` resumes from. Read-only
    once `run_state` has made it: what it works out (coverage, the answer)
    is kept, since a full-range run has 8,590 files to go through."""

    manifest: Manifest
    index: dict[str, FileEntry]
    disk: DiskListing
    #: Indexed files present on disk with the indexed size, in deal order.
    sealed: list[FileEntry] = field(default_factory=list)
    #: Indexed files that are missing (their deals are solved again).
    lost: list[FileEntry] = field(default_factory=list)
    #: Indexed files present with another size than indexed (invalid).
    changed: list[FileEntry] = field(default_factory=list)
    #: Data files on disk that the index does not list (a driver killed between
    #: writing a file and indexing it, or a file copied in).
    unindexed: list[str] = field(default_factory=list)
    _kept: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def covered(self) -> tuple[DealRange, ...]:
        if "covered" not in self._kept:
            self._kept["covered"] = merge(e.deals for e in self.sealed)
        covered: tuple[DealRange, ...] = self._kept["covered"]
        return covered

    def missing(self) -> tuple[DealRange, ...]:
        if "missing" not in self._kept:
            self._kept["missing"] = subtract(self.manifest.deals, self.covered())
        missing: tuple[DealRange, ...] = self._kept["missing"]
        return missing

    def overlaps(self) -> list[tuple[FileEntry, FileEntry]]:
        out = []
        reach: FileEntry | None = None
        for e in self.sealed:
            if reach is not None and e.start <= reach.end:
                out.append((reach, e))
            if reach is None or e.end > reach.end:
                reach = e
        return out

    def outcome_counts(self) -> dict[str, int]:
        if "outcomes" not in self._kept:
            total = dict.fromkeys(OUTCOMES, 0)
            for e in self.sealed:
                for k, n in e.outcomes.items():
                    total[k] = total.get(k, 0) + n
            self._kept["outcomes"] = total
        return dict(self._kept["outcomes"])

    def rows(self) -> int:
        return sum(e.rows for e in self.sealed)

    def bytes(self) -> int:
        return sum(e.bytes for e in self.sealed)

    def unsettled(self) -> list[str]:
        """Files the next ``run`` settles: indexed files gone or changed in
        size (their deals are solved again), data files the index lacks
        (checked, then indexed or removed)."""
        out = [f"{e.file}: in the index but missing on disk (the next run solves its deals again)" for e in self.lost]
        out += [f"{f}: a data file the index does not list (the next run checks it)" for f in self.unindexed]
        return out

    def headline(self) -> Headline:
        """The run's answer so far (`analyzer.headline`): the parts its index
        records for the sealed files, added up. Files indexed without a part
        (`unanswered`) are left out."""
        if "headline" not in self._kept:
            self._kept["headline"] = self._combine(e.headline for e in self.sealed if e.headline is not None)
        answer: Headline = self._kept["headline"]
        return answer

    def _combine(self, parts: Iterable[Mapping[str, Any]]) -> Headline:
        """The run's answer from `parts` of its rows, given in deal order."""
        c = self.manifest.config
        return combine(
            parts,
            label=c.label(),
            cells=c.cells,
            min_cells=c.min_cells,
            declared=[(r.start, r.end) for r in self.manifest.deals],
        )

    def unsealed_parts(self) -> list[tuple[DealRange, Path]]:
        """The parts whose deals no sealed file covers, in deal order (a part
        overlapping an earlier one is left out): finished tasks' rows that
        the next ``run`` seals. Listed, not opened."""
        covered = self.covered()
        out: list[tuple[DealRange, Path]] = []
        reach = 0
        for r, path in sorted(self.disk.parts, key=lambda p: p[0]):
            if r.start <= reach or intersect((r,), covered):
                continue
            out.append((r, path))
            reach = r.end
        return out

    def headline_with_parts(self) -> tuple[Headline, int, list[str]]:
        """The answer so far with the rows of the unsealed parts added, each
        part read through the one checked reader (`read_checked`): (the
        answer, the deals it takes from parts, why parts that failed the
        reader were left out). Opens the parts, so only worth calling when
        `unsealed_parts` is not empty; the sealed files' parts come from the
        index as in `headline`."""
        if "with_parts" not in self._kept:
            c = self.manifest.config
            items: list[tuple[int, Mapping[str, Any]]] = [(e.start, e.headline) for e in self.sealed if e.headline is not None]
            bad: list[str] = []
            in_parts = 0
            for r, path in self.unsealed_parts():
                try:
                    answer = [headline_part(t, c) for t in read_checked(path, c, deals=r, part=True)]
                except FileInvalid as e:
                    bad.append(str(e))
                    continue
                items.append((r.start, merge_headline_parts(answer, c)))
                in_parts += len(r)
            items.sort(key=lambda x: x[0])
            self._kept["with_parts"] = (self._combine(part for _, part in items), in_parts, bad)
        kept: tuple[Headline, int, list[str]] = self._kept["with_parts"]
        return kept

    def unanswered(self) -> int:
        """Sealed files whose index entry has no part of the answer."""
        return sum(1 for e in self.sealed if e.headline is None)

    def problems(self) -> list[str]:
        """Why the indexed files are not one consistent set (empty when they are)."""
        out = [f"{a.file} and {b.file} overlap" for a, b in self.overlaps()]
        out += [f"{e.file}: changed on disk since it was indexed ({e.bytes} bytes then)" for e in self.changed]
        run_hash = self.manifest.config_hash
        out += [f"{e.file}: configuration {e.config_hash[:12]} is not the run's" for e in self.sealed if e.config_hash != run_hash]
        return out


def run_state(out: Path, manifest: Manifest | None = None) -> RunState:
    m = manifest or require_run_dir(out)
    index = read_index(out)
    disk = list_disk(out)
    state = RunState(m, index, disk)
    for rel, e in sorted(index.items(), key=lambda kv: (kv[1].start, kv[1].end)):
        size = disk.files.get(rel)
        if size == e.bytes:
            state.sealed.append(e)
        elif size is None:
            state.lost.append(e)
        else:
            state.changed.append(e)
    state.unindexed = sorted(rel for rel in disk.files if rel not in index)
    return state


# ---------------------------------------------------------------------------
# Writing data files and parts
# ---------------------------------------------------------------------------


def file_metadata(config: RunConfig, deals: DealRange, provenance: Provenance) -> dict[str, str]:
    """The Parquet key-value metadata of a data file or part."""
    return {
        "fca.format_version": str(FORMAT_VERSION),
        "fca.schema_version": SCHEMA_VERSION,
        "fca.package_version": provenance.package_version,
        "fca.engine_version": provenance.engine_version,
        "fca.git_commit": provenance.git_commit,
        "fca.config": config.canonical_json(),
        "fca.config_hash": config.config_hash(),
        "fca.deal_start": str(deals.start),
        "fca.deal_end": str(deals.end),
    }


#: How a data file is compressed: zstd (what readers and publishing expect).
DATA_COMPRESSION: Final = "zstd"
#: A part is an Arrow IPC stream (uncompressed: it lives until its file is
#: sealed and is read once, by the seal), one record batch per table
#: written, followed by the stream's sha256 and `PART_MAGIC`: a changed
#: byte anywhere is refused before a row is read. A task's 10,000 deals
#: take about 5 ms to write and 4 ms to read back (the row checks, 13 ms,
#: beside), against 9 ms and 11 ms as the uncompressed Parquet parts that
#: earlier versions wrote, page checksums included; `read_checked` still
#: reads such a part (it begins with ``PAR1``), so a run they began resumes.
PART_MAGIC: Final = b"FCAPART1"
_PART_TRAILER: Final = 32 + len(PART_MAGIC)


def _writer(f: IO[bytes], schema: pa.Schema, compression: str) -> pq.ParquetWriter:
    # Page checksums, so a flipped byte in a data page is caught when read.
    return pq.ParquetWriter(f, schema, compression=compression, write_page_checksum=True, write_statistics=True)


def write_table_file(final: Path, tables: Iterable[pa.Table], schema: pa.Schema, *, compression: str) -> None:
    """Writes `tables` (one row group each) atomically as one Parquet file,
    compressed with `compression` (`DATA_COMPRESSION` for a data file)."""

    def write(f: IO[bytes]) -> None:
        w = _writer(f, schema, compression)
        try:
            for t in tables:
                if t.num_rows:
                    w.write_table(t.cast(schema), row_group_size=t.num_rows)
        finally:
            w.close()

    write_atomic(final, write)


def write_part_file(final: Path, tables: Iterable[pa.Table], schema: pa.Schema) -> None:
    """Writes `tables` (one record batch each) atomically as a part: an Arrow
    IPC stream of `schema`, its sha256, `PART_MAGIC` (see there)."""

    def write(f: IO[bytes]) -> None:
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, schema) as w:
            for t in tables:
                if t.num_rows:
                    w.write_table(t.cast(schema).combine_chunks())
        stream = sink.getvalue()
        f.write(memoryview(stream))
        f.write(hashlib.sha256(memoryview(stream)).digest() + PART_MAGIC)

    write_atomic(final, write)


def write_part(out: Path, table: pa.Table, *, retry: bool = False) -> Path:
    """Writes a task's rows (a table from `jobs.chunks.solve_chunk`) as
    ``_run/parts/deals-A-B.part``, atomically; with `retry`, one deal's rows
    re-solved by an escalation pass as ``_run/retry/deals-A-A.part``."""
    meta = table.schema.metadata or {}
    deals = DealRange(int(meta[b"fca.deal_start"]), int(meta[b"fca.deal_end"]))
    final = part_path(out, deals, retry=retry)
    try:
        final.parent.mkdir(parents=True, exist_ok=True)
        write_part_file(final, [table], table.schema)
    except OSError as e:
        raise storage_error(e, str(final)) from e
    return final


def sha256_file(path: Path) -> tuple[str, int]:
    h = hashlib.sha256()
    n = 0
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
            n += len(block)
    return h.hexdigest(), n


def _grouped(tables: Iterable[pa.Table], deals_per_group: int) -> Iterator[pa.Table]:
    """Concatenates consecutive tables into row groups of about `deals_per_group` deals."""
    buf: list[pa.Table] = []
    have = 0
    for t in tables:
        if not t.num_rows:
            continue
        buf.append(t)
        have += len(pc.unique(t.column("deal_number")))
        if have >= deals_per_group:
            yield pa.concat_tables(buf).combine_chunks()
            buf, have = [], 0
    if buf:
        yield pa.concat_tables(buf).combine_chunks()


def seal(
    out: Path,
    unit: DealRange,
    config: RunConfig,
    provenance: Provenance,
    parts: Sequence[tuple[DealRange, Path]],
) -> FileEntry:
    """Merges the parts covering `unit` (checked by the one reader) into the
    data file of `unit`, atomically, and returns its index entry. The parts
    are deleted afterwards. Raises `FileInvalid` naming a bad part (the
    caller deletes it and solves its deals again) and `StorageError`."""
    ordered = sorted(parts, key=lambda p: p[0])
    if merge(r for r, _ in ordered) != (unit,) or sum(len(r) for r, _ in ordered) != len(unit):
        raise FileInvalid(None, f"parts {format_deals([r for r, _ in ordered])} do not cover {unit} exactly once")
    return seal_stream(out, unit, config, provenance, ordered)


def seal_stream(
    out: Path,
    unit: DealRange,
    config: RunConfig,
    provenance: Provenance,
    parts: Iterable[tuple[DealRange, Path]],
) -> FileEntry:
    """`seal`, taking the parts one after another as `parts` gives them (in
    order of deals, each starting where the last ended), so that a file can
    be written while its last parts are still being solved
    (`jobs.task.StreamSeal`). The same checks and bytes as `seal`; a gap,
    an overlap or a missing end raises `FileInvalid` (path None)."""
    consumed: list[Path] = []

    def tables() -> Iterator[pa.Table]:
        nxt = unit.start
        for r, path in parts:
            if r.start != nxt or r.end > unit.end:
                raise FileInvalid(None, f"part {r} does not follow deal {nxt - 1} in {unit}")
            consumed.append(path)
            yield from read_checked(path, config, deals=r, part=True)
            nxt = r.end + 1
        if nxt != unit.end + 1:
            raise FileInvalid(None, f"the parts end at deal {nxt - 1}, not at the end of {unit}")

    return _write_data_file(out, data_relpath(unit), unit, config, provenance, _grouped(tables(), ROW_GROUP_DEALS), consumed)


def _write_data_file(
    out: Path,
    rel: str,
    deals: DealRange,
    config: RunConfig,
    provenance: Provenance,
    tables: Iterable[pa.Table],
    consumed: Sequence[Path],
) -> FileEntry:
    """Writes `tables` as the data file `rel` atomically, counting its rows,
    outcomes and part of the answer on the way; deletes the files it was
    made from (`consumed`) and returns its index entry."""
    counts = dict.fromkeys(OUTCOMES, 0)
    rows = 0
    answer: list[dict[str, Any]] = []

    def counted() -> Iterator[pa.Table]:
        nonlocal rows
        for t in tables:
            rows += t.num_rows
            for k, n in _outcome_counts(t).items():
                counts[k] = counts.get(k, 0) + n
            answer.append(headline_part(t, config))
            yield t

    final = out / rel
    try:
        final.parent.mkdir(parents=True, exist_ok=True)
        write_table_file(final, counted(), arrow_schema(file_metadata(config, deals, provenance)), compression=DATA_COMPRESSION)
        digest, size = sha256_file(final)
    except OSError as e:
        raise storage_error(e, str(final)) from e
    for path in consumed:
        with contextlib.suppress(OSError):
            path.unlink()
    return FileEntry(
        rel, deals.start, deals.end, rows, size, digest, counts, config.config_hash(),
        merge_headline_parts(answer, config),
    )


def rewrite_with_retries(
    out: Path,
    entry: FileEntry,
    config: RunConfig,
    provenance: Provenance,
    redone: Sequence[tuple[DealRange, Path]],
) -> FileEntry:
    """Rewrites the data file of `entry` with the rows of each deal in
    `redone` (retry parts of single deals, each read through the checked
    reader) in place of that deal's rows, row group by row group,
    atomically; returns its new index entry. The retry parts are deleted
    afterwards. Raises `FileInvalid` naming a bad part (the caller deletes
    it and re-solves its deal) or the data file, and `StorageError`."""
    new_rows: dict[int, pa.Table] = {}
    for r, path in redone:
        if len(r) != 1 or r.start < entry.start or r.end > entry.end:
            raise FileInvalid(path, f"not one deal of {entry.deals}")
        new_rows[r.start] = pa.concat_tables(list(read_checked(path, config, deals=r, part=True)))
    def tables() -> Iterator[pa.Table]:
        for t in read_checked(out / entry.file, config, entry=entry):
            deals = t.column("deal_number")
            lo, hi = pc.min(deals).as_py(), pc.max(deals).as_py()
            mine = [d for d in new_rows if lo <= d <= hi]
            if mine:
                keep = pc.invert(pc.is_in(deals, value_set=pa.array(mine, type=deals.type)))
                t = pa.concat_tables([t.filter(keep), *(new_rows[d].cast(t.schema) for d in mine)])
                t = t.sort_by([("deal_number", "ascending"), ("cells", "ascending")])
            yield t

    return _write_data_file(out, entry.file, entry.deals, config, provenance, tables(), [p for _, p in redone])


def strings(col: pa.ChunkedArray[Any] | pa.Array[Any]) -> pa.Array[Any]:
    """A (dictionary-encoded) string column as plain strings, one chunk."""
    arr = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    out: pa.Array[Any] = pc.cast(arr, pa.string())
    return out


def headline_part(t: pa.Table, config: RunConfig) -> dict[str, Any]:
    """The part of the run's answer (`analyzer.headline.table_part`) of rows
    `t`, whole deals of a run of `config`: what the index keeps per file."""
    cols = [c for c in HEADLINE_COLUMNS if c in t.column_names]
    return table_part(t.select(cols), cells=config.cells, min_cells=config.min_cells)


def merge_headline_parts(parts: Iterable[Mapping[str, Any]], config: RunConfig) -> dict[str, Any]:
    """Parts of consecutive rows of a run of `config` as one part."""
    return merge_parts(parts, cells=config.cells, min_cells=config.min_cells)


def _outcome_counts(t: pa.Table) -> dict[str, int]:
    vc = pc.value_counts(strings(t.column("outcome")))
    return {str(v["values"]): int(v["counts"]) for v in vc.to_pylist()}


# ---------------------------------------------------------------------------
# The checked reader
# ---------------------------------------------------------------------------


class FileInvalid(Exception):
    """A data file or part that cannot be used, and why (`path` may be None)."""

    def __init__(self, path: Path | None, reason: str) -> None:
        super().__init__(f"{path.name if path else 'parts'}: {reason}")
        self.path, self.reason = path, reason


def read_checked(
    path: Path,
    config: RunConfig,
    *,
    deals: DealRange | None = None,
    entry: FileEntry | None = None,
    part: bool = False,
    columns: Sequence[str] | None = None,
) -> Iterator[pa.Table]:
    """The one reader of result files: yields the file's row groups in order,
    every check passed before a row group is yielded, and raises `FileInvalid`
    at the first problem. With `entry` (from the index) the whole file's
    sha256 and size are checked first, so a changed byte anywhere is refused
    before any row is produced; a part (`part`) is checked whole against the
    sha256 it carries (`write_part_file`). Then: a data file's page
    checksums, the metadata keys, schema, configuration hash and deal range,
    rows sorted and unique, every deal present exactly as the configuration
    asks, and the row invariants (`table_problems`). `columns` selects what is yielded (all are checked)."""
    if deals is None:
        deals = (parse_part_name if part else parse_file_name)(path.name)
        if deals is None:
            raise FileInvalid(path, "not a result file name")
    if entry is not None:
        try:
            digest, size = sha256_file(path)
        except OSError as e:
            raise FileInvalid(path, f"unreadable ({e.strerror})") from e
        if size != entry.bytes or digest != entry.sha256:
            raise FileInvalid(path, "its sha256 differs from the run index (the file changed after it was written)")
    schema, groups = _open_result(path, part)
    raw = schema.metadata or {}
    meta = {k.decode(errors="replace"): v.decode(errors="replace") for k, v in raw.items()}
    missing = [k for k in META_KEYS if k not in meta]
    if missing:
        raise FileInvalid(path, f"metadata keys missing: {', '.join(missing)}")
    if meta["fca.schema_version"] != SCHEMA_VERSION or meta["fca.format_version"] != str(FORMAT_VERSION):
        raise FileInvalid(path, f"schema {meta['fca.schema_version']!r} / format {meta['fca.format_version']!r}, expected {SCHEMA_VERSION!r} / {FORMAT_VERSION}")
    # Names, types and nullability, not the columns' descriptions and units:
    # those are documentation, and a file written before one was reworded is
    # still of this schema version (what a column means is SCHEMA_VERSION's).
    if not schema.remove_metadata().equals(arrow_schema(), check_metadata=False):
        raise FileInvalid(path, "columns differ from analyzer.schema")
    if hashlib.sha256(meta["fca.config"].encode()).hexdigest() != meta["fca.config_hash"]:
        raise FileInvalid(path, "fca.config_hash is not the sha256 of fca.config")
    if meta["fca.config_hash"] != config.config_hash():
        raise FileInvalid(path, f"configuration {meta['fca.config_hash'][:12]} differs from the run's {config.config_hash()[:12]}")
    if (meta["fca.deal_start"], meta["fca.deal_end"]) != (str(deals.start), str(deals.end)):
        raise FileInvalid(path, f"metadata says deals {meta['fca.deal_start']}-{meta['fca.deal_end']}, the name {deals}")
    state = _Continuity(deals, config)
    for t in groups:
        t = t.replace_schema_metadata(None)
        problems = state.feed(t) or table_problems(t, config)
        if problems:
            raise FileInvalid(path, problems[0] + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""))
        yield t.select(list(columns)) if columns is not None else t
    problems = state.finish()
    if entry is not None and state.rows != entry.rows:
        problems.append(f"{state.rows} rows, the index says {entry.rows}")
    if problems:
        raise FileInvalid(path, problems[0])


def _open_result(path: Path, part: bool) -> tuple[pa.Schema, Iterator[pa.Table]]:
    """A result file's schema (with its metadata) and its row groups, each
    read when the iterator gets to it; `FileInvalid` for what cannot be
    read. A data file is Parquet, read with its page checksums; a part is
    checked whole against its sha256 first (`_open_part`), unless it is a
    Parquet part of an earlier version."""
    if part and (opened := _open_part(path)) is not None:
        return opened
    try:
        pf = pq.ParquetFile(path, page_checksum_verification=True)
        schema = pf.schema_arrow
    except (OSError, pa.ArrowException, ValueError) as e:
        raise FileInvalid(path, f"unreadable ({type(e).__name__}: {e})") from e

    def row_groups() -> Iterator[pa.Table]:
        for i in range(pf.num_row_groups):
            try:
                yield pf.read_row_group(i)
            except (OSError, pa.ArrowException, ValueError) as e:
                raise FileInvalid(path, f"row group {i} unreadable ({type(e).__name__}: {e})") from e

    return schema, row_groups()


def _open_part(path: Path) -> tuple[pa.Schema, Iterator[pa.Table]] | None:
    """A part's schema and record batches (`write_part_file`), once the whole
    stream matches the sha256 it carries; None for a Parquet part of an
    earlier version (it begins with ``PAR1``), which is read as a data file."""
    try:
        with open(path, "rb") as f:
            if f.read(4) == b"PAR1":
                return None
            f.seek(0)
            data = f.read()
    except OSError as e:
        raise FileInvalid(path, f"unreadable ({type(e).__name__}: {e})") from e
    n = len(data) - _PART_TRAILER
    if n < 0 or data[-len(PART_MAGIC) :] != PART_MAGIC:
        raise FileInvalid(path, "not a complete part (its end marker is missing)")
    view = memoryview(data)
    if hashlib.sha256(view[:n]).digest() != data[n : n + 32]:
        raise FileInvalid(path, "its sha256 differs from the one it was written with (the part changed after it was written)")
    try:
        reader = pa.ipc.open_stream(pa.py_buffer(view[:n]))
    except (OSError, pa.ArrowException, ValueError) as e:
        raise FileInvalid(path, f"unreadable ({type(e).__name__}: {e})") from e

    def batches() -> Iterator[pa.Table]:
        while True:
            try:
                b = reader.read_next_batch()
            except StopIteration:
                return
            except (OSError, pa.ArrowException, ValueError) as e:
                raise FileInvalid(path, f"a record batch unreadable ({type(e).__name__}: {e})") from e
            yield pa.Table.from_batches([b])

    return reader.schema, batches()


def check_file(path: Path, config: RunConfig, *, entry: FileEntry | None = None, part: bool = False) -> FileEntry:
    """Reads a whole file through `read_checked`; its index entry."""
    deals = (parse_part_name if part else parse_file_name)(path.name)
    counts = dict.fromkeys(OUTCOMES, 0)
    rows = 0
    answer: list[dict[str, Any]] = []
    for t in read_checked(path, config, entry=entry, part=part):
        rows += t.num_rows
        for k, n in _outcome_counts(t).items():
            counts[k] += n
        answer.append(headline_part(t, config))
    assert deals is not None
    digest, size = sha256_file(path)
    return FileEntry(
        data_relpath(deals), deals.start, deals.end, rows, size, digest, counts, config.config_hash(),
        merge_headline_parts(answer, config),
    )


class _Continuity:
    """Checks, row group by row group, that a file's rows are exactly the
    deals of its range in order, with the rows the configuration asks for."""

    def __init__(self, deals: DealRange, config: RunConfig) -> None:
        self.deals, self.config = deals, config
        self.next_deal = deals.start
        self.rows = 0

    def feed(self, t: pa.Table) -> list[str]:
        if not t.num_rows:
            return []
        d = t.column("deal_number").to_numpy()
        c = t.column("cells").to_numpy().astype(np.int64)
        self.rows += len(d)
        dd = np.diff(d)
        if (dd < 0).any() or ((dd == 0) & (np.diff(c) <= 0)).any():
            return ["rows are not sorted by deal and cells, or a deal and cell count appears twice"]
        uniq = d[np.r_[True, dd != 0]]
        first, last = int(uniq[0]), int(uniq[-1])
        if first < self.next_deal:
            return [f"deal {first} has rows in two row groups or twice"]
        if first > self.next_deal:
            return [f"{first - self.next_deal} deals have no row (first: {self.next_deal})"]
        if last > self.deals.end:
            return [f"a row for deal {last}, outside the file's {self.deals}"]
        if last - first + 1 != len(uniq):
            gap = int(uniq[int(np.flatnonzero(np.diff(uniq) != 1)[0])]) + 1
            return [f"deals have no row (first: {gap})"]
        self.next_deal = last + 1
        allowed = np.array(self.config.cells, dtype=np.int64)
        inside = np.isin(c, allowed)
        if not inside.all():
            return [f"a row has {int(c[~inside][0])} cells, not one of the run's {list(self.config.cells)}"]
        per = self.config.rows_per_deal()
        if per is not None and (
            len(d) != per * len(uniq) or not (np.repeat(uniq, per) == d).all() or not (np.tile(allowed, len(uniq)) == c).all()
        ):
            return [f"expected {per} rows per deal (cells {list(self.config.cells)})"]
        return []

    def finish(self) -> list[str]:
        if self.next_deal != self.deals.end + 1:
            return [f"{self.deals.end + 1 - self.next_deal} deals have no row (first: {self.next_deal})"]
        return []


# ---------------------------------------------------------------------------
# Row invariants
# ---------------------------------------------------------------------------

_SOLUTION_SHAPE: Final = r"^\S+( \S+)*$"


def _where(t: pa.Table, mask: Any, what: str) -> str | None:
    m = np.asarray(pc.fill_null(mask, True).to_numpy(zero_copy_only=False), dtype=bool)
    if not m.any():
        return None
    i = int(np.flatnonzero(m)[0])
    return f"deal {t.column('deal_number')[i].as_py()} with {t.column('cells')[i].as_py()} cells: {what} ({int(m.sum())} rows)"


def table_problems(t: pa.Table, config: RunConfig) -> list[str]:
    """What is wrong with result rows, vectorised: each problem names its
    first deal and how many rows share it. The per-row rules: a solved row
    has a solution of ``solution_length_multi`` space-separated moves and
    ``single >= multi``; other rows have neither; a ``limit`` row names its
    budget and only it does; an ``error`` row has a message and only it
    does; counts are not negative; ``elapsed_s`` is finite; ``min_cells``
    only in min-cells runs; ``attempts >= 1`` with a history exactly when
    above 1. Per deal: more cells never lose a deal fewer cells win, and in
    min-cells runs the minimum agrees with the rows (`deal_problems`)."""
    if not t.num_rows:
        return []
    v = config.variant
    outcome = strings(t.column("outcome"))
    solved = pc.equal(outcome, "solved")
    limit = pc.equal(outcome, "limit")
    error = pc.equal(outcome, "error")
    sol = t.column("solution")
    single, multi = t.column("solution_length_single"), t.column("solution_length_multi")
    reason = strings(t.column("limit_reason"))
    err = t.column("error")
    checks: list[tuple[Any, str]] = [
        (pc.not_equal(strings(t.column("variant")), v.name), f"variant is not the run's {v.name!r}"),
        (pc.not_equal(strings(t.column("move_rule")), v.move_rule), f"move rule is not the run's {v.move_rule!r}"),
        (pc.invert(pc.is_in(outcome, pa.array(OUTCOMES))), "unknown outcome"),
        (pc.and_kleene(solved, pc.invert(pc.fill_null(pc.match_substring_regex(sol, _SOLUTION_SHAPE), False))), "solved but without a well-formed solution"),
        (pc.and_kleene(solved, pc.not_equal(pc.add(pc.count_substring(sol, " "), 1), multi)), "the solution's move count differs from solution_length_multi"),
        # single is null under the unlimited rule when a move of the
        # solution has no single-card expansion (engine: Solution::single_len)
        (pc.and_kleene(solved, pc.fill_null(pc.less(single, multi), v.move_rule != "unlimited")), "solution lengths missing or single < multi"),
        (pc.and_kleene(solved, pc.is_null(multi)), "solution_length_multi missing"),
        (pc.and_kleene(pc.invert(solved), pc.is_valid(sol)), "not solved but has a solution"),
        (pc.and_kleene(pc.invert(solved), pc.or_kleene(pc.is_valid(single), pc.is_valid(multi))), "not solved but has solution lengths"),
        (pc.and_kleene(limit, pc.invert(pc.fill_null(pc.is_in(reason, pa.array(LIMIT_REASONS)), False))), "limit without a reason in positions, bytes, disk, time"),
        (pc.and_kleene(pc.invert(limit), pc.is_valid(reason)), "has a limit_reason but is not a limit"),
        (pc.and_kleene(error, pc.invert(pc.fill_null(pc.greater(pc.utf8_length(err), 0), False))), "error without a message"),
        (pc.and_kleene(pc.invert(error), pc.is_valid(err)), "has an error message but is not an error"),
        (pc.less(t.column("positions_expanded"), 0), "negative positions_expanded"),
        (pc.less(t.column("positions_stored"), 0), "negative positions_stored"),
        (pc.less(t.column("peak_bytes"), 0), "negative peak_bytes"),
        (pc.invert(pc.and_kleene(pc.is_finite(t.column("elapsed_s")), pc.greater_equal(t.column("elapsed_s"), 0))), "elapsed_s is negative or not finite"),
        (pc.less(t.column("attempts"), 1), "attempts below 1"),
        (pc.not_equal(pc.greater(t.column("attempts"), 1), pc.is_valid(t.column("attempt_history"))), "attempt_history present exactly when attempts > 1 is broken"),
    ]
    if not config.min_cells:
        checks.append((pc.is_valid(t.column("min_cells")), "min_cells in a run that did not ask for it"))
    out = [p for mask, what in checks if (p := _where(t, mask, what)) is not None]
    if out:
        return out
    return deal_problems(t, config)


def deal_problems(t: pa.Table, config: RunConfig) -> list[str]:
    """Invariants across one deal's rows (rows sorted by deal, then cells)."""
    if len(config.cells) == 1 and not config.min_cells:
        return []
    d = t.column("deal_number").to_numpy()
    c = t.column("cells").to_numpy().astype(np.int64)
    o = np.asarray(strings(t.column("outcome")).to_numpy(zero_copy_only=False), dtype=object)
    out: list[str] = []
    big = np.int64(1 << 20)
    starts = np.flatnonzero(np.r_[True, d[1:] != d[:-1]])
    min_solved = np.minimum.reduceat(np.where(o == "solved", c, big), starts)
    max_unsolvable = np.maximum.reduceat(np.where(o == "unsolvable", c, -1), starts)
    bad = max_unsolvable > min_solved
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        out.append(
            f"deal {int(d[starts[i]])}: solved with {int(min_solved[i])} cells but unsolvable with "
            f"{int(max_unsolvable[i])} (more cells cannot lose a deal)"
        )
    if not config.min_cells:
        return out
    mc = t.column("min_cells").to_pandas()
    lo = config.cells[0]
    for k, s in enumerate(starts):
        e = starts[k + 1] if k + 1 < len(starts) else len(d)
        part = mc.iloc[s:e]
        deal = int(d[s])
        by = dict(zip(c[s:e].tolist(), o[s:e].tolist(), strict=True))
        if part.nunique(dropna=False) != 1:
            return [*out, f"deal {deal}: rows disagree on min_cells"]
        m = part.iloc[0]
        if pd.isna(m):
            stopped = any(x in ("limit", "error") for x in by.values())
            if not stopped and not (all(x == "unsolvable" for x in by.values()) and max(by) == config.max_cells):
                return [*out, f"deal {deal}: min_cells is null but the rows neither stop at a limit nor exhaust {config.max_cells} cells"]
            continue
        km = int(m)
        if by.get(km) != "solved":
            return [*out, f"deal {deal}: min_cells {km} but that row is {by.get(km, 'missing')}"]
        # One fewer must be proved; fewer still follow from it (and a row
        # there, if any, is unsolvable: checked above).
        if km > lo and by.get(km - 1) != "unsolvable":
            return [*out, f"deal {deal}: min_cells {km} but {km - 1} cells is {by.get(km - 1, 'missing')}, not unsolvable"]
    return out


# ---------------------------------------------------------------------------
# Reading a whole run
# ---------------------------------------------------------------------------


class RunInvalid(RunDirError):
    """A run whose files `validate` would call invalid or incomplete;
    `report` and `publish` refuse it (exit 1), naming the file."""

    exit_code = EXIT_FAILURE


def checked_state(out: Path, *, allow_missing: bool = False) -> RunState:
    """The run's state, refusing (`RunInvalid`) an inconsistent set of
    files, and, unless `allow_missing`, a run with deals missing."""
    state = run_state(out)
    problems = state.problems() + state.unsettled()
    if problems:
        raise RunInvalid(f"{out}: {problems[0]}" + (f" (and {len(problems) - 1} more problems)" if len(problems) > 1 else "") + "; run `freecell-analyzer validate` for details")
    if not allow_missing and state.missing():
        gaps = state.missing()
        raise RunInvalid(
            f"{out}: the run is incomplete ({sum(len(r) for r in gaps):,} deals missing: {format_deals(gaps, limit=5)}); "
            "finish it by running the same `freecell-analyzer run` command again"
        )
    return state


def iter_run(
    out: Path, state: RunState, columns: Sequence[str] | None = None
) -> Iterator[tuple[FileEntry, pa.Table]]:
    """Every sealed file's row groups in deal order, each through `read_checked`
    with its index entry. Raises `RunInvalid` naming the first bad file."""
    config = state.manifest.config
    for e in state.sealed:
        try:
            for t in read_checked(out / e.file, config, entry=e, columns=columns):
                yield e, t
        except FileInvalid as err:
            raise RunInvalid(f"{out}: {e.file}: {err.reason}; run `freecell-analyzer validate` for details") from None


# ---------------------------------------------------------------------------
# Building runs without solving (tests, the scale test)
# ---------------------------------------------------------------------------


def create_run(
    out: Path,
    config: RunConfig,
    deals: Sequence[DealRange],
    *,
    file_deals: int | None = None,
    provenance: Provenance | None = None,
    history: Sequence[Invocation] = (),
) -> Manifest:
    """Creates a run directory holding only its manifest (the tests and the
    synthetic scale run fill it with `add_file`)."""
    m = Manifest(
        config=config,
        deals=merge(deals),
        file_deals=check_file_deals(file_deals or default_file_deals(config)),
        provenance=provenance or Provenance.current(),
        history=list(history),
    )
    out.mkdir(parents=True, exist_ok=True)
    write_manifest(out, m)
    return m


def add_file(out: Path, manifest: Manifest, unit: DealRange, tables: Iterable[pa.Table], index: IndexWriter) -> FileEntry:
    """Writes `tables` (rows of `unit`, in order) as the sealed data file of
    `unit` through the same path a run takes (a part, then `seal`)."""
    meta = file_metadata(manifest.config, unit, manifest.provenance)
    part = control(out) / PARTS_DIR / part_name(unit)
    part.parent.mkdir(parents=True, exist_ok=True)
    write_part_file(part, tables, arrow_schema(meta))
    entry = seal(out, unit, manifest.config, manifest.provenance, [(unit, part)])
    index.append(entry)
    return entry
