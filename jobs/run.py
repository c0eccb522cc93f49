"""The batch driver: ``freecell-analyzer run DEALS --out DIR`` and
``python -m jobs.run DEALS --out DIR`` (for ``ray job submit --working-dir .
-- python -m jobs.run ...``).

It takes the run directory's lock and records the configuration and this
invocation before Ray starts, then streams the deals still missing from DIR
as file-sized units (`jobs.runformat.file_units`), each cut into solving
tasks of a few seconds; at most ``--max-in-flight`` tasks run at a time
(``ray.wait``). Each task writes its rows as a part; when a unit's parts are
all there, a sealing task merges them into the unit's data file and the
driver indexes it. Finished parts and files survive a killed driver, so the
same command again computes only what is missing. Tasks are retried by Ray
for system failures only (a lost worker or node); the solver is
deterministic, so its own errors become ``error`` rows instead (Ray's
"patterns and anti-patterns": coarse tasks, bounded work in flight, memory
as a resource). ``--retry-limits`` runs an escalation pass instead.

Without ``--address`` (or ``RAY_ADDRESS``) Ray starts on this machine with
all its cores, and while it starts the driver solves the first tasks
itself (`LocalRayStart`, `DriverLane`; not with ``--ray-only``); with an
address, the run joins that cluster, where ``--out`` must be on storage
that every node mounts at the same path.
"""

from __future__ import annotations

import argparse
import atexit
import collections
import contextlib
import importlib
import io
import json
import logging
import math
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol, TextIO, cast

from analyzer._api import MOVE_RULES
from analyzer.cliframe import (
    add_json_option,
    add_limit_options,
    add_verbosity_options,
    count_option,
    dispatch,
    excerpt,
    option,
    parse_cell_count,
    parse_cell_range,
    parse_int,
    parse_move_rule,
    parse_seconds,
    parse_variant,
    standalone,
)
from analyzer.errors import (
    EXIT_FAILURE,
    EXIT_INCOMPLETE,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_TERMINATED,
    EXIT_USAGE,
    AnalyzerError,
    StorageError,
    UsageError,
    storage_error,
)
from analyzer.headline import share_text
from analyzer.schema import OUTCOMES

from .check import answer_data, answer_lines
from .config import Provenance, RunConfig, config_from_args
from .errors import ConfigError, RunDirError
from .ranges import DealRange, count, format_deals, intersect, merge, parse_deals, split_chunks, subtract
from .runformat import (
    CONTROL_DIR,
    PARTITION_DEALS,
    RETRY_DIR,
    FileEntry,
    FileInvalid,
    IndexWriter,
    Invocation,
    Manifest,
    RunLock,
    RunState,
    check_file,
    check_file_deals,
    default_file_deals,
    describe_config_difference,
    describe_holder,
    file_units,
    is_temp,
    legacy_message,
    limits_dict,
    list_disk,
    load_manifest,
    now_iso,
    rewrite_index,
    run_state,
    write_manifest,
)
from .task import (
    SHIP_HINT,
    EngineUnavailableError,
    RetryScan,
    SealResult,
    TaskSummary,
    retry_deals,
    retry_scan,
    retry_seal,
    run_part,
    seal_unit,
)

if TYPE_CHECKING:
    from ray import ObjectRef

#: Most rows one solving task computes: 10,000 deals at 4 cells is about
#: three seconds of one core (MS 1..1,000,000 ran at 3,700 deals/s per core),
#: so Ray's per-task cost (~10 ms) is noise and a lost task redoes little.
MAX_TASK_ROWS: Final = 10_000
#: Seconds `--address` gets to accept a connection (then ray.init 30 s more).
CONNECT_TIMEOUT: Final = 10.0
DEFAULT_STALL_TIMEOUT: Final = 3600.0
DEFAULT_PROGRESS_INTERVAL: Final = 30.0
#: Ray's per-task retry budget for system failures (lost worker or node).
MAX_RETRIES: Final = 3
#: Kept free (in the lock file) beyond twice the manifest's size, so that the
#: run's final status is written even when its output fills the disk.
RESERVE_MARGIN: Final = 16 * 1024

log = logging.getLogger("jobs.run")

RUN_DESCRIPTION: Final = """\
Solve Microsoft deals DEALS on Ray (started here with all cores, or the
cluster at --address / $RAY_ADDRESS) into the run directory DIR: Parquet
data files of --file-deals deals under DIR/deal_block=K/, solved in tasks
of --task-deals deals. The lock and the configuration are taken and
recorded in DIR/_run before Ray starts. Re-running the same command
resumes: sealed files and finished tasks' parts are kept, the rest is
computed. --retry-limits re-solves only the limit rows of the run in DIR
with the larger limits given (an escalation pass). The closing summary
opens with the run's answer, as `status` prints it.

Numbers take the digits 0-9 only. Limits: positions with K, M, G, T
(powers of 1000: 2M, 1.5M), bytes with K, M, G, T (powers of 1024: 512M,
1.5G), both 1..18446744073709551615; seconds more than 0, at most
1000000000. Every option is checked before anything is written.

Exit 0 when every deal of DEALS has its rows in DIR; 1 when Ray cannot run
the solver (e.g. the engine is missing on a worker) or a task fails with a
bug; 2 for bad DEALS or options, an output path that is a file, a directory
of another configuration (nothing is written), another driver holding DIR
(its PID and host are named), a Ray cluster at --address that does not
answer within 10 s (+30 s for ray.init), or a DIR that cannot be written
(read-only, no permission); 3 when tasks are lost after retries, no task
finishes for --stall-timeout seconds, or the disk fills (run the same
command again); 130 when interrupted, 143 when terminated (SIGTERM): the
finished work is kept. With --json the final summary is one JSON object on
stdout (see README, "Machine-readable output")."""

RUN_EXAMPLES: Final = """\
freecell-analyzer run 1-32000 --out runs/ms32k
freecell-analyzer run 1-1000,5000-6000 --out runs/a --cells 0-5 --max-positions 2M
freecell-analyzer run 1-100000 --out runs/min --min-cells
freecell-analyzer run 1-1000000 --out /shared/ms1m --address 10.0.0.1:6379
freecell-analyzer run 1-1000000 --out /shared/ms1m --retry-limits --max-bytes 16G --node-resource bigmem
freecell-analyzer run 1-32000 --out runs/ms32k --quiet --json > summary.json
ray job submit --working-dir . --runtime-env-json '{"py_modules": ["dist/freecell_analyzer-VERSION.whl"]}' \
    -- python -m jobs.run 1-1000000 --out /shared/ms1m   (the wheel carries the engine: README)"""

RUN_NOTES: Final = """\
On a cluster, --out must be on storage that every node mounts at the same
path (the tasks write the parts and data files); run the driver on a
cluster node (ray job submit), not through a ray:// client."""

#: Bounds of the execution options: a task's rows are held in memory by
#: one worker (a million rows is several hundred MB), and each task in
#: flight is an object reference on the driver.
MAX_TASK_DEALS: Final = 1_000_000
MAX_IN_FLIGHT: Final = 100_000
#: A Ray resource name, as ``ray start --resources`` takes it.
_RESOURCE_NAME: Final = re.compile(r"[A-Za-z0-9_.:/-]{1,100}", re.ASCII)


# ---------------------------------------------------------------------------
# Options
# ---------------------------------------------------------------------------


def parse_file_deals(text: str) -> int:
    """``--file-deals``: deals per data file, a divisor of the partition
    (10^8 deals), so that no file crosses a ``deal_block`` directory.

    >>> parse_file_deals("1000000"), parse_file_deals("1000")
    (1000000, 1000)
    >>> parse_file_deals("7")
    Traceback (most recent call last):
    ...
    analyzer.errors.UsageError: '7': deals per file must divide 100,000,000 (e.g. 1000000, 100000 or 1000)
    """
    n = parse_int(text, "deals per file", 1, PARTITION_DEALS)
    if PARTITION_DEALS % n:
        raise UsageError(f"{excerpt(text)}: deals per file must divide {PARTITION_DEALS:,} (e.g. 1000000, 100000 or 1000)")
    return n


def parse_resource_name(text: str) -> str:
    """``--node-resource``: a Ray custom resource name (letters, digits and
    ``_ . : / -``, at most 100 characters).

    >>> parse_resource_name("bigmem")
    'bigmem'
    """
    if _RESOURCE_NAME.fullmatch(text) is None:
        raise UsageError(
            f"{excerpt(text)} is not a Ray resource name: letters, digits and _ . : / - only, at most 100 characters"
        )
    return text


def _seconds_or_zero(text: str) -> float:
    return parse_seconds(text, allow_zero=True)


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
    add_limit_options(lim)
    ray_ = p.add_argument_group("execution")
    ray_.add_argument(
        "--task-deals",
        type=count_option("deals", 1, MAX_TASK_DEALS),
        metavar="N",
        help=f"deals per task, 1..{MAX_TASK_DEALS:,} (default: sized so every CPU gets about four tasks, at most {MAX_TASK_ROWS:,} rows)",
    )
    ray_.add_argument(
        "--file-deals",
        type=option(parse_file_deals, "deals per file"),
        metavar="N",
        help="deals per data file, a divisor of 10^8 (default: 1000000, 100000 with several rows per deal; fixed when the run is created)",
    )
    ray_.add_argument("--address", metavar="A", help="Ray cluster to join (default: $RAY_ADDRESS, else start Ray here)")
    ray_.add_argument(
        "--retry-limits", action="store_true", help="re-solve only the limit rows of the run in DIR, with the (larger) limits given"
    )
    ray_.add_argument(
        "--node-resource",
        type=option(parse_resource_name, "resource"),
        metavar="NAME",
        help="with --retry-limits: run only on Ray nodes that have this custom resource",
    )
    ray_.add_argument(
        "--ray-only",
        action="store_true",
        help="every task on Ray's workers (default: while a local Ray starts, the driver solves the first tasks itself)",
    )
    ray_.add_argument(
        "--max-in-flight",
        type=count_option("tasks", 1, MAX_IN_FLIGHT),
        metavar="N",
        help=f"tasks submitted at once, 1..{MAX_IN_FLIGHT:,} (default: 2 x CPUs)",
    )
    ray_.add_argument(
        "--stall-timeout",
        type=option(_seconds_or_zero, "seconds"),
        default=DEFAULT_STALL_TIMEOUT,
        metavar="S",
        help=f"give up (exit 3) when no task finishes for S seconds; 0 = never (default: {DEFAULT_STALL_TIMEOUT:g})",
    )
    ray_.add_argument(
        "--progress-interval",
        type=option(_seconds_or_zero, "seconds"),
        default=DEFAULT_PROGRESS_INTERVAL,
        metavar="S",
        help=f"seconds between progress lines when stderr is not a terminal; 0 = only at the end (default: {DEFAULT_PROGRESS_INTERVAL:g})",
    )
    out = p.add_argument_group("output")
    add_json_option(out, "the final summary (status, exit code, deals and outcome counts of this invocation)")
    add_verbosity_options(
        out,
        quiet="no progress or information lines on stderr: only errors (and the summary with --json)",
        verbose="also a line on stderr for every task that finishes",
    )
    p.add_argument("--fail-deals", metavar="LIST", type=option(parse_deals, "deals"), help=argparse.SUPPRESS)


