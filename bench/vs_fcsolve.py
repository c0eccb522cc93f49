#!/usr/bin/env python3
"""Our solver against fc-solve (Debian's freecell-solver-bin), in one run.

Both solvers run on the same deals, one after the other, pinned to one core
(``taskset -c CPU``), each as a child process timed the same way: CPU time
(user + system) from ``os.wait4`` (the child's own rusage) and peak RSS from
GNU time. Ranges run in chunks that alternate between the two solvers, and
ratios are ours / fc-solve measured in the same run, so load from other
users of the machine hits both sides alike.

Workloads (issue 3, item 7; none selected means all four):

``--ms4``      Microsoft deals 1..32000, 4 cells: ours (every verdict proved)
               against ``freecell-solver-range-parallel-solve 1 32000 1 -l lg``.
``--ms3``      The same with 3 cells (``--freecells-num 3``).
``--proof``    Deal 11982, 4 cells: ours against fc-solve's single-card
               exhaustive search ``-to 01ABCDE`` (and ``-l fg``, ``-l lg``).
``--lengths``  Median and 90th-percentile solution length in single-card
               moves on deals 1..1000, ours against fc-solve ``-l lg``; both
               counted by the same expansion of multi-card moves.

``--quick`` shrinks the ranges (1..300 and 1..100) for a smoke test.
Figures go to ``bench-results/vs_fcsolve-<time>.json``; see bench/README.md.

Examples::

    python bench/vs_fcsolve.py --quick
    python bench/vs_fcsolve.py --proof --lengths
    python bench/vs_fcsolve.py --ms4 --ms3
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
from typing import Any

REPO = Path(__file__).resolve().parent.parent
ENGINE = REPO / "engine"
RESULTS = REPO / "bench-results"

# Targets from issue 3 ("Targets"). MB and GB are decimal (10^6, 10^9 bytes),
# the stricter reading.
TARGETS = {
    "ms4": {"cpu_ratio": 0.5, "peak_bytes": 200e6},
    "ms3": {"cpu_ratio": 0.25, "peak_bytes": 1e9},
    "proof": {"cpu_ratio": 0.25},
}

FC_PACKAGE = "freecell-solver-bin"
# The board maker is called make-microsoft-freecell-board in Debian's package
# (the upstream name pi-make-... is not installed).
BOARD_MAKERS = ("make-microsoft-freecell-board", "pi-make-microsoft-freecell-board")
COLUMN_CHARS = "1234567890"
CELL_CHARS = "abcdefgijk"

# Runs our solver through the Python API (``--ours python``), printing the
# same lines as engine/examples/bench_solve.rs.
PY_WORKER = r"""
import sys, analyzer
s, e, k, sol = (int(x) for x in sys.argv[1:5])
out = sys.stdout
f = lambda x: "-" if x is None else str(x)
for a in range(s, e + 1, 1000):
    for r in analyzer.solve_range(a, min(a + 1000, e + 1), cells=k):
        line = (f"{r.deal_number}\t{r.outcome}\t{f(r.limit_reason)}\t{f(r.solution_length_single)}\t"
                f"{f(r.solution_length_multi)}\t{r.positions_expanded}\t{r.positions_stored}\t"
                f"{r.peak_bytes}\t{r.elapsed_s:.6f}")
        if sol:
            line += "\t" + " ".join(r.solution)
        out.write(line + "\n")
