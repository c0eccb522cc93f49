#!/usr/bin/env python3
"""Our solver against fc-solve: the 6.16 speed builds and Debian's 5.0, in one run.

Every solver runs on the same deals, one after the other, pinned to one core
(``taskset -c CPU``), each as a child process timed the same way: CPU time
(user + system) from ``os.wait4`` (the child's own rusage) and peak RSS from
GNU time. Ranges run in chunks whose order rotates among the solvers, and
every ratio is ours / that peer's, measured in the same run, so load from
other users of the machine hits every side alike. The machine these figures
come from is usually shared: the load average is printed with every
workload, and only same-run ratios are meaningful.

The peers (bench/README.md, "The peers"):

``a2``   fc-solve 6.16 ``extra_speed2`` with the ``lg-mod1`` preset compiled
         in: the author's own benchmark build (LTO, tcmalloc, -march=native);
``a``    the same with ``-l lg`` compiled in;
``b``    6.16 ``verify_bench`` (moves tracked, options at run time) ``-l lg``;
``b3``   b with 3 cells compiled in (the speed builds ignore --freecells-num);
``5.0``  Debian's fc-solve 5.0 (``freecell-solver-bin``) ``-l lg``.

The 6.16 builds are made by ``../shared/peer/fc-solve-6.16/BUILD.sh`` when
missing (about 6 minutes; needs root for its Debian packages).

Ours is ``analyzer.solve_range`` in one Python process per chunk (what a run
does, every verdict proved and every solution written and held), and for
context ``engine/examples/bench_solve`` (the same searches without Python).

Workloads (none selected means all):

``--ms4``       MS 1..32000, 4 cells, against a2, a, b and 5.0.
``--held-out``  The same on MS 500001..532000 and 5000000001..5000032000
                (deals the solver was not tuned on).
``--ms3``       MS 1..32000, 3 cells, against b3 and 5.0 (5.0 needs ~11 GB).
``--proof``     Deal 11982, 4 cells: ours against the single-card exhaustive
                search ``-to 01ABCDE`` of 5.0 (and 6.16 b, 5.0's ``-l fg``
                and ``-l lg``).
``--lengths``   Median and 90th-percentile solution length in single-card
                moves on deals 1..1000, ours against 5.0 ``-l lg``.

``--quick`` shrinks the ranges (1..300, lengths 1..100) for a smoke test.
Figures go to ``bench-results/vs_fcsolve-<time>.json``; see bench/README.md.

Examples::

    python bench/vs_fcsolve.py --quick
    python bench/vs_fcsolve.py --ms4 --held-out
    python bench/vs_fcsolve.py --ms3 --range-repeat 1
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

REPO = Path(__file__).resolve().parent.parent
ENGINE = REPO / "engine"
RESULTS = REPO / "bench-results"
# fc-solve 6.16's sources, offline dependencies and BUILD.sh (beside the
# repository, as the issue that asked for the comparison placed them).
FCS6_SOURCE = REPO.parent / "shared" / "peer" / "fc-solve-6.16"

# Targets: issue 25 against the strongest peers (a2 with 4 cells, b3 with 3),
# issue 3's against Debian's 5.0 kept beside them. MB and GB are decimal
# (10^6, 10^9 bytes), the stricter reading.
TARGETS: dict[str, list[dict[str, Any]]] = {
    "ms4": [
        {"peer": "a2", "cpu_ratio": 0.5, "issue": 25},
        {"peer": "5.0", "cpu_ratio": 0.5, "issue": 3},
    ],
    "ms3": [
        {"peer": "b3", "cpu_ratio": 0.1, "issue": 25},
        {"peer": "5.0", "cpu_ratio": 0.25, "issue": 3},
    ],
}
PEAK_TARGETS = {4: 200e6, 3: 1e9}
PROOF_TARGET = 0.25
# The 4-cell target must also hold on deals the solver was not tuned on.
HELD_OUT = ((500_001, 532_000), (5_000_000_001, 5_000_032_000))

FC_PACKAGE = "freecell-solver-bin"
# The board maker is called make-microsoft-freecell-board in Debian's package
# (the upstream name pi-make-... is not installed).
BOARD_MAKERS = ("make-microsoft-freecell-board", "pi-make-microsoft-freecell-board")
COLUMN_CHARS = "1234567890"
CELL_CHARS = "abcdefgijk"

# Runs our solver through the Python API (``--ours python``): one
# `solve_range` call for the deals given, every result held until it is
# printed (as a batch run holds a chunk's), in the lines of
# engine/examples/bench_solve.rs.
PY_WORKER = r"""
import sys, analyzer
s, e, k, sol = (int(x) for x in sys.argv[1:5])
f = lambda x: "-" if x is None else str(x)
results = analyzer.solve_range(s, e + 1, cells=k)
out = sys.stdout
for r in results:
    line = (f"{r.deal_number}\t{r.outcome}\t{f(r.limit_reason)}\t{f(r.solution_length_single)}\t"
            f"{f(r.solution_length_multi)}\t{r.positions_expanded}\t{r.positions_stored}\t"
            f"{r.peak_bytes}\t{r.elapsed_s:.6f}")
    if sol:
        line += "\t" + " ".join(r.solution)
    out.write(line + "\n")
"""

# The same as one process for a whole range (`PyServer`): it starts once,
# then solves each chunk it is sent on stdin ("START END"), printing the
# chunk's lines and "done CPU", its own CPU seconds for the chunk (results
# and lines included). "ready CPU" after start-up gives the start-up's.
PY_SERVER = r"""
import resource, sys, analyzer
k = int(sys.argv[1])
f = lambda x: "-" if x is None else str(x)
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
out = sys.stdout
out.write(f"ready {cpu():.6f}\n")
out.flush()
for request in sys.stdin:
    s, e = (int(x) for x in request.split())
    t0 = cpu()
    results = analyzer.solve_range(s, e + 1, cells=k)
    lines = [
        f"{r.deal_number}\t{r.outcome}\t{f(r.limit_reason)}\t{f(r.solution_length_single)}\t"
        f"{f(r.solution_length_multi)}\t{r.positions_expanded}\t{r.positions_stored}\t"
        f"{r.peak_bytes}\t{r.elapsed_s:.6f}\n"
        for r in results
    ]
    del results
    out.write("".join(lines))
    out.write(f"done {cpu() - t0:.6f}\n")
    out.flush()
