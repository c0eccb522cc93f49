"""The user's main job end to end, against fc-solve 6.16 a2 on the same deals.

    python bench/end_to_end.py                          # run 1-300 and run 1-32000, 3 repeats each
    python bench/end_to_end.py --deals 1-1000000 --repeats 1
    python bench/end_to_end.py --startup                # also: where Ray's start-up goes

Ours is ``freecell-analyzer run DEALS --out TMP -q --json`` in a fresh
process, as a user types it (local Ray started by the command, the driver
solving while it starts, every deal written to Parquet), and the same with
``--ray-only`` (every task on Ray's workers); the summary says how many
deals the driver solved and when Ray was up. The peer is fc-solve 6.16 a2 (the author's
benchmark build, ``lg-mod1`` compiled in) as two processes of
``freecell-solver-range-parallel-solve`` over the two halves of the deals,
one per core of this machine, started together. For each we print the wall
time (median of the repeats) and the CPU seconds the whole machine spent
meanwhile (from /proc/stat, so Ray's own processes count), then the ratio
ours / a2 and issue 25's target for it:

- ``run 1-32000``: wall ≤ 1.5× the two-process a2 run;
- ``run 1-300``: ≤ 3 s wall;
- ``run 1-1000000``: wall ≤ the two-process a2 run.

``--engine-alone`` also runs the engine by itself on the same deals, as
two processes over the two halves like a2 (``analyzer.solve_range_table``
in calls of 10,000 deals, the size of a run's tasks; nothing written, no
Ray): the floor a run could reach, so that ours / a2 splits into the
engine's share (engine alone / a2) and the run's own (ours / engine alone:
Ray's start, its workers, the Parquet files and their checks).

``--startup`` times the parts of a local Ray's start in this process:
``import ray``, ``ray.init`` (with the machine CPU it burns), the first task
on each worker, importing the engine in a worker, and the shutdown (``run``'s own
``connect`` and ``disconnect``),
and lists Ray's processes by the CPU each used while starting.

fc-solve 6.16 a2 is built from ../shared/peer/fc-solve-6.16 (BUILD.sh, about
6 minutes) when it is missing under --fcs6-root. Figures go in notes; the
machine is shared, so compare the ratios of one run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Final

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))

from vs_fcsolve import FCS6_SOURCE, FCS6_VARIANTS, BenchError, ensure_fcs6  # noqa: E402

from jobs.ranges import DealRange, count, parse_deals  # noqa: E402

#: Issue 25's targets: (ratio of the wall times ours / a2, or None) and
#: (absolute wall seconds, or None), by the deals of the run.
TARGETS: dict[str, tuple[float | None, float | None]] = {
    "1-32000": (1.5, None),
    "1-300": (None, 3.0),
    "1-1000000": (1.0, None),
}


def machine_cpu() -> float:
    """CPU seconds the machine has spent busy since boot (all cores)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (sum(v) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")


@dataclass
class Timing:
    wall: float
    cpu: float
    #: ours: deals the driver solved while its local Ray started, and when
    #: that Ray was up (None: the run was done first, or --ray-only).
    driver_deals: int = 0
    ray_up_s: float | None = None


def timed(start: list[list[str]], out: Path | None = None) -> Timing:
    """Starts every command at once and waits for all; wall and machine
    CPU. Their output goes to `out` (a single command's), else nowhere."""
    c0, t0 = machine_cpu(), time.perf_counter()
    with open(out or os.devnull, "wb") as sink:
        procs = [subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=sink) for cmd in start]
        codes = [p.wait() for p in procs]
    t1, c1 = time.perf_counter(), machine_cpu()
    if any(codes):
        raise BenchError(f"{start} exited with {codes}")
    return Timing(t1 - t0, c1 - c0)


def ours(deals: str, exe: str, ray_only: bool) -> Timing:
    """``run DEALS`` as a user types it, with ``--json`` for what the driver did."""
    with tempfile.TemporaryDirectory(prefix="e2e_") as tmp:
        cmd = [exe, "run", deals, "--out", str(Path(tmp) / "run"), "-q", "--json", *(["--ray-only"] if ray_only else [])]
        t = timed([cmd], Path(tmp) / "summary.json")
        doc = json.loads((Path(tmp) / "summary.json").read_text())
        t.driver_deals, t.ray_up_s = int(doc["driver_deals"]), doc["ray_up_s"]
        return t


