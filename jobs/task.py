"""The bodies of the Ray tasks.

This module imports only the standard library at the top, so that Ray can
load it on a worker that lacks the native engine (or pyarrow) and the task
can then fail at once with a message saying how to ship it, instead of an
opaque deserialization error. Everything else is imported inside the task.

Each task writes its own files (results survive a killed driver) and
returns only a small summary: `run_part` solves a range of deals into a
part, `seal_unit` merges a unit's parts into its data file; an escalation
pass (``--retry-limits``) runs `retry_scan` on a data file, `retry_deals`
on its deals (one retry part each) and `retry_seal` to write them in.
"""

from __future__ import annotations

import importlib
import json
import socket
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypedDict

if TYPE_CHECKING:  # imported inside the tasks (see the module's docstring)
    from .ranges import DealRange
    from .runformat import FileInvalid

#: How to get the package onto Ray workers; part of every "cannot import" message.
SHIP_HINT: Final = (
    "every Ray worker needs the freecell-analyzer package with its native engine: "
    "build a wheel (`maturin build --release`) and ship it with the job "
    '(`ray job submit --runtime-env-json \'{"pip": ["/path/to/freecell_analyzer-<version>.whl"]}\' ...` '
    "or `ray.init(runtime_env={'pip': [...]})`), or `pip install` it on every node "
    "(a `--working-dir .` upload leaves out the *.so, which .gitignore excludes)"
)


class EngineUnavailableError(RuntimeError):
    """The worker cannot run the solver: the native module (or pyarrow) does
    not import, its version differs from the driver's, or the output
    directory is not visible from the worker's node. Never retried: no
    attempt on the same node can succeed."""


class TaskSummary(TypedDict):
    """What a solving task sends back to the driver (the rows stay in the part)."""

    start: int
    end: int
    rows: int
    outcomes: dict[str, int]
    node: str
    node_id: str
    max_rss_bytes: int
    solve_s: float
    write_s: float


#: Backwards name, for callers of the first layout.
ChunkSummary = TaskSummary


def require_engine(expected_version: str | None = None) -> str:
    """Imports the native engine (and pyarrow) or raises
    `EngineUnavailableError` with shipping instructions; returns the engine
    version, which must equal `expected_version` when given."""
    host = socket.gethostname()
    try:
        # The package first: it chooses Arrow's memory pool, which pyarrow
        # reads when imported (`analyzer/__init__.py`).
        engine = importlib.import_module("analyzer._engine")
        importlib.import_module("pyarrow")
    except ImportError as e:
        raise EngineUnavailableError(
            f"cannot import the solver on Ray worker {host} ({type(e).__name__}: {e}); {SHIP_HINT}"
        ) from None
    version = str(engine.__version__)
    if expected_version is not None and version != expected_version:
        raise EngineUnavailableError(
            f"Ray worker {host} has engine {version} but the driver has {expected_version}; "
            f"install the same build everywhere: {SHIP_HINT}"
        )
    return version


def _require_run_dir(out_dir: str) -> None:
    if not (Path(out_dir) / "_run" / "run.json").is_file():
        raise EngineUnavailableError(
            f"the output directory {out_dir} is not visible from Ray worker {socket.gethostname()} "
            "(no _run/run.json there): on a cluster --out must be on storage that every node mounts at the same path"
        )


def run_part(start: int, end: int, config_json: str, provenance: dict[str, str], out_dir: str) -> TaskSummary:
    """Solves deals ``start..end`` (inclusive) and writes their rows as the
    part ``out_dir/_run/parts/deals-<start>-<end>.part``. `config_json` is
    the canonical configuration JSON, `provenance` a `jobs.config.Provenance`
    as a dict (computed once on the driver, so every file records the same
    package version and git commit)."""
    require_engine(provenance.get("engine_version"))
    _require_run_dir(out_dir)
    from .chunks import solve_chunk
    from .config import Provenance, RunConfig
    from .runformat import write_part

    config = RunConfig.from_dict(json.loads(config_json))
    t0 = time.perf_counter()
    table = solve_chunk(start, end, config, Provenance(**provenance))
    t1 = time.perf_counter()
    write_part(Path(out_dir), table)
    t2 = time.perf_counter()
    outcomes: dict[str, int] = {}
    for o in table.column("outcome").to_pylist():
        outcomes[str(o)] = outcomes.get(str(o), 0) + 1
    return TaskSummary(
        start=start,
        end=end,
        rows=int(table.num_rows),
        outcomes=outcomes,
        node=socket.gethostname(),
        node_id=_ray_node_id(),
        max_rss_bytes=_max_rss(),
        solve_s=t1 - t0,
        write_s=t2 - t1,
    )


