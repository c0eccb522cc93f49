"""The batch driver: ``freecell-analyzer run DEALS --out DIR`` and
``python -m jobs.run DEALS --out DIR`` (for ``ray job submit --working-dir .
-- python -m jobs.run ...``).

It cuts the deals still missing from DIR into contiguous chunks and runs one
Ray task per chunk, at most ``--max-in-flight`` at a time (``ray.wait``).
Each task writes its own chunk file atomically and returns a small summary,
so finished chunks survive a killed driver, and running the same command
again computes only what is missing. Tasks are retried by Ray for system
failures only (a lost worker or node); the solver is deterministic, so its
own errors become ``error`` rows instead (Ray's "patterns and anti-patterns":
coarse tasks, bounded work in flight, memory as a resource).

Without ``--address`` (or ``RAY_ADDRESS``) Ray starts on this machine with
all its cores; with one, the run joins that cluster, where ``--out`` must be
on storage that every node mounts at the same path.
"""

from __future__ import annotations

import argparse
import collections
import io
import json
import logging
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal, TextIO

from analyzer._api import MOVE_RULES
from analyzer.cliframe import (
    add_json_option,
    add_verbosity_options,
    count_option,
    dispatch,
    option,
    parse_cell_count,
    parse_cell_range,
    parse_count,
    parse_move_rule,
    parse_seconds,
    parse_size,
    parse_variant,
    standalone,
)
from analyzer.errors import (
    EXIT_FAILURE,
    EXIT_INCOMPLETE,
    EXIT_INTERRUPTED,
    EXIT_OK,
    AnalyzerError,
)
from analyzer.schema import OUTCOMES

from .chunks import scan
from .config import Provenance, RunConfig, build_config
from .errors import ConfigError
from .ranges import DealRange, count, format_deals, parse_deals, split_chunks, subtract
from .rundir import Manifest, RunRecord, check_output_dir, merged_deals, now_iso, write_manifest
from .task import SHIP_HINT, ChunkSummary, EngineUnavailableError, run_chunk

if TYPE_CHECKING:
    from ray import ObjectRef

#: 1000 deals is a few seconds of solving at the default limits: coarse
#: enough that Ray's per-task cost (~10 ms) is noise, fine enough that a
#: lost chunk or a resumed run redoes little.
DEFAULT_CHUNK_SIZE: Final = 1000
DEFAULT_STALL_TIMEOUT: Final = 3600.0
DEFAULT_PROGRESS_INTERVAL: Final = 30.0
#: Ray's per-task retry budget for system failures (lost worker or node).
MAX_RETRIES: Final = 3

log = logging.getLogger("jobs.run")

RUN_DESCRIPTION: Final = """\
Solve Microsoft deals DEALS on Ray (started here with all cores, or the
cluster at --address / $RAY_ADDRESS), one Parquet file per chunk of deals in
DIR/chunks. Re-running the same command resumes: complete chunks are kept,
the rest is computed.

Numbers take the digits 0-9 only. Limits: positions with K, M, G, T
(powers of 1000: 2M, 1.5M), bytes with K, M, G, T (powers of 1024: 512M,
1.5G), both 1..18446744073709551615; seconds more than 0, at most
1000000000. Every option is checked before anything is written.

Exit 0 when every deal of DEALS has its rows in DIR; 1 when Ray cannot run
the solver (e.g. the engine is missing on a worker) or a task fails with a
bug; 2 for bad DEALS or options, an output path that is a file, or a
directory of another configuration (nothing is written); 3 when chunks are
lost after retries or no chunk finishes for --stall-timeout seconds (run
the same command again); 130 when interrupted (finished chunks are kept).
With --json the final summary is one JSON object on stdout (see README,
"Machine-readable output")."""

RUN_EXAMPLES: Final = """\
freecell-analyzer run 1-32000 --out runs/ms32k
freecell-analyzer run 1-1000,5000-6000 --out runs/a --cells 0-5 --max-positions 2M
freecell-analyzer run 1-100000 --out runs/min --min-cells --chunk-size 500
freecell-analyzer run 1-1000000 --out /shared/ms1m --address 10.0.0.1:6379
freecell-analyzer run 1-32000 --out runs/ms32k --quiet --json > summary.json
ray job submit --working-dir . -- python -m jobs.run 1-1000000 --out /shared/ms1m"""

RUN_NOTES: Final = """\
On a cluster, --out must be on storage that every node mounts at the same
path (the tasks write the chunk files); run the driver on a cluster node
(ray job submit), not through a ray:// client."""