def halves(deals: DealRange) -> list[tuple[int, int]]:
    """The two halves of `deals`, one process each (one per core)."""
    mid = (deals.start + deals.end) // 2
    return [(deals.start, mid), (mid + 1, deals.end)]


def a2_halves(deals: DealRange, root: Path) -> Timing:
    tool = root / FCS6_VARIANTS["a2"].directory / "bin" / "freecell-solver-range-parallel-solve"
    return timed([[str(tool), str(a), str(b), "1"] for a, b in halves(deals)])


def startup() -> None:
    """Where a local Ray's start-up goes, in this process."""
    c0, t0 = machine_cpu(), time.perf_counter()
    import ray

    from jobs.run import connect, disconnect

    t1 = time.perf_counter()
    connect("local")  # as `run` starts it: no dashboard
    t2, c2 = time.perf_counter(), machine_cpu()
    tck = os.sysconf("SC_CLK_TCK")
    procs: list[tuple[float, str]] = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        cpu = (int(fields[11]) + int(fields[12])) / tck
        if "ray" in cmd and cpu >= 0.05:
            words = cmd.split()
            scripts = [Path(w).name for w in words if w.endswith(".py")]
            name = words[0] if cmd.startswith("ray::") else (scripts[0] if scripts else Path(words[0]).name)
            procs.append((cpu, name))

    @ray.remote(num_cpus=1)
    def noop() -> int:
        return os.getpid()

    @ray.remote(num_cpus=1)
    def engine() -> float:
        t = time.perf_counter()
        import analyzer._engine  # noqa: F401
        import jobs.task  # noqa: F401

        return time.perf_counter() - t

    ray.get([noop.remote() for _ in range(2)])
    t3 = time.perf_counter()
    in_worker = ray.get([engine.remote() for _ in range(2)])
    t4 = time.perf_counter()
    disconnect()  # as `run` ends
    t5 = time.perf_counter()
    print("Ray's start-up, in this process (local, no dashboard):")
    print(f"  import ray {t1 - t0:.2f} s; ray.init {t2 - t1:.2f} s wall, {c2 - c0:.1f} s of machine CPU")
    print(f"  first task on each worker {t3 - t2:.2f} s; engine import in a worker {max(in_worker):.2f} s")
    print(f"  shutdown (ray.shutdown after the monitor is killed) {t5 - t4:.2f} s")
    print("  CPU each of Ray's processes used while starting:")
    for cpu, name in sorted(procs, reverse=True):
        print(f"    {cpu:5.2f} s  {name[:90]}")


#: The engine alone over deals ``argv[1]..argv[2]`` under the default
#: configuration, in calls the size of a run's tasks (`--engine-alone`).
ENGINE_ALONE: Final = """
import sys
import analyzer
from jobs.config import build_config
a, b, c = int(sys.argv[1]), int(sys.argv[2]), build_config()
for s in range(a, b + 1, 10_000):
    analyzer.solve_range_table(s, min(b, s + 9_999) + 1, c.variant, cells=c.cells[0], limits=c.limits, fail_deals=[])
"""


def engine_halves(deals: DealRange, python: str) -> Timing:
    return timed([[python, "-c", ENGINE_ALONE, str(a), str(b)] for a, b in halves(deals)])


def python_of(exe: str) -> str:
    """The interpreter that runs the console script `exe` (its ``#!`` line)."""
    with open(exe, "rb") as f:
        first = f.readline().decode(errors="replace").strip()
    return first[2:].strip() if first.startswith("#!") else sys.executable


