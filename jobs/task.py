"""The bodies of the Ray tasks.

This module imports only the standard library at the top, so that Ray can
load it on a worker that lacks the native engine (or pyarrow) and the task
can then fail at once with a message saying how to ship it, instead of an
opaque deserialization error. Everything else is imported inside the task.

Each task writes its own files (results survive a killed driver) and
returns only a small summary: `run_part` solves a range of deals into a
part, `seal_unit` merges a unit's parts into its data file, `retry_file`
re-solves a data file's ``limit`` rows with larger budgets.
"""

from __future__ import annotations

import importlib
import json
import socket
import sys
import time
from pathlib import Path
from typing import Final, TypedDict

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
        importlib.import_module("pyarrow")
        engine = importlib.import_module("analyzer._engine")
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
    from .ranges import DealRange, subtract
    from .runformat import FileInvalid, list_disk, seal

    out = Path(out_dir)
    unit = DealRange(start, end)
    config = RunConfig.from_dict(json.loads(config_json))
    parts = [(r, p) for r, p in list_disk(out).parts if r.start >= start and r.end <= end]
    try:
        entry = seal(out, unit, config, Provenance(**provenance), parts)
    except FileInvalid as e:
        bad = [(r, p) for r, p in parts if e.path is None or p == e.path]
        for _, p in bad:
            p.unlink(missing_ok=True)
        redo = subtract([unit], [r for r, p in parts if (r, p) not in bad])
        return SealResult(entry=None, redo=[(r.start, r.end) for r in redo], reason=str(e), max_rss_bytes=_max_rss())
    return SealResult(entry=entry.to_json(), redo=[], reason="", max_rss_bytes=_max_rss())


def retry_file(
    rel: str, entry_json: str, config_json: str, limits: dict[str, object], attempt: int, provenance: dict[str, str], out_dir: str
) -> SealResult:
    """Re-solves the ``limit`` rows of one data file under `limits` (escalation
    pass `attempt`) and rewrites the file atomically with those rows replaced."""
    require_engine(provenance.get("engine_version"))
    _require_run_dir(out_dir)
    from .chunks import retry_data_file
    from .config import Provenance, RunConfig

    config = RunConfig.from_dict(json.loads(config_json))
    entry = retry_data_file(Path(out_dir), rel, entry_json, config, limits, attempt, Provenance(**provenance))
    return SealResult(entry=entry, redo=[], reason="", max_rss_bytes=_max_rss())


def _ray_node_id() -> str:
    """The Ray node this task runs on, or ``""`` outside Ray."""
    try:
        ray = importlib.import_module("ray")
        return str(ray.get_runtime_context().get_node_id()) if ray.is_initialized() else ""
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
