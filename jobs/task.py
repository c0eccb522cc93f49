"""The body of one Ray task: solve a chunk of deals and write its file.

This module imports only the standard library at the top, so that Ray can
load it on a worker that lacks the native engine (or pyarrow) and the task
can then fail at once with a message saying how to ship it, instead of an
opaque deserialization error. Everything else is imported inside the task.

The task writes its own chunk file (results survive a killed driver) and
returns only a small summary.
"""

from __future__ import annotations

import importlib
import json
import os
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


class ChunkSummary(TypedDict):
    """What a task sends back to the driver (the rows stay in the file)."""

    start: int
    end: int
    rows: int
    outcomes: dict[str, int]
    path: str
    node: str
    node_id: str
    max_rss_bytes: int
    solve_s: float
    write_s: float


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


def run_chunk(start: int, end: int, config_json: str, provenance: dict[str, str], out_dir: str) -> ChunkSummary:
    """Solves deals ``start..end`` (inclusive) and writes
    ``out_dir/chunks/deals-<start>-<end>.parquet``. `config_json` is the
    canonical configuration JSON, `provenance` a `jobs.config.Provenance`
    as a dict (computed once on the driver, so every chunk records the same
    package version and git commit)."""
    require_engine(provenance.get("engine_version"))
    if not (Path(out_dir) / "run.json").is_file():
        raise EngineUnavailableError(
            f"the output directory {out_dir} is not visible from Ray worker {socket.gethostname()} "
            "(no run.json there): on a cluster --out must be on storage that every node mounts at the same path"
        )
    from .chunks import solve_chunk, write_chunk
    from .config import Provenance, RunConfig

    config = RunConfig.from_dict(json.loads(config_json))
    t0 = time.perf_counter()
    table = solve_chunk(start, end, config, Provenance(**provenance))
    t1 = time.perf_counter()
    path = write_chunk(out_dir, table)
    t2 = time.perf_counter()
    outcomes: dict[str, int] = {}
    for o in table.column("outcome").to_pylist():
        outcomes[str(o)] = outcomes.get(str(o), 0) + 1
    return ChunkSummary(
        start=start,
        end=end,
        rows=int(table.num_rows),
        outcomes=outcomes,
        path=os.fspath(path),
        node=socket.gethostname(),
        node_id=_ray_node_id(),
        max_rss_bytes=_max_rss(),
        solve_s=t1 - t0,
        write_s=t2 - t1,
    )


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
