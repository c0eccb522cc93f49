"""The ``run``, ``status`` and ``validate`` subcommands, registered into the
main parser by `analyzer.cli` (docs/DESIGN.md, "Subcommands and where they
live"): each handler returns the exit code and raises
`analyzer.errors.AnalyzerError` for user mistakes (one line, exit 2).

Nothing here imports Ray; ``run`` does so when it starts.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Final

from .check import DEFAULT_SAMPLE, status, validate
from .run import EXIT_CODES_HELP, RUN_EPILOG, add_run_arguments, handle_run, int_at_least

STATUS_EPILOG: Final = """\
exit status:
  0    complete: every deal the run was asked for has its rows
  2    DIR is not a run directory (no _run/run.json)
  3    incomplete: deals missing, or files the next run settles; run the
       same `run` command again to resume
  130  interrupted (Ctrl-C)

examples:
  freecell-analyzer status runs/ms32k
"""

VALIDATE_EPILOG: Final = """\
exit status:
  0    complete and valid
  1    invalid: files hold wrong data (changed since written, overlapping,
       broken invariants, a solution the verifier rejects); for a
       published dataset: any problem found
  2    DIR is not a run directory (no _run/run.json) nor a dataset
  3    incomplete: deals missing, or files the next `run` settles
  130  interrupted (Ctrl-C)

examples:
  freecell-analyzer validate runs/ms32k
  freecell-analyzer validate runs/ms32k --sample 1000
  freecell-analyzer validate runs/ms32k --all
"""


def handle_status(args: argparse.Namespace) -> int:
    """``status DIR``: prints coverage, missing ranges and outcome counts."""
    report = status(Path(args.dir))
    print(report.text())
    return report.exit_code


def handle_validate(args: argparse.Namespace) -> int:
    """``validate DIR [--all] [--sample N]``: prints what was checked and
    every problem found. A published dataset (``publish`` output) is checked
    by `reports.publish.validate_dataset` instead."""
    from reports.publish import is_dataset, validate_dataset

    if is_dataset(Path(args.dir)):
        problems = validate_dataset(Path(args.dir), replay=args.sample, replay_all=args.all, seed=args.seed)
        for line in problems:
            print(line)
        print(f"dataset {args.dir}: " + ("valid" if not problems else f"{len(problems)} problem(s)"))
        return 1 if problems else 0
    report = validate(Path(args.dir), replay_every=args.all, sample=args.sample, seed=args.seed)
    print(report.text())
    return report.exit_code


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Adds ``run``, ``status`` and ``validate`` to the main parser."""
    fmt = argparse.RawDescriptionHelpFormatter
    p = subparsers.add_parser(
        "run",
        help="solve a range of deals on Ray into a resumable Parquet run directory",
        description=(
            "Solve Microsoft deals DEALS on Ray (started here with all cores, or the cluster at "
            "--address / $RAY_ADDRESS), one Parquet file per chunk of deals in DIR/chunks. "
            "Re-running the same command resumes."
        ),
        epilog=RUN_EPILOG,
        formatter_class=fmt,
    )
    add_run_arguments(p)
    p.set_defaults(func=handle_run)

    p = subparsers.add_parser(
        "status",
        help="coverage, missing ranges and outcome counts of a run directory",
        description="Report what a run directory holds: coverage, missing deal ranges, outcome counts.",
        epilog=STATUS_EPILOG,
        formatter_class=fmt,
    )
    p.add_argument("dir", metavar="DIR", help="run directory (with run.json)")
    p.set_defaults(func=handle_status)

    p = subparsers.add_parser(
        "validate",
        help="check a run directory: coverage, duplicates, schema, invariants, replayed solutions",
        description=(
            "Check a run directory: coverage, duplicate deals, schema, one configuration, row invariants, "
            "and solutions replayed through the independent verifier (a sample, or --all)."
        ),
        epilog=VALIDATE_EPILOG,
        formatter_class=fmt,
    )
    p.add_argument("dir", metavar="DIR", help="run directory (with run.json)")
    p.add_argument("--all", action="store_true", help="replay every solution (default: a sample)")
    p.add_argument(
        "--sample",
        type=int_at_least(0),
        default=DEFAULT_SAMPLE,
        metavar="N",
        help=f"solutions replayed without --all (default: {DEFAULT_SAMPLE})",
    )
    p.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    p.set_defaults(func=handle_validate)

    from . import plan

    p = subparsers.add_parser(
        "plan",
        help="estimate a run's core-hours, wall time, output bytes and files from a sample it solves",
        description=(
            "Solve a random sample of DEALS here (one core) and estimate what `run DEALS` would cost: "
            "core-hours, wall time on N cores, output bytes, file count, deals/s per core."
        ),
        epilog="exit status:\n  0    estimate printed\n  2    bad DEALS or options\n\nexamples:\n"
        "  freecell-analyzer plan 1-8589934591 --cores 512\n  freecell-analyzer plan 1-1000000 --cells 3 --sample 2000\n",
        formatter_class=fmt,
    )
    plan.add_arguments(p)
    p.set_defaults(func=plan.handler)


__all__ = ["EXIT_CODES_HELP", "handle_status", "handle_validate", "register"]