#: Bounds of the execution options: a chunk's rows are held in memory by
#: one task (a million rows is several hundred MB), and each task in flight
#: is an object reference on the driver.
MAX_CHUNK_SIZE: Final = 1_000_000
MAX_IN_FLIGHT: Final = 100_000


# ---------------------------------------------------------------------------
# Options
# ---------------------------------------------------------------------------


def add_run_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``run``; shared by the CLI and ``python -m jobs.run``.
    Every value is read by `analyzer.cliframe`'s parsers."""
    p.add_argument(
        "deals",
        metavar="DEALS",
        type=option(parse_deals, "deals"),
        help="deal numbers: N, A-B or a comma list (1-32000, 11982, 1-1000,5000-6000)",
    )
    p.add_argument("--out", "-o", metavar="DIR", required=True, type=Path, help="run directory (created if missing)")
    p.add_argument(
        "--variant", type=option(parse_variant, "variant"), default="freecell", metavar="V", help="rule preset (default: freecell)"
    )
    cells = p.add_mutually_exclusive_group()
    cells.add_argument(
        "--cells",
        type=option(parse_cell_range, "cells"),
        metavar="K|A-B",
        help="number of cells (0..10), or a range solved for every deal (default: the variant's)",
    )
    cells.add_argument(
        "--min-cells", action="store_true", help="find each deal's minimum number of cells, with proofs for fewer"
    )
    p.add_argument(
        "--max-cells",
        type=option(parse_cell_count, "cells"),
        metavar="K",
        help="with --min-cells: the most cells tried, 0..10 (default: 8)",
    )
    p.add_argument(
        "--move-rule", type=option(parse_move_rule, "move rule"), metavar="R", help=f"multi-card move rule: {', '.join(MOVE_RULES)}"
    )
    lim = p.add_argument_group("per-deal limits (a deal that hits one gets outcome 'limit')")
    lim.add_argument(
        "--max-positions",
        type=option(parse_count, "positions"),
        metavar="N",
        help="positions per search, e.g. 2M (default: 100M; the 1G byte budget binds first)",
    )
    lim.add_argument("--max-bytes", type=option(parse_size, "bytes"), metavar="B", help="memory per search, e.g. 1G (default: 1G)")
    lim.add_argument("--max-seconds", type=option(parse_seconds, "seconds"), metavar="S", help="seconds per search (default: none)")
    ray_ = p.add_argument_group("execution")
    ray_.add_argument(
        "--chunk-size",
        type=count_option("deals", 1, MAX_CHUNK_SIZE),
        metavar="N",
        help=f"deals per task and file, 1..{MAX_CHUNK_SIZE:,} (default: {DEFAULT_CHUNK_SIZE}, or the run's)",
    )
    ray_.add_argument("--address", metavar="A", help="Ray cluster to join (default: $RAY_ADDRESS, else start Ray here)")
    ray_.add_argument(
        "--max-in-flight",
        type=count_option("tasks", 1, MAX_IN_FLIGHT),
        metavar="N",
        help="tasks submitted at once (default: 2 x CPUs)",
    )
    ray_.add_argument(
        "--stall-timeout",
        type=option(lambda t: parse_seconds(t, allow_zero=True), "seconds"),
        default=DEFAULT_STALL_TIMEOUT,
        metavar="S",
        help=f"give up (exit 3) when no chunk finishes for S seconds; 0 = never (default: {DEFAULT_STALL_TIMEOUT:g})",
    )
    ray_.add_argument(
        "--progress-interval",
        type=option(lambda t: parse_seconds(t, allow_zero=True), "seconds"),
        default=DEFAULT_PROGRESS_INTERVAL,
        metavar="S",
        help=f"seconds between progress lines when stderr is not a terminal; 0 = only at the end (default: {DEFAULT_PROGRESS_INTERVAL:g})",
    )
    out = p.add_argument_group("output")
    add_json_option(out, "the final summary (status, exit code, deals and outcome counts of this invocation)")
    add_verbosity_options(
        out,
        quiet="no progress or information lines on stderr: only errors (and the summary with --json)",
        verbose="also a line on stderr for every chunk that finishes",
    )
    p.add_argument("--fail-deals", metavar="LIST", type=option(parse_deals, "deals"), help=argparse.SUPPRESS)