"""


def shown(cmd: list[str]) -> str:
    """A command for display, with the inline Python worker elided."""
    return " ".join("<worker>" if a in (PY_WORKER, PY_SERVER) else a for a in cmd)


class BenchError(Exception):
    """The benchmark cannot run (missing tool, debug build, failed child)."""


# ---------------------------------------------------------------------------
# Measuring children


@dataclass
class Measured:
    """One child process: its command, output and rusage."""

    cmd: list[str]
    returncode: int
    user_s: float
    sys_s: float
    wall_s: float
    maxrss_bytes: int
    stdout: str = field(repr=False)
    stderr: str = field(repr=False)

    @property
    def cpu_s(self) -> float:
        return self.user_s + self.sys_s

    def figures(self) -> dict[str, Any]:
        return {
            "cmd": shown(self.cmd),
            "cpu_s": round(self.cpu_s, 4),
            "user_s": round(self.user_s, 4),
            "sys_s": round(self.sys_s, 4),
            "wall_s": round(self.wall_s, 4),
            "peak_rss_bytes": self.maxrss_bytes,
        }


def combine(runs: list[Measured], cmd: str) -> Measured:
    """Several runs as one: CPU and wall times add up, peak RSS is the largest."""
    return Measured(
        cmd=[cmd],
        returncode=max(r.returncode for r in runs),
        user_s=sum(r.user_s for r in runs),
        sys_s=sum(r.sys_s for r in runs),
        wall_s=sum(r.wall_s for r in runs),
        maxrss_bytes=max(r.maxrss_bytes for r in runs),
        stdout="",
        stderr="",
    )


class Runner:
    """Starts children pinned to one CPU and measures them: CPU time from
    wait4, peak RSS from GNU time when it is installed."""

    def __init__(self, cpu: int | None) -> None:
        self.prefix: list[str] = []
        self.cpu = cpu
        if cpu is not None:
            taskset = shutil.which("taskset")
            if taskset is None:
                print("warning: taskset not found; children are not pinned to one core", file=sys.stderr)
                self.cpu = None
            elif cpu not in os.sched_getaffinity(0):
                raise BenchError(
                    f"--cpu {cpu} is not available to this process ({sorted(os.sched_getaffinity(0))})"
                )
            else:
                self.prefix = [taskset, "-c", str(cpu)]
        self.env = dict(os.environ, FREECELL_SOLVER_QUIET="1")
        # The child's ru_maxrss is never below this process's own peak RSS:
        # a forked or vforked child starts out in (a copy of) our address
        # space, and exec records that space's high-water mark. GNU time,
        # a small process, forks the solver and reports the solver's own
        # peak; without it the figures carry that floor.
        self.gnu_time = shutil.which("time") or ""
        if self.gnu_time:
            probe = [self.gnu_time, "-f", "%M", "-o", os.devnull, "true"]
            if subprocess.run(probe, capture_output=True, check=False).returncode != 0:
                self.gnu_time = ""
        if not self.gnu_time:
            print(
                "warning: GNU time not found; peak RSS figures cannot be lower than this "
                f"script's own ({resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3:.0f} MB)",
                file=sys.stderr,
            )

    def run(self, cmd: list[str], *, check: bool = True) -> Measured:
        with (
            tempfile.TemporaryFile() as out,
            tempfile.TemporaryFile() as err,
            tempfile.NamedTemporaryFile("r") as rss,
        ):
            full = self.prefix + cmd
            if self.gnu_time:
                full = [self.gnu_time, "-f", "%M", "-o", rss.name, *full]
            t0 = time.perf_counter()
            # taskset execs the command and GNU time waits for it, so the
            # child's rusage (which includes its waited-for children) is the
            # solver's, plus GNU time's own (about a millisecond).
            proc = subprocess.Popen(full, stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=self.env)
            _, status, ru = os.wait4(proc.pid, 0)
            wall = time.perf_counter() - t0
            proc.returncode = os.waitstatus_to_exitcode(status)
            maxrss_kib = ru.ru_maxrss  # Linux reports KiB
            if self.gnu_time:
                lines = rss.read().split()
                if lines and lines[-1].isdigit():
                    maxrss_kib = int(lines[-1])
            out.seek(0)
            err.seek(0)
            m = Measured(
                cmd=cmd,
                returncode=proc.returncode,
                user_s=ru.ru_utime,
                sys_s=ru.ru_stime,
                wall_s=wall,
                maxrss_bytes=maxrss_kib * 1024,
                stdout=out.read().decode(errors="replace"),
                stderr=err.read().decode(errors="replace"),
            )
        if check and m.returncode != 0:
            raise BenchError(f"{shown(cmd)} exited with {m.returncode}: {m.stderr.strip()[-500:]}")
        return m

    def serve(self, cmd: list[str]) -> PyServer:
        """Starts `cmd` (a `PY_SERVER`), pinned and measured like `run`."""
        return PyServer(self, cmd)


class PyServer:
    """Our Python API as one process for a whole range (`PY_SERVER`): each
    chunk is a request, timed by the process itself (its own rusage before
    and after); the whole process is measured by wait4 and GNU time when it
    ends, start-up and exit included, as any child of `Runner.run`."""

    def __init__(self, runner: Runner, cmd: list[str]) -> None:
        self.cmd = cmd
        self.rss = tempfile.NamedTemporaryFile("r")
        self.err = tempfile.TemporaryFile()
        full = runner.prefix + cmd
        if runner.gnu_time:
            full = [runner.gnu_time, "-f", "%M", "-o", self.rss.name, *full]
        self.gnu_time = bool(runner.gnu_time)
        self.t0 = time.perf_counter()
        self.proc = subprocess.Popen(
            full, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err, env=runner.env, text=True
        )
        first = self._line()
        if not first.startswith("ready "):
            raise BenchError(f"{shown(cmd)} did not start: {first!r}")
        # Start-up counts with the first chunk.
        self.pending = float(first.split()[1])

    def _line(self) -> str:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            self.err.seek(0)
            raise BenchError(
                f"{shown(self.cmd)} ended early: {self.err.read().decode(errors='replace')[-500:]}"
            )
        return line

    def chunk(self, start: int, end: int) -> tuple[float, str]:
        """Solves `start..end`: (its CPU seconds, the lines)."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(f"{start} {end}\n")
        self.proc.stdin.flush()
        lines = []
        while not (line := self._line()).startswith("done "):
            lines.append(line)
        cpu = float(line.split()[1]) + self.pending
        self.pending = 0.0
        return cpu, "".join(lines)

    def finish(self) -> Measured:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        _, status, ru = os.wait4(self.proc.pid, 0)
        wall = time.perf_counter() - self.t0
        maxrss_kib = ru.ru_maxrss
        if self.gnu_time:
            lines = self.rss.read().split()
            if lines and lines[-1].isdigit():
                maxrss_kib = int(lines[-1])
        self.err.seek(0)
        m = Measured(
            cmd=self.cmd,
            returncode=os.waitstatus_to_exitcode(status),
            user_s=ru.ru_utime,
            sys_s=ru.ru_stime,
            wall_s=wall,
            maxrss_bytes=maxrss_kib * 1024,
            stdout="",
            stderr=self.err.read().decode(errors="replace"),
        )
        self.rss.close()
        self.err.close()
        if m.returncode != 0:
            raise BenchError(f"{shown(self.cmd)} exited with {m.returncode}: {m.stderr.strip()[-500:]}")
        return m


# ---------------------------------------------------------------------------
# The solvers


def find_or_install_fcsolve() -> dict[str, str]:
    """Paths of Debian's fc-solve 5.0 tools, installing the package if needed."""
    need = ("fc-solve", "freecell-solver-range-parallel-solve")
    if not all(shutil.which(t) for t in need):
        apt = shutil.which("apt-get")
        if apt is None or os.geteuid() != 0:
            raise BenchError(f"fc-solve not found; install it with: apt-get install -y {FC_PACKAGE}")
        print(f"installing {FC_PACKAGE} with apt-get ...", file=sys.stderr)
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        r = subprocess.run([apt, "install", "-y", FC_PACKAGE], env=env, capture_output=True, text=True)
        if r.returncode != 0:
            subprocess.run([apt, "update"], env=env, capture_output=True, check=False)
            subprocess.run([apt, "install", "-y", FC_PACKAGE], env=env, capture_output=True, check=True)
    tools = {t: shutil.which(t) or "" for t in need}
    maker = next((shutil.which(m) for m in BOARD_MAKERS if shutil.which(m)), None)
    if not all(tools.values()) or maker is None:
        raise BenchError(f"{FC_PACKAGE} is installed but its tools are missing: {tools}, board maker {maker}")
    tools["make-board"] = maker
    return tools


def fcsolve_version(fc: str) -> str:
    r = subprocess.run([fc, "--version"], capture_output=True, text=True, check=False)
    return " / ".join(line.strip() for line in r.stdout.splitlines() if line.strip())


@dataclass(frozen=True)
class Fcs6Variant:
    """One of BUILD.sh's fc-solve 6.16 builds."""

    key: str
    directory: str  # under the install root (BUILD.sh's PREFIX_ROOT)
    cells: int  # compiled in: the speed builds ignore --freecells-num
    options: tuple[str, ...]  # on the command line (a and a2 ignore any)
    label: str


FCS6_VARIANTS = {
    v.key: v
    for v in (
        Fcs6Variant("a2", "fcs6a-lgmod1", 4, (), "fc-solve 6.16 a2 (extra_speed2, lg-mod1 compiled in)"),
        Fcs6Variant("a", "fcs6a", 4, (), "fc-solve 6.16 a (extra_speed2, -l lg compiled in)"),
        Fcs6Variant("b", "fcs6b", 4, ("-l", "lg"), "fc-solve 6.16 b (verify_bench) -l lg"),
        Fcs6Variant("b3", "fcs6b-3fc", 3, ("-l", "lg"), "fc-solve 6.16 b3 (verify_bench, 3 cells) -l lg"),
    )
}
# The peers of each cell count, the judged one first.
PEERS_BY_CELLS = {4: ("a2", "a", "b", "5.0"), 3: ("b3", "5.0")}


