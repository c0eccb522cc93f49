"""One proof split across Ray actors by fingerprint (jobs/split_proof.py) on
a real local Ray: the same verdicts as the engine's own search, and the same
positions stored however many owners share them."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
import ray

import analyzer
from jobs.split_proof import main, prove_split


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    ray.init(address="local", num_cpus=2, include_dashboard=False, logging_level=logging.WARNING)
    try:
        yield
    finally:
        ray.shutdown()


@pytest.mark.parametrize(("deal", "cells"), [(11982, 4), (12, 1)])
def test_an_unsolvable_deal_stores_the_same_positions_however_split(local_ray: None, deal: int, cells: int) -> None:
    board = analyzer.deal(deal, cells=cells)
    assert analyzer.solve(board).outcome == "unsolvable"
    one = prove_split(board, 1)
    three = prove_split(board, 3, cpus_per_owner=0.5)  # 3 owners on 2 CPUs
    assert one.outcome == three.outcome == "unsolvable"
    assert one.stored == three.stored > 1000
    assert one.expanded == three.expanded == one.stored
    # every owner holds a share of it, none holds it all
    assert len(three.stored_per_owner) == 3
    assert all(0 < s < three.stored for s in three.stored_per_owner)


def test_a_won_position_is_found(local_ray: None) -> None:
    # Deal 1 three fifths of the way along its solution: a short search wins.
    board = analyzer.deal(1)
    solution = analyzer.solve(board).solution
    for mv in solution[: len(solution) * 3 // 5]:
        board = board.apply(mv)
    r = prove_split(board, 2)
    assert r.outcome == "solved" and r.levels >= 2 and r.stored > 10


def test_bad_input_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("split_proof: deal number 0 is out of range")
    assert main(["1", "--owners", "0"]) == 2
    assert capsys.readouterr().err == "split_proof: --owners must be at least 1, not 0\n"
    assert main(["1", "--cells", "11"]) == 2
    assert capsys.readouterr().err.startswith("split_proof: ")
    with pytest.raises(ValueError, match="owners must be at least 1"):
        prove_split(analyzer.deal(1), 0)
