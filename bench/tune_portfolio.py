#!/usr/bin/env python3
"""Coordinate search over the portfolio members' heuristic weights.

Each step tries every weight of every member one up and one down, runs
``engine/examples/range.rs`` on the training deals with the candidate
portfolio (``FCA_PORTFOLIO``), and keeps the step with the lowest cost. It
stops when no step helps or after ``--steps`` steps. The cost is the
positions expanded in total (``--cost expansions``), or an estimate of the
CPU time that needs no timing (``--cost time``): the members' expansions
plus half the complete search's, which costs about half as much per
expansion (docs/SOLVER.md). The counts are deterministic, so no repetition
is needed; check a result on held-out deals before adopting it
(docs/SOLVER.md, "Tuning knobs").

    python bench/tune_portfolio.py --start 1 --end 4000 --cells 4 --steps 3
    python bench/tune_portfolio.py --deals train.txt --cells 3 --cost time

Exit codes: 0 done, 2 bad arguments or the range example failed to build/run.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

@dataclass(frozen=True)
class Member:
    weights: tuple[int, ...]
    pruned: bool
    depth_weight: int
    park: bool
    join: int = 0

    def spec(self) -> str:
        flags = f"{int(self.pruned)}/{self.depth_weight}/{int(self.park)}/1/{self.join}"
        return ",".join(map(str, self.weights)) + "/" + flags


def parse_member(text: str) -> Member:
    w, pruned, depth, park, *rest = text.split("/")
    join = int(rest[1]) if len(rest) > 1 else 0
    return Member(tuple(int(x) for x in w.split(",")), pruned == "1", int(depth), park == "1", join)


def engine_portfolio() -> str:
    """The members of `PORTFOLIO` in engine/src/solver.rs, as `FCA_PORTFOLIO` spells them."""
    src = (REPO / "engine" / "src" / "solver.rs").read_text()
    block = src[src.index("pub const PORTFOLIO: [Config; ") :]
    block = block[: block.index("];")]
    members = []
    for m in re.finditer(
        r"weights: \[([\d, ]+)\],\s*pruned: (\w+),\s*eager: true,\s*depth_weight: (\d+),"
        r"\s*park: (\w+),\s*join: (\d+),",
        block,
    ):
        w = ",".join(x.strip() for x in m.group(1).split(","))
        members.append(f"{w}/{int(m.group(2) == 'true')}/{m.group(3)}/{int(m.group(4) == 'true')}/1/{m.group(5)}")
    if len(members) != block.count("Config {"):
        raise SystemExit("tune_portfolio: could not read PORTFOLIO from engine/src/solver.rs")
    return ";".join(members)


def spec(portfolio: tuple[Member, ...]) -> str:
    return ";".join(m.spec() for m in portfolio)


def build_range() -> Path:
    r = subprocess.run(
        ["cargo", "build", "--release", "--example", "range"],
        cwd=REPO / "engine",
        capture_output=True,
        text=True,
        check=False,
    )
    if r.returncode != 0:
        raise SystemExit(f"tune_portfolio: cargo build of the range example failed:\n{r.stderr[-2000:]}")
    return REPO / "engine" / "target" / "release" / "examples" / "range"


@dataclass(frozen=True)
class Work:
    """The training deals and what a candidate is charged for them."""

    start: int
    end: int
    cells: int
    deals: Path | None
    time: bool

    def cost(self, binary: Path, portfolio: tuple[Member, ...]) -> float:
        env = dict(os.environ, FCA_PORTFOLIO=spec(portfolio))
        if self.deals is not None:
            env["FCA_DEALS_FILE"] = str(self.deals)
        r = subprocess.run(
            [str(binary), str(self.start), str(self.end), str(self.cells)],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        m = re.search(r"expanded (\d+) \(", r.stdout)
        proof = re.search(r"complete search expanded (\d+)", r.stdout)
        limit = re.search(r"limit (\d+);", r.stdout)
        if r.returncode != 0 or m is None or proof is None or limit is None:
            raise SystemExit(f"tune_portfolio: the range example failed:\n{r.stderr[-2000:]}")
        total = int(m.group(1))
        # The complete search's expansions cost about half a member's.
        cost = total - int(proof.group(1)) / 2 if self.time else total
        # A deal ending as `limit` disqualifies the candidate.
        return cost + (10**12 if int(limit.group(1)) > 0 else 0)


def neighbours(portfolio: tuple[Member, ...]) -> list[tuple[Member, ...]]:
    out = []
    for i, m in enumerate(portfolio):
        for j in range(len(m.weights)):
            for d in (-1, 1):
                w = list(m.weights)
                w[j] += d
                if w[j] >= 0:
                    out.append((*portfolio[:i], replace(m, weights=tuple(w)), *portfolio[i + 1 :]))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--start", type=int, default=1)
    ap.add_argument("--end", type=int, default=4000)
    ap.add_argument("--deals", type=Path, help="file of deal numbers (instead of --start..--end)")
    ap.add_argument("--cells", type=int, default=4)
    ap.add_argument("--cost", choices=("expansions", "time"), default="expansions")
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--portfolio", help="members as FCA_PORTFOLIO spells them (default: the engine's)")
    a = ap.parse_args()
    if not 1 <= a.start <= a.end or a.steps < 0 or a.jobs < 1:
        print("tune_portfolio: need 1 <= start <= end, steps >= 0, jobs >= 1", file=sys.stderr)
        return 2
    if a.deals is not None and not a.deals.is_file():
        print(f"tune_portfolio: no such deals file: {a.deals}", file=sys.stderr)
        return 2
    work = Work(a.start, a.end, a.cells, a.deals, a.cost == "time")
    binary = build_range()
    best = tuple(parse_member(t) for t in (a.portfolio or engine_portfolio()).split(";"))
    best_cost = work.cost(binary, best)
    print(f"start {best_cost:.0f} {spec(best)}", flush=True)
    for step in range(a.steps):
        cands = neighbours(best)
        with ThreadPoolExecutor(a.jobs) as ex:
            costs = list(ex.map(lambda p: work.cost(binary, p), cands))
        i = min(range(len(cands)), key=costs.__getitem__)
        if costs[i] >= best_cost:
            print(f"step {step}: no neighbour is better; done", flush=True)
            break
        best, best_cost = cands[i], costs[i]
        print(f"step {step}: {best_cost:.0f} {spec(best)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
