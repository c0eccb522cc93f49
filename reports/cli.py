"""The `report` and `publish` subcommands (docs/DESIGN.md, "Subcommands").

`analyzer.cli` imports this module lazily and calls `register(subparsers)`
(or, for ``validate``, only `extend`, which lends jobs' ``validate`` the
check of a published dataset); the subcommands are built with
`analyzer.cliframe`, each handler returns the exit code, and what goes
wrong raises an `analyzer.errors.AnalyzerError`, which
`analyzer.cliframe.guarded` turns into one line and the error's exit code:
2 for bad usage or input, 1 for a run that ``validate`` would call invalid
(`reports.load.RunInvalidError`), 3 for a full disk and 2 for a read-only
or forbidden output (`analyzer.errors.StorageError`). ``python -m
reports.cli`` runs the same subcommands; the ``python -m reports.<module>``
entry points use `analyzer.cliframe.run_main` directly, so no reports
module imports this one.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from analyzer.cliframe import add_subcommand, dispatch, standalone

if TYPE_CHECKING:
    from analyzer.cliframe import Subparsers

REPORT_DESCRIPTION: Final = """\
Write report.html (one self-contained page: figures embedded, tables that
sort offline), report.md (figures as PNG beside it) and the summary tables
as CSV for one run, or a comparison of several runs; each opens with the
answer (outcome counts in deals, the unsolvable and limit deals). Same
input, same output bytes. Runs are read through the one checked reader.

Exit 0 when written; 1 when a run holds wrong data (what `validate` calls
invalid; the file is named); 2 for bad usage or input (an empty or non-run
directory, mixed configurations without --allow-mixed, runs of different
deals without --normalise or --common-deals, a read-only output); 3 when
the disk fills (free space and run it again)."""

PUBLISH_DESCRIPTION: Final = """\
Publish a complete run as DATASET_DIR/VERSION, streaming it through the one
checked reader: sharded Parquet in the Hugging Face layout
(data/train-NNNNN-of-MMMMM.parquet, row groups by deal range), a dataset
card (README.md), datapackage.json, SHA256SUMS, CITATION.cff and the run
manifest; then re-checks what it wrote. An existing version is never
changed.

Exit 0 when published; 1 when the run holds wrong data (what `validate`
calls invalid; the file is named); 2 for bad usage or input (an incomplete
run, a version already published, a read-only output); 3 when the disk
fills (free space and run it again)."""


REPORT_SUMMARY: Final = "tables and figures of one or more runs (report.html, report.md, CSV)"
PUBLISH_SUMMARY: Final = "a citable dataset from a complete run (Parquet, card, datapackage, checksums)"


def register_brief(subparsers: Subparsers) -> None:
    """Adds `report` and `publish` by name and summary only, for the main
    ``--help``: the modules that own their options import pandas and
    matplotlib (about 2 s), which listing them does not need."""
    for name, summary in (("report", REPORT_SUMMARY), ("publish", PUBLISH_SUMMARY)):
        subparsers.add_parser(name, help=summary)


def register(subparsers: Subparsers) -> None:
    """Adds `report` and `publish` to the main parser's subcommands."""
    from . import publish, report

    p = add_subcommand(
        subparsers,
        "report",
        handler=report.handler,
        summary=REPORT_SUMMARY,
        description=REPORT_DESCRIPTION,
        examples="""
            freecell-analyzer report runs/ms32000 --out reports/ms32000
            freecell-analyzer report runs/cells3 runs/cells4 --out reports/cells --allow-mixed
            freecell-analyzer report runs/fc-1k runs/fc-32k --allow-mixed --normalise --out reports/sizes
            python -m reports.report runs/ms32000 --out reports/ms32000
        """,
    )
    report.add_arguments(p)

    p = add_subcommand(
        subparsers,
        "publish",
        handler=publish.handler,
        summary=PUBLISH_SUMMARY,
        description=PUBLISH_DESCRIPTION,
        examples="""
            freecell-analyzer publish runs/ms32000 --out datasets/ms32000 --version 1.0.0
            freecell-analyzer publish runs/ms32000 --out datasets/ms32000 --name freecell-ms32000 \\
                --version 1.0.1 --license CC-BY-4.0
            freecell-analyzer validate datasets/ms32000/1.0.0
        """,
    )
    publish.add_arguments(p)
    extend(subparsers)


def extend(subparsers: Subparsers) -> None:
    """Gives ``validate`` (registered by `jobs.cli`, which knows run
    directories only) the check of a published dataset, whose format
    `reports.publish` owns. `analyzer.cli` calls this alone for ``validate``,
    so checking a run directory does not import the report's modules."""
    validate = subparsers.choices.get("validate")
    if validate is not None:
        validate.set_defaults(check_dataset=_check_dataset)


def _check_dataset(args: argparse.Namespace) -> int | None:
    """`reports.publish.check_dataset`, imported when ``validate`` runs."""
    from .publish import check_dataset

    return check_dataset(args)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m reports.cli {report,publish} ...``"""
    parser = standalone("python -m reports.cli", "FreeCell Analyzer reports and datasets.")
    register(parser.add_subparsers(dest="command", required=True))
    return dispatch(parser, argv)


if __name__ == "__main__":
    raise SystemExit(main())