def ray_install(exe: str) -> str:
    """Which Ray the command runs with: its core only, as the Quick start
    installs it (``.[ray,reports]``), or with the dashboard's dependencies
    (``ray[default]``, which ``.[dev]`` and ``.[cluster]`` bring), with which a
    local Ray also starts its dashboard modules and is seconds slower to
    start. Asked of the interpreter that runs `exe`."""
    python = python_of(exe)
    probe = "import ray.dashboard.optional_deps"
    full = subprocess.run([python, "-c", probe], capture_output=True).returncode == 0
    if not full:
        return "Ray: core only, as the Quick start installs it"
    return (
        "Ray: with the dashboard's dependencies (ray[default]): NOT as the Quick start installs it; "
        "its start is slower, so these figures do not judge issue 25's targets"
    )


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--deals", action="append", help="a run's deals, A-B (repeatable; default 1-300 and 1-32000)")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--fcs6-root", type=Path, default=Path("/opt"), help="where BUILD.sh installs (default /opt)")
    p.add_argument("--startup", action="store_true", help="also time the parts of Ray's start-up")
    p.add_argument("--engine-alone", action="store_true", help="also run the engine alone on the same deals (two processes, no Ray, nothing written)")
    a = p.parse_args()
    exe = shutil.which("freecell-analyzer")
    if exe is None:
        print("freecell-analyzer is not on PATH: install the project (pip install -e .)", file=sys.stderr)
        return 2
    try:
        ensure_fcs6(a.fcs6_root, ["a2"], FCS6_SOURCE)
    except BenchError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}; {a.repeats} repeats, medians")
    print(ray_install(exe))
    if a.startup:
        startup()
    for deals in a.deals or ["1-300", "1-32000"]:
        (r,) = parse_deals(deals)
        # Interleaved: ours, ours --ray-only, a2; repeated.
        alone = python_of(exe) if a.engine_alone else None
        mine: list[Timing] = []
        ray_only: list[Timing] = []
        peer: list[Timing] = []
        engine: list[Timing] = []
        for _ in range(a.repeats):
            mine.append(ours(deals, exe, False))
            ray_only.append(ours(deals, exe, True))
            peer.append(a2_halves(r, a.fcs6_root))
            if alone is not None:
                engine.append(engine_halves(r, alone))
        w_ours, w_peer = statistics.median(t.wall for t in mine), statistics.median(t.wall for t in peer)
        c_ours, c_peer = statistics.median(t.cpu for t in mine), statistics.median(t.cpu for t in peer)
        w_only, c_only = statistics.median(t.wall for t in ray_only), statistics.median(t.cpu for t in ray_only)
        ratio = w_ours / w_peer
        print(f"run {deals} ({count([r]):,} deals):")
        print(f"  ours: {w_ours:.2f} s wall ({', '.join(f'{t.wall:.2f}' for t in mine)}), {c_ours:.1f} s machine CPU")
        ups = ", ".join("done first" if t.ray_up_s is None else f"{t.ray_up_s:.1f} s" for t in mine)
        print(f"    the driver solved {', '.join(f'{t.driver_deals:,}' for t in mine)} deals while Ray started; Ray up after: {ups}")
        print(f"  ours --ray-only: {w_only:.2f} s wall ({', '.join(f'{t.wall:.2f}' for t in ray_only)}), {c_only:.1f} s machine CPU")
        print(f"  a2 as two processes: {w_peer:.2f} s wall ({', '.join(f'{t.wall:.2f}' for t in peer)}), {c_peer:.1f} s machine CPU")
        if engine:
            w_eng, c_eng = statistics.median(t.wall for t in engine), statistics.median(t.cpu for t in engine)
            print(f"  the engine alone as two processes: {w_eng:.2f} s wall ({', '.join(f'{t.wall:.2f}' for t in engine)}), {c_eng:.1f} s machine CPU")
            print(f"  machine CPU: engine alone / a2 {c_eng / c_peer:.2f}x, ours / engine alone {c_ours / c_eng:.2f}x")
        print(f"  wall ours / a2: {ratio:.2f}x (--ray-only: {w_only / w_peer:.2f}x)")
        want_ratio, want_wall = TARGETS.get(deals, (None, None))
        if want_ratio is not None:
            verdict = "met" if ratio <= want_ratio else f"missed by {ratio / want_ratio:.2f}x"
            print(f"  target wall <= {want_ratio:g}x a2: {verdict}")
        if want_wall is not None:
            verdict = "met" if w_ours <= want_wall else f"missed by {w_ours / want_wall:.2f}x"
            print(f"  target wall <= {want_wall:g} s: {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