@dataclass
class RunOptions:
    """Everything `run` needs, validated."""

    deals: tuple[DealRange, ...]
    out: Path
    config: RunConfig
    task_deals: int | None = None
    file_deals: int | None = None
    address: str | None = None
    retry_limits: bool = False
    node_resource: str | None = None
    connect_timeout: float = CONNECT_TIMEOUT
    max_in_flight: int | None = None
    stall_timeout: float = DEFAULT_STALL_TIMEOUT
    progress_interval: float = DEFAULT_PROGRESS_INTERVAL
    #: While a local Ray starts, the driver solves the first tasks itself
    #: (`DriverLane`); off with ``--ray-only``. Never on a cluster joined.
    driver_solves: bool = True
    command: list[str] = field(default_factory=lambda: list(sys.argv))
    #: -1 quiet (errors only on stderr), 0 normal, 1 a line per task.
    verbosity: int = 0


#: At most this many deals may be named by the hidden --fail-deals.
_MAX_FAIL_DEALS: Final = 10_000


def options_from_args(args: argparse.Namespace) -> RunOptions:
    """Validates parsed ``run`` arguments; raises `AnalyzerError` subclasses
    whose message names the bad input."""
    deals: tuple[DealRange, ...] = args.deals
    if args.node_resource is not None and not args.retry_limits:
        raise UsageError("run: --node-resource needs --retry-limits")
    fail: list[int] = []
    if args.fail_deals:
        fr: tuple[DealRange, ...] = args.fail_deals
        if count(fr) > _MAX_FAIL_DEALS:
            raise ConfigError(f"--fail-deals names more than {_MAX_FAIL_DEALS} deals")
        fail = [n for r in fr for n in r.deals()]
    config = config_from_args(args, fail)
    return RunOptions(
        deals=deals,
        out=Path(args.out),
        config=config,
        task_deals=args.task_deals,
        file_deals=args.file_deals,
        address=args.address,
        retry_limits=args.retry_limits,
        node_resource=args.node_resource,
        max_in_flight=args.max_in_flight,
        stall_timeout=args.stall_timeout,
        progress_interval=args.progress_interval,
        driver_solves=not args.ray_only,
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
        """``12000/32000 deals (37.5 %), 850 deals/s, ETA 0:00:23; solved ...``"""
        elapsed = time.monotonic() - self.t0
        rate = (self.done - self.done0) / elapsed if elapsed > 0 else 0.0
        eta = _hms((self.total - self.done) / rate) if rate > 0 else "?"
        pct = share_text(self.done, self.total) if self.total else "100 %"
        return (
            f"{self.done}/{self.total} deals ({pct}), {rate:.1f} deals/s, "
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

ErrorKind = Literal["environment", "storage", "system", "application"]


def classify_failure(exc: BaseException) -> ErrorKind:
    """Sorts a failed chunk: ``environment`` (the engine or package cannot
    be loaded on a worker: fatal at once), ``application`` (our code raised:
    a bug, not retried) or ``system`` (a lost worker or node after Ray's
    retries: resumable)."""
    from ray import exceptions as rex

    if isinstance(exc, EngineUnavailableError | ImportError | rex.RuntimeEnvSetupError):
        return "environment"
    if isinstance(exc, StorageError):
        return "storage"
    if isinstance(exc, rex.RayTaskError | LocalTaskError):
        cause = exc.cause
        if isinstance(cause, EngineUnavailableError | ImportError):
            return "environment"
        if isinstance(cause, StorageError) or "StorageError" in str(exc):
            return "storage"
        text = str(exc)
        if "EngineUnavailableError" in text or "ModuleNotFoundError" in text:
            return "environment"
        return "application"
    return "system"


def _first_line(exc: BaseException) -> str:
    from ray import exceptions as rex

    cause = exc.cause if isinstance(exc, rex.RayTaskError | LocalTaskError) else None
    if cause is not None and str(cause):
        return f"{type(cause).__name__}: {str(cause).strip().splitlines()[0]}"
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[-1] if text else ''}"


@dataclass
class _InFlight:
    kind: Literal["solve", "seal", "retry", "scan"]
    unit: DealRange
    deals: DealRange
    submitted: float
    #: A seal by the unit's `StreamSeal` actor (`_Streams`).
    streamed: bool = False


#: A file of at least this many solving tasks is written while they run by
#: a Ray actor (`_Streams`); a smaller one is sealed once its parts are all
#: there (an actor's process costs about what sealing a few tasks' parts
#: does). While the driver solves (`DriverLane`) a file of two tasks or
#: more is written by a thread of the driver, which costs nothing to start.
STREAM_MIN_TASKS: Final = 20
LOCAL_STREAM_MIN_TASKS: Final = 2


@dataclass
class _Stream:
    """One file being written while its parts are solved: a `StreamSeal`
    Ray actor, or the same class in a thread of the driver (`local`)."""

    writer: Any
    local: bool
    #: The first deal of the next part to feed it.
    next: int


class _Streams:
    """The data files written while their last parts are still being solved,
    by a `jobs.task.StreamSeal` fed the file's finished parts in order of
    deals, so that the run's last file is sealed moments after its last
    task instead of all at the end: a Ray actor per file of at least
    `STREAM_MIN_TASKS` tasks once Ray is up, and before, while the driver
    solves, a `StreamSeal` of the driver's own (in a thread: the file is
    written beside the lane's solving, not after it) per file of at least
    `LOCAL_STREAM_MIN_TASKS`; a local stream goes on locally once Ray is up.
    A file whose stream failed or whose parts were rejected is sealed the
    usual way (`seal_unit`)."""

    def __init__(self, args: tuple[str, dict[str, str], str], lane: DriverLane | None = None) -> None:
        self.args = args  # config JSON, provenance, output directory
        self.lane = lane  # while Ray starts: the driver's streams report through it
        self.actor_class: Any = None  # ray.remote(StreamSeal), once Ray is up
        #: The units written as streams, each with its finished parts not yet fed.
        self.finished: dict[DealRange, dict[int, DealRange]] = {}
        self.streams: dict[DealRange, _Stream] = {}

    def open(self, unit: DealRange, have: Sequence[DealRange], tasks: int) -> None:
        """A unit whose `tasks` are queued and whose parts `have` exist: a
        stream when it has enough tasks (see `_Streams`)."""
        local = self.lane is not None and self.actor_class is None
        if tasks >= (LOCAL_STREAM_MIN_TASKS if local else STREAM_MIN_TASKS):
            self.finished[unit] = {r.start: r for r in have}
            self.pump(unit)

    def ray_up(self) -> None:
        import ray

        from .task import StreamSeal

        self.actor_class = ray.remote(num_cpus=0, max_restarts=0, max_task_retries=0)(StreamSeal)
        for unit in list(self.finished):
            self.pump(unit)

    def part_done(self, unit: DealRange, deals: DealRange) -> None:
        if unit in self.finished:
            self.finished[unit][deals.start] = deals
            self.pump(unit)

    def pump(self, unit: DealRange) -> None:
        """Feeds the unit's stream (started here) the parts that follow the last one fed."""
        if unit not in self.finished:
            return
        if unit not in self.streams:
            if self.actor_class is not None:
                self.streams[unit] = _Stream(self.actor_class.remote(unit.start, unit.end, *self.args), False, unit.start)
            elif self.lane is not None:
                from .task import StreamSeal

                self.streams[unit] = _Stream(StreamSeal(unit.start, unit.end, *self.args), True, unit.start)
            else:
                return
        stream = self.streams[unit]
        batch: list[tuple[int, int]] = []
        ready = self.finished[unit]
        while stream.next in ready:
            r = ready.pop(stream.next)
            batch.append((r.start, r.end))
            stream.next = r.end + 1
        if batch:
            if stream.local:
                stream.writer.feed(batch)
            else:
                stream.writer.feed.remote(batch)

    def finish(self, unit: DealRange) -> Any:
        """The unit's parts are all there: the reference of its stream's
        `finish` (a Ray object reference, or the lane's `LocalRef`), or
        None when the unit is sealed the usual way."""
        self.pump(unit)
        self.finished.pop(unit, None)
        stream = self.streams.get(unit)
        if stream is None:
            return None
        if stream.local:
            assert self.lane is not None
            return self.lane.run_aside(stream.writer.finish)
        return stream.writer.finish.remote()

    def drop(self, unit: DealRange) -> None:
        """Forgets the unit's stream (which then ends): the unit's next seal,
        if any (after parts solved again), is the usual one."""
        self.streams.pop(unit, None)
        self.finished.pop(unit, None)


@dataclass
class RunOutcome:
    """What one invocation did (for the caller, tests and the benchmark)."""

    status: str
    exit_code: int
    deals_done: int = 0
    tasks_done: int = 0
    files_sealed: int = 0
    wall_s: float = 0.0
    #: Totals over the solving tasks (the driver keeps no per-task list: a
    #: full-range run has 860,000 tasks).
    solve_s: float = 0.0
    write_s: float = 0.0
    failed: list[tuple[DealRange, str]] = field(default_factory=list)
    max_worker_rss: int = 0
    task_deals: int = 0
    #: Deals the driver solved itself while a local Ray started (`DriverLane`).
    driver_deals: int = 0
    #: Seconds from the start of the run until the local Ray it started in
    #: the background was up; None when it joined Ray or needed none.
    ray_up_s: float | None = None
    #: Rows by outcome that this invocation wrote (an escalation pass: the
    #: rows of the files it rewrote).
    outcomes: dict[str, int] = field(default_factory=lambda: dict.fromkeys(OUTCOMES, 0))

    def to_dict(self) -> dict[str, object]:
        """The ``run --json`` summary's fields that describe this invocation
        (README, "Machine-readable output").

        >>> RunOutcome("complete", 0, deals_done=10, tasks_done=1, wall_s=1.5).to_dict()["outcomes"]
        {'solved': 0, 'unsolvable': 0, 'limit': 0, 'error': 0}
        """
        return {
            "status": self.status,
            "exit_code": self.exit_code,
            "deals_done": self.deals_done,
            "tasks_done": self.tasks_done,
            "driver_deals": self.driver_deals,
            "ray_up_s": self.ray_up_s,
            "files_sealed": self.files_sealed,
            "wall_s": self.wall_s,
            "outcomes": dict(self.outcomes),
            "failed": [{"deals": str(r), "why": why} for r, why in self.failed],
        }


class Terminated(BaseException):
    """SIGTERM, turned into an exception in the driver's main thread so that
    it ends like Ctrl-C: status ``interrupted``, finished work kept."""


#: The signal asked to stop the driver, set by `_on_signal`, acted on by `_check_stop`.
_stop_signal: list[int] = []


def _on_signal(signum: int, frame: object) -> None:
    # Only a flag: an exception raised here could land inside Ray's compiled
    # wait and come out as a SystemError instead.
    _stop_signal.append(signum)


def _catch_signals(*, fresh: bool = True) -> None:
    """SIGINT and SIGTERM set a flag that the driver's loop checks at least
    once a second. Installed before Ray starts (`fresh`: a new flag) and
    again after (Ray's start sets handlers of its own), keeping a signal
    that came meanwhile."""
    if threading.current_thread() is threading.main_thread():
        if fresh:
            _stop_signal.clear()
        signal.signal(signal.SIGTERM, _on_signal)
        signal.signal(signal.SIGINT, _on_signal)


def _check_stop() -> None:
    if _stop_signal:
        sig = _stop_signal[0]
        _stop_signal.clear()
        raise Terminated() if sig == signal.SIGTERM else KeyboardInterrupt()


def task_size(todo_deals: int, cpus: int, config: RunConfig, asked: int | None = None) -> int:
    """Deals per solving task: enough tasks to keep every CPU busy about four
    times over (a 300-deal run on 2 CPUs gets 8 tasks of 38 deals), at most
    `MAX_TASK_ROWS` rows, so a task is seconds of work and progress moves
    in small steps, whatever the file size.

    >>> from jobs.config import build_config
    >>> task_size(300, 2, build_config()), task_size(10**7, 2, build_config()), task_size(10**7, 2, build_config(cells="0-4"))
    (38, 10000, 2000)
    """
    if asked:
        return asked
    per = config.rows_per_deal() or 3
    cap = max(1, MAX_TASK_ROWS // per)
    return max(1, min(cap, math.ceil(todo_deals / (4 * max(1, cpus)))))


def _split(r: DealRange, size: int) -> list[DealRange]:
    return split_chunks([r], size)


#: A run's last tasks are cut smaller, so that its CPUs finish together
#: instead of all but one waiting for the last whole task: the tasks that
#: begin within the run's last `TAPER_WAVES` tasks per CPU are cut into
#: `TAPER_PIECES`, none under `TAPER_MIN_DEALS` deals. (A run of MS
#: 1..200,000 on 2 CPUs: its last two tasks ended 0.12-0.32 s apart
#: instead of 0.60-1.36 s; docs/solver-log.md, session 44.)
TAPER_WAVES: Final = 2
TAPER_PIECES: Final = 4
TAPER_MIN_DEALS: Final = 1_000


def taper(tasks: Sequence[DealRange], after: int, size: int, cpus: int) -> list[DealRange]:
    """`tasks`, in the order they are handed out (each of at most `size`
    deals, on `size`'s grid), with those among the run's last cut smaller
    (`TAPER_WAVES`); `after` deals of the run come after them. A piece lies
    on its own grid, so a task's pieces are the same whichever run cuts them.

    >>> [str(t) for t in taper([DealRange(1, 10000), DealRange(10001, 14000)], 0, 10000, 1)]
    ['1-2500', '2501-5000', '5001-7500', '7501-10000', '10001-12500', '12501-14000']
    >>> len(taper(split_chunks([DealRange(1, 100000)], 10000), 60000, 10000, 2)), len(taper([DealRange(1, 300)], 0, 300, 2))
    (10, 1)
    """
    piece = max(TAPER_MIN_DEALS, size // TAPER_PIECES)
    if piece >= size:
        return list(tasks)
    tail = TAPER_WAVES * max(1, cpus) * size
    left = after + sum(len(t) for t in tasks)  # deals from the task below to the run's end
    out: list[DealRange] = []
    for t in tasks:
        out.extend(split_chunks([t], piece) if left <= tail else [t])
        left -= len(t)
    return out


def _prepare(options: RunOptions, note: TextIO) -> tuple[RunLock, Manifest, Invocation]:
    """Takes the lock and records the configuration and this invocation in
    ``_run/run.json`` before any work (and before Ray starts). Raises
    `RunDirError`, `RunLockedError` or `StorageError` with one line."""
    out, config = options.out, options.config
    if out.exists() and not out.is_dir():
        raise RunDirError(f"output path {out} is a file; --out needs a directory (it is created if missing)")
    if out.is_symlink() and not out.exists():
        raise RunDirError(f"output path {out} is a dangling symbolic link")
    if not out.exists():
        legacy = None
    else:
        legacy = legacy_message(out)
    if legacy:
        raise RunDirError(legacy)
    def foreign() -> list[str]:
        return [p.name for p in sorted(out.iterdir()) if p.name != CONTROL_DIR and not is_temp(p.name)]

    if out.is_dir() and not (out / CONTROL_DIR).exists() and foreign():
        # refused before the lock, so that nothing is written into someone's directory
        raise RunDirError(f"output directory {out} is not empty and not a run directory: it holds {', '.join(foreign()[:3])}")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise storage_error(e, f"the run directory {out}") from e
    lock = RunLock.acquire(out)
    try:
        old = load_manifest(out)
        if old is None and foreign():
            raise RunDirError(f"output directory {out} is not empty and not a run directory: it holds {', '.join(foreign()[:3])}")
        if old is not None and old.config_hash != config.config_hash():
            if options.retry_limits and old.config.to_dict() | {"limits": None} == config.to_dict() | {"limits": None}:
                pass
            else:
                raise RunDirError(
                    f"output directory {out} holds a run of another configuration "
                    f"({describe_config_difference(old.config, config)}); "
                    "use another --out, or the same options to resume it"
                    + (" (--retry-limits takes new limits only)" if options.retry_limits else "")
                )
        if options.retry_limits and old is None:
            raise RunDirError(f"--retry-limits needs an existing run in {out}")
        for tmp in list_disk(out).temp_files:
            tmp.unlink(missing_ok=True)  # ours or a killed driver's; we hold the lock
        if old is not None and old.file_deals and options.file_deals and options.file_deals != old.file_deals:
            raise RunDirError(f"--file-deals {options.file_deals}: the run in {out} uses {old.file_deals}")
        base_config = old.config if old is not None else config
        manifest = Manifest(
            config=base_config,
            deals=merge([*(old.deals if old else ()), *(() if options.retry_limits else options.deals)]),
            file_deals=old.file_deals if old else check_file_deals(options.file_deals or default_file_deals(config)),
            provenance=Provenance.current(),
            history=list(old.history) if old else [],
            passes=list(old.passes) if old else [],
        )
        for h in manifest.history:
            if h.status == "running":
                h.status = "killed"
                print(
                    f"note: the invocation started {h.started_at} ended without a final status "
                    f"({describe_holder(lock.previous)} is gone); taking the run over",
                    file=note,
                )
        record = Invocation(
            kind="retry-limits" if options.retry_limits else "run",
            command=list(options.command),
            deals=format_deals(options.deals) if not options.retry_limits else "limit rows",
            started_at=now_iso(),
            pid=os.getpid(),
            limits=limits_dict(config),
        )
        manifest.history.append(record)
        # Room for the final status even if the run's output fills the disk:
        # the manifest is rewritten through a temporary copy, so twice its
        # size and a margin for what the run adds to it.
        lock.reserve(2 * len(manifest.to_json()) + RESERVE_MARGIN)
        write_manifest(out, manifest)
    except BaseException:
        lock.release()
        raise
    return lock, manifest, record


def _reconcile(out: Path, manifest: Manifest, note: TextIO) -> RunState:
    """Brings the index in line with the disk: data files the index lacks are
    checked by the one reader and indexed (or deleted when bad), entries whose
    file is gone are dropped, parts of sealed ranges are deleted."""
    state = run_state(out, manifest)
    changed = bool(state.lost or state.changed)
    for e in state.lost:
        print(f"{e.file}: listed in the index but missing on disk; its deals are solved again", file=note)
    for e in state.changed:
        print(f"{e.file}: changed on disk since it was written; removing it, its deals are solved again", file=note)
        (out / e.file).unlink(missing_ok=True)
    entries = {e.file: e for e in state.sealed}
    for rel in state.unindexed:
        try:
            entry = check_file(out / rel, manifest.config)
        except FileInvalid as e:
            print(f"{rel}: not a valid data file of this run ({e.reason}); removing it, its deals are solved again", file=note)
            (out / rel).unlink(missing_ok=True)
            continue
        if not (entry.deals.start >= 1 and all(entry.end < x.start or entry.start > x.end for x in entries.values())):
            print(f"{rel}: overlaps another data file; removing it", file=note)
            (out / rel).unlink(missing_ok=True)
            continue
        entries[rel] = entry
        changed = True
    for stray in state.disk.strays:
        print(f"note: {stray} is not part of the run (ignored; readers of the directory may trip on it)", file=note)
    if changed:
        rewrite_index(out, entries.values())
        state = run_state(out, manifest)
    covered = state.covered()
    for r, p in state.disk.parts:
        if intersect([r], covered):
            p.unlink(missing_ok=True)
    return state


@dataclass
class RedoBudget:
    """How often the same deals' part may be rejected by the seal and solved
    again (a worker lost mid-write, a damaged disk, a part an older version
    wrote) before the driver gives up on their file: rows that fail their
    checks again on fresh searches mean a check and the solver disagree,
    which more searches do not mend. Each part is counted apart, since a
    seal reports one bad part at a time."""

    limit: int = 2
    used: dict[tuple[DealRange, ...], int] = field(default_factory=dict)

    def allow(self, redo: tuple[DealRange, ...]) -> bool:
        """Whether the deals of `redo` may be solved again; counts the attempt.

        >>> b = RedoBudget(limit=1)
        >>> a, c = (DealRange(1, 10),), (DealRange(11, 20),)
        >>> [b.allow(a), b.allow(a), b.allow(c)]
        [True, False, True]
        """
        self.used[redo] = self.used.get(redo, 0) + 1
        return self.used[redo] <= self.limit


def _probe_address(address: str, timeout: float) -> None:
    """Fails fast (exit 2) when a ``host:port`` address does not accept a TCP
    connection within `timeout` seconds, instead of Ray's minutes of retries."""
    m = re.fullmatch(r"(?:ray://)?\[?([^\]]+?)\]?:(\d+)", address.strip())
    if m is None:
        return
    host, port = m.group(1), int(m.group(2))
    try:
        with socket.create_connection((host, port), timeout=timeout):
            pass
    except OSError as e:
        why = "timed out" if isinstance(e, TimeoutError) else (e.strerror or str(e))
        raise AnalyzerError(f"cannot reach the Ray cluster at {address} ({why}; waited at most {timeout:g} s)") from None


def _ray_address(address: str | None) -> str:
    """The cluster a run joins: `address`, else ``$RAY_ADDRESS``, else
    ``"local"`` (a new Ray on this machine)."""
    return address or os.environ.get("RAY_ADDRESS") or "local"


def _init_kwargs(addr: str, *, off_main: bool) -> dict[str, object]:
    """`ray.init`'s arguments for `addr`, called in a thread other than the
    main one when `off_main`. Ray warns on every start that token
    authentication is off: a local run and a cluster that chose no token
    need no such line each time."""
    logging.getLogger("ray._private.authentication.authentication_token_setup").setLevel(logging.ERROR)
    if off_main:
        # Ray says it sets no SIGTERM handler off the main thread: the
        # driver sets its own.
        logging.getLogger("ray._private.worker").setLevel(logging.ERROR)
    kwargs: dict[str, object] = {"address": addr, "logging_level": logging.WARNING, "log_to_driver": True}
    if addr == "local":
        # "local": a new Ray on this machine with all its cores, never an
        # unrelated cluster some other process left running here.
        kwargs["include_dashboard"] = False
    return kwargs


def _connect_error(addr: str, e: BaseException) -> BaseException:
    """`ray.init`'s failure as one line (exit 2); an interrupt stays one."""
    if not isinstance(e, Exception):
        return e
    lines = str(e).strip().splitlines()
    why = lines[0] if lines else type(e).__name__
    if addr == "local":
        return AnalyzerError(f"cannot start Ray on this machine: {type(e).__name__}: {why}")
    if isinstance(e, (ConnectionError, ValueError, RuntimeError, OSError)):
        return AnalyzerError(f"cannot connect to the Ray cluster at {addr!r}: {why}")
    return e


def connect(
    address: str | None,
    timeout: float = CONNECT_TIMEOUT,
    on_give_up: Callable[[], object] | None = None,
) -> bool:
    """Starts or joins Ray unless this process already did (tests, notebooks).
    Returns whether this call connected (and the caller must shut down).
    Joining gives up after `timeout` seconds (exit 2), after calling
    `on_give_up` (the driver records the run's status there). A local Ray
    an earlier run of this process left starting is waited out first."""
    import ray

    if _last_start is not None and _last_start.abandoned:
        _last_start.wait_gone()
    if ray.is_initialized():
        return False
    addr = _ray_address(address)
    kwargs = _init_kwargs(addr, off_main=addr != "local")
    done = threading.Event()

    def watchdog() -> None:
        if not done.wait(timeout + 30):
            print(f"freecell-analyzer: error: the Ray cluster at {addr!r} did not answer within {timeout + 30:g} s", file=sys.stderr, flush=True)
            if on_give_up is not None:
                on_give_up()
            os._exit(EXIT_USAGE)

    def join() -> None:
        try:
            ray.init(**kwargs)  # type: ignore[arg-type]
        except BaseException as e:  # handed to the caller's thread
            failure.append(e)
        finally:
            done.set()

    failure: list[BaseException] = []
    if addr != "local":
        _probe_address(addr, timeout)
        threading.Thread(target=watchdog, daemon=True).start()
    if addr == "local":
        # Ray's processes die with the thread that started them
        # (PR_SET_PDEATHSIG): a local Ray is started by this one.
        join()
    else:
        # Joining blocks in native code, where no Python signal handler
        # runs: it happens in a thread of its own while this one waits, so
        # SIGINT and SIGTERM still end the driver at once.
        threading.Thread(target=join, daemon=True).start()
        while not done.wait(0.2):
            _check_stop()
    if failure:
        raise _connect_error(addr, failure[0]) from failure[0]
    return True


class RayStart(Protocol):
    """Ray coming up in the background (`LocalRayStart`)."""

    failure: BaseException | None
    t_start: float
    t_up: float

    @property
    def up(self) -> bool: ...

    def stop(self) -> None: ...


def _proc_parents() -> dict[int, int]:
    """Each process's parent, by PID (from /proc; empty where there is none)."""
    parents: dict[int, int] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return parents
    for name in names:
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as f:
                    parents[int(name)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):  # gone meanwhile
                pass
    return parents


def _children(parents: dict[int, int]) -> list[int]:
    """This process's children in `parents` (`_proc_parents`)."""
    me = os.getpid()
    return [pid for pid, parent in parents.items() if parent == me]


def _descendants(roots: set[int], parents: dict[int, int]) -> set[int]:
    """`roots` and every process below them in `parents`.

    >>> sorted(_descendants({2}, {2: 1, 3: 2, 4: 3, 5: 1}))
    [2, 3, 4]
    """
    out, grew = set(roots), True
    while grew:
        more = {pid for pid, parent in parents.items() if parent in out} - out
        out |= more
        grew = bool(more)
    return out


#: The nice value of a local Ray that starts while the driver solves
#: (`LocalRayStart`): the lowest CPU priority.
LOCAL_RAY_NICE: Final = 19


def _lowest_priority() -> None:
    """Gives the calling thread, and every process it starts from now on,
    the lowest CPU priority (`LOCAL_RAY_NICE`). On Linux only, where a
    thread has a nice value of its own that the processes it forks inherit
    (elsewhere the call would change the whole process, or nothing)."""
    if sys.platform.startswith("linux"):
        try:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), LOCAL_RAY_NICE)
        except OSError:  # not allowed here: the start goes on at the usual priority
            pass


class LocalRayStart:
    """A new local Ray, started in a thread of its own while the driver
    solves the run's first tasks itself (`DriverLane`), so that no core
    waits for Ray's start (2 to 4 s on a small machine, most of it Ray's
    processes starting one after another and polling each other).

    The thread runs at the lowest CPU priority (`_lowest_priority`), and so
    do the processes of the Ray it starts (its GCS, raylet, agents and
    workers), so that Ray's start, 3 s of CPU on 2 cores, takes no core from
    the driver's solving (on a 2-core machine the driver's first tasks took
    twice as long beside it); once Ray is up its workers solve at that
    priority, which costs nothing on a machine with nothing else to run and
    leaves the user's other programs first.

    The thread lives as long as the Ray it started: Ray's processes die with
    the thread that started them (PR_SET_PDEATHSIG). `stop` shuts a Ray that
    came up down; a start still under way when the run no longer needs it
    is abandoned: its thread shuts it down once up, and a process that exits
    first takes Ray's half-started processes with it."""

    def __init__(self, wake: threading.Event) -> None:
        self._wake = wake
        self._lock = threading.Lock()
        self._settled = threading.Event()
        self._release = threading.Event()
        self._abandoned = False
        self._up = False
        self.failure: BaseException | None = None
        self.t_start = time.monotonic()
        self.t_up = 0.0
        self._children_before = set(_children(_proc_parents()))
        atexit.register(self._end_abandoned)
        self._thread = threading.Thread(target=self._main, name="ray-start", daemon=True)
        self._thread.start()

    def _main(self) -> None:
        _lowest_priority()
        try:
            import ray

            # Ray's exit handler (registered when Ray is first imported)
            # shuts Ray down at exit even while this thread is still inside
            # `ray.init`, whose start then fails in Ray's log ("'NoneType'
            # object has no attribute 'internal_kv_get'", while it waits for
            # its API server). Registered after it, this runs first.
            atexit.register(self._silence_if_abandoned)
            ray.init(**_init_kwargs("local", off_main=True))  # type: ignore[arg-type]
        except BaseException as e:
            with self._lock:
                self.failure = None if self._abandoned else _connect_error("local", e)
            self._settled.set()
            self._wake.set()
            return
        with self._lock:
            self._up = not self._abandoned
            self.t_up = time.monotonic()
        self._settled.set()
        self._wake.set()
        if self._up:
            self._release.wait()  # `stop` has shut Ray down by then
        else:
            disconnect()

    @property
    def up(self) -> bool:
        """Whether Ray is up (and this driver connected to it)."""
        return self._up

    def stop(self) -> None:
        """Ends this Ray: shuts it down when up, else abandons its start."""
        with self._lock:
            self._abandoned = True
            up = self._up
        if up:
            disconnect()
            self._release.set()
            self._thread.join()

    def adopt(self, wake: threading.Event) -> bool:
        """Takes over an abandoned start still under way (a second run in
        the same process soon after the first); False when it is settled."""
        with self._lock:
            if not self._abandoned or self._settled.is_set():
                return False
            self._abandoned, self._wake = False, wake
            self.t_start = time.monotonic()
        return True

    @property
    def abandoned(self) -> bool:
        """Whether no run wants this start any more (`stop` came first)."""
        return self._abandoned

    def _abandoned_under_way(self) -> bool:
        """Whether no run wants this start and it has not settled (the exit
        handlers' case)."""
        with self._lock:
            return self._abandoned and not self._settled.is_set()

    def _silence_if_abandoned(self) -> None:
        """At exit: no run wants this start any more, so nothing Ray logs
        about it (its own shutdown cutting it short) is the user's concern."""
        if self._abandoned_under_way():
            logging.getLogger("ray").setLevel(logging.CRITICAL + 1)

    def _end_abandoned(self) -> None:
        """At exit: kills the processes of this start when it was abandoned
        and is still under way. Its GCS and raylet would die with this
        process anyway, but the agents the raylet starts outlive it by a
        minute (they only poll for it). The processes are this process's
        children born since the start began, and theirs."""
        if not self._abandoned_under_way():
            return
        parents = _proc_parents()
        ours = set(_children(parents)) - self._children_before
        for pid in _descendants(ours, parents):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)

    def wait_gone(self) -> None:
        """Waits until this start's thread has ended (and with it its Ray)."""
        self._thread.join()