@dataclass
class RunOptions:
    """Everything `run` needs, validated."""

    deals: tuple[DealRange, ...]
    out: Path
    config: RunConfig
    chunk_size: int | None = None
    address: str | None = None
    max_in_flight: int | None = None
    stall_timeout: float = DEFAULT_STALL_TIMEOUT
    progress_interval: float = DEFAULT_PROGRESS_INTERVAL
    command: list[str] = field(default_factory=lambda: list(sys.argv))
    #: -1 quiet (errors only on stderr), 0 normal, 1 a line per chunk.
    verbosity: int = 0


#: At most this many deals may be named by the hidden --fail-deals.
_MAX_FAIL_DEALS: Final = 10_000


def options_from_args(args: argparse.Namespace) -> RunOptions:
    """Validates parsed ``run`` arguments; raises `AnalyzerError` subclasses
    whose message names the bad input."""
    deals: tuple[DealRange, ...] = args.deals
    fail: list[int] = []
    if args.fail_deals:
        fr: tuple[DealRange, ...] = args.fail_deals
        if count(fr) > _MAX_FAIL_DEALS:
            raise ConfigError(f"--fail-deals names more than {_MAX_FAIL_DEALS} deals")
        fail = [n for r in fr for n in r.deals()]
    config = build_config(
        args.variant,
        cells=args.cells,
        min_cells=args.min_cells,
        max_cells=args.max_cells,
        move_rule=args.move_rule,
        max_positions=args.max_positions,
        max_bytes=args.max_bytes,
        max_seconds=args.max_seconds,
        fail_deals=fail,
    )
    return RunOptions(
        deals=deals,
        out=Path(args.out),
        config=config,
        chunk_size=args.chunk_size,
        address=args.address,
        max_in_flight=args.max_in_flight,
        stall_timeout=args.stall_timeout,
        progress_interval=args.progress_interval,
        verbosity=args.verbosity,
    )


# ---------------------------------------------------------------------------
# Progress
# ---------------------------------------------------------------------------