def ensure_fcs6(root: Path, keys: list[str], source: Path) -> None:
    """Builds the fc-solve 6.16 variants of `keys` missing under `root` with
    BUILD.sh (apt-get, pip and about 6 minutes on 2 cores for a, b and a2)."""
    missing = [
        k
        for k in keys
        if not (root / FCS6_VARIANTS[k].directory / "bin" / "freecell-solver-range-parallel-solve").exists()
    ]
    if not missing:
        return
    script = source / "BUILD.sh"
    if not script.is_file():
        raise BenchError(
            f"fc-solve 6.16 builds {', '.join(missing)} are missing under {root} and {script} is not there "
            "to build them (--fcs6-source DIR names the folder with BUILD.sh)"
        )
    if os.geteuid() != 0:
        raise BenchError(
            f"fc-solve 6.16 builds {', '.join(missing)} are missing under {root}; BUILD.sh installs Debian "
            f"packages and needs root: run `PREFIX_ROOT={root} VARIANTS='{' '.join(missing)}' bash {script}` "
            "as root, or this benchmark as root"
        )
    RESULTS.mkdir(parents=True, exist_ok=True)
    log = RESULTS / f"fcs6-build-{time.strftime('%Y%m%d-%H%M%S')}.log"
    print(
        f"building fc-solve 6.16 {' '.join(missing)} into {root} with {script} (log: {log}) ...",
        file=sys.stderr,
    )
    env = dict(os.environ, VARIANTS=" ".join(missing), PREFIX_ROOT=str(root))
    with log.open("w") as f:
        r = subprocess.run(["bash", str(script)], env=env, stdout=f, stderr=subprocess.STDOUT, check=False)
    if r.returncode != 0:
        raise BenchError(f"BUILD.sh failed (exit {r.returncode}); see {log}")


@dataclass(frozen=True)
class Peer:
    """An fc-solve build as the benchmark runs it."""

    key: str
    label: str
    bin_dir: Path
    options: tuple[str, ...]
    # Cells compiled in, or None for --freecells-num at run time.
    cells: int | None
    board_maker: str
    # Whether its fc-solve takes options (-sel, -l ...); the speed builds
    # take none.
    takes_options: bool

    def tool(self, name: str) -> str:
        return str(self.bin_dir / name)

    def cells_args(self, cells: int) -> list[str]:
        if self.cells is not None:
            if self.cells != cells:
                raise BenchError(f"{self.label} has {self.cells} cells compiled in, not {cells}")
            return []
        return [] if cells == 4 else ["--freecells-num", str(cells)]

    def range_cmd(self, a: int, b: int, cells: int) -> list[str]:
        return [
            self.tool("freecell-solver-range-parallel-solve"),
            str(a),
            str(b),
            "1",
            *self.options,
            *self.cells_args(cells),
        ]

    def single_cmd(self, board: Path, cells: int) -> list[str]:
        """fc-solve on one board file, with the range's search settings."""
        if not self.takes_options:
            return [self.tool("fc-solve"), str(board)]
        return [self.tool("fc-solve"), *self.options, *self.cells_args(cells), "-sel", str(board)]


def make_peers(fc50: dict[str, str], fcs6_root: Path, keys: list[str]) -> dict[str, Peer]:
    peers: dict[str, Peer] = {}
    for k in keys:
        if k == "5.0":
            peers[k] = Peer(
                "5.0",
                "fc-solve 5.0 (Debian) -l lg",
                Path(fc50["fc-solve"]).parent,
                ("-l", "lg"),
                None,
                fc50["make-board"],
                True,
            )
            continue
        v = FCS6_VARIANTS[k]
        d = fcs6_root / v.directory / "bin"
        peers[k] = Peer(
            k, v.label, d, v.options, v.cells, str(d / "pi-make-microsoft-freecell-board"), bool(v.options)
        )
    return peers


def check_engine() -> Any:
    """The Python engine, refusing a debug build (benchmarks of a debug build
    measure the compiler, not the solver)."""
    sys.path.insert(0, str(REPO))
    import analyzer
    from analyzer import _engine

    profile = _engine.build_profile()
    if profile != "release":
        raise BenchError(
            f"analyzer._engine is a {profile} build; rebuild it in release mode "
            "(maturin develop --release, or pip install .) before benchmarking"
        )
    return analyzer


def build_bench_binary() -> Path:
    """Builds engine/examples/bench_solve.rs in release mode; returns its path."""
    cargo = shutil.which("cargo")
    if cargo is None:
        raise BenchError("cargo not found; use --ours python to time the installed Python engine")
    r = subprocess.run(
        [cargo, "build", "--release", "--example", "bench_solve", "--message-format=json-render-diagnostics"],
        cwd=ENGINE,
        capture_output=True,
        text=True,
        check=False,
    )
    if r.returncode != 0:
        raise BenchError(f"cargo build of the bench_solve example failed:\n{r.stderr[-3000:]}")
    for line in r.stdout.splitlines():
        try:
            msg = json.loads(line)
        except json.JSONDecodeError:
            continue
        if msg.get("reason") == "compiler-artifact" and msg.get("target", {}).get("name") == "bench_solve":
            exe = msg.get("executable")
            if exe:
                return Path(exe)
    raise BenchError("cargo built bench_solve but did not report its executable")


@dataclass
class OursRow:
    deal: int
    outcome: str
    limit: str | None
    single_len: int | None
    multi_len: int | None
    expanded: int
    stored: int
    peak_bytes: int
    elapsed_s: float
    solution: list[str] | None


def parse_ours(text: str) -> dict[int, OursRow]:
    rows: dict[int, OursRow] = {}

    def opt(s: str) -> str | None:
        return None if s == "-" else s

    for line in text.splitlines():
        f = line.split("\t")
        if len(f) < 9:
            raise BenchError(f"unexpected line from our solver: {line!r}")
        rows[int(f[0])] = OursRow(
            deal=int(f[0]),
            outcome=f[1],
            limit=opt(f[2]),
            single_len=None if f[3] == "-" else int(f[3]),
            multi_len=None if f[4] == "-" else int(f[4]),
            expanded=int(f[5]),
            stored=int(f[6]),
            peak_bytes=int(f[7]),
            elapsed_s=float(f[8]),
            solution=f[9].split() if len(f) > 9 else None,
        )
    return rows


class Ours:
    """Our solver as a child process: the installed Python engine
    (`analyzer.solve_range`, what a run calls) or the bench_solve example
    (the same searches, no Python)."""

    LABELS: ClassVar[dict[str, str]] = {
        "python": "ours (analyzer.solve_range)",
        "rust": "ours (engine/examples/bench_solve)",
    }

    def __init__(self, mode: str, runner: Runner) -> None:
        self.mode = mode
        self.key = "ours" if mode == "python" else "ours-rust"
        self.label = self.LABELS[mode]
        self.runner = runner
        self.binary = build_bench_binary() if mode == "rust" else None

    def describe(self) -> str:
        return str(self.binary) if self.binary else f"{sys.executable} -c <analyzer.solve_range worker>"

    def command(self, start: int, end: int, cells: int, solutions: bool = False) -> list[str]:
        if self.binary is not None:
            cmd = [str(self.binary), str(start), str(end), "--cells", str(cells)]
            return cmd + (["--solutions"] if solutions else [])
        return [sys.executable, "-c", PY_WORKER, str(start), str(end), str(cells), str(int(solutions))]

    def serve(self, cells: int) -> PyServer:
        """The Python API as one process for a range's chunks."""
        return self.runner.serve([sys.executable, "-c", PY_SERVER, str(cells)])

    def run(
        self, start: int, end: int, cells: int, solutions: bool = False
    ) -> tuple[Measured, dict[int, OursRow]]:
        m = self.runner.run(self.command(start, end, cells, solutions))
        rows = parse_ours(m.stdout)
        missing = [n for n in range(start, end + 1) if n not in rows]
        if missing:
            raise BenchError(f"our solver gave no line for {len(missing)} deals, first {missing[:5]}")
        return m, rows

    def solution(self, deal: int, cells: int) -> OursRow:
        """Our full answer for one deal (untimed, for checking disagreements)."""
        m = self.runner.run(self.command(deal, deal, cells, solutions=True))
        return parse_ours(m.stdout)[deal]


# ---------------------------------------------------------------------------
# fc-solve's output