#: The last local start of this process, which a later run may adopt.
_last_start: LocalRayStart | None = None


def _local_start(wake: threading.Event) -> LocalRayStart:
    """A local Ray starting in the background: the start a previous run of
    this process abandoned when it is still under way, else a new one (once
    the previous one's Ray is gone: two starts at once would collide)."""
    global _last_start
    prev = _last_start
    if prev is not None:
        if prev.adopt(wake):
            return prev
        prev.wait_gone()
    _last_start = LocalRayStart(wake)
    return _last_start


def _lane_threads(config: RunConfig, cpus: int) -> int:
    """How many tasks the driver may solve at once while its local Ray starts
    (`DriverLane`): one per CPU of this machine, as long as the memory a task
    asks for, once more for each of them beside Ray's CPUs' tasks (a task
    the driver has begun finishes after Ray is up), stays within the 70 % of
    this machine's memory a local Ray offers; 0 when not even one fits (a
    run whose limits make memory, not CPUs, bound the tasks in flight
    leaves it all to Ray)."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 0
    fit = int(0.7 * total) // max(1, config.task_memory()) - cpus
    return max(0, min(cpus, fit))


class LocalTaskError(Exception):
    """A task the driver ran itself (`DriverLane`) raised `cause`: the
    driver's counterpart of Ray's ``RayTaskError`` for a worker's task."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(f"{type(cause).__name__}: {cause}")
        self.cause = cause


