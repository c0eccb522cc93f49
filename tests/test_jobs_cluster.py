"""A simulated multi-node cluster (`ray.cluster_utils.Cluster`): a node
removed in the middle of a run loses its tasks, Ray retries them elsewhere,
and the dataset is identical to an undisturbed run's."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import ray
from ray import cluster_utils
from test_jobs import cli, dataset, reference

import jobs.run
from jobs.config import build_config
from jobs.ranges import DealRange
from jobs.task import TaskSummary

CONFIG = build_config(max_positions=200_000)
DEALS = DealRange(1, 48)


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    # The head has no CPU, so every solving task runs on one of the two workers (sealing asks for no CPU and may run anywhere).
    c = cluster_utils.Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "include_dashboard": False})
    c.add_node(num_cpus=1)
    c.add_node(num_cpus=1)
    c.wait_for_nodes()
    ray.init(address=c.address)
    try:
        yield c
    finally:
        ray.shutdown()
        c.shutdown()  # type: ignore[no-untyped-call]


def _options(out: Path) -> jobs.run.RunOptions:
    return jobs.run.RunOptions(
        deals=(DEALS,), out=out, config=CONFIG, task_deals=3, file_deals=10, max_in_flight=4, command=["test"]
    )


def test_node_lost_mid_run(cluster: Any, tmp_path: Path) -> None:
    calm = jobs.run.run(_options(tmp_path / "calm"))
    assert calm.exit_code == 0

    workers = {n.node_id: n for n in cluster.list_all_nodes() if n is not cluster.head_node}
    removed: list[str] = []

    def remove_a_node(summary: TaskSummary) -> None:
        # After the first chunk, remove the node it ran on: Ray has already
        # given that node's freed CPU to a queued chunk, which is lost with it.
        if not removed:
            cluster.remove_node(workers[summary["node_id"]], allow_graceful=False)
            removed.append(summary["node_id"])

    disturbed = jobs.run.run(_options(tmp_path / "disturbed"), on_chunk=remove_a_node)
    assert removed and disturbed.exit_code == 0, disturbed.failed
    # (Ray logs "Task run_chunk failed ... the node it was running on is
    # dead ... will be retried"; the lost node's orphaned worker may still
    # finish its attempt too, which the atomic rename makes harmless.)

    want = reference(DEALS, CONFIG).to_pylist()
    assert dataset(tmp_path / "calm").to_pylist() == want
    assert dataset(tmp_path / "disturbed").to_pylist() == want
    assert cli(["validate", str(tmp_path / "disturbed")]) == 0