class SealResult(TypedDict):
    """A sealed file's index entry (JSON), or the parts found bad and deleted."""

    entry: str | None
    redo: list[tuple[int, int]]
    reason: str
    max_rss_bytes: int


def seal_unit(start: int, end: int, config_json: str, provenance: dict[str, str], out_dir: str) -> SealResult:
    """Merges the parts of deals ``start..end`` into their data file. A part
    that fails the checks is deleted and returned in ``redo``, to be solved again."""
    require_engine(provenance.get("engine_version"))
    _require_run_dir(out_dir)
    from .config import Provenance, RunConfig
    from .ranges import DealRange
    from .runformat import FileInvalid, list_disk, seal

    out = Path(out_dir)
    unit = DealRange(start, end)
    config = RunConfig.from_dict(json.loads(config_json))
    parts = [(r, p) for r, p in list_disk(out).parts if r.start >= start and r.end <= end]
    try:
        entry = seal(out, unit, config, Provenance(**provenance), parts)
    except FileInvalid as e:
        return _rejected(out, unit, e)
    return SealResult(entry=entry.to_json(), redo=[], reason="", max_rss_bytes=_max_rss())


def _rejected(out: Path, unit: DealRange, e: FileInvalid) -> SealResult:
    """A seal of `unit` that failed on `e` (a `FileInvalid`): deletes the
    part it names (every part of the unit when it names none) and returns
    the deals to solve again."""
    from .ranges import subtract
    from .runformat import list_disk

    parts = [(r, p) for r, p in list_disk(out).parts if r.start >= unit.start and r.end <= unit.end]
    bad = [(r, p) for r, p in parts if e.path is None or p == e.path]
    for _, p in bad:
        p.unlink(missing_ok=True)
    redo = subtract([unit], [r for r, p in parts if (r, p) not in bad])
    return SealResult(entry=None, redo=[(r.start, r.end) for r in redo], reason=str(e), max_rss_bytes=_max_rss())


class StreamSeal:
    """A Ray actor (made by the driver) that writes the data file of deals
    ``start..end`` while its parts are still being solved: `feed` gives it
    finished parts in order of deals, `finish` says there are no more and
    returns what `seal_unit` returns. The file is written by
    `jobs.runformat.seal_stream` in a thread of the actor, so a run's last
    file is sealed moments after its last part instead of all at the end."""

    def __init__(self, start: int, end: int, config_json: str, provenance: dict[str, str], out_dir: str) -> None:
        require_engine(provenance.get("engine_version"))
        _require_run_dir(out_dir)
        import queue
        import threading

        from .config import Provenance, RunConfig
        from .ranges import DealRange
        from .runformat import FileInvalid, seal_stream

        self.out = Path(out_dir)
        self.unit = DealRange(start, end)
        config = RunConfig.from_dict(json.loads(config_json))
        self.parts: queue.Queue[tuple[DealRange, Path] | None] = queue.Queue()
        self.result: SealResult | None = None
        self.rejected: FileInvalid | None = None
        self.error: BaseException | None = None

        def write() -> None:
            try:
                entry = seal_stream(self.out, self.unit, config, Provenance(**provenance), iter(self.parts.get, None))
                self.result = SealResult(entry=entry.to_json(), redo=[], reason="", max_rss_bytes=_max_rss())
            except FileInvalid as e:  # judged by `finish`, once every part is there
                self.rejected = e
            except BaseException as e:  # handed to `finish`
                self.error = e

        self.thread = threading.Thread(target=write, daemon=True)
        self.thread.start()

    def feed(self, parts: list[tuple[int, int]]) -> None:
        """Finished parts, in order of deals, following the ones fed before."""
        from .ranges import DealRange
        from .runformat import part_path

        for a, b in parts:
            r = DealRange(a, b)
            self.parts.put((r, part_path(self.out, r)))

    def finish(self) -> SealResult:
        """No more parts: the file's index entry, or the parts to solve again."""
        self.parts.put(None)
        self.thread.join()
        if self.error is not None:
            raise self.error
        if self.rejected is not None:
            return _rejected(self.out, self.unit, self.rejected)
        assert self.result is not None
        return self.result


class RetryScan(TypedDict):
    """A data file's deals an escalation pass must (still) re-solve, each as
    all its rows, and how many it has re-solved already (in retry parts)."""

    todo: list[list[dict[str, Any]]]
    done: int