class LocalRef:
    """A task given to the `DriverLane`, kept in the driver's table of tasks
    in flight beside Ray's object references."""

    def __init__(self, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
        self.fn, self.args = fn, args
        self.result: Any = None
        self.error: BaseException | None = None


#: Seconds the `DriverLane` solves on every CPU while a local Ray starts;
#: after that it leaves one to Ray's start, which at the lowest priority
#: would get none (a 1,000,000-deal run was done by the driver alone, Ray
#: up after 52 s), unless it is about to finish the run
#: (`lane_finishes_first`). About a local Ray's start on an idle small
#: machine (2 to 3 s), so that a run of some tens of thousands of deals is
#: done first.
LANE_ALL_CORES_S: Final = 3.0


def lane_finishes_first(remaining: int, solved: int, elapsed: float) -> bool:
    """Whether the `DriverLane`, having solved `solved` deals in `elapsed`
    seconds on every CPU, would solve the run's `remaining` deals within
    twice `LANE_ALL_CORES_S` more: it then keeps every CPU instead of
    leaving one to Ray's start, which on one CPU would take about that long
    to bring up Ray and its workers, after the run is done (a 32,000-deal
    run's last two tasks ran one after the other).

    >>> lane_finishes_first(16_000, 16_000, 2.8), lane_finishes_first(84_000, 16_000, 3.0)
    (True, False)
    >>> lane_finishes_first(1, 0, 3.0)  # nothing finished yet: no rate to judge by
    False
    """
    if solved <= 0 or elapsed <= 0:
        return False
    return remaining * elapsed / solved <= 2 * LANE_ALL_CORES_S


#: What the lane's tasks import on their first call (`jobs.task.run_part`,
#: `seal_unit`), pandas included: pyarrow imports it, when installed, on its
#: first conversion to or from numpy or Python values (0.2 to 0.3 s), which
#: a file's seal makes (a solving task makes none).
_TASK_IMPORTS: Final = ("pyarrow.parquet", "pyarrow.compute", "analyzer._engine", "jobs.chunks", "jobs.runformat", "pandas")


def _warm_imports() -> None:
    """Imports `_TASK_IMPORTS` while the `DriverLane`'s first tasks are in
    the engine (which holds no GIL), instead of in one of those tasks while
    the others wait for the same module. A module that does not import is
    left to the task, which reports it."""
    for name in _TASK_IMPORTS:
        try:
            importlib.import_module(name)
        except Exception:
            pass


class DriverLane:
    """Runs the run's tasks in the driver process, in `threads` threads of
    its own (the engine releases the GIL, so they solve on as many cores),
    while the main thread goes on waiting, reading signals and handing Ray
    its tasks. The same functions as on Ray's workers (`jobs.task.run_part`,
    `seal_unit`), so a part or a file is the same bytes whoever wrote it. A
    task the lane has not finished when the driver gives up is abandoned
    like a Ray task in flight: a part it completes is valid (written under a
    temporary name, then renamed) and the next run keeps it."""

    def __init__(self, wake: threading.Event, threads: int = 1) -> None:
        self._wake = wake
        self._todo: collections.deque[LocalRef] = collections.deque()
        self._cv = threading.Condition()
        self._finished: list[LocalRef] = []
        self._threads = max(1, threads)
        self._active = self._threads  # threads that may run a task (`narrow`)
        self._running = 0
        threading.Thread(target=_warm_imports, name="driver-lane-imports", daemon=True).start()
        for i in range(self._threads):
            threading.Thread(target=self._main, name=f"driver-lane-{i}", daemon=True).start()

    @property
    def full(self) -> bool:
        """Whether every thread has a task and another waiting (the lane
        takes no more): a thread that finishes a task takes the next at
        once, without waiting for the driver's loop, which is slow to
        answer while Ray's start holds the GIL importing Ray."""
        with self._cv:
            return len(self._todo) + self._running >= 2 * self._active

    @property
    def idle(self) -> bool:
        """Whether the lane has no task, waiting or running."""
        with self._cv:
            return not self._todo and self._running == 0

    def submit(self, fn: Callable[..., Any], *args: Any) -> LocalRef:
        ref = LocalRef(fn, args)
        with self._cv:
            self._todo.append(ref)
            self._cv.notify()
        return ref

    def run_aside(self, fn: Callable[..., Any], *args: Any) -> LocalRef:
        """Runs `fn` in a thread of its own, beside the lane's threads (a
        call that mostly waits, such as a local stream's `finish`), its end
        reported as the lane's tasks are."""
        ref = LocalRef(fn, args)
        threading.Thread(target=self._run, args=(ref, False), name="driver-lane-aside", daemon=True).start()
        return ref

    def _run(self, ref: LocalRef, counted: bool) -> None:
        try:
            ref.result = ref.fn(*ref.args)
        except BaseException as e:  # handed to the driver's loop
            ref.error = LocalTaskError(e)
        with self._cv:
            self._finished.append(ref)
            if counted:
                self._running -= 1
                self._cv.notify()  # a thread held back by `narrow` may start
        self._wake.set()

    def withdraw(self) -> list[LocalRef]:
        """Takes back the tasks no thread has begun, in the order given
        (Ray takes them once up: a long task waiting here would otherwise
        run after Ray's workers have nothing left to do)."""
        with self._cv:
            taken, self._todo = list(self._todo), collections.deque()
        return taken

    def narrow(self, threads: int) -> None:
        """From now on at most `threads` tasks run at once (at least one)."""
        with self._cv:
            self._active = max(1, min(threads, self._threads))

    def _main(self) -> None:
        while True:
            with self._cv:
                while not self._todo or self._running >= self._active:
                    self._cv.wait()
                ref = self._todo.popleft()
                self._running += 1
            self._run(ref, True)

    def take_finished(self) -> list[LocalRef]:
        """The tasks finished since the last call."""
        with self._cv:
            done, self._finished = self._finished, []
        return done


def disconnect() -> None:
    """Leaves Ray the way `connect` joined it: `ray.shutdown`, which also
    stops a local Ray this process started. Before that it kills the local
    Ray's autoscaler monitor, which has nothing to scale on one machine and
    does not exit on Ray's SIGTERM within the grace second `ray.shutdown`
    then waits out (measured: 1.0 s of a 1.3 s shutdown, on every run). The
    monitor is found through Ray's node object, an internal of Ray: when a
    Ray version lacks it, shutdown simply takes that second."""
    import ray

    monitors: list[Any] = []
    try:
        node = ray._private.worker._global_node
        monitors = list(node.all_processes.get("monitor", [])) if node is not None and node.is_head() else []
    except AttributeError:  # another Ray version's internals
        pass
    for info in monitors:
        try:
            info.process.kill()
            info.process.wait(timeout=1)
        except (OSError, subprocess.TimeoutExpired):
            pass
    ray.shutdown()


def run(
    options: RunOptions,
    *,
    on_chunk: Callable[[TaskSummary], None] | None = None,
    stream: TextIO | None = None,
    ray_start: Callable[[threading.Event], RayStart] | None = None,
) -> RunOutcome:
    """Runs (or resumes) a batch; returns what happened with its exit code.

    Raises `AnalyzerError` subclasses (one line, exit 2) for a bad output
    directory or a directory another driver holds, and `StorageError` when
    the directory cannot be written. `on_chunk` is called on the driver
    after each solving task (tests use it to disturb a run at a known point).
    `ray_start` stands in for `LocalRayStart` (tests: the driver solves
    until they say Ray is up)."""
    err = stream or sys.stderr
    # Information (start, progress, notes, the final line) goes to `note`;
    # errors and warnings always to `err`.
    note: TextIO = err if options.verbosity >= 0 else io.StringIO()
    t_start = time.monotonic()
    lock, manifest, record = _prepare(options, note)
    out = options.out
    outcome = RunOutcome("running", EXIT_OK)

    def finish(status: str, code: int) -> RunOutcome:
        record.finished_at = now_iso()
        record.wall_s = round(time.monotonic() - t_start, 3)
        record.status = status
        record.deals_done = outcome.deals_done
        lock.free_reserve()
        try:
            write_manifest(out, manifest)
        except StorageError as e:
            print(f"freecell-analyzer: error: {e}", file=err)
            code = code if code != EXIT_OK else EXIT_INCOMPLETE
        outcome.status, outcome.exit_code, outcome.wall_s = status, code, record.wall_s
        return outcome

    main = threading.current_thread() is threading.main_thread()
    old_handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)} if main else {}
    try:
        return _drive(options, manifest, outcome, finish, on_chunk, err, note, t_start, ray_start)
    except StorageError as e:
        print(f"freecell-analyzer: error: {e}" + ("; free space, then run the same command again to resume" if e.resumable else ""), file=err)
        return finish("incomplete" if e.resumable else "failed", EXIT_INCOMPLETE if e.resumable else EXIT_USAGE)
    except AnalyzerError as e:
        print(f"freecell-analyzer: error: {e}", file=err)
        return finish("failed", e.exit_code)
    finally:
        for sig, handler in old_handlers.items():
            signal.signal(sig, handler)
        lock.release()


