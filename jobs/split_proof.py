"""One proof split across Ray workers by fingerprint range: the prototype of
docs/SOLVER.md, "One proof across workers".

Each owner is a Ray actor holding one `ProofPart` (the engine's
`prover::split`): the positions whose fingerprint falls in its share, their
visited set, and the positions admitted since its last expansion. The
driver runs breadth-first levels with a barrier between them: every owner
expands its new positions and returns its children's records as one Ray
object per destination owner; then every owner admits the objects meant for
it (Ray moves them from owner to owner; the driver only holds references)
and reports how many positions were new. A level in which no owner meets a
won position and no position is new ends the proof: `unsolvable`.

What the prototype leaves to the design: each owner keeps its whole share
in memory (the design keeps a layer's last three levels on its disk), and a
win is reported without its moves (the single-machine prover writes them).
It gives the same verdicts and stores the same positions as the prover
(tests/test_split_proof.py, and the engine's `prover::split` tests).

    python -m jobs.split_proof DEAL [--cells K] [--variant V] [--owners N]
        [--address A]

Exit 0 with the verdict on one line; 2 for a bad deal, variant, number of
cells or of owners.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass
from typing import Any

import analyzer
from analyzer import _engine


@dataclass(frozen=True)
class SplitProof:
    """How a split proof ended: `solved` (a won position was met) or
    `unsolvable`; the positions each owner stored, the levels searched, the
    positions expanded and the wall time."""

    outcome: str
    stored_per_owner: tuple[int, ...]
    levels: int
    expanded: int
    seconds: float

    @property
    def stored(self) -> int:
        return sum(self.stored_per_owner)


def _owner_class() -> Any:
    import ray

    @ray.remote
    class Owner:
        def __init__(self, variant: Any, owners: int, me: int) -> None:
            self.part = _engine.ProofPart(variant, owners, me)

        def admit(self, *batches: bytes) -> int:
            return sum(self.part.admit(b) for b in batches)

        def expand(self) -> tuple[Any, ...]:
            boxes, won = self.part.expand()
            return (won, *boxes)

        def figures(self) -> tuple[int, int]:
            return self.part.stored, self.part.expanded

    return Owner


def prove_split(board: analyzer.Board, owners: int = 2, cpus_per_owner: float = 1.0) -> SplitProof:
    """Decides `board` with `owners` Ray actors of `cpus_per_owner` CPUs each
    (Ray must be initialised and have room for them all at once)."""
    import ray

    if owners < 1:
        raise ValueError(f"owners must be at least 1, not {owners}")
    t0 = time.monotonic()
    start = _engine.ProofPart.entry(board._b, owners)
    if start is None:
        return SplitProof("solved", (0,) * owners, 0, 0, time.monotonic() - t0)
    Owner = _owner_class()
    actors = [Owner.options(num_cpus=cpus_per_owner).remote(board.variant, owners, i) for i in range(owners)]
    first, record = start
    ray.get([a.admit.remote(record) if i == first else a.admit.remote() for i, a in enumerate(actors)])
    levels, outcome = 0, "unsolvable"
    while True:
        levels += 1
        # One object per destination owner, plus the won flag.
        outs = [a.expand.options(num_returns=owners + 1).remote() for a in actors]
        if any(ray.get([o[0] for o in outs])):
            outcome = "solved"
            break
        new = ray.get([a.admit.remote(*[o[1 + j] for o in outs]) for j, a in enumerate(actors)])
        if sum(new) == 0:
            break
    figures = ray.get([a.figures.remote() for a in actors])
    for a in actors:
        ray.kill(a)
    return SplitProof(
        outcome,
        tuple(f[0] for f in figures),
        levels,
        sum(f[1] for f in figures),
        time.monotonic() - t0,
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m jobs.split_proof", description=__doc__.split("\n\n")[0])
    p.add_argument("deal", type=int)
    p.add_argument("--cells", type=int, default=None)
    p.add_argument("--variant", default="freecell")
    p.add_argument("--owners", type=int, default=2)
    p.add_argument("--address", default=None, help="Ray cluster to join (default: $RAY_ADDRESS, else start Ray here)")
    a = p.parse_args(argv)
    import ray

    if a.owners < 1:
        print(f"split_proof: --owners must be at least 1, not {a.owners}", file=sys.stderr)
        return 2
    try:
        board = analyzer.deal(a.deal, a.variant, cells=a.cells)
    except analyzer.AnalyzerError as e:
        print(f"split_proof: {e}", file=sys.stderr)
        return 2
    address = a.address or os.environ.get("RAY_ADDRESS") or "local"
    ray.init(address=address, include_dashboard=False, log_to_driver=False)
    try:
        r = prove_split(board, a.owners)
    finally:
        ray.shutdown()
    print(
        f"{a.deal} with {board.variant.cells} cells: {r.outcome}; {r.stored} positions stored "
        f"({', '.join(map(str, r.stored_per_owner))} by owner), {r.expanded} expanded, "
        f"{r.levels} levels, {r.seconds:.2f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
