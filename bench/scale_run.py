"""Figures for the batch layer at scale, without solving (issue 24's scale test, measured):

1. `status` of a run directory covering deals 1..8,589,934,591 (8,590 indexed
   data files, sparse placeholders of the indexed sizes): wall time.
2. `validate` and `publish` of a synthetic run of N rows (default 5,000,000
   `limit` rows, 10^6 per file): wall time and peak RSS of each, in a fresh
   process.

    python bench/scale_run.py [--rows 5000000] [--keep DIR]

Prints figures only; the tests (tests/test_scale.py) assert behaviour.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from fixtures_runs import synthetic_run  # noqa: E402
from test_scale import full_range_run  # noqa: E402

from jobs import check  # noqa: E402
from jobs.ranges import DealRange  # noqa: E402


def measured(argv: list[str]) -> tuple[int, float, float]:
    code = (
        "import resource, subprocess, sys, time; t = time.perf_counter(); "
        f"r = subprocess.run({argv!r}, cwd={str(REPO)!r}, stdout=subprocess.DEVNULL); "
        "print(r.returncode, time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    return int(out[0]), float(out[1]), float(out[2])


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", type=int, default=5_000_000)
    p.add_argument("--keep", type=Path, help="build the runs here and keep them")
    a = p.parse_args()
    base = a.keep or Path(tempfile.mkdtemp(prefix="scale_run_"))
    print(f"load average: {os.getloadavg()[0]:.2f} ({os.cpu_count()} CPUs; shared machines vary)")
    try:
        t0 = time.perf_counter()
        full = full_range_run(base / "full")
        print(f"full-range run built (8,587 of 8,590 files indexed) in {time.perf_counter() - t0:.1f} s")
        t0 = time.perf_counter()
        report = check.status(full)
        print(f"status of 1..8,589,934,591: {time.perf_counter() - t0:.3f} s, exit {report.exit_code}")
        t0 = time.perf_counter()
        big = synthetic_run(base / "big", DealRange(1, a.rows), 10**6)
        print(f"synthetic run of {a.rows:,} rows built in {time.perf_counter() - t0:.1f} s")
        cli = [sys.executable, "-m", "analyzer.cli"]
        for name, argv in (
            ("validate", [*cli, "validate", str(big), "--sample", "0"]),
            ("publish", [*cli, "publish", str(big), "--out", str(base / "ds")]),
        ):
            code, wall, rss = measured(argv)
            print(f"{name} of {a.rows:,} rows: exit {code}, {wall:.1f} s, peak RSS {rss:.0f} MB")
        print(f"own peak RSS (builder): {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    finally:
        if a.keep is None:
            shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