def _drive(
    options: RunOptions,
    manifest: Manifest,
    outcome: RunOutcome,
    finish: Callable[[str, int], RunOutcome],
    on_chunk: Callable[[TaskSummary], None] | None,
    err: TextIO,
    note: TextIO,
    t_start: float,
    ray_start: Callable[[threading.Event], RayStart] | None = None,
) -> RunOutcome:
    out, config = options.out, manifest.config.spilling_to(options.config.limits.spill_dir)
    state = _reconcile(out, manifest, note)
    if options.retry_limits:
        return _retry_pass(options, manifest, state, outcome, finish, err, note, t_start)
    covered = state.covered()
    todo_ranges = subtract(options.deals, covered)
    total = count(options.deals)
    todo_deals = count(todo_ranges)
    parts = sorted(state.disk.parts)
    done_parts = count(intersect(todo_ranges, [r for r, _ in parts]))
    done0 = total - todo_deals + done_parts
    if not todo_ranges:
        print(f"nothing to do: all {total} deals of {format_deals(options.deals)} are already in {out}", file=note)
        return finish("complete", EXIT_OK)

    we_connected = False
    pending: dict[Any, _InFlight] = {}  # Ray's object references and the lane's `LocalRef`s
    progress: Progress | None = None
    starting: RayStart | None = None
    lane: DriverLane | None = None
    narrow_at = math.inf  # when the lane leaves a core to Ray's start
    wake = threading.Event()  # set by the lane and the local start when they have news
    try:
        _catch_signals()  # a signal while Ray starts or is joined
        # Ray is imported (and initialized) only if this process did it; an
        # earlier run's abandoned start may still be importing it (a module
        # partly initialized, without `is_initialized` yet: not initialized).
        initialized = getattr(sys.modules.get("ray"), "is_initialized", None)
        local = _ray_address(options.address) == "local" and not (initialized is not None and initialized())
        cpus = _local_cpus()
        threads = _lane_threads(config, cpus) if options.driver_solves and local else 0
        if ray_start is not None or threads > 0:
            # A local Ray starts in the background; the driver solves until it is up.
            starting, lane = (ray_start or _local_start)(wake), DriverLane(wake, max(1, threads))
            narrow_at = time.monotonic() + LANE_ALL_CORES_S
        else:
            we_connected = connect(
                options.address,
                options.connect_timeout,
                lambda: finish("failed", EXIT_USAGE),
            )
            _catch_signals(fresh=False)  # after Ray's start, which installs its own handlers
            cpus = _ray_ready(config)
        window = options.max_in_flight or max(2, 2 * cpus)
        size = task_size(todo_deals - done_parts, cpus, config, options.task_deals)
        outcome.task_deals = size
        print(
            f"run {format_deals(options.deals)} -> {out}: {config.describe()}; {todo_deals - done_parts} deals to do "
            f"({done0} already done) in tasks of up to {size} deals, files of {manifest.file_deals} deals; "
            f"{cpus} CPUs, {window} tasks in flight" + ("; the driver solves while Ray starts" if lane else ""),
            file=note,
            flush=True,
        )
        solve: Any = None
        sealer: Any = None
        config_json = config.canonical_json()
        prov = manifest.provenance.as_dict()
        out_abs = os.fspath(out.resolve())
        progress = Progress(total, done0, state.outcome_counts(), options.progress_interval, note)
        index = IndexWriter(out)
        units = file_units(todo_ranges, manifest.file_deals)
        queue: collections.deque[tuple[DealRange, DealRange]] = collections.deque()
        open_units: dict[DealRange, int] = {}
        seals: collections.deque[DealRange] = collections.deque()
        exhausted = False
        last_progress = time.monotonic()
        memory = config.task_memory()
        redos = RedoBudget()
        streams = _Streams((config_json, prov, out_abs), lane)

        unqueued = todo_deals - done_parts  # deals of the run no task is queued for yet

        def refill() -> None:
            nonlocal exhausted, unqueued
            while not exhausted and len(queue) < window:
                unit = next(units, None)
                if unit is None:
                    exhausted = True
                    return
                have = [r for r, _ in parts if r.start >= unit.start and r.end <= unit.end]
                tasks = [t for rest in subtract([unit], have) for t in _split(rest, size)]
                unqueued -= sum(len(t) for t in tasks)
                tasks = taper(tasks, unqueued, size, cpus)
                open_units[unit] = len(tasks)
                if not tasks:
                    seals.append(unit)
                else:
                    streams.open(unit, have, len(tasks))
                queue.extend((unit, t) for t in tasks)

        def sealed_all(unit: DealRange) -> None:
            """The unit's parts are all there: its stream finishes, or it is sealed."""
            ref = streams.finish(unit)
            if ref is None:
                seals.append(unit)
            else:
                pending[ref] = _InFlight("seal", unit, unit, time.monotonic(), streamed=True)

        while True:
            wake.clear()  # news from here on ends the wait below at once
            if starting is not None and solve is None and (starting.up or starting.failure is not None):
                if starting.failure is not None:
                    raise starting.failure
                _catch_signals(fresh=False)
                cpus = _ray_ready(config)
                window = options.max_in_flight or max(2, 2 * cpus)
                outcome.ray_up_s = round(starting.t_up - t_start, 3)
                if options.verbosity > 0:
                    progress.write(
                        f"Ray up after {starting.t_up - starting.t_start:.1f} s ({cpus} CPUs); "
                        f"the driver solved {outcome.driver_deals} deals meanwhile"
                    )
            if lane is not None and solve is None and time.monotonic() >= narrow_at:
                # Ray's start, at the lowest priority, gets no CPU while the
                # lane uses them all: from now on it has one, unless the
                # lane is about to finish the run on all of them.
                remaining = todo_deals - done_parts - outcome.deals_done
                elapsed = time.monotonic() - narrow_at + LANE_ALL_CORES_S  # since the lane began
                if not lane_finishes_first(remaining, outcome.driver_deals, elapsed):
                    lane.narrow(cpus - 1)
                narrow_at = math.inf
            if solve is None and (starting is None or starting.up):
                import ray

                solve = ray.remote(num_cpus=1, max_retries=MAX_RETRIES, retry_exceptions=False)(run_part)
                # No CPU or memory reserved for sealing: it is short and mostly I/O,
                # and a reservation let the solving tasks always queued behind the
                # window take every freed CPU first (a 10M run sealed nothing).
                sealer = ray.remote(num_cpus=0, max_retries=MAX_RETRIES, retry_exceptions=False)(seal_unit)
                streams.ray_up()
                if lane is not None:  # what the lane has not begun goes to Ray, first
                    for taken in reversed(lane.withdraw()):
                        back = pending.pop(taken)
                        if back.kind == "seal":
                            seals.appendleft(back.unit)
                        else:
                            queue.appendleft((back.unit, back.deals))
            refill()
            while len(pending) < window and (seals or queue):
                # Before Ray is up the lane takes a task per thread; after,
                # Ray takes them all.
                if solve is None and (lane is None or lane.full):
                    break
                ref: Any
                if seals:
                    u = seals.popleft()
                    args = (u.start, u.end, config_json, prov, out_abs)
                    ref = lane.submit(seal_unit, *args) if solve is None and lane else sealer.options(name=f"seal deals {u}").remote(*args)
                    pending[ref] = _InFlight("seal", u, u, time.monotonic())
                else:
                    u, r = queue.popleft()
                    args = (r.start, r.end, config_json, prov, out_abs)
                    ref = (
                        lane.submit(run_part, *args)
                        if solve is None and lane
                        else solve.options(name=f"deals {r}", memory=memory).remote(*args)
                    )
                    pending[ref] = _InFlight("solve", u, r, time.monotonic())
            if not pending:
                break
            ready = _wait_any(pending, lane, wake, 1.0 if progress.bar is None else 0.5)
            for ref in ready:
                flight = pending.pop(ref)
                try:
                    result = _result(ref)
                except Exception as e:
                    kind = classify_failure(e)
                    if kind in ("environment", "storage"):
                        progress.close()
                        _cancel(pending)
                        if kind == "storage":
                            cause = _cause(e)
                            raise cause if isinstance(cause, StorageError) else StorageError(_first_line(e), True) from None
                        print(f"freecell-analyzer: error: {_first_line(e)}", file=err)
                        if "ModuleNotFoundError" in str(e):
                            print(SHIP_HINT, file=err)
                        return finish("failed", EXIT_FAILURE)
                    if flight.streamed:  # the actor failed: the usual seal instead
                        streams.drop(flight.unit)
                        seals.append(flight.unit)
                        continue
                    outcome.failed.append((flight.deals, f"{kind}: {_first_line(e)}"))
                    print(f"{flight.kind} of deals {flight.deals} failed ({kind}): {_first_line(e)}", file=err)
                    open_units.pop(flight.unit, None)
                    continue
                last_progress = time.monotonic()
                if flight.kind == "solve":
                    summary = cast(TaskSummary, result)
                    outcome.solve_s += summary["solve_s"]
                    outcome.write_s += summary["write_s"]
                    outcome.deals_done += len(flight.deals)
                    if isinstance(ref, LocalRef):
                        outcome.driver_deals += len(flight.deals)
                    outcome.tasks_done += 1
                    outcome.max_worker_rss = max(outcome.max_worker_rss, summary["max_rss_bytes"])
                    for k, n in summary["outcomes"].items():
                        outcome.outcomes[k] = outcome.outcomes.get(k, 0) + n
                    if options.verbosity > 0:
                        progress.write(
                            f"deals {flight.deals} done on {summary['node']}: "
                            + " ".join(f"{k} {summary['outcomes'].get(k, 0)}" for k in OUTCOMES)
                            + f"; solved in {summary['solve_s']:.1f} s, written in {summary['write_s']:.2f} s"
                        )
                    progress.advance(len(flight.deals), summary["outcomes"])
                    if flight.unit in open_units:
                        streams.part_done(flight.unit, flight.deals)
                        open_units[flight.unit] -= 1
                        if open_units[flight.unit] == 0:
                            sealed_all(flight.unit)
                    if on_chunk is not None:
                        on_chunk(summary)
                else:
                    sealed = cast(SealResult, result)
                    streams.drop(flight.unit)
                    outcome.max_worker_rss = max(outcome.max_worker_rss, sealed["max_rss_bytes"])
                    if sealed["entry"] is not None:
                        index.append(FileEntry.from_json(sealed["entry"]))
                        outcome.files_sealed += 1
                        open_units.pop(flight.unit, None)
                        if options.verbosity > 0:
                            how = "written while its parts were solved" if flight.streamed else "its parts merged"
                            progress.write(f"file of deals {flight.unit} sealed ({how})")
                    elif not redos.allow(tuple(DealRange(a, b) for a, b in sealed["redo"])):
                        # The same deals' part rejected again: new searches
                        # give the same rows, so a check and the solver disagree.
                        why = f"application: the parts were rejected {redos.limit + 1} times: {sealed['reason']}"
                        outcome.failed.append((flight.unit, why))
                        print(f"seal of deals {flight.unit} failed ({why})", file=err)
                        open_units.pop(flight.unit, None)
                    else:
                        redo = [DealRange(a, b) for a, b in sealed["redo"]]
                        print(f"deals {flight.unit}: {sealed['reason']}; solving {format_deals(redo)} again", file=note)
                        progress.advance(-count(redo), {})
                        tasks = [t for r in redo for t in _split(r, size)]
                        open_units[flight.unit] = len(tasks)
                        queue.extendleft((flight.unit, t) for t in reversed(tasks))
            progress.tick()
            _check_stop()
            idle = time.monotonic() - last_progress
            if pending and options.stall_timeout > 0 and idle >= options.stall_timeout:
                progress.close()
                now = time.monotonic()
                stuck = ", ".join(
                    f"{f.kind} deals {f.deals} (submitted {now - f.submitted:.0f} s ago)"
                    for f in sorted(pending.values(), key=lambda f: f.deals)
                )
                print(
                    f"freecell-analyzer: no task finished for {idle:.0f} s (--stall-timeout {options.stall_timeout:g}); "
                    f"still running: {stuck}. Finished work is kept: run the same command again to resume "
                    "(raise --stall-timeout, or lower --max-positions/--max-seconds for slow deals)",
                    file=err,
                )
                _cancel(pending)
                return finish("stalled", EXIT_INCOMPLETE)
        index.close()
        progress.tick(force=True)
        progress.close()
    except (KeyboardInterrupt, Terminated) as e:
        if progress is not None:
            progress.close()
        _cancel(pending)
        term = isinstance(e, Terminated)
        print(
            f"{'terminated (SIGTERM)' if term else 'interrupted'}: {outcome.deals_done} deals done in this run; "
            "finished work is kept, run the same command again to resume",
            file=err,
        )
        return finish("interrupted", EXIT_TERMINATED if term else EXIT_INTERRUPTED)
    finally:
        if we_connected:
            disconnect()
        if starting is not None:
            starting.stop()
    if outcome.failed:
        failed = format_deals([r for r, _ in outcome.failed], limit=10)
        app = any(why.startswith("application") for _, why in outcome.failed)
        print(
            f"incomplete: {len(outcome.failed)} tasks failed (deals {failed}); "
            + ("a task raised an error (a bug: see above)" if app else "run the same command again to resume"),
            file=err,
        )
        return finish("incomplete", EXIT_FAILURE if app else EXIT_INCOMPLETE)
    wall = time.monotonic() - t_start
    _print_answer(out, manifest, note)
    print(
        f"complete: {outcome.deals_done} deals in {wall:.1f} s "
        f"({outcome.deals_done / wall if wall > 0 else 0:.1f} deals/s), {outcome.files_sealed} files sealed, "
        f"peak worker RSS {outcome.max_worker_rss / 2**20:.0f} MiB; {out}",
        file=note,
    )
    return finish("complete", EXIT_OK)