def _hms(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


class Progress:
    """Deals done, deals/s, ETA and outcome counts: a tqdm bar on a terminal,
    otherwise one log line every `interval` seconds (and at the end)."""

    def __init__(self, total: int, done: int, counts: dict[str, int], interval: float, stream: TextIO) -> None:
        self.total, self.done, self.counts = total, done, dict(counts)
        self.interval, self.stream = interval, stream
        self.t0 = self.last_line = time.monotonic()
        self.done0 = self.done_printed = done
        self.bar = None
        if stream.isatty():
            from tqdm import tqdm

            self.bar = tqdm(
                total=total, initial=done, unit="deal", unit_scale=True, smoothing=0.05, file=stream, dynamic_ncols=True
            )
            self.bar.set_postfix_str(self._counts(), refresh=True)

    def _counts(self) -> str:
        return " ".join(f"{k} {self.counts.get(k, 0)}" for k in OUTCOMES)

    def advance(self, deals: int, outcomes: dict[str, int]) -> None:
        """Counts a finished chunk."""
        self.done += deals
        for k, n in outcomes.items():
            self.counts[k] = self.counts.get(k, 0) + n
        if self.bar is not None:
            self.bar.set_postfix_str(self._counts(), refresh=False)
            self.bar.update(deals)
        self.tick()

    def line(self) -> str:
        """``12000/32000 deals (37.5%), 850 deals/s, ETA 0:00:23; solved ...``"""
        elapsed = time.monotonic() - self.t0
        rate = (self.done - self.done0) / elapsed if elapsed > 0 else 0.0
        eta = _hms((self.total - self.done) / rate) if rate > 0 else "?"
        pct = 100.0 * self.done / self.total if self.total else 100.0
        return (
            f"{self.done}/{self.total} deals ({pct:.1f}%), {rate:.1f} deals/s, "
            f"ETA {eta}, elapsed {_hms(elapsed)}; rows: {self._counts()}"
        )

    def tick(self, force: bool = False) -> None:
        """Writes a log line if one is due (non-terminal output only)."""
        if self.bar is not None:
            return
        now = time.monotonic()
        due = self.interval > 0 and now - self.last_line >= self.interval
        if due or (force and self.done != self.done_printed):
            self.last_line, self.done_printed = now, self.done
            print(f"[{time.strftime('%H:%M:%S')}] {self.line()}", file=self.stream, flush=True)

    def write(self, line: str) -> None:
        """A line of its own, above the bar on a terminal."""
        if self.bar is not None:
            self.bar.write(line, file=self.stream)
        else:
            print(line, file=self.stream, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


# ---------------------------------------------------------------------------
# Ray
# ---------------------------------------------------------------------------

ErrorKind = Literal["environment", "system", "application"]


def classify_failure(exc: BaseException) -> ErrorKind:
    """Sorts a failed chunk: ``environment`` (the engine or package cannot
    be loaded on a worker: fatal at once), ``application`` (our code raised:
    a bug, not retried) or ``system`` (a lost worker or node after Ray's
    retries: resumable)."""
    from ray import exceptions as rex

    if isinstance(exc, EngineUnavailableError | ImportError | rex.RuntimeEnvSetupError):
        return "environment"
    if isinstance(exc, rex.RayTaskError):
        cause = exc.cause
        if isinstance(cause, EngineUnavailableError | ImportError):
            return "environment"
        text = str(exc)
        if "EngineUnavailableError" in text or "ModuleNotFoundError" in text:
            return "environment"
        return "application"
    return "system"


def _first_line(exc: BaseException) -> str:
    from ray import exceptions as rex

    cause = exc.cause if isinstance(exc, rex.RayTaskError) else None
    if cause is not None and str(cause):
        return f"{type(cause).__name__}: {str(cause).strip().splitlines()[0]}"
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[-1] if text else ''}"


def connect(address: str | None) -> bool:
    """Starts or joins Ray unless this process already did (tests, notebooks).
    Returns whether this call connected (and the caller must shut down)."""
    import ray

    if ray.is_initialized():
        return False
    addr = address or os.environ.get("RAY_ADDRESS") or "local"
    kwargs: dict[str, object] = {"address": addr, "logging_level": logging.WARNING}
    if addr == "local":
        # "local": a new Ray on this machine with all its cores, never an
        # unrelated cluster some other process left running here.
        kwargs["include_dashboard"] = False
    try:
        ray.init(**kwargs)  # type: ignore[arg-type]
    except (ConnectionError, ValueError) as e:
        raise AnalyzerError(f"cannot connect to the Ray cluster at {addr!r}: {e}") from e
    return True


@dataclass
class _InFlight:
    deals: DealRange
    submitted: float


@dataclass
class RunOutcome:
    """What one invocation did (for the caller, tests and the benchmark)."""

    status: str
    exit_code: int
    deals_done: int = 0
    chunks_done: int = 0
    wall_s: float = 0.0
    summaries: list[ChunkSummary] = field(default_factory=list)
    failed: list[tuple[DealRange, str]] = field(default_factory=list)

    def outcome_counts(self) -> dict[str, int]:
        """Rows by outcome over the chunks this invocation finished."""
        counts = dict.fromkeys(OUTCOMES, 0)
        for summary in self.summaries:
            for k, n in summary["outcomes"].items():
                counts[k] = counts.get(k, 0) + n
        return counts

    def to_dict(self) -> dict[str, object]:
        """The ``run --json`` summary's fields that describe this invocation
        (README, "Machine-readable output").

        >>> RunOutcome("complete", 0, deals_done=10, chunks_done=1, wall_s=1.5).to_dict()["outcomes"]
        {'solved': 0, 'unsolvable': 0, 'limit': 0, 'error': 0}
        """
        return {
            "status": self.status,
            "exit_code": self.exit_code,
            "deals_done": self.deals_done,
            "chunks_done": self.chunks_done,
            "wall_s": self.wall_s,
            "outcomes": self.outcome_counts(),
            "failed": [{"deals": str(r), "why": why} for r, why in self.failed],
        }


def run(
    options: RunOptions,
    *,
    on_chunk: Callable[[ChunkSummary], None] | None = None,
    stream: TextIO | None = None,
) -> RunOutcome:
    """Runs (or resumes) a batch; returns what happened with its exit code.

    Raises `AnalyzerError` subclasses, before anything is written, for a bad
    output directory. `on_chunk` is called on the driver after each chunk
    (tests use it to disturb a run at a known point)."""
    err = stream or sys.stderr
    # Information (start, progress, the final line) goes to `note`; errors
    # and warnings always to `err`.
    note: TextIO = err if options.verbosity >= 0 else io.StringIO()
    t_start = time.monotonic()
    started_at = now_iso()
    out, config = options.out, options.config
    old = check_output_dir(out, config)
    chunk_size = options.chunk_size or (old.chunk_size if old else DEFAULT_CHUNK_SIZE)
    provenance = Provenance.current()
    manifest = Manifest(
        config=config,
        deals=merged_deals(old.deals if old else (), options.deals),
        chunk_size=chunk_size,
        provenance=provenance,
        command=list(options.command),
        runs=list(old.runs) if old else [],
    )
    record = RunRecord(started_at=started_at, deals=format_deals(options.deals))
    manifest.runs.append(record)

    outcome = RunOutcome("running", EXIT_OK)

    def finish(status: str, code: int) -> RunOutcome:
        record.finished_at = now_iso()
        record.wall_s = round(time.monotonic() - t_start, 3)
        record.status = status
        if out.is_dir():
            write_manifest(out, manifest)
        outcome.status, outcome.exit_code, outcome.wall_s = status, code, record.wall_s
        return outcome

    found = scan(out, config, remove_temp=True) if old else None
    covered = found.covered() if found else ()
    todo = split_chunks(subtract(options.deals, covered), chunk_size)
    total = count(options.deals)
    done0 = total - sum(len(r) for r in todo)
    if not todo:
        print(f"nothing to do: all {total} deals of {format_deals(options.deals)} are already in {out}", file=note)
        return finish("complete", EXIT_OK)

    we_connected = False
    pending: dict[ObjectRef[ChunkSummary], _InFlight] = {}
    progress: Progress | None = None
    try:
        we_connected = connect(options.address)
        import ray

        _check_memory(config)
        out.mkdir(parents=True, exist_ok=True)
        write_manifest(out, manifest)
        if found is not None:
            for bad in found.bad:
                print(f"chunk {bad.path.name} is invalid ({bad.reason}); recomputing it", file=note)
                bad.path.unlink(missing_ok=True)
        cpus = int(ray.cluster_resources().get("CPU", 1))  # type: ignore[no-untyped-call]
        window = options.max_in_flight or max(2, 2 * cpus)
        print(
            f"run {format_deals(options.deals)} -> {out}: {config.describe()}; "
            f"{len(todo)} chunks of up to {chunk_size} deals to do ({done0} deals already done), "
            f"{cpus} CPUs, {window} tasks in flight",
            file=note,
            flush=True,
        )
        task = ray.remote(num_cpus=1, max_retries=MAX_RETRIES, retry_exceptions=False)(run_chunk)
        config_json = config.canonical_json()
        prov = provenance.as_dict()
        counts = found.outcome_counts() if found else dict.fromkeys(OUTCOMES, 0)
        progress = Progress(total, done0, counts, options.progress_interval, note)
        queue = collections.deque(todo)
        last_progress = time.monotonic()
        while queue or pending:
            while queue and len(pending) < window:
                r = queue.popleft()
                ref = task.options(memory=config.task_memory()).remote(
                    r.start, r.end, config_json, prov, os.fspath(out.resolve())
                )
                pending[ref] = _InFlight(r, time.monotonic())
            timeout = 1.0 if progress.bar is None else 0.5
            ready, _ = ray.wait(list(pending), num_returns=1, timeout=timeout)
            if ready:
                rest = [ref for ref in pending if ref not in ready]
                more, _ = ray.wait(rest, num_returns=len(rest), timeout=0) if rest else ([], [])
                ready = ready + more
            for ref in ready:
                flight = pending.pop(ref)
                try:
                    summary: ChunkSummary = ray.get(ref)
                except Exception as e:
                    kind = classify_failure(e)
                    if kind == "environment":
                        progress.close()
                        print(f"freecell-analyzer: error: {_first_line(e)}", file=err)
                        if "ModuleNotFoundError" in str(e):
                            print(SHIP_HINT, file=err)
                        _cancel(pending)
                        return finish("failed", EXIT_FAILURE)
                    outcome.failed.append((flight.deals, f"{kind}: {_first_line(e)}"))
                    print(f"chunk {flight.deals} failed ({kind}): {_first_line(e)}", file=err)
                    continue
                last_progress = time.monotonic()
                outcome.summaries.append(summary)
                outcome.deals_done += len(flight.deals)
                outcome.chunks_done += 1
                if options.verbosity > 0:
                    progress.write(
                        f"chunk {flight.deals} done on {summary['node']}: "
                        + " ".join(f"{k} {summary['outcomes'].get(k, 0)}" for k in OUTCOMES)
                        + f"; solved in {summary['solve_s']:.1f} s, written in {summary['write_s']:.2f} s"
                    )
                progress.advance(len(flight.deals), summary["outcomes"])
                if on_chunk is not None:
                    on_chunk(summary)
            progress.tick()
            idle = time.monotonic() - last_progress
            if pending and options.stall_timeout > 0 and idle >= options.stall_timeout:
                progress.close()
                now = time.monotonic()
                stuck = ", ".join(
                    f"deals {f.deals} (submitted {now - f.submitted:.0f} s ago)"
                    for f in sorted(pending.values(), key=lambda f: f.deals)
                )
                print(
                    f"freecell-analyzer: no chunk finished for {idle:.0f} s (--stall-timeout {options.stall_timeout:g}); "
                    f"still running: {stuck}. Finished chunks are kept: run the same command again to resume "
                    "(raise --stall-timeout, or lower --max-positions/--max-seconds for slow deals)",
                    file=err,
                )
                _cancel(pending)
                return finish("stalled", EXIT_INCOMPLETE)
        progress.tick(force=True)
        progress.close()
    except KeyboardInterrupt:
        if progress is not None:
            progress.close()
        _cancel(pending)
        print(
            f"interrupted: {outcome.deals_done} deals done in this run; finished chunks are kept, "
            "run the same command again to resume",
            file=err,
        )
        return finish("interrupted", EXIT_INTERRUPTED)
    finally:
        if we_connected:
            import ray

            ray.shutdown()
    if outcome.failed:
        failed = format_deals([r for r, _ in outcome.failed], limit=10)
        app = any(why.startswith("application") for _, why in outcome.failed)
        print(
            f"incomplete: {len(outcome.failed)} chunks failed (deals {failed}); "
            + ("a task raised an error (a bug: see above)" if app else "run the same command again to resume"),
            file=err,
        )
        return finish("incomplete", EXIT_FAILURE if app else EXIT_INCOMPLETE)
    for tmp in scan(out).temp_files:
        tmp.unlink(missing_ok=True)  # left by attempts Ray retried; every task of ours has ended
    wall = time.monotonic() - t_start
    print(
        f"complete: {outcome.deals_done} deals in {wall:.1f} s "
        f"({outcome.deals_done / wall if wall > 0 else 0:.1f} deals/s); {out}",
        file=note,
    )
    return finish("complete", EXIT_OK)


def _cancel(pending: dict[ObjectRef[ChunkSummary], _InFlight]) -> None:
    """Abandons the tasks in flight. They are not `ray.cancel`-ed: a reply
    racing the cancellation can abort the driver inside Ray's core worker
    ("Tried to complete task that was not pending", seen with Ray 2.60),
    which would replace our exit code. Tasks share the fate of their owner,
    so they end when this driver disconnects; a chunk they finish before
    that is complete and valid (written under a temporary name, renamed when
    done), and the next run keeps it."""
    pending.clear()


def _check_memory(config: RunConfig) -> None:
    """Refuses limits no node can host: the task would wait forever."""
    import ray

    need = config.task_memory()
    nodes = [n for n in ray.nodes() if n.get("Alive")]  # type: ignore[no-untyped-call]
    most = max((float(n.get("Resources", {}).get("memory", 0)) for n in nodes), default=0.0)
    if nodes and most and need > most:
        raise ConfigError(
            f"--max-bytes {config.limits.max_bytes} needs {need} bytes of memory per task, "
            f"but the largest Ray node offers {int(most)}; lower --max-bytes"
        )


# ---------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------


def summary_doc(options: RunOptions, outcome: RunOutcome) -> dict[str, object]:
    """The ``run --json`` summary: the run directory, what was asked, and
    what this invocation did (README, "Machine-readable output")."""
    return {
        "command": "run",
        "out": os.fspath(options.out),
        "deals": format_deals(options.deals),
        "deals_requested": count(options.deals),
        "config_hash": options.config.config_hash(),
        **outcome.to_dict(),
    }


def handle_run(args: argparse.Namespace) -> int:
    """The ``run`` subcommand: returns the exit code; raises `AnalyzerError`
    for bad input (the CLI prints it and exits 2). With ``--json`` the
    summary goes to stdout as one JSON object, whatever the status."""
    options = options_from_args(args)
    try:
        outcome = run(options)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        outcome = RunOutcome("interrupted", EXIT_INTERRUPTED)
    if args.json:
        print(json.dumps(summary_doc(options, outcome)), flush=True)
    return outcome.exit_code


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m jobs.run DEALS --out DIR [...]`` (same options as
    ``freecell-analyzer run``)."""
    parser = standalone("python -m jobs.run", RUN_DESCRIPTION, RUN_EXAMPLES, RUN_NOTES)
    add_run_arguments(parser)
    parser.set_defaults(func=handle_run)
    return dispatch(parser, argv)


if __name__ == "__main__":
    sys.exit(main())
