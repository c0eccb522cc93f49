"""``freecell-analyzer plan DEALS``: what a run would cost, from a sample.

It solves a sample of the deals here, one at a time on one core, under the
run's configuration, and scales up: core-hours, wall time on N cores, the
output's bytes and file count, and the deals per second per core. The sample
is drawn uniformly at random from DEALS (seeded, so the same command gives
the same sample), since cost varies along the deal numbers; its rows are
written as zstd Parquet to measure bytes per row. Figures are estimates:
the message says how the sample was drawn and how large it was.
"""

from __future__ import annotations

import argparse
import io
import math
import os
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from analyzer._api import MOVE_RULES
from analyzer.cliframe import (
    add_limit_options,
    count_option,
    option,
    parse_cell_count,
    parse_cell_range,
    parse_move_rule,
    parse_variant,
)

from .config import Provenance, RunConfig, config_from_args
from .ranges import DealRange, count, format_deals, parse_deals
from .runformat import default_file_deals, file_units

DEFAULT_SAMPLE: Final = 500
#: Deals per file-unit count beyond which the count is worked out, not listed.
_LIST_UNITS: Final = 100_000


@dataclass(frozen=True)
class Plan:
    deals: int
    sample: int
    seed: int
    cpu_s: float
    sample_bytes: int
    sample_rows: int
    cores: int
    cores_from: str
    files: int
    file_deals: int

    @property
    def deals_per_core_s(self) -> float:
        return self.sample / self.cpu_s if self.cpu_s > 0 else math.inf

    @property
    def core_hours(self) -> float:
        return self.deals / self.deals_per_core_s / 3600

    @property
    def wall_hours(self) -> float:
        return self.core_hours / self.cores

    @property
    def output_bytes(self) -> float:
        return self.sample_bytes / self.sample * self.deals


def draw(ranges: Sequence[DealRange], k: int, seed: int) -> list[int]:
    """`k` distinct deals drawn uniformly from `ranges` (all of them if fewer), sorted.

    >>> draw(parse_deals("1-10"), 3, 0)
    [1, 7, 10]
    """
    total = count(ranges)
    picks = sorted(random.Random(seed).sample(range(total), min(k, total)))
    out: list[int] = []
    it = iter(ranges)
    r = next(it)
    before = 0
    for p in picks:
        while p >= before + len(r):
            before += len(r)
            r = next(it)
        out.append(r.start + p - before)
    return out


def _hms(hours: float) -> str:
    if hours < 1 / 60:
        return f"{hours * 3600:.0f} s"
    if hours < 48:
        return f"{hours:.2f} h"
    return f"{hours / 24:.1f} days"


def plan(deals: Sequence[DealRange], config: RunConfig, *, sample: int, seed: int, cores: int, cores_from: str) -> Plan:
    # Imported here: `status` and `validate` load this module with the other
    # subcommands and need neither the solver's row builder nor pyarrow.parquet.
    import pyarrow as pa
    import pyarrow.parquet as pq

    from .chunks import solve_chunk

    picks = draw(deals, sample, seed)
    cpu = 0.0
    tables: list[pa.Table] = []
    prov = Provenance.current()
    for n in picks:
        t0 = time.process_time()
        tables.append(solve_chunk(n, n, config, prov).replace_schema_metadata(None))
        cpu += time.process_time() - t0
    table = pa.concat_tables(tables)
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="zstd")
    file_deals = default_file_deals(config)
    units = sum(1 for _ in file_units(deals, file_deals))
    return Plan(count(deals), len(picks), seed, cpu, buf.tell(), table.num_rows, cores, cores_from, units, file_deals)


def describe(p: Plan, deals_text: str, config: RunConfig) -> str:
    return "\n".join(
        [
            f"plan for {deals_text} ({p.deals:,} deals): {config.describe()}",
            f"sample: {p.sample:,} deals drawn uniformly at random from {deals_text} (seed {p.seed}), solved one at a time "
            f"on one core of this machine in {p.cpu_s:.1f} s of CPU",
            f"speed: {p.deals_per_core_s:,.0f} deals/s per core",
            f"cost: {p.core_hours:,.2f} core-hours; wall {_hms(p.wall_hours)} on {p.cores} cores ({p.cores_from}), "
            "plus Ray's start (seconds) and no allowance for other load",
            f"output: about {p.output_bytes / 1e9:,.2f} GB of zstd Parquet ({p.sample_bytes / p.sample:,.0f} bytes per deal "
            f"in the sample's own file; larger files compress somewhat better), {p.files:,} data files of up to "
            f"{p.file_deals:,} deals",
        ]
    )


#: Bounds of plan's own options: the sample is solved here on one core,
#: one deal at a time (a million deals is hours), and a core count beyond
#: a million is a typo.
MAX_SAMPLE: Final = 1_000_000
MAX_CORES: Final = 1_000_000


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``plan``: the run's own (read by `analyzer.cliframe`'s
    parsers, as ``run`` reads them), the sample, and where it would run."""
    p.add_argument(
        "deals", metavar="DEALS", type=option(parse_deals, "deals"), help="deal numbers: N, A-B or a comma list"
    )
    p.add_argument(
        "--variant", type=option(parse_variant, "variant"), default="freecell", metavar="V", help="rule preset (default: freecell)"
    )
    cells = p.add_mutually_exclusive_group()
    cells.add_argument(
        "--cells", type=option(parse_cell_range, "cells"), metavar="K|A-B", help="number of cells (0..10), or a range (default: the variant's)"
    )
    cells.add_argument("--min-cells", action="store_true", help="plan a --min-cells run")
    p.add_argument(
        "--max-cells", type=option(parse_cell_count, "cells"), metavar="K", help="with --min-cells: the most cells tried, 0..10 (default: 8)"
    )
    p.add_argument(
        "--move-rule", type=option(parse_move_rule, "move rule"), metavar="R", help=f"multi-card move rule: {', '.join(MOVE_RULES)}"
    )
    add_limit_options(p)
    p.add_argument(
        "--sample",
        type=count_option("deals", 1, MAX_SAMPLE),
        default=DEFAULT_SAMPLE,
        metavar="N",
        help=f"deals solved for the estimate, 1..{MAX_SAMPLE:,} (default {DEFAULT_SAMPLE})",
    )
    p.add_argument("--seed", type=count_option("seed", 0), default=0, metavar="N", help="seed of the random sample (default 0)")
    where = p.add_mutually_exclusive_group()
    where.add_argument(
        "--cores", type=count_option("cores", 1, MAX_CORES), metavar="N", help="cores of the run (default: this machine's)"
    )
    where.add_argument("--address", metavar="A", help="a Ray cluster whose CPUs the run would use")


def handler(args: argparse.Namespace) -> int:
    """``plan``: prints the estimate; exit 0."""
    deals: tuple[DealRange, ...] = args.deals
    config = config_from_args(args)
    if args.address:
        from .run import connect, disconnect

        joined = connect(args.address)
        import ray

        cores = int(ray.cluster_resources().get("CPU", 1))  # type: ignore[no-untyped-call]
        if joined:  # a Ray this process had already joined stays up, as in `run`
            disconnect()
        where = f"the CPUs of the Ray cluster at {args.address}"
    else:
        cores = args.cores or os.cpu_count() or 1
        where = "--cores" if args.cores else "this machine's"
    p = plan(deals, config, sample=args.sample, seed=args.seed, cores=cores, cores_from=where)
    print(describe(p, format_deals(deals, limit=8), config))
    return 0
