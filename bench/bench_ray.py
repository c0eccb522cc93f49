"""Benchmark: a Ray batch run against the engine's single-core `solve_range`.

    python bench/bench_ray.py                       # MS 1..32000, both ways
    python bench/bench_ray.py --deals 1-1000000 --skip-baseline --out runs/ms1m

Solves DEALS once with one `analyzer.solve_range` call per block of deals in
this process (one core, no files), then with `jobs.run.run` on a local Ray
with all cores (chunk files written, as a user's run would), and prints:
throughput of each, the ratio (the target is >= 1.8x on 2 cores), Ray's
start-up time, the per-chunk overhead (core-seconds per chunk not spent
solving: scheduling, Arrow, Parquet, rename), the peak memory of a worker,
and the unsolvable deals the run proved. It also asserts that both ways give
the same outcome and solution length for every deal: a benchmark that
times a wrong answer is worthless.

Refuses a debug build of the engine (`analyzer._engine.build_profile()`).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.dataset as ds

import analyzer
from analyzer import _engine
from jobs.config import build_config
from jobs.ranges import count, format_deals, parse_deals, ranges_of, split_chunks
from jobs.run import RunOptions, connect, run


def baseline(deals: str, limits: analyzer.Limits, block: int) -> tuple[float, dict[int, tuple[str, int | None]]]:
    """Wall seconds of single-core `solve_range` over DEALS, and the answers."""
    answers: dict[int, tuple[str, int | None]] = {}
    ranges = split_chunks(parse_deals(deals), block)
    t0 = time.perf_counter()
    for i, r in enumerate(ranges):
        for res in analyzer.solve_range(r.start, r.end + 1, limits=limits):
            assert res.deal_number is not None
            answers[res.deal_number] = (res.outcome, res.solution_length_multi)
        if i % 8 == 7:
            done = sum(len(x) for x in ranges[: i + 1])
            print(f"  baseline {done}/{count(ranges)} deals, {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    return time.perf_counter() - t0, answers


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--deals", default="1-32000")
    p.add_argument("--chunk-size", type=int, default=1000, help="deals per baseline call and per Ray task")
    p.add_argument("--max-positions", type=int, default=None, help="per-deal limit (default: the engine's)")
    p.add_argument("--out", type=Path, help="run directory to keep (default: a temporary one, deleted)")
    p.add_argument("--skip-baseline", action="store_true", help="only the Ray run")
    a = p.parse_args()

    profile = _engine.build_profile()
    if profile != "release":
        print(f"refusing to benchmark a {profile} engine: build it with `maturin develop --release`", file=sys.stderr)
        return 2

    config = build_config(max_positions=a.max_positions)
    n = count(parse_deals(a.deals))
    print(f"deals {a.deals} ({n}), {config.describe()}, engine {_engine.__version__} ({profile}), {os.cpu_count()} CPUs")
    load = os.getloadavg()[0]
    print(f"load average before: {load:.2f}")
    if load > 0.5:
        print("warning: the machine is busy; the figures below are shared with other processes", file=sys.stderr)

    base_s, answers = 0.0, dict[int, tuple[str, int | None]]()
    if not a.skip_baseline:
        base_s, answers = baseline(a.deals, config.limits, a.chunk_size)
        print(f"single-core solve_range: {base_s:.1f} s, {n / base_s:.1f} deals/s")

    tmp = None
    out = a.out
    if out is None:
        tmp = tempfile.mkdtemp(prefix="bench_ray_")
        out = Path(tmp) / "run"
    try:
        t0 = time.perf_counter()
        connect(None)  # timed apart from the run: Ray's start-up
        startup = time.perf_counter() - t0
        import ray

        cpus = int(ray.cluster_resources().get("CPU", 1))  # type: ignore[no-untyped-call]
        options = RunOptions(deals=parse_deals(a.deals), out=out, config=config, task_deals=a.chunk_size,
                             command=sys.argv)  # fmt: skip
        result = run(options)
        run_s = time.perf_counter() - t0 - startup
        ray.shutdown()
        if result.exit_code != 0:
            print(f"the Ray run ended with {result.status} (exit {result.exit_code})", file=sys.stderr)
            return 1

        table = ds.dataset(out, format="parquet", partitioning="hive").to_table(
            columns=["deal_number", "outcome", "solution_length_multi"]
        )
        rows = {int(d): (str(o), m) for d, o, m in zip(*(table.column(c).to_pylist() for c in table.column_names),
                                                       strict=True)}  # fmt: skip
        assert len(rows) == table.num_rows == n, "one row per deal"
        if answers:
            wrong = [d for d in answers if answers[d] != rows.get(d)]
            assert not wrong, f"Ray and solve_range disagree on deals {wrong[:10]}"

        tasks = max(1, result.tasks_done)
        solve, write = result.solve_s, result.write_s
        overhead = (cpus * run_s - solve) / tasks
        rss = result.max_worker_rss
        e2e = startup + run_s
        print(f"Ray ({cpus} CPUs, {tasks} tasks of {a.chunk_size} deals): start-up {startup:.1f} s, "
              f"run {run_s:.1f} s ({n / run_s:.1f} deals/s), end to end {e2e:.1f} s ({n / e2e:.1f} deals/s)")  # fmt: skip
        print(f"per task: solving {solve / tasks:.3f} s, writing {write / tasks * 1000:.1f} ms, "
              f"overhead {overhead * 1000:.0f} ms core-time (idle tail included)")  # fmt: skip
        print(f"peak worker memory (max RSS): {rss / 2**20:.0f} MiB")
        print(f"load average after: {os.getloadavg()[0]:.2f}")
        if base_s:
            print(f"solving core-seconds in Ray workers / single-core solve_range: {solve / base_s:.2f} "
                  "(1.00 = no slowdown from running two solvers at once)")  # fmt: skip
            print(f"throughput ratio vs single-core solve_range: {base_s / run_s:.2f}x (run), "
                  f"{base_s / e2e:.2f}x (end to end, Ray start-up included)")  # fmt: skip
        outcomes = {o: sum(1 for v in rows.values() if v[0] == o) for o in ("solved", "unsolvable", "limit", "error")}
        print("outcomes: " + ", ".join(f"{k} {v}" for k, v in outcomes.items()))
        unsolvable = sorted(d for d, v in rows.items() if v[0] == "unsolvable")
        print(f"unsolvable ({len(unsolvable)}): {format_deals(ranges_of(unsolvable)) or '-'}")
        limited = sorted(d for d, v in rows.items() if v[0] in ("limit", "error"))
        if limited:
            print(f"limit/error ({len(limited)}): {limited[:50]}")
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
