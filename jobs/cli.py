"""The ``run``, ``status``, ``validate`` and ``plan`` subcommands, registered
into the main parser by `analyzer.cli` (docs/DESIGN.md, "Subcommands and
where they live") and built with `analyzer.cliframe`: each handler returns
the exit code and raises `analyzer.errors.AnalyzerError` for user mistakes
(one line, its exit code).

Nothing here imports Ray; ``run`` does so when it starts. Nothing in
`jobs` imports `reports`: ``validate`` of a published dataset is checked by
the dataset format's owner, which hooks itself in (`DatasetCheck`,
``args.check_dataset``; `reports.cli.register` sets it when both are
loaded).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Final, TypeAlias

from analyzer.cliframe import add_json_option, add_subcommand, add_verbosity_options, count_option

from . import plan
from .check import DEFAULT_SAMPLE, SHOW_PROBLEMS, status, validate
from .run import RUN_DESCRIPTION, RUN_EXAMPLES, RUN_NOTES, add_run_arguments, handle_run

if TYPE_CHECKING:
    from analyzer.cliframe import Subparsers

#: ``validate DIR`` of a published dataset: the handler of the package that
#: owns the dataset format, returning the exit code, or ``None`` when DIR is
#: not a dataset (then it is checked as a run directory).
DatasetCheck: TypeAlias = Callable[[argparse.Namespace], "int | None"]

STATUS_DESCRIPTION: Final = """\
Report what a run directory holds, from its index and a listing of its
directories alone (no data file is opened, so it answers at once whatever
the run's size). It opens with the answer so far, counted in deals: how
many are solved, proved unsolvable or stopped by a limit (percentages that
never round one deal away), the first 20 unsolvable deals and limit deals
(with the budget that ran out); then coverage, missing deal ranges, files,
row counts, the invocations and who holds the run now.

Exit 0 when every deal the run was asked for has its rows; 3 when deals are
missing or files wait for the next run to settle them (run the same `run`
command again to resume); 2 when DIR is not a run directory (no
_run/run.json)."""

VALIDATE_DESCRIPTION: Final = """\
Check a run directory: every data file read through the one checked reader
(its sha256 against the run's index, page checksums, metadata, schema,
configuration, every deal present once, the row invariants), no two files
overlapping, and solutions replayed through the independent verifier (a
sample, or --all). A published dataset (publish's output) is checked
against its checksums, card and datapackage instead, replaying --sample N
solutions or --all.

Exit 0 when complete and valid; 1 when files hold wrong data (changed since
written, overlapping, broken invariants, a solution the verifier rejects;
for a published dataset: any problem found); 3 when deals are missing or
files wait for the next `run` to settle them; 2 when DIR is neither a run
directory (no _run/run.json) nor a dataset."""

PLAN_DESCRIPTION: Final = """\
Solve a random sample of DEALS here (one core, seeded) under the run's
configuration and estimate what `run DEALS` would cost: core-hours, wall
time on N cores, output bytes, file count, deals/s per core. It says how
the sample was drawn.

Exit 0 when the estimate is printed; 2 for bad DEALS or options."""


def handle_status(args: argparse.Namespace) -> int:
    """``status DIR``: prints coverage, missing ranges and outcome counts."""
    report = status(Path(args.dir))
    if args.json:
        print(json.dumps(report.to_dict()))
    else:
        print(report.text(args.verbosity))
    return report.exit_code


def handle_validate(args: argparse.Namespace) -> int:
    """``validate DIR [--all] [--sample N]``: prints what was checked and
    every problem found. A published dataset is checked by the hook its
    owner set (``args.check_dataset``, a `DatasetCheck`)."""
    check: DatasetCheck | None = getattr(args, "check_dataset", None)
    if check is not None:
        code = check(args)
        if code is not None:
            return code
    report = validate(Path(args.dir), replay_every=args.all, sample=args.sample, seed=args.seed)
    if args.json:
        print(json.dumps(report.to_dict()))
    else:
        print(report.text(args.verbosity))
    return report.exit_code


def register(subparsers: Subparsers) -> None:
    """Adds ``run``, ``status``, ``validate`` and ``plan`` to the main parser."""
    p = add_subcommand(
        subparsers,
        "run",
        handler=handle_run,
        summary="solve a range of deals on Ray into a resumable Parquet run directory",
        description=RUN_DESCRIPTION,
        examples=RUN_EXAMPLES,
        notes=RUN_NOTES,
    )
    add_run_arguments(p)

    p = add_subcommand(
        subparsers,
        "status",
        handler=handle_status,
        summary="coverage, missing ranges and outcome counts of a run directory",
        description=STATUS_DESCRIPTION,
        examples="""
            freecell-analyzer status runs/ms32k
            freecell-analyzer status runs/ms32k --json
            freecell-analyzer status runs/ms32k --quiet || echo "not complete yet"
        """,
    )
    p.add_argument("dir", metavar="DIR", help="run directory (with _run/run.json)")
    add_json_option(p, "the status (coverage, missing deals, files, outcome counts, every invocation)")
    add_verbosity_options(
        p, quiet="print only the status line", verbose="also list every invocation of the directory's history"
    )

    p = add_subcommand(
        subparsers,
        "validate",
        handler=handle_validate,
        summary="check a run directory: coverage, checksums, invariants, replayed solutions",
        description=VALIDATE_DESCRIPTION,
        examples="""
            freecell-analyzer validate runs/ms32k
            freecell-analyzer validate runs/ms32k --sample 1000
            freecell-analyzer validate runs/ms32k --all --json > validate.json
            freecell-analyzer validate datasets/ms32k/1.0.0 --all
        """,
    )
    p.add_argument("dir", metavar="DIR", help="run directory (with _run/run.json) or published dataset")
    p.set_defaults(check_dataset=None)
    p.add_argument("--all", action="store_true", help="replay every solution (default: a sample)")
    p.add_argument(
        "--sample",
        type=count_option("solutions", 0, 10**9),
        default=DEFAULT_SAMPLE,
        metavar="N",
        help=f"solutions replayed without --all, 0..1,000,000,000 (default: {DEFAULT_SAMPLE})",
    )
    p.add_argument("--seed", type=count_option("seed", 0), default=0, help=argparse.SUPPRESS)
    add_json_option(p, "what was checked and every problem found")
    add_verbosity_options(
        p,
        quiet="print only the result line",
        verbose=f"print every PROBLEM line (by default the first {SHOW_PROBLEMS} of each kind)",
    )

    p = add_subcommand(
        subparsers,
        "plan",
        handler=plan.handler,
        summary="estimate a run's core-hours, wall time, output bytes and files from a sample it solves",
        description=PLAN_DESCRIPTION,
        examples="""
            freecell-analyzer plan 1-8589934591 --cores 512
            freecell-analyzer plan 1-1000000 --cells 3 --sample 2000
        """,
    )
    plan.add_arguments(p)


__all__ = ["DatasetCheck", "handle_status", "handle_validate", "register"]
