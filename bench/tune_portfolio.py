#!/usr/bin/env python3
"""Coordinate search over the portfolio members' heuristic weights.

Starts from the engine's settings (``engine/src/solver/tuning.toml``, or
``--tuning FILE`` in the same form). Each step tries every weight of every
member one up and one down, runs ``engine/examples/range.rs`` on the
training deals with each candidate's settings (``--tuning``), and keeps the
step with the lowest cost. It stops when no step helps or after ``--steps``
steps, and prints the best settings as a file of that form (or writes them
to ``--out``). The cost is the positions expanded in total (``--cost
expansions``), or an estimate of the CPU time that needs no timing
(``--cost time``): the members' expansions plus half the complete search's,
which costs about half as much per expansion. The counts are deterministic,
so no repetition is needed; check a result on held-out deals before adopting
it (docs/SOLVER.md, "Tuning").

    python bench/tune_portfolio.py --start 1 --end 4000 --cells 4 --steps 3
    python bench/tune_portfolio.py --deals train.txt --cells 3 --cost time --out tuned.toml

Exit codes: 0 done, 2 bad arguments, an unreadable settings file, or the
range example failed to build or run.
"""

from __future__ import annotations

import argparse
import copy
import os
import re
import subprocess
import sys
import tempfile
import tomllib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
SHIPPED = REPO / "engine" / "src" / "solver" / "tuning.toml"

Tuning = dict[str, Any]


def read_tuning(path: Path) -> Tuning:
    """Settings in the form of `tuning.toml` (the engine checks them in full)."""
    try:
        t = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise SystemExit(f"tune_portfolio: {path}: {e}") from e
    members = t.get("member")
    if not isinstance(members, list) or not members or not all(isinstance(m.get("weights"), dict) for m in members):
        raise SystemExit(f"tune_portfolio: {path}: expected [[member]] tables with weights")
    return t


def toml_value(v: object) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {toml_value(x)}" for k, x in v.items()) + " }"
    raise ValueError(f"not a value of a tuning file: {v!r}")


def to_toml(t: Tuning) -> str:
    """`t` in the form `read_tuning` reads: tables, then the [[member]] list."""
    out: list[str] = []
    for name, table in t.items():
        if isinstance(table, dict):
            out += [f"[{name}]", *(f"{k} = {toml_value(v)}" for k, v in table.items()), ""]
    for name, tables in t.items():
        if isinstance(tables, list):
            for table in tables:
                out += [f"[[{name}]]", *(f"{k} = {toml_value(v)}" for k, v in table.items()), ""]
    return "\n".join(out)


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
    scratch: Path

    def cost(self, binary: Path, tuning: Tuning) -> float:
        with tempfile.NamedTemporaryFile("w", suffix=".toml", dir=self.scratch, delete=False) as f:
            f.write(to_toml(tuning))
        args = [str(binary), str(self.start), str(self.end), "--cells", str(self.cells), "--tuning", f.name]
        if self.deals is not None:
            args += ["--deals", str(self.deals)]
        try:
            r = subprocess.run(args, capture_output=True, text=True, check=False)
        finally:
            os.unlink(f.name)
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


@dataclass(frozen=True)
class Step:
    """One weight of one member moved by one."""

    member: int
    term: str
    delta: int

    def apply(self, t: Tuning) -> Tuning:
        out = copy.deepcopy(t)
        w = out["member"][self.member]["weights"]
        w[self.term] = w.get(self.term, 0) + self.delta
        return out

    def describe(self, before: Tuning) -> str:
        old = before["member"][self.member]["weights"].get(self.term, 0)
        return f"member {self.member + 1} {self.term} {old} -> {old + self.delta}"


def neighbours(t: Tuning) -> list[Step]:
    """Every weight named in the settings, of every member, one up and one down (weights stay >= 0)."""
    out = []
    for i, m in enumerate(t["member"]):
        for term, value in m["weights"].items():
            for d in (-1, 1):
                if value + d >= 0:
                    out.append(Step(i, term, d))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--start", type=int, default=1)
    ap.add_argument("--end", type=int, default=4000)
    ap.add_argument("--deals", type=Path, help="file of deal numbers (instead of --start..--end)")
    ap.add_argument("--cells", type=int, default=4)
    ap.add_argument("--cost", choices=("expansions", "time"), default="expansions")
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--tuning", type=Path, default=SHIPPED, help="settings to start from (default: the engine's)")
    ap.add_argument("--out", type=Path, help="write the best settings here (default: print them)")
    a = ap.parse_args()
    if not 1 <= a.start <= a.end or a.steps < 0 or a.jobs < 1:
        print("tune_portfolio: need 1 <= start <= end, steps >= 0, jobs >= 1", file=sys.stderr)
        return 2
    if a.deals is not None and not a.deals.is_file():
        print(f"tune_portfolio: no such deals file: {a.deals}", file=sys.stderr)
        return 2
    best = read_tuning(a.tuning)
    binary = build_range()
    with tempfile.TemporaryDirectory(prefix="tune_portfolio.") as scratch:
        work = Work(a.start, a.end, a.cells, a.deals, a.cost == "time", Path(scratch))
        best_cost = work.cost(binary, best)
        print(f"start {best_cost:.0f}", flush=True)
        for step in range(a.steps):
            steps = neighbours(best)
            candidates = [s.apply(best) for s in steps]
            with ThreadPoolExecutor(a.jobs) as ex:
                costs = list(ex.map(lambda t: work.cost(binary, t), candidates))
            i = min(range(len(steps)), key=costs.__getitem__)
            if costs[i] >= best_cost:
                print(f"step {step}: no neighbour is better; done", flush=True)
                break
            print(f"step {step}: {costs[i]:.0f} ({steps[i].describe(best)})", flush=True)
            best, best_cost = candidates[i], costs[i]
    text = to_toml(best)
    if a.out is None:
        print(f"best settings ({best_cost:.0f}):\n{text}", end="")
    else:
        a.out.write_text(text)
        print(f"best settings ({best_cost:.0f}) in {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