"""


def shown(cmd: list[str]) -> str:
    """A command for display, with the inline Python worker elided."""
    return " ".join("<worker>" if a == PY_WORKER else a for a in cmd)


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


# ---------------------------------------------------------------------------
# The two solvers


def find_or_install_fcsolve() -> dict[str, str]:
    """Paths of fc-solve's tools, installing the Debian package if needed."""
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
    """Our solver as a child process: the bench_solve example (default) or
    the installed Python engine."""

    def __init__(self, mode: str, runner: Runner) -> None:
        self.mode = mode
        self.runner = runner
        self.binary = build_bench_binary() if mode == "rust" else None

    def describe(self) -> str:
        return str(self.binary) if self.binary else f"{sys.executable} -c <analyzer.solve_range worker>"

    def command(self, start: int, end: int, cells: int, solutions: bool = False) -> list[str]:
        if self.binary is not None:
            cmd = [str(self.binary), str(start), str(end), "--cells", str(cells)]
            return cmd + (["--solutions"] if solutions else [])
        return [sys.executable, "-c", PY_WORKER, str(start), str(end), str(cells), str(int(solutions))]

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
        self.runner = Runner(None if args.cpu == "none" else int(args.cpu))
        self.ours = Ours(args.ours, self.runner)
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

    def say(self, text: str = "") -> None:
        print(text, flush=True)

    # -- ranges ------------------------------------------------------------

    def range_repeats(self, key: str) -> int:
        """Repeats of a whole range: --range-repeat, else 3 for ms4 (whose
        margin is within a noisy machine's run-to-run spread) and 1 for ms3."""
        if self.args.range_repeat:
            return int(self.args.range_repeat)
        return 3 if key == "ms4" and not self.args.quick else 1

    def workload_range(self, key: str, cells: int, start: int, end: int) -> dict[str, Any]:
        n = end - start + 1
        self.say(f"\n== {key}: Microsoft deals {start}..{end}, {cells} cells ==")
        extra = [] if cells == 4 else ["--freecells-num", str(cells)]
        # Chunks alternate between the solvers, so a change in the machine's
        # load during the run hits both alike.
        step = max(1, self.args.chunk)
        repeats = self.range_repeats(key)
        rows: dict[int, OursRow] = {}
        reached: set[int] = set()
        unsolved: set[int] = set()
        intractable: set[int] = set()
        # One (ours, fc-solve) pair of totals per repeat of the whole range.
        totals: list[tuple[Measured, Measured]] = []
        fc_cmd: list[str] = []
        for rep in range(repeats):
            if repeats > 1:
                self.say(f"repeat {rep + 1}/{repeats}:")
            ours_runs: list[Measured] = []
            fc_runs: list[Measured] = []
            for a in range(start, end + 1, step):
                b = min(end, a + step - 1)
                om, r = self.ours.run(a, b, cells)
                if rep == 0:
                    rows.update(r)
                else:
                    # The search is deterministic: every repeat must give
                    # the same outcomes, lengths and counts.
                    def answer(x: OursRow) -> tuple[object, ...]:
                        return (x.outcome, x.single_len, x.expanded, x.stored)

                    for d, row in r.items():
                        first = rows[d]
                        if answer(row) != answer(first):
                            self.problems.append(
                                f"{key}: deal {d} differs between repeats 1 and {rep + 1} "
                                f"({first.outcome}, {first.expanded} expanded against "
                                f"{row.outcome}, {row.expanded})"
                            )
                ours_runs.append(om)
                fc_cmd = [
                    self.fc["freecell-solver-range-parallel-solve"],
                    str(a),
                    str(b),
                    "1",
                    "-l",
                    "lg",
                    *extra,
                ]
                fm = self.runner.run(fc_cmd)
                fc_runs.append(fm)
                if rep == 0:
                    re_, un, it = parse_fc_range(fm.stdout)
                    reached |= re_
                    unsolved |= un
                    intractable |= it
                self.say(
                    f"  {a}..{b}: ours {om.cpu_s:.2f} s CPU, {om.maxrss_bytes / 1e6:.1f} MB; "
                    f"fc-solve {fm.cpu_s:.2f} s CPU, {fm.maxrss_bytes / 1e6:.1f} MB"
                )
            totals.append(
                (
                    combine(ours_runs, shown(self.ours.command(start, end, cells))),
                    combine(fc_runs, " ".join([*fc_cmd[:1], str(start), str(end), *fc_cmd[3:]])),
                )
            )
            if len(ours_runs) > 1:
                o, f = totals[-1]
                self.say(
                    f"  ({len(ours_runs)} chunks of up to {step} deals, alternating) "
                    f"ours {o.cpu_s:.2f} s, fc-solve {f.cpu_s:.2f} s CPU: {o.cpu_s / f.cpu_s:.3f}x"
                )
        # The ratio judged is the median repeat's (the higher of the two
        # middle ones for an even count); every repeat's ratio is reported.
        ratios = [o.cpu_s / f.cpu_s for o, f in totals]
        ratio = statistics.median_high(ratios)
        om, fm = totals[ratios.index(ratio)]
        om.maxrss_bytes = max(o.maxrss_bytes for o, _ in totals)
        fm.maxrss_bytes = max(f.maxrss_bytes for _, f in totals)
        if repeats > 1:
            self.say(
                f"ratios by repeat: {', '.join(f'{x:.3f}x' for x in ratios)}; "
                f"the median repeat's totals (peak RSS over all repeats):"
            )
        else:
            self.say("totals:")
        self.say(f"ours:     {om.cmd[0]}")
        self.say(
            f"          {om.cpu_s:.2f} s CPU, peak RSS {om.maxrss_bytes / 1e6:.1f} MB, wall {om.wall_s:.1f} s"
        )
        self.say(f"fc-solve: {fm.cmd[0]}")
        self.say(
            f"          {fm.cpu_s:.2f} s CPU, peak RSS {fm.maxrss_bytes / 1e6:.1f} MB, wall {fm.wall_s:.1f} s"
        )
        if len(reached) != n:
            raise BenchError(f"fc-solve reached {len(reached)} of {n} deals")
        fc_verdict = {
            d: "unsolved" if d in unsolved else "intractable" if d in intractable else "solved"
            for d in range(start, end + 1)
        }
        ours_counts = Counter(r.outcome for r in rows.values())
        fc_counts = Counter(fc_verdict.values())
        self.say(f"verdicts  ours: {dict(sorted(ours_counts.items()))}  (unsolvable = proved)")
        self.say(f"          fc-solve -l lg: {dict(sorted(fc_counts.items()))}  (unsolved = not a proof)")
        unproved = [d for d, r in rows.items() if r.outcome not in ("solved", "unsolvable")]
        disagreements = self.disagreements(rows, fc_verdict, cells)
        both_no = sorted(
            d for d, r in rows.items() if r.outcome == "unsolvable" and fc_verdict[d] == "unsolved"
        )
        self.say(
            f"both say not winnable (ours proved): {len(both_no)} {both_no[:20]}{' ...' if len(both_no) > 20 else ''}"
        )
        ratio = om.cpu_s / fm.cpu_s
        peak_solver = max(r.peak_bytes for r in rows.values())
        worst = max(rows.values(), key=lambda r: r.elapsed_s)
        slowest = sorted(rows.values(), key=lambda r: -r.elapsed_s)[:10]
        self.say(
            f"CPU ours/fc-solve = {om.cpu_s:.2f} / {fm.cpu_s:.2f} = {ratio:.3f}x; "
            f"peak RSS ours {om.maxrss_bytes / 1e6:.1f} MB, fc-solve {fm.maxrss_bytes / 1e6:.1f} MB"
        )
        self.say(
            f"ours: {sum(r.expanded for r in rows.values())} positions expanded, solver peak "
            f"{peak_solver / 1e6:.1f} MB, slowest deal {worst.deal} ({worst.elapsed_s:.3f} s wall, "
            f"{worst.expanded} expanded)"
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
        lim = TARGETS[key]
        targets.append(
            ratio_target(f"{key}: CPU <= {lim['cpu_ratio']}x fc-solve -l lg", ratio, lim["cpu_ratio"])
        )
        targets.append(
            mem_target(f"{key}: peak <= {lim['peak_bytes'] / 1e6:.0f} MB", om.maxrss_bytes, lim["peak_bytes"])
        )
        if (start, end) != (1, 32000):
            for x in targets:
                x["text"] += f" [deals {start}..{end}, not the target's 1..32000: indicative only]"
                x["indicative"] = True
        self.targets += targets
        return {
            "deals": f"{start}-{end}",
            "cells": cells,
            "chunk": step,
            "repeats": repeats,
            "cpu_ratio_runs": [round(x, 4) for x in ratios],
            "ours": om.figures()
            | {
                "verdicts": dict(ours_counts),
                "solver_peak_bytes": peak_solver,
                "positions_expanded": sum(r.expanded for r in rows.values()),
                "slowest_deal": worst.deal,
                "slowest_deal_wall_s": worst.elapsed_s,
                "slowest_deals": [
                    {"deal": r.deal, "outcome": r.outcome, "wall_s": r.elapsed_s, "expanded": r.expanded}
                    for r in slowest
                ],
                "unproved": unproved,
                "cpu_s_runs": [round(o.cpu_s, 4) for o, _ in totals],
            },
            "fcsolve": fm.figures()
            | {
                "cpu_s_runs": [round(f.cpu_s, 4) for _, f in totals],
                "verdicts": dict(fc_counts),
                "unsolved": sorted(unsolved),
                "intractable": sorted(intractable),
            },
            "cpu_ratio": round(ratio, 4),
            "both_not_winnable": both_no,
            "disagreements": disagreements,
        }

    def fc_single(self, deal: int, cells: int, args: list[str]) -> tuple[str, list[str]]:
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
        self, rows: dict[int, OursRow], fc_verdict: dict[int, str], cells: int
    ) -> list[dict[str, Any]]:
        out = []
        for d in sorted(rows):
            ours, fc = rows[d].outcome, fc_verdict[d]
            if (ours, fc) in (("solved", "solved"), ("unsolvable", "unsolved")):
                continue
            rec: dict[str, Any] = {"deal": d, "ours": ours, "fcsolve_lg": fc}
            if rows[d].limit:
                rec["ours_limit"] = rows[d].limit
            if ours == "solved":
                # fc-solve gave up; our solution decides if it replays.
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
                if fc == "solved":
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
            self.say(f"  disagreement deal {d}: ours {shown_ours}, fc-solve -l lg {fc} -> {rec['supported']}")
            out.append(rec)
        if not out:
            self.say("no disagreements")
        return out

    # -- deal 11982 ----------------------------------------------------------

    def workload_proof(self, deal: int = 11982, cells: int = 4) -> dict[str, Any]:
        self.say(f"\n== proof: deal {deal}, {cells} cells ==")
        board = str(self.boards.path(deal))
        fc = self.fc["fc-solve"]
        contenders = {
            "ours": self.ours.command(deal, deal, cells),
            "fcsolve_exhaustive_01ABCDE": [fc, "-to", "01ABCDE", "-sel", board],
            "fcsolve_fg": [fc, "-l", "fg", "-sel", board],
            "fcsolve_lg": [fc, "-l", "lg", "-sel", board],
        }
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
        for k in ("fcsolve_exhaustive_01ABCDE", "fcsolve_fg", "fcsolve_lg"):
            res[f"cpu_ratio_vs_{k.removeprefix('fcsolve_')}"] = round(ours_cpu / res[k]["cpu_s_median"], 4)
        ratio = ours_cpu / res["fcsolve_exhaustive_01ABCDE"]["cpu_s_median"]
        self.say(f"CPU ours / fc-solve -to 01ABCDE = {ratio:.3f}x")
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
                f"proof: CPU <= {TARGETS['proof']['cpu_ratio']}x fc-solve -to 01ABCDE",
                ratio,
                TARGETS["proof"]["cpu_ratio"],
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
        "ours_binary": bench.ours.describe(),
        "fcsolve_version": fcsolve_version(bench.fc["fc-solve"]),
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
        epilog="Examples:\n  python bench/vs_fcsolve.py --quick\n  python bench/vs_fcsolve.py --proof --lengths\n"
        "  python bench/vs_fcsolve.py --ms4 --ms3",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--ms4",
        action="store_true",
        help="MS 1..32000, 4 cells vs freecell-solver-range-parallel-solve -l lg",
    )
    p.add_argument(
        "--ms3",
        action="store_true",
        help="MS 1..32000, 3 cells vs -l lg --freecells-num 3 (fc-solve needs ~11 GB)",
    )
    p.add_argument(
        "--proof", action="store_true", help="deal 11982, 4 cells vs fc-solve -to 01ABCDE (and -l fg, -l lg)"
    )
    p.add_argument(
        "--lengths", action="store_true", help="median/p90 solution length on 1..1000 vs fc-solve -l lg"
    )
    p.add_argument("--quick", action="store_true", help="smoke test: ranges 1..300 and lengths on 1..100")
    p.add_argument(
        "--start",
        type=int,
        default=1,
        help="first deal of the --ms4/--ms3 range (default 1); another range, such as 32001, shows how both "
        "solvers do on deals that fc-solve's -l lg schedule was not tuned on (targets then indicative)",
    )
    p.add_argument(
        "--end",
        type=int,
        help="last deal of the --ms4/--ms3 range (default 32000, or start + 31999; 300 with --quick)",
    )
    p.add_argument(
        "--chunk",
        type=int,
        default=4000,
        help="deals per chunk in --ms4/--ms3; chunks alternate between the solvers (default 4000)",
    )
    p.add_argument("--lengths-end", type=int, help="last deal of --lengths (default 1000; 100 with --quick)")
    p.add_argument(
        "--repeat", type=int, help="repeats of each --proof run (median reported; default 5, 1 with --quick)"
    )
    p.add_argument(
        "--range-repeat",
        type=int,
        help="repeats of each --ms4/--ms3 range, alternating chunks each time; the median repeat's ratio "
        "is judged and every repeat's is reported (default 3 for --ms4, 1 for --ms3 and with --quick)",
    )
    p.add_argument(
        "--cpu", default="0", help="core to pin both solvers to with taskset, or 'none' (default 0)"
    )
    p.add_argument(
        "--ours",
        choices=("rust", "python"),
        default="rust",
        help="our solver as the engine/examples/bench_solve binary (default) or the installed Python API",
    )
    p.add_argument(
        "--out", type=Path, default=RESULTS, help="directory for the JSON figures (default bench-results/)"
    )
    args = p.parse_args(argv)
    if not (args.ms4 or args.ms3 or args.proof or args.lengths):
        args.ms4 = args.ms3 = args.proof = args.lengths = True
    if args.start < 1:
        print(f"vs_fcsolve: error: --start {args.start}: deal numbers start at 1", file=sys.stderr)
        return 2
    end = args.end or (args.start - 1 + (300 if args.quick else 32000))
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
    print(
        f"ours: {env['ours_binary']}  (commit {env['git_commit'][:10]}"
        f"{', engine/src modified' if env['engine_source_modified'] else ''})"
    )
    print(
        f"fc-solve: {env['fcsolve_version']}; pinned to CPU {env['pinned_cpu']}; load {env['loadavg_start']}"
    )
    results: dict[str, Any] = {"environment": env, "workloads": {}}
    started = time.time()
    try:
        if args.proof:
            results["workloads"]["proof"] = bench.workload_proof()
        if args.lengths:
            results["workloads"]["lengths"] = bench.workload_lengths(1, lengths_end)
        if args.ms4:
            results["workloads"]["ms4"] = bench.workload_range("ms4", 4, args.start, end)
        if args.ms3:
            results["workloads"]["ms3"] = bench.workload_range("ms3", 3, args.start, end)
    except BenchError as e:
        print(f"vs_fcsolve: error: {e}", file=sys.stderr)
        return 2
    finally:
        bench.boards.cleanup()
    env["loadavg_end"] = list(os.getloadavg())
    env["wall_s"] = round(time.time() - started, 1)
    results["targets"] = bench.targets
    results["problems"] = bench.problems
    print("\n== targets (issue 3) ==")
    for t in bench.targets:
        print(f"{t['target']:52s} {t['text']}")
    for prob in bench.problems:
        print(f"PROBLEM: {prob}")
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"vs_fcsolve-{time.strftime('%Y%m%d-%H%M%S')}{'-quick' if args.quick else ''}.json"
    path.write_text(json.dumps(results, indent=2, default=str) + "\n")
    print(f"\nfigures saved to {path}")
    return 1 if bench.problems else 0


if __name__ == "__main__":
    sys.exit(main())