FC_MOVE_PATTERNS: list[tuple[re.Pattern[str], Callable[[tuple[str | Any, ...]], list[str]]]] = [
    (
        re.compile(r"Move a card from stack (\d+) to the foundations"),
        lambda g: [COLUMN_CHARS[int(g[0])] + "h"],
    ),
    (
        re.compile(r"Move a card from stack (\d+) to freecell (\d+)"),
        lambda g: [COLUMN_CHARS[int(g[0])] + CELL_CHARS[int(g[1])]],
    ),
    (
        re.compile(r"Move a card from freecell (\d+) to stack (\d+)"),
        lambda g: [CELL_CHARS[int(g[0])] + COLUMN_CHARS[int(g[1])]],
    ),
    (
        re.compile(r"Move a card from freecell (\d+) to the foundations"),
        lambda g: [CELL_CHARS[int(g[0])] + "h"],
    ),
    (
        re.compile(r"Move a card from freecell (\d+) to freecell (\d+)"),
        lambda g: [CELL_CHARS[int(g[0])] + CELL_CHARS[int(g[1])]],
    ),
    # A multi-card move: the count is explicit, so write it as v<k> (our
    # notation reads a bare column-to-empty-column move as the longest run).
    (
        re.compile(r"Move (\d+) cards from stack (\d+) to stack (\d+)"),
        lambda g: [f"{COLUMN_CHARS[int(g[1])]}{COLUMN_CHARS[int(g[2])]}v{int(g[0])}"],
    ),
]


def fc_status(text: str) -> str:
    """fc-solve's verdict. Without -sel, "I could not solve this game." is
    printed both after a complete search and when an iteration limit cut it
    short; always pass -sel so the latter reads "Iterations count exceeded."."""
    if "This game is solveable." in text:
        return "solved"
    if "Iterations count exceeded." in text:
        return "intractable"
    if "I could not solve this game." in text:
        return "unsolved"
    return "error"


def fc_states(text: str) -> int | None:
    m = re.search(r"Total number of states checked is (\d+)", text)
    return int(m.group(1)) if m else None


def fc_moves(text: str) -> list[str]:
    """fc-solve's -m output (without -sn) in our standard notation; stacks
    and freecells are numbered from 0 there."""
    moves: list[str] = []
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("Move"):
            continue
        for pat, conv in FC_MOVE_PATTERNS:
            m = pat.fullmatch(line)
            if m:
                moves.extend(conv(m.groups()))
                break
        else:
            raise BenchError(f"unknown fc-solve move line: {line!r}")
    return moves


def parse_fc_range(text: str) -> tuple[set[int], set[int], set[int]]:
    """(reached, unsolved, intractable) deals of freecell-solver-range-parallel-solve."""
    sets: dict[str, set[int]] = {"Reached": set(), "Unsolved": set(), "Intractable": set()}
    for m in re.finditer(r"^(Reached|Unsolved|Intractable) Board No\. (\d+)", text, re.M):
        sets[m.group(1)].add(int(m.group(2)))
    return sets["Reached"], sets["Unsolved"], sets["Intractable"]


def fc_range_iterations(text: str) -> dict[int, int]:
    """States checked per deal: the range solver prints a running total
    after each deal."""
    out: dict[int, int] = {}
    prev = 0
    for m in re.finditer(r"^Reached Board No\. (\d+) at \S+ \(total_num_iters=(\d+)\)", text, re.M):
        total = int(m.group(2))
        out[int(m.group(1))] = total - prev
        prev = total
    return out