def retry_scan(
    entry_json: str, config_json: str, limits: dict[str, object], provenance: dict[str, str], out_dir: str
) -> RetryScan:
    """Reads one data file (checked against its index entry) for the deals
    with ``limit`` rows not yet tried under `limits`. A deal with a retry
    part from an earlier, interrupted pass is taken from that part: done if
    it needs nothing more, else re-solved from its rows there."""
    require_engine(provenance.get("engine_version"))
    _require_run_dir(out_dir)
    from .chunks import deals_to_retry, needs_retry
    from .config import RunConfig
    from .runformat import FileEntry, FileInvalid, list_disk, read_checked

    out = Path(out_dir)
    entry = FileEntry.from_json(entry_json)
    config = RunConfig.from_dict(json.loads(config_json))
    todo = deals_to_retry(read_checked(out / entry.file, config, entry=entry), config, limits)
    parts = {
        r.start: p
        for r, p in list_disk(out).retry_parts
        if len(r) == 1 and entry.start <= r.start <= entry.end
    }
    done = 0
    fresh: list[list[dict[str, Any]]] = []
    for rows in todo:
        path = parts.get(int(rows[0]["deal_number"]))
        if path is not None:
            try:
                redone = [r for t in read_checked(path, config, part=True) for r in t.to_pylist()]
            except FileInvalid:
                path.unlink(missing_ok=True)
            else:
                if not needs_retry(redone, config, limits):
                    done += 1
                    continue
                rows = redone
        fresh.append(rows)
    return RetryScan(todo=fresh, done=done)


def retry_deals(
    deals: list[list[dict[str, Any]]],
    config_json: str,
    limits: dict[str, object],
    provenance: dict[str, str],
    out_dir: str,
) -> list[tuple[int, str]]:
    """Re-solves each deal of `deals` (all its rows) under `limits` and
    writes it as a retry part at once, so that an interrupted pass keeps
    every deal it finished; returns each deal's number and outcomes."""
    require_engine(provenance.get("engine_version"))
    _require_run_dir(out_dir)
    from .chunks import retry_deal
    from .config import Provenance, RunConfig
    from .runformat import write_part

    config = RunConfig.from_dict(json.loads(config_json))
    prov = Provenance(**provenance)
    done = []
    for rows in deals:
        t = retry_deal(rows, config, limits, prov)
        write_part(Path(out_dir), t, retry=True)
        done.append((int(rows[0]["deal_number"]), " ".join(str(o) for o in t.column("outcome").to_pylist())))
    return done


def retry_seal(entry_json: str, config_json: str, provenance: dict[str, str], out_dir: str) -> SealResult:
    """Writes the retry parts of one data file's deals into it. A part that
    fails the checks is deleted and its deal returned in ``redo``."""
    require_engine(provenance.get("engine_version"))
    _require_run_dir(out_dir)
    from .config import Provenance, RunConfig
    from .runformat import FileEntry, FileInvalid, list_disk, rewrite_with_retries

    out = Path(out_dir)
    entry = FileEntry.from_json(entry_json)
    config = RunConfig.from_dict(json.loads(config_json))
    parts = [(r, p) for r, p in list_disk(out).retry_parts if entry.start <= r.start and r.end <= entry.end]
    try:
        new = rewrite_with_retries(out, entry, config, Provenance(**provenance), parts)
    except FileInvalid as e:
        bad = [(r, p) for r, p in parts if p == e.path]
        if not bad:
            raise
        for _, p in bad:
            p.unlink(missing_ok=True)
        return SealResult(
            entry=None, redo=[(r.start, r.end) for r, _ in bad], reason=str(e), max_rss_bytes=_max_rss()
        )
    return SealResult(entry=new.to_json(), redo=[], reason="", max_rss_bytes=_max_rss())


def _ray_node_id() -> str:
    """The Ray node this task runs on, or ``""`` outside Ray (the driver's
    own tasks: never imports Ray, which another thread may be importing)."""
    try:
        ray = sys.modules.get("ray")
        return str(ray.get_runtime_context().get_node_id()) if ray is not None and ray.is_initialized() else ""
    except Exception:
        return ""


def _max_rss() -> int:
    """Peak resident memory of this worker process so far, in bytes."""
    try:
        import resource

        # Linux reports kilobytes (getrusage(2)); macOS bytes.
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return int(rss) if sys.platform == "darwin" else int(rss) * 1024
    except (ImportError, OSError):
        return 0