def _retry_pass(
    options: RunOptions,
    manifest: Manifest,
    state: RunState,
    outcome: RunOutcome,
    finish: Callable[[str, int], RunOutcome],
    err: TextIO,
    note: TextIO,
    t_start: float,
) -> RunOutcome:
    """``--retry-limits``: re-solves the ``limit`` rows of every sealed file
    under the new budgets, one task per file that has any, optionally only on
    nodes with `options.node_resource`."""
    config = manifest.config.spilling_to(options.config.limits.spill_dir)
    limits = limits_dict(options.config)
    previous = manifest.passes[-1] if manifest.passes else limits_dict(config)
    if limits != previous or not manifest.passes:
        grows = [k for k in limits if _budget(limits.get(k)) > _budget(previous.get(k, 0 if k == "max_disk" else None))]
        shrinks = [k for k in limits if _budget(limits.get(k)) < _budget(previous.get(k, 0 if k == "max_disk" else None))]
        if shrinks or not grows:
            raise ConfigError(
                f"--retry-limits needs larger budgets than the last attempt's ({_limits_text(previous)}); "
                f"asked {_limits_text(limits)}"
            )
    new_pass = limits != previous or not manifest.passes
    attempt = len(manifest.passes) + 1 + new_pass
    if state.missing():
        print(f"note: {count(state.missing())} deals of the run are not solved yet; this pass re-solves limit rows only", file=note)
    files = [e for e in state.sealed if e.outcomes.get("limit", 0) > 0]
    todo = sum(e.outcomes.get("limit", 0) for e in files)
    if not files:
        print(f"nothing to do: no limit rows in {options.out}", file=note)
        return finish("complete", EXIT_OK)
    we_connected = False
    pending: dict[ObjectRef[Any], _InFlight] = {}
    redone = 0
    try:
        _catch_signals()  # a signal while Ray starts or is joined
        we_connected = connect(
            options.address,
            options.connect_timeout,
            lambda: finish("failed", EXIT_USAGE),
        )
        _catch_signals(fresh=False)
        import ray

        task_memory = options.config.task_memory()
        if options.node_resource:
            nodes = [n for n in ray.nodes() if n.get("Alive")]  # type: ignore[no-untyped-call]
            if not any(n.get("Resources", {}).get(options.node_resource, 0) > 0 for n in nodes):
                raise ConfigError(
                    f"--node-resource {options.node_resource}: no Ray node has that resource "
                    "(start the big nodes with `ray start --resources '{\"%s\": 1}'`)" % options.node_resource
                )
        _check_memory(options.config, options.node_resource)
        if new_pass:  # recorded once Ray can host it: a pass refused here leaves no trace
            manifest.passes.append(limits)
            write_manifest(options.out, manifest)
        print(
            f"retry-limits pass {attempt - 1} on {options.out}: {todo} limit rows in {len(files)} files, "
            f"budgets {_limits_text(limits)}" + (f", on nodes with resource {options.node_resource!r}" if options.node_resource else ""),
            file=note,
            flush=True,
        )
        cpus = int(ray.cluster_resources().get("CPU", 1))  # type: ignore[no-untyped-call]
        window = options.max_in_flight or max(2, 2 * cpus)
        # A file is scanned for its deals to re-solve, they are re-solved in
        # tasks (each deal written as a retry part as soon as it is done, so
        # an interrupted pass keeps it), and the file is rewritten with them.
        scanner = ray.remote(num_cpus=0, max_retries=MAX_RETRIES, retry_exceptions=False)(retry_scan)
        solver = ray.remote(num_cpus=1, max_retries=MAX_RETRIES, retry_exceptions=False)(retry_deals)
        sealer = ray.remote(num_cpus=0, max_retries=MAX_RETRIES, retry_exceptions=False)(retry_seal)
        resources = {options.node_resource: 0.001} if options.node_resource else None
        index = IndexWriter(options.out)
        prov = Provenance.current().as_dict()
        cfg = config.canonical_json()
        out_abs = os.fspath(options.out.resolve())
        counts = dict.fromkeys(OUTCOMES, 0)
        by_range = {e.deals: e for e in files}
        left: dict[DealRange, int] = {}  # deals of a file still being re-solved
        deals_q: collections.deque[tuple[DealRange, list[list[dict[str, Any]]]]] = collections.deque()
        scans = collections.deque(files)
        in_flight = 0  # solving tasks

        def seal(e: FileEntry) -> None:
            seal_ref = sealer.options(name=f"retry seal deals {e.deals}").remote(e.to_json(), cfg, prov, out_abs)
            pending[seal_ref] = _InFlight("seal", e.deals, e.deals, time.monotonic())

        while scans or deals_q or pending:
            while scans and len(pending) < window:
                e = scans.popleft()
                scan_ref = scanner.options(name=f"retry scan deals {e.deals}").remote(e.to_json(), cfg, limits, prov, out_abs)
                pending[scan_ref] = _InFlight("scan", e.deals, e.deals, time.monotonic())
            while deals_q and in_flight < window:
                unit, group = deals_q.popleft()
                first, last = int(group[0][0]["deal_number"]), int(group[-1][0]["deal_number"])
                solve_ref = solver.options(
                    name=f"retry limits deals {first}-{last}", memory=task_memory, resources=resources
                ).remote(group, cfg, limits, prov, out_abs)
                pending[solve_ref] = _InFlight("retry", unit, DealRange(first, last), time.monotonic())
                in_flight += 1
            ready, _ = ray.wait(list(pending), num_returns=1, timeout=1.0)
            _check_stop()
            for ref in ready:
                flight = pending.pop(ref)
                in_flight -= flight.kind == "retry"
                try:
                    result: Any = ray.get(ref)
                except Exception as ex:
                    kind = classify_failure(ex)
                    if kind == "storage":
                        cause = _cause(ex)
                        raise cause if isinstance(cause, StorageError) else StorageError(_first_line(ex), True) from None
                    outcome.failed.append((flight.deals, f"{kind}: {_first_line(ex)}"))
                    print(f"retry of deals {flight.deals} failed ({kind}): {_first_line(ex)}", file=err)
                    # The file stays as it is; its deals done stay in retry parts.
                    left.pop(flight.unit, None)
                    continue
                if flight.kind == "scan":
                    scan: RetryScan = result
                    redone += scan["done"]
                    if not scan["todo"]:
                        if scan["done"]:
                            seal(by_range[flight.unit])
                        continue
                    left[flight.unit] = len(scan["todo"])
                    size = max(1, -(-len(scan["todo"]) // max(64, 8 * cpus)))
                    for at in range(0, len(scan["todo"]), size):
                        deals_q.append((flight.unit, scan["todo"][at : at + size]))
                elif flight.kind == "retry":
                    done: list[tuple[int, str]] = result
                    redone += len(done)
                    for deal, outcomes in done:
                        if options.verbosity > 0:
                            print(f"deal {deal} re-solved: {outcomes}", file=note, flush=True)
                    if flight.unit in left:
                        left[flight.unit] -= len(done)
                        if left[flight.unit] == 0:
                            del left[flight.unit]
                            seal(by_range[flight.unit])
                else:
                    sealed: SealResult = result
                    if sealed["entry"] is None:
                        # A retry part failed the checks and was deleted: its deal again.
                        print(f"deals {flight.deals}: {sealed['reason']}; re-solving them", file=err)
                        scans.append(by_range[flight.unit])
                        continue
                    entry = FileEntry.from_json(sealed["entry"])
                    index.append(entry)
                    old = by_range[flight.unit]
                    for k, n in entry.outcomes.items():
                        counts[k] += n - old.outcomes.get(k, 0)
                        outcome.outcomes[k] = outcome.outcomes.get(k, 0) + n
                    if options.verbosity > 0:
                        print(f"deals {entry.deals} rewritten: " + " ".join(f"{k} {entry.outcomes.get(k, 0)}" for k in OUTCOMES), file=note)
                    outcome.files_sealed += 1
                    outcome.deals_done += old.outcomes.get("limit", 0)
        index.close()
    except (KeyboardInterrupt, Terminated) as ex:
        _cancel(pending)
        term = isinstance(ex, Terminated)
        print(
            f"interrupted: {redone} deals re-solved so far are kept (files rewritten, or waiting in {CONTROL_DIR}/{RETRY_DIR}); "
            "run the same command again to resume",
            file=err,
        )
        return finish("interrupted", EXIT_TERMINATED if term else EXIT_INTERRUPTED)
    finally:
        if we_connected:
            disconnect()
    if outcome.failed:
        print(f"incomplete: {len(outcome.failed)} tasks failed; run the same command again to resume", file=err)
        return finish("incomplete", EXIT_INCOMPLETE)
    left_rows = sum(e.outcomes.get("limit", 0) for e in run_state(options.out, manifest).sealed)
    _print_answer(options.out, manifest, note)
    print(
        f"complete: {todo} limit rows re-solved in {time.monotonic() - t_start:.1f} s; {left_rows} still limit "
        f"(in the files rewritten: {counts['solved']:+} solved, {counts['unsolvable']:+} unsolvable rows)",
        file=note,
    )
    return finish("complete", EXIT_OK)


def _print_answer(out: Path, manifest: Manifest, note: TextIO) -> None:
    """The run's answer (`jobs.check.answer_lines`), what its closing summary opens with."""
    for line in answer_lines(run_state(out, manifest)):
        print(line, file=note)


def _budget(value: float | None) -> float:
    """A budget for comparison: `None` is none at all (unbounded)."""
    return math.inf if value is None else value


def _limits_text(limits: dict[str, Any]) -> str:
    return ", ".join(f"{k} {v}" for k, v in limits.items())


def _local_cpus() -> int:
    """The CPUs a new local Ray will offer: those this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def _ray_ready(config: RunConfig) -> int:
    """Checks the limits against the cluster just joined; returns its CPUs."""
    import ray

    _check_memory(config)
    return int(ray.cluster_resources().get("CPU", 1))  # type: ignore[no-untyped-call]


def _wait_any(pending: dict[Any, _InFlight], lane: DriverLane | None, wake: threading.Event, timeout: float) -> list[Any]:
    """The tasks in `pending` that are finished, waiting up to `timeout`
    seconds for one, or less: the lane and a local start set `wake` when
    they have news."""
    remote = [ref for ref in pending if not isinstance(ref, LocalRef)]
    local = [ref for ref in pending if isinstance(ref, LocalRef)]
    if remote:
        import ray

        ready, rest = ray.wait(remote, num_returns=1, timeout=0.05 if local else timeout)
        if ready and rest:
            more, _ = ray.wait(rest, num_returns=len(rest), timeout=0)
            ready = ready + more
    else:
        wake.wait(timeout)
        ready = []
    return ready + (lane.take_finished() if lane is not None else [])


def _result(ref: Any) -> Any:
    """A finished task's value; raises its error."""
    if isinstance(ref, LocalRef):
        if ref.error is not None:
            raise ref.error
        return ref.result
    import ray

    return ray.get(ref)


def _cause(exc: BaseException) -> BaseException | None:
    from ray import exceptions as rex

    return exc.cause if isinstance(exc, rex.RayTaskError | LocalTaskError) else None


def _cancel(pending: dict[ObjectRef[Any], _InFlight]) -> None:
    """Abandons the tasks in flight. They are not `ray.cancel`-ed: a reply
    racing the cancellation can abort the driver inside Ray's core worker
    ("Tried to complete task that was not pending", seen with Ray 2.60),
    which would replace our exit code. Tasks share the fate of their owner,
    so they end when this driver disconnects; a part they finish before
    that is complete and valid (written under a temporary name, renamed when
    done), and the next run keeps it."""
    pending.clear()


def _check_memory(config: RunConfig, resource: str | None = None) -> None:
    """Refuses limits no node (with `resource`, if given) can host: the task
    would wait forever."""
    import ray

    need = config.task_memory()
    nodes = [n for n in ray.nodes() if n.get("Alive") and (resource is None or n.get("Resources", {}).get(resource, 0) > 0)]  # type: ignore[no-untyped-call]
    most = max((float(n.get("Resources", {}).get("memory", 0)) for n in nodes), default=0.0)
    if nodes and most and need > most:
        raise ConfigError(
            f"--max-bytes {config.limits.max_bytes} needs {need} bytes of memory per task, "
            f"but the largest Ray node{f' with resource {resource!r}' if resource else ''} offers {int(most)}; lower --max-bytes"
        )



# ---------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------


def summary_doc(options: RunOptions, outcome: RunOutcome) -> dict[str, object]:
    """The ``run --json`` summary: the run's answer so far (``headline``,
    as ``status --json`` has it; null when the directory cannot be read),
    the run directory, what was asked, and what this invocation did
    (README, "Machine-readable output")."""
    try:
        answer: dict[str, object] | None = answer_data(run_state(options.out))
    except AnalyzerError:
        answer = None
    return {
        "command": "run",
        "headline": answer,
        "out": os.fspath(options.out),
        "deals": format_deals(options.deals),
        "deals_requested": count(options.deals),
        "config_hash": options.config.config_hash(),
        **outcome.to_dict(),
    }


def handle_run(args: argparse.Namespace) -> int:
    """The ``run`` subcommand: returns the exit code; raises `AnalyzerError`
    for bad input (the CLI prints it and exits 2) and `StorageError` when
    the directory cannot be written before the run starts (exit 3 when the
    disk is full, else 2). With ``--json`` the summary goes to stdout as one
    JSON object, whatever the status."""
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