class Boards:
    """Board files made by fc-solve's own board maker (independent of ours)."""

    def __init__(self, maker: str) -> None:
        self.maker = maker
        self.dir = Path(tempfile.mkdtemp(prefix="fca-bench-boards-"))

    def path(self, deal: int) -> Path:
        p = self.dir / f"{deal}.board"
        if not p.exists():
            text = subprocess.run(
                [self.maker, "-t", str(deal)], capture_output=True, text=True, check=True
            ).stdout
            p.write_text(text)
        return p

    def cleanup(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


# ---------------------------------------------------------------------------
# Checks with the independent verifier and the engine's move expansion


def replay(deal: int, moves: list[str], cells: int, move_rule: str) -> tuple[bool, str | None]:
    from analyzer import verifier

    rep = verifier.replay(deal, moves, verifier.make_variant("freecell", cells=cells, move_rule=move_rule))
    return rep.won, rep.reason


def single_card_length(analyzer: Any, deal: int, moves: list[str], cells: int, move_rule: str) -> int:
    """Length in single-card moves: each multi-card move counts as the
    single-card moves the engine expands it into (`Board.expand`), the same
    function for both solvers' solutions."""
    b = analyzer.deal(deal, analyzer.Variant.named("freecell", cells=cells, move_rule=move_rule))
    total = 0
    for i, mv in enumerate(moves, 1):
        ex = b.expand(mv)
        if ex is None:
            raise BenchError(f"deal {deal}: move {i} {mv!r} cannot be expanded into single-card moves")
        total += len(ex)
        b = b.apply(mv)
    if not b.is_won():
        raise BenchError(f"deal {deal}: the solution does not end in a won position")
    return total


def percentile(values: list[int], q: float) -> float:
    """Nearest-rank percentile (q in 0..100)."""
    s = sorted(values)
    return float(s[max(0, math.ceil(q / 100 * len(s)) - 1)])


def verdict(passed: bool, text: str) -> str:
    return f"{'PASS' if passed else 'MISS'}: {text}"


def ratio_target(name: str, ratio: float, limit: float) -> dict[str, Any]:
    ok = ratio <= limit
    if ok:
        how = f"{ratio:.3f}x <= {limit}x ({limit / ratio:.2f}x margin)" if ratio > 0 else "ratio 0"
    else:
        how = f"{ratio:.3f}x > {limit}x: {ratio / limit:.2f}x over target (needs {100 * (1 - limit / ratio):.0f}% less CPU)"
    return {"target": name, "pass": ok, "value": round(ratio, 4), "limit": limit, "text": verdict(ok, how)}


def mem_target(name: str, peak: int, limit: float) -> dict[str, Any]:
    ok = peak <= limit
    how = f"{peak / 1e6:.1f} MB {'<=' if ok else '>'} {limit / 1e6:.0f} MB"
    if not ok:
        how += f" ({peak / limit:.2f}x over)"
    return {"target": name, "pass": ok, "value": peak, "limit": limit, "text": verdict(ok, how)}


# ---------------------------------------------------------------------------
# Workloads


class Bench:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.analyzer = check_engine()
        self.fc = find_or_install_fcsolve()
        wanted: list[str] = []
        if args.ms4 or args.held_out:
            wanted += [k for k in PEERS_BY_CELLS[4] if k not in wanted]
        if args.ms3:
            wanted += [k for k in PEERS_BY_CELLS[3] if k not in wanted]
        if args.proof:
            wanted += [k for k in ("b", "5.0") if k not in wanted]
        if args.peers:
            wanted = [k for k in wanted if k in args.peers]
        ensure_fcs6(args.fcs6_root, [k for k in wanted if k in FCS6_VARIANTS], args.fcs6_source)
        self.peers = make_peers(self.fc, args.fcs6_root, wanted)
        self.runner = Runner(None if args.cpu == "none" else int(args.cpu))
        modes = ["python", "rust"] if args.ours == "both" else [args.ours]
        self.ours_all = [Ours(m, self.runner) for m in modes]
        # The judged one: what a run calls, when it is timed.
        self.ours = self.ours_all[0]
        self.boards = Boards(self.fc["make-board"])
        self.targets: list[dict[str, Any]] = []
        self.problems: list[str] = []
        self.check_same_deals()

    def check_same_deals(self) -> None:
        """fc-solve's board maker and our engine must agree on the deals."""
        for n in (1, 617, 11982):
            theirs = self.boards.path(n).read_text().split()
            ours = self.analyzer.deal(n).rows().split()
            if theirs != ours:
                raise BenchError(f"deal {n}: fc-solve's board maker and our engine disagree")

    def check_peer_deals(self, peer: Peer, deals: list[int], cells: int) -> None:
        """Each peer's range solver must solve the deals ours does: its own
        board maker must deal them as our engine does, and its range solver
        must check as many states on each as its fc-solve does on that
        board (deal numbers past 2^31 have their own dealing rule)."""
        with tempfile.TemporaryDirectory(prefix="fca-bench-deal-") as tmp:
            for n in deals:
                text = subprocess.run(
                    [peer.board_maker, "-t", str(n)], capture_output=True, text=True, check=True
                ).stdout
                if text.split() != self.analyzer.deal(n).rows().split():
                    raise BenchError(f"deal {n}: {peer.label}'s board maker and our engine disagree")
                board = Path(tmp) / f"{n}.board"
                board.write_text(text)
                single = fc_states(self.runner.run(peer.single_cmd(board, cells), check=False).stdout)
                ranged = fc_range_iterations(self.runner.run(peer.range_cmd(n, n, cells)).stdout).get(n)
                if single is None or single != ranged:
                    raise BenchError(
                        f"deal {n}: {peer.label}'s range solver checked {ranged} states, its fc-solve on "
                        f"the board {single}: they do not solve the same deal"
                    )

    def say(self, text: str = "") -> None:
        print(text, flush=True)

    # -- ranges ------------------------------------------------------------

    def range_repeats(self, key: str) -> int:
        """Repeats of a whole range: --range-repeat, else 3 for 4-cell ranges
        (whose margins are within a noisy machine's run-to-run spread) and 1
        for 3 cells (5.0 takes minutes and 11 GB there)."""
        if self.args.range_repeat:
            return int(self.args.range_repeat)
        return 3 if key.startswith("ms4") and not self.args.quick else 1

    def workload_range(self, key: str, cells: int, start: int, end: int, judged: bool) -> dict[str, Any]:
        """`judged`: the range is one the targets name (1..32000, or a
        held-out range for the 4-cell target); otherwise they are printed
        as indicative."""
        n = end - start + 1
        load0 = os.getloadavg()
        self.say(f"\n== {key}: Microsoft deals {start}..{end}, {cells} cells ==")
        self.say(f"machine shared: load average {load0[0]:.2f} at the start; only same-run ratios count")
        peers = [self.peers[k] for k in PEERS_BY_CELLS[cells] if k in self.peers]
        mid = start + n // 2
        for p in peers:
            self.check_peer_deals(p, sorted({start, mid, end}), cells)
        ours_keys = [o.key for o in self.ours_all]
        keys = ours_keys + [p.key for p in peers]
        labels = {o.key: o.label for o in self.ours_all} | {p.key: p.label for p in peers}
        step = max(1, self.args.chunk)
        repeats = self.range_repeats(key)
        rows: dict[int, OursRow] = {}
        # Per peer: (reached, unsolved, intractable), from the first repeat.
        verdict_sets: dict[str, tuple[set[int], set[int], set[int]]] = {
            p.key: (set(), set(), set()) for p in peers
        }
        totals: list[dict[str, Measured]] = []
        chunks = [(a, min(end, a + step - 1)) for a in range(start, end + 1, step)]

        def answer(x: OursRow) -> tuple[object, ...]:
            return (x.outcome, x.single_len, x.expanded, x.stored)

        for rep in range(repeats):
            if repeats > 1:
                self.say(f"repeat {rep + 1}/{repeats}:")
            runs: dict[str, list[Measured]] = {k: [] for k in keys}
            # Our Python API runs as one process for the whole range, as
            # `run` uses it (a worker solves chunk after chunk).
            servers = {o.key: o.serve(cells) for o in self.ours_all if o.mode == "python"}
            for ci, (a, b) in enumerate(chunks):
                # The order rotates from chunk to chunk, so no solver always
                # runs right after the same one.
                shift = (ci + rep) % len(keys)
                for k in keys[shift:] + keys[:shift]:
                    if k in ours_keys:
                        ours = self.ours_all[ours_keys.index(k)]
                        if k in servers:
                            t0 = time.perf_counter()
                            cpu, text = servers[k].chunk(a, b)
                            m = Measured(servers[k].cmd, 0, cpu, 0.0, time.perf_counter() - t0, 0, "", "")
                            r = parse_ours(text)
                            if len(r) != b - a + 1:
                                raise BenchError(f"{ours.label} answered {len(r)} of deals {a}..{b}")
                        else:
                            m, r = ours.run(a, b, cells)
                        for d, row in r.items():
                            # The search is deterministic: every repeat and
                            # both of our front ends give the same answers.
                            first = rows.setdefault(d, row)
                            if answer(row) != answer(first):
                                self.problems.append(
                                    f"{key}: deal {d} differs between runs of ours ({first.outcome}, "
                                    f"{first.expanded} expanded against {row.outcome}, {row.expanded}; "
                                    f"{ours.label}, repeat {rep + 1})"
                                )
                    else:
                        peer = self.peers[k]
                        m = self.runner.run(peer.range_cmd(a, b, cells))
                        if rep == 0:
                            for acc, got in zip(verdict_sets[k], parse_fc_range(m.stdout), strict=True):
                                acc |= got
                    runs[k].append(m)
                self.say(f"  {a}..{b}: " + ", ".join(f"{k} {runs[k][-1].cpu_s:.2f} s" for k in keys) + " CPU")
            totals.append(
                {
                    k: combine(
                        runs[k],
                        shown(
                            self.ours_all[ours_keys.index(k)].command(start, end, cells)
                            if k in ours_keys
                            else self.peers[k].range_cmd(start, end, cells)
                        ),
                    )
                    for k in keys
                }
            )
            for k, server in servers.items():
                # The process's own totals: start-up, every chunk and exit.
                whole = server.finish()
                whole.cmd = [shown(whole.cmd) + f" (one process, chunks {start}..{end} sent in turn)"]
                totals[-1][k] = whole
        load1 = os.getloadavg()
        judged_key = self.ours.key
        # Per peer and repeat: ours / the peer's CPU in that repeat; the
        # median repeat's ratio is judged (the higher middle one for an even
        # count).
        ratios = {p.key: [t[judged_key].cpu_s / t[p.key].cpu_s for t in totals] for p in peers}
        rust_ratios = (
            {p.key: [t["ours-rust"].cpu_s / t[p.key].cpu_s for t in totals] for p in peers}
            if "ours-rust" in keys and judged_key != "ours-rust"
            else {}
        )
        peak = {k: max(t[k].maxrss_bytes for t in totals) for k in keys}
        self.say(
            f"CPU seconds by repeat ({len(chunks)} chunk(s) of up to {step} deals; machine shared, load "
            f"{load0[0]:.2f} -> {load1[0]:.2f}):"
        )
        width = max(len(labels[k]) for k in keys)
        for k in keys:
            cpus = [t[k].cpu_s for t in totals]
            self.say(
                f"  {labels[k]:{width}s}  {'  '.join(f'{c:7.2f}' for c in cpus)}   median "
                f"{statistics.median(cpus):7.2f}   peak RSS {peak[k] / 1e6:7.1f} MB"
            )
        self.say(f"CPU ratios, {labels[judged_key]} / each peer, by repeat (the median is judged):")
        pw = max(len(p.label) for p in peers)
        for p in peers:
            rs = ratios[p.key]
            line = f"  / {p.label:{pw}s}  {'  '.join(f'{x:6.3f}x' for x in rs)}   median {statistics.median_high(rs):.3f}x"
            if rust_ratios:
                line += f"   (ours without Python: median {statistics.median_high(rust_ratios[p.key]):.3f}x)"
            self.say(line)
        if len(rows) != n:
            raise BenchError(f"our solver answered {len(rows)} of {n} deals")
        fc_verdicts: dict[str, dict[int, str]] = {}
        for p in peers:
            reached, unsolved, intractable = verdict_sets[p.key]
            if len(reached) != n:
                raise BenchError(f"{p.label} reached {len(reached)} of {n} deals")
            fc_verdicts[p.key] = {
                d: "unsolved" if d in unsolved else "intractable" if d in intractable else "solved"
                for d in range(start, end + 1)
            }
        ours_counts = Counter(r.outcome for r in rows.values())
        self.say(f"verdicts  ours: {dict(sorted(ours_counts.items()))}  (unsolvable = proved)")
        for p in peers:
            counts = Counter(fc_verdicts[p.key].values())
            self.say(f"          {p.label}: {dict(sorted(counts.items()))}  (unsolved = not a proof)")
        unproved = [d for d, r in rows.items() if r.outcome not in ("solved", "unsolvable")]
        disagreements = self.disagreements(rows, fc_verdicts, cells)
        both_no = sorted(
            d
            for d, r in rows.items()
            if r.outcome == "unsolvable" and all(v[d] == "unsolved" for v in fc_verdicts.values())
        )
        self.say(
            f"all say not winnable (ours proved): {len(both_no)} {both_no[:20]}{' ...' if len(both_no) > 20 else ''}"
        )
        peak_solver = max(r.peak_bytes for r in rows.values())
        slowest = sorted(rows.values(), key=lambda r: -r.elapsed_s)[:10]
        worst = slowest[0]
        expanded = sum(r.expanded for r in rows.values())
        self.say(
            f"ours: {expanded} positions expanded, solver peak {peak_solver / 1e6:.1f} MB, slowest deal "
            f"{worst.deal} ({worst.elapsed_s:.3f} s wall, {worst.expanded} expanded)"
        )
        self.say(
            "slowest deals (wall s, expanded): "
            + ", ".join(f"{r.deal} ({r.elapsed_s:.2f}, {r.expanded})" for r in slowest[:5])
        )
        targets: list[dict[str, Any]] = []
        proved = len(unproved) == 0
        targets.append(
            {
                "target": f"{key}: every verdict proved",
                "pass": proved,
                "value": n - len(unproved),
                "limit": n,
                "text": verdict(
                    proved,
                    f"{n - len(unproved)}/{n} proved" + (f"; unproved {unproved[:20]}" if unproved else ""),
                ),
            }
        )
        for t in TARGETS["ms4" if cells == 4 else "ms3"]:
            if t["peer"] not in ratios:
                continue
            label = self.peers[t["peer"]].label
            targets.append(
                ratio_target(
                    f"{key}: CPU <= {t['cpu_ratio']}x {label} (issue {t['issue']})",
                    statistics.median_high(ratios[t["peer"]]),
                    t["cpu_ratio"],
                )
            )
        targets.append(
            mem_target(
                f"{key}: {labels[judged_key]} peak <= {PEAK_TARGETS[cells] / 1e6:.0f} MB",
                peak[judged_key],
                PEAK_TARGETS[cells],
            )
        )
        if not judged:
            for x in targets:
                x["text"] += f" [deals {start}..{end}, not a target's range: indicative only]"
                x["indicative"] = True
        self.targets += targets
        figures: dict[str, Any] = {}
        for k in keys:
            figures[k] = {
                "label": labels[k],
                "cmd": totals[0][k].cmd[0],
                "cpu_s_runs": [round(t[k].cpu_s, 4) for t in totals],
                "cpu_s_median": round(statistics.median(t[k].cpu_s for t in totals), 4),
                "wall_s_runs": [round(t[k].wall_s, 4) for t in totals],
                "peak_rss_bytes": peak[k],
            }
            if k in fc_verdicts:
                v = fc_verdicts[k]
                figures[k]["verdicts"] = dict(Counter(v.values()))
                figures[k]["unsolved"] = sorted(d for d, x in v.items() if x == "unsolved")
                figures[k]["intractable"] = sorted(d for d, x in v.items() if x == "intractable")
        figures[judged_key] |= {
            "verdicts": dict(ours_counts),
            "solver_peak_bytes": peak_solver,
            "positions_expanded": expanded,
            "slowest_deals": [
                {"deal": r.deal, "outcome": r.outcome, "wall_s": r.elapsed_s, "expanded": r.expanded}
                for r in slowest
            ],
            "unproved": unproved,
        }
        return {
            "deals": f"{start}-{end}",
            "cells": cells,
            "chunk": step,
            "repeats": repeats,
            "judged": judged,
            "loadavg": [list(load0), list(load1)],
            "contenders": figures,
            "cpu_ratio_runs": {k: [round(x, 4) for x in v] for k, v in ratios.items()},
            "cpu_ratio_median": {k: round(statistics.median_high(v), 4) for k, v in ratios.items()},
            "cpu_ratio_median_without_python": {
                k: round(statistics.median_high(v), 4) for k, v in rust_ratios.items()
            },
            "all_not_winnable": both_no,
            "disagreements": disagreements,
        }

    def fc_single(self, deal: int, cells: int, args: list[str]) -> tuple[str, list[str]]:
        """Debian 5.0's fc-solve on one deal, with its moves."""
        cmd = [
            self.fc["fc-solve"],
            *args,
            "--freecells-num",
            str(cells),
            "-m",
            "-sel",
            str(self.boards.path(deal)),
        ]
        m = self.runner.run(cmd, check=False)
        status = fc_status(m.stdout)
        return status, fc_moves(m.stdout) if status == "solved" else []

    def disagreements(
        self, rows: dict[int, OursRow], fc_verdicts: dict[str, dict[int, str]], cells: int
    ) -> list[dict[str, Any]]:
        """Every deal where a peer's verdict differs from ours, and which
        answer is supported: a solution replayed by the independent verifier
        decides (a peer's solution comes from 5.0's fc-solve, which prints
        moves; the speed builds cannot)."""
        out = []
        for d in sorted(rows):
            ours = rows[d].outcome
            against = {
                k: v[d]
                for k, v in fc_verdicts.items()
                if (ours, v[d]) not in (("solved", "solved"), ("unsolvable", "unsolved"))
            }
            if not against:
                continue
            rec: dict[str, Any] = {"deal": d, "ours": ours, "peers": against}
            if rows[d].limit:
                rec["ours_limit"] = rows[d].limit
            if ours == "solved":
                # The peers gave up; our solution decides if it replays.
                row = self.ours.solution(d, cells)
                won, reason = replay(d, row.solution or [], cells, "product")
                rec["ours_solution_replays"] = won
                rec["supported"] = (
                    "ours: our solution replays to a win under the verifier"
                    if won
                    else (f"NEITHER: our solution fails the verifier ({reason})")
                )
                if not won:
                    self.problems.append(
                        f"deal {d} ({cells} cells): our solution fails the verifier: {reason}"
                    )
            else:
                # Ours says unsolvable (or gave up); does fc-solve have a solution?
                status, moves = "unsolved", list[str]()
                if "solved" in against.values():
                    status, moves = self.fc_single(d, cells, ["-l", "lg"])
                if status != "solved":
                    status, moves = self.fc_single(d, cells, ["-to", "01ABCDE"])
                    rec["fcsolve_exhaustive"] = status
                if moves:
                    won, reason = replay(d, moves, cells, "doubling")
                    rec["fcsolve_solution_replays"] = won
                    if won:
                        rec["supported"] = "fc-solve: its solution replays to a win under the verifier"
                        if ours == "unsolvable":
                            self.problems.append(
                                f"deal {d} ({cells} cells): ours says unsolvable but fc-solve's solution wins"
                            )
                    else:
                        rec["supported"] = f"ours: fc-solve's solution fails the verifier ({reason})"
                elif ours == "unsolvable":
                    rec["supported"] = "both: fc-solve's single-card exhaustive search also finds no solution"
                else:
                    rec["supported"] = (
                        "fc-solve's single-card exhaustive search finds no solution; ours gave no verdict"
                    )
            shown_ours = f"{ours} ({rows[d].limit})" if rows[d].limit else ours
            theirs = ", ".join(f"{k} {v}" for k, v in against.items())
            self.say(f"  disagreement deal {d}: ours {shown_ours}; {theirs} -> {rec['supported']}")
            out.append(rec)
        if not out:
            self.say("no disagreements")
        return out

    # -- deal 11982 ----------------------------------------------------------

    def workload_proof(self, deal: int = 11982, cells: int = 4) -> dict[str, Any]:
        self.say(f"\n== proof: deal {deal}, {cells} cells ==")
        board = str(self.boards.path(deal))
        fc = self.fc["fc-solve"]
        # A proof takes tens of milliseconds: ours without Python's start-up
        # when that binary is built.
        ours = next((o for o in self.ours_all if o.mode == "rust"), self.ours)
        contenders = {
            "ours": ours.command(deal, deal, cells),
            "fcsolve_exhaustive_01ABCDE": [fc, "-to", "01ABCDE", "-sel", board],
            "fcsolve_fg": [fc, "-l", "fg", "-sel", board],
            "fcsolve_lg": [fc, "-l", "lg", "-sel", board],
        }
        if "b" in self.peers:
            b6 = self.peers["b"].tool("fc-solve")
            contenders["fcsolve6b_exhaustive_01ABCDE"] = [b6, "-to", "01ABCDE", "-sel", board]
        runs: dict[str, list[Measured]] = {k: [] for k in contenders}
        # Interleaved repeats; the median of each is compared.
        for _ in range(self.args.repeat):
            for k, cmd in contenders.items():
                runs[k].append(self.runner.run(cmd))
        res: dict[str, Any] = {"deal": deal, "cells": cells, "repeats": self.args.repeat}
        for k, ms in runs.items():
            cpu = statistics.median(m.cpu_s for m in ms)
            peak = max(m.maxrss_bytes for m in ms)
            if k == "ours":
                row = parse_ours(ms[0].stdout)[deal]
                answer = f"{row.outcome} ({row.expanded} positions expanded, {row.stored} stored)"
                outcome = row.outcome
            else:
                outcome = fc_status(ms[0].stdout)
                answer = f"{outcome} ({fc_states(ms[0].stdout)} states checked)"
            self.say(
                f"{k:28s} median {cpu:.3f} s CPU (runs {', '.join(f'{m.cpu_s:.3f}' for m in ms)}), "
                f"peak RSS {peak / 1e6:.1f} MB: {answer}"
            )
            self.say(f"{'':28s} {shown(ms[0].cmd)}")
            res[k] = ms[0].figures() | {
                "cpu_s_median": round(cpu, 4),
                "cpu_s_runs": [round(m.cpu_s, 4) for m in ms],
                "peak_rss_bytes": peak,
                "outcome": outcome,
                "answer": answer,
            }
        ours_cpu = res["ours"]["cpu_s_median"]
        for k in contenders:
            if k != "ours":
                res[f"cpu_ratio_vs_{k.removeprefix('fcsolve_')}"] = round(
                    ours_cpu / res[k]["cpu_s_median"], 4
                )
        ratio = ours_cpu / res["fcsolve_exhaustive_01ABCDE"]["cpu_s_median"]
        self.say(
            f"CPU ours / fc-solve 5.0 -to 01ABCDE = {ratio:.3f}x (machine shared: load {os.getloadavg()[0]:.2f})"
        )
        if "fcsolve6b_exhaustive_01ABCDE" in res:
            r6 = res["cpu_ratio_vs_fcsolve6b_exhaustive_01ABCDE"]
            self.say(f"CPU ours / fc-solve 6.16 b -to 01ABCDE = {r6:.3f}x")
        proved = res["ours"]["outcome"] == "unsolvable"
        if not proved:
            self.problems.append(
                f"deal {deal} with {cells} cells: ours says {res['ours']['outcome']}, expected unsolvable"
            )
        self.targets.append(
            {
                "target": f"proof: {deal} proved unsolvable",
                "pass": proved,
                "value": res["ours"]["outcome"],
                "limit": "unsolvable",
                "text": verdict(proved, res["ours"]["answer"]),
            }
        )
        self.targets.append(
            ratio_target(
                f"proof: CPU <= {PROOF_TARGET}x fc-solve 5.0 -to 01ABCDE (issue 3)",
                ratio,
                PROOF_TARGET,
            )
        )
        return res

    # -- solution lengths ------------------------------------------------------

    def workload_lengths(self, start: int, end: int, cells: int = 4) -> dict[str, Any]:
        self.say(f"\n== lengths: deals {start}..{end}, {cells} cells, single-card moves ==")
        om, rows = self.ours.run(start, end, cells, solutions=True)
        self.say(f"ours:     {shown(self.ours.command(start, end, cells, True))}: {om.cpu_s:.2f} s CPU")
        fc_cpu = 0.0
        fc_peak = 0
        ours_len: dict[int, int] = {}
        fc_len: dict[int, int] = {}
        fc_multi: dict[int, int] = {}
        mismatched_counts = []
        bad: list[str] = []
        fc_status_counts: Counter[str] = Counter()
        for d in range(start, end + 1):
            board = str(self.boards.path(d))
            m = self.runner.run(
                [self.fc["fc-solve"], "-l", "lg", "--freecells-num", str(cells), "-m", "-sel", board],
                check=False,
            )
            fc_cpu += m.cpu_s
            fc_peak = max(fc_peak, m.maxrss_bytes)
            status = fc_status(m.stdout)
            fc_status_counts[status] += 1
            if status == "solved":
                moves = fc_moves(m.stdout)
                won, reason = replay(d, moves, cells, "doubling")
                if not won:
                    bad.append(f"deal {d}: fc-solve's solution fails the verifier: {reason}")
                else:
                    fc_len[d] = single_card_length(self.analyzer, d, moves, cells, "doubling")
                    fc_multi[d] = len(moves)
            row = rows[d]
            if row.outcome == "solved" and row.solution is not None:
                won, reason = replay(d, row.solution, cells, "product")
                if not won:
                    bad.append(f"deal {d}: our solution fails the verifier: {reason}")
                    self.problems.append(bad[-1])
                    continue
                n = single_card_length(self.analyzer, d, row.solution, cells, "product")
                ours_len[d] = n
                if n != row.single_len:
                    mismatched_counts.append((d, row.single_len, n))
        for b in bad:
            self.say(f"  {b}")
        if mismatched_counts:
            self.say(
                f"  note: {len(mismatched_counts)} deals where our solver's own single-card count differs "
                f"from the recount, e.g. {mismatched_counts[:3]} (deal, solver, recount)"
            )
        common = sorted(set(ours_len) & set(fc_len))
        o = [ours_len[d] for d in common]
        f = [fc_len[d] for d in common]
        om_ = [rows[d].multi_len or 0 for d in common]
        fm_ = [fc_multi[d] for d in common]
        res: dict[str, Any] = {
            "deals": f"{start}-{end}",
            "cells": cells,
            "deals_compared": len(common),
            "ours": om.figures()
            | {
                "verdicts": dict(Counter(r.outcome for r in rows.values())),
                "solutions_verified": len(ours_len),
            },
            "fcsolve": {
                "cmd": f"fc-solve -l lg --freecells-num {cells} -m -sel BOARD (one process per deal)",
                "cpu_s_sum": round(fc_cpu, 4),
                "peak_rss_bytes": fc_peak,
                "verdicts": dict(fc_status_counts),
                "solutions_verified": len(fc_len),
            },
            "single_card": {
                "ours_median": statistics.median(o),
                "ours_p90": percentile(o, 90),
                "ours_mean": round(statistics.mean(o), 2),
                "fcsolve_median": statistics.median(f),
                "fcsolve_p90": percentile(f, 90),
                "fcsolve_mean": round(statistics.mean(f), 2),
                "ours_shorter_or_equal_deals": sum(a <= b for a, b in zip(o, f, strict=True)),
            },
            "multi_card_as_printed": {
                "ours_median": statistics.median(om_),
                "ours_p90": percentile(om_, 90),
                "fcsolve_median": statistics.median(fm_),
                "fcsolve_p90": percentile(fm_, 90),
            },
            "count_mismatches": mismatched_counts[:50],
            "verifier_failures": bad,
        }
        s = res["single_card"]
        self.say(f"fc-solve: -l lg per deal: {fc_cpu:.2f} s CPU in total; verdicts {dict(fc_status_counts)}")
        self.say(
            f"solutions replayed by the verifier: ours {len(ours_len)}, fc-solve {len(fc_len)}; compared on {len(common)} deals"
        )
        self.say(
            f"single-card moves  ours: median {s['ours_median']}, p90 {s['ours_p90']}, mean {s['ours_mean']}"
        )
        self.say(
            f"                   fc-solve -l lg: median {s['fcsolve_median']}, p90 {s['fcsolve_p90']}, mean {s['fcsolve_mean']}"
        )
        mm = res["multi_card_as_printed"]
        self.say(
            f"moves as printed   ours: median {mm['ours_median']}, p90 {mm['ours_p90']}; "
            f"fc-solve: median {mm['fcsolve_median']}, p90 {mm['fcsolve_p90']}"
        )
        self.say(f"ours shorter or equal on {s['ours_shorter_or_equal_deals']} of {len(common)} deals")
        ok = s["ours_median"] <= s["fcsolve_median"]
        how = f"median {s['ours_median']} {'<=' if ok else '>'} {s['fcsolve_median']}"
        if not ok:
            how += f" ({100 * (s['ours_median'] / s['fcsolve_median'] - 1):.1f}% longer)"
        target = {
            "target": "lengths: median single-card length <= fc-solve -l lg",
            "pass": ok,
            "value": s["ours_median"],
            "limit": s["fcsolve_median"],
            "text": verdict(ok, how),
        }
        if end - start + 1 < 1000:
            target["text"] += " [fewer deals than the target's 1..1000: indicative only]"
            target["indicative"] = True
        self.targets.append(target)
        return res


# ---------------------------------------------------------------------------


def cpu_caches() -> dict[str, str]:
    """The first CPU's caches as sysfs gives them ({"L1d": "48K", "L2":
    "2048K", ...}; empty where there is no sysfs): "model name" alone can be
    as vague as "Intel(R) Xeon(R) Processor", and the caches explain much of
    how the two solvers' times move between machines."""
    caches: dict[str, str] = {}
    for d in sorted(Path("/sys/devices/system/cpu/cpu0/cache").glob("index*")):
        try:
            level, kind, size = ((d / f).read_text().strip() for f in ("level", "type", "size"))
        except OSError:
            continue
        suffix = {"Data": "d", "Instruction": "i"}.get(kind, "")
        caches[f"L{level}{suffix}"] = size
    return caches


def environment(bench: Bench) -> dict[str, Any]:
    def git(*a: str) -> str:
        r = subprocess.run(["git", *a], cwd=REPO, capture_output=True, text=True, check=False)
        return r.stdout.strip()

    cpu_model = ""
    try:
        cpu_model = next(
            (
                ln.split(":", 1)[1].strip()
                for ln in Path("/proc/cpuinfo").read_text().splitlines()
                if ln.startswith("model name")
            ),
            "",
        )
    except OSError:
        pass
    return {
        "git_commit": git("rev-parse", "HEAD"),
        "engine_source_modified": bool(git("status", "--porcelain", "--", "engine/src")),
        "ours": bench.args.ours,
        "ours_commands": {o.key: o.describe() for o in bench.ours_all},
        "fcsolve_version": fcsolve_version(bench.fc["fc-solve"]),
        "peers": {k: {"label": p.label, "bin": str(p.bin_dir)} for k, p in bench.peers.items()},
        "pinned_cpu": bench.runner.cpu,
        "cpu_model": cpu_model,
        "cpu_caches": cpu_caches(),
        "cpus": os.cpu_count(),
        "loadavg_start": list(os.getloadavg()),
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="Examples:\n  python bench/vs_fcsolve.py --quick\n  python bench/vs_fcsolve.py --ms4 --held-out\n"
        "  python bench/vs_fcsolve.py --ms3 --range-repeat 1",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--ms4", action="store_true", help="MS 1..32000, 4 cells, against 6.16 a2, a, b and 5.0")
    p.add_argument(
        "--held-out",
        action="store_true",
        help=f"the 4-cell range on held-out deals: {', '.join(f'{a}..{b}' for a, b in HELD_OUT)}",
    )
    p.add_argument(
        "--ms3",
        action="store_true",
        help="MS 1..32000, 3 cells, against 6.16 b3 and 5.0 (5.0 needs ~11 GB)",
    )
    p.add_argument(
        "--proof", action="store_true", help="deal 11982, 4 cells vs fc-solve -to 01ABCDE (and -l fg, -l lg)"
    )
    p.add_argument(
        "--lengths", action="store_true", help="median/p90 solution length on 1..1000 vs fc-solve 5.0 -l lg"
    )
    p.add_argument(
        "--quick", action="store_true", help="smoke test: ranges of 300 deals and lengths on 1..100"
    )
    p.add_argument(
        "--start",
        type=int,
        default=1,
        help="first deal of the --ms4/--ms3 range (default 1); another range shows how the solvers do on "
        "other deals (targets then indicative)",
    )
    p.add_argument(
        "--end",
        type=int,
        help="last deal of the --ms4/--ms3 range (default 32000, or start + 31999; start + 299 with --quick)",
    )
    p.add_argument(
        "--chunk",
        type=int,
        default=4000,
        help="deals per chunk in the ranges; chunks rotate among the solvers (default 4000)",
    )
    p.add_argument("--lengths-end", type=int, help="last deal of --lengths (default 1000; 100 with --quick)")
    p.add_argument(
        "--repeat", type=int, help="repeats of each --proof run (median reported; default 5, 1 with --quick)"
    )
    p.add_argument(
        "--range-repeat",
        type=int,
        help="repeats of each range, chunks rotating each time; the median repeat's ratio is judged and "
        "every repeat's is printed (default 3 for 4 cells, 1 for 3 cells and with --quick)",
    )
    p.add_argument(
        "--cpu", default="0", help="core to pin every solver to with taskset, or 'none' (default 0)"
    )
    p.add_argument(
        "--ours",
        choices=("both", "python", "rust"),
        default="both",
        help="our solver as the installed Python API (analyzer.solve_range, judged), the "
        "engine/examples/bench_solve binary, or both (default; the Python API is judged)",
    )
    p.add_argument(
        "--peers",
        type=lambda s: [x.strip() for x in s.split(",") if x.strip()],
        help="only these peers, e.g. a2,5.0 (default: all of each workload's: a2, a, b, 5.0 with 4 cells; "
        "b3, 5.0 with 3)",
    )
    p.add_argument(
        "--fcs6-root",
        type=Path,
        default=Path("/opt"),
        help="where the fc-solve 6.16 builds are installed, or built if missing (default /opt)",
    )
    p.add_argument(
        "--fcs6-source",
        type=Path,
        default=FCS6_SOURCE,
        help=f"the folder with fc-solve 6.16's BUILD.sh (default {FCS6_SOURCE})",
    )
    p.add_argument(
        "--out", type=Path, default=RESULTS, help="directory for the JSON figures (default bench-results/)"
    )
    args = p.parse_args(argv)
    if not (args.ms4 or args.held_out or args.ms3 or args.proof or args.lengths):
        args.ms4 = args.held_out = args.ms3 = args.proof = args.lengths = True
    known = {*FCS6_VARIANTS, "5.0"}
    if args.peers and not set(args.peers) <= known:
        bad = ", ".join(sorted(set(args.peers) - known))
        print(f"vs_fcsolve: error: --peers: unknown peer {bad}; expected some of {', '.join(sorted(known))}",
              file=sys.stderr)  # fmt: skip
        return 2
    if args.start < 1:
        print(f"vs_fcsolve: error: --start {args.start}: deal numbers start at 1", file=sys.stderr)
        return 2
    span = 300 if args.quick else 32000
    end = args.end or (args.start - 1 + span)
    if end < args.start:
        print(f"vs_fcsolve: error: --end {end} is before --start {args.start}", file=sys.stderr)
        return 2
    lengths_end = args.lengths_end or (100 if args.quick else 1000)
    args.repeat = args.repeat or (1 if args.quick else 5)
    if args.range_repeat is not None and args.range_repeat < 1:
        print(f"vs_fcsolve: error: --range-repeat {args.range_repeat}: must be at least 1", file=sys.stderr)
        return 2
    try:
        bench = Bench(args)
    except BenchError as e:
        print(f"vs_fcsolve: error: {e}", file=sys.stderr)
        return 2
    env = environment(bench)
    for o in bench.ours_all:
        print(f"{o.label}: {o.describe()}")
    print(
        f"  (commit {env['git_commit'][:10]}{', engine/src modified' if env['engine_source_modified'] else ''})"
    )
    for peer in bench.peers.values():
        print(f"{peer.key}: {peer.label}: {peer.bin_dir}")
    print(f"pinned to CPU {env['pinned_cpu']}; load {env['loadavg_start']} (the machine is shared)")
    results: dict[str, Any] = {"environment": env, "workloads": {}}
    started = time.time()
    main_range = (args.start, end) == (1, 32000)
    try:
        if args.proof:
            results["workloads"]["proof"] = bench.workload_proof()
        if args.lengths:
            results["workloads"]["lengths"] = bench.workload_lengths(1, lengths_end)
        if args.ms4:
            results["workloads"]["ms4"] = bench.workload_range("ms4", 4, args.start, end, main_range)
        if args.held_out:
            for a, b in HELD_OUT:
                b = a + span - 1 if args.quick else b
                key = f"ms4-held-out-{a}"
                results["workloads"][key] = bench.workload_range(key, 4, a, b, not args.quick)
        if args.ms3:
            results["workloads"]["ms3"] = bench.workload_range("ms3", 3, args.start, end, main_range)
    except BenchError as e:
        print(f"vs_fcsolve: error: {e}", file=sys.stderr)
        return 2
    finally:
        bench.boards.cleanup()
    env["loadavg_end"] = list(os.getloadavg())
    env["wall_s"] = round(time.time() - started, 1)
    results["targets"] = bench.targets
    results["problems"] = bench.problems
    print(f"\n== targets (issues 3 and 25; machine shared, load {env['loadavg_end'][0]:.2f} at the end) ==")
    for t in bench.targets:
        print(f"{t['target']:72s} {t['text']}")
    for prob in bench.problems:
        print(f"PROBLEM: {prob}")
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"vs_fcsolve-{time.strftime('%Y%m%d-%H%M%S')}{'-quick' if args.quick else ''}.json"
    path.write_text(json.dumps(results, indent=2, default=str) + "\n")
    print(f"\nfigures saved to {path}")
    return 1 if bench.problems else 0


if __name__ == "__main__":
    sys.exit(main())
