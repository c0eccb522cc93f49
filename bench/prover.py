"""The prover (the engine's exhaustive search) on the proofs the field has
settled, through the product's own command: `freecell-analyzer solve DEAL
--cells K --json`, one fresh process per proof, with its peak RSS.

    python bench/prover.py --known                  # 982@2, 1568@1, 1968@1
    python bench/prover.py --sample 40              # every 40th deal of 1..32000 at min-1
    python bench/prover.py --hard --max-bytes 14G --max-disk 120G
    python bench/prover.py --deals 20410:1,24966:1
    python bench/prover.py --wins --max-seconds 30  # wins the searches find hard

Each proof row: deal, cells, the published verdict, ours, seconds, positions
stored, peak memory as the search accounts it, bytes per stored position,
peak disk, peak RSS of the process. `--sample` reads Pringle's minimum-cells
table for MS 1..32000 (reports/data/pringle_ms32000_min_cells.txt) and proves
each sampled deal unsolvable with one cell fewer than its minimum (deals
whose minimum is 0 are skipped: nothing to prove). The closing lines count
agreements and give the projection of the sample to 1..32000.

A verdict that disagrees with the published one exits 1. Times depend on the
machine and its load: quote them with the load, or as ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PRINGLE = ROOT / "reports" / "data" / "pringle_ms32000_min_cells.txt"

#: Published verdicts (deal, cells, outcome): Pringle's table gives 982 a
#: minimum of 3 and 1568, 1968 a minimum of 2; the two hard deals are
#: unsolvable with 4 cells (settled with a disk-based solver on a 256 GB
#: machine).
KNOWN = [(982, 2, "unsolvable"), (1568, 1, "unsolvable"), (1968, 1, "unsolvable")]
HARD = [(219837216, 4, "unsolvable"), (2255988055, 4, "unsolvable")]
#: Wins the searches find hard: 496564 with 3 cells (fc-solve 6.16 b3 wins
#: it), and deals of MS 1..32000 at their minimum in Pringle's table that
#: `run 1-32000 --min-cells` left undetermined at 300 s (eleven). The first-move
#: probe wins the first three, the compact visited set 11744, the reserve
#: (docs/SOLVER.md) 12284, 20752, 5435, 9691, 16322 and 21165, and the
#: reserve's beam 13599 and 17760.
WINS = [
    (496564, 3, "solved"), (17331, 1, "solved"), (20337, 2, "solved"),
    (11744, 1, "solved"), (12284, 1, "solved"), (13599, 1, "solved"), (20752, 1, "solved"),
    (5435, 2, "solved"), (9691, 2, "solved"), (16322, 2, "solved"), (17760, 2, "solved"), (21165, 2, "solved"),
]  # fmt: skip


def pringle() -> dict[int, int]:
    digits = "".join(line.strip() for line in PRINGLE.read_text().splitlines() if line.strip() and not line.startswith("#"))
    return {i + 1: int(d) for i, d in enumerate(digits)}


def prove(deal: int, cells: int, args: argparse.Namespace) -> dict[str, object]:
    cmd = [
        sys.executable, "-m", "analyzer.cli", "solve", str(deal), "--cells", str(cells), "--json",
        "--max-bytes", args.max_bytes, "--max-disk", args.max_disk,
    ]
    if args.max_seconds:
        cmd += ["--max-seconds", args.max_seconds]
    if args.spill_dir:
        cmd += ["--spill-dir", args.spill_dir]
    t = time.monotonic()
    with tempfile.TemporaryFile("w+") as err_file:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err_file, text=True)
        assert proc.stdout is not None
        out = proc.stdout.read()
        _, _, usage = os.wait4(proc.pid, 0)  # reaped here, so its own peak RSS
        proc.returncode = 0
        err_file.seek(0)
        err = err_file.read()
    wall = time.monotonic() - t
    rss_mib = usage.ru_maxrss / 1024
    try:
        doc = json.loads(out)
    except json.JSONDecodeError:
        return {"deal": deal, "cells": cells, "outcome": "error", "error": err.strip()[-200:], "wall_s": wall, "rss_mib": rss_mib}
    return {
        "rss_mib": rss_mib,
        "deal": deal,
        "cells": cells,
        "outcome": doc["outcome"],
        "limit_reason": doc["limit_reason"],
        "elapsed_s": doc["elapsed_s"],
        "wall_s": wall,
        "stored": doc["positions_stored"],
        "expanded": doc["positions_expanded"],
        "peak_bytes": doc["peak_bytes"],
        "peak_disk": doc["peak_disk_bytes"],
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--known", action="store_true", help="982@2, 1568@1, 1968@1 (published: unsolvable)")
    p.add_argument("--hard", action="store_true", help="MS 219837216 and 2255988055 with 4 cells")
    p.add_argument("--wins", action="store_true", help="wins the searches find hard (published: solvable)")
    p.add_argument("--sample", type=int, metavar="STEP", help="every STEP-th deal of 1..32000 at its minimum less one")
    p.add_argument("--deals", metavar="D:K,...", help="these deals at these cell counts (published verdict: unsolvable)")
    p.add_argument("--max-bytes", default="1G", help="memory per proof (default 1G, the product's default)")
    p.add_argument("--max-disk", default="8G", help="spill disk per proof (default 8G)")
    p.add_argument("--max-seconds", help="time per proof (default none)")
    p.add_argument("--spill-dir", help="where proofs spill (default: the temporary directory)")
    args = p.parse_args(argv)
    jobs: list[tuple[int, int, str]] = []
    if args.known:
        jobs += KNOWN
    if args.hard:
        jobs += HARD
    if args.wins:
        jobs += WINS
    if args.deals:
        for item in args.deals.split(","):
            d, k = item.split(":")
            jobs.append((int(d), int(k), "unsolvable"))
    if args.sample:
        table = pringle()
        jobs += [(n, table[n] - 1, "unsolvable") for n in range(args.sample, 32001, args.sample) if table[n] > 0]
    if not jobs:
        p.error("nothing to run: give --known, --hard, --wins, --sample or --deals")
    print(f"# load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs; budgets {args.max_bytes} RAM, {args.max_disk} disk")
    cols = "deal cells published ours seconds stored B/pos peak_MiB disk_MiB rss_MiB".split()
    print("\t".join(cols))
    agree = disagree = open_ = 0
    total_s = 0.0
    for deal, cells, published in jobs:
        r = prove(deal, cells, args)
        rss_mib = float(r["rss_mib"])  # type: ignore[arg-type]
        ours = str(r["outcome"]) + (f"({r['limit_reason']})" if r.get("limit_reason") else "")
        if r["outcome"] == published:
            agree += 1
        elif r["outcome"] in ("solved", "unsolvable"):
            disagree += 1
        else:
            open_ += 1
        total_s += float(r.get("elapsed_s", r["wall_s"]))  # type: ignore[arg-type]
        stored = int(r.get("stored", 0))  # type: ignore[call-overload]
        peak = int(r.get("peak_bytes", 0))  # type: ignore[call-overload]
        print(
            f"{deal}\t{cells}\t{published}\t{ours}\t{float(r.get('elapsed_s', r['wall_s'])):.2f}\t{stored}\t"  # type: ignore[arg-type]
            f"{peak / stored if stored else 0:.1f}\t{peak / 2**20:.0f}\t{int(r.get('peak_disk', 0)) / 2**20:.0f}\t{rss_mib:.0f}",  # type: ignore[call-overload]
            flush=True,
        )
    print(f"# {len(jobs)} proofs: {agree} agree with the published verdict, {disagree} disagree, {open_} without a verdict; {total_s:.1f} s of search")
    if args.sample:
        print(f"# sample of every {args.sample}th deal: about {total_s * args.sample / 3600:.2f} core-hours of proofs for 1..32000")
    return 1 if disagree else 0


if __name__ == "__main__":
    sys.exit(main())
