"""The `report` and `publish` subcommands (docs/DESIGN.md, "Subcommands").

`analyzer.cli` imports this module lazily and calls `register(subparsers)`;
each subcommand's handler returns the exit code, and user mistakes raise
`analyzer.errors.AnalyzerError`, which the main CLI prints on one line
before exiting with 2. `main` does the same for ``python -m reports.cli``
and the ``python -m reports.<module>`` entry points.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any

from analyzer.errors import EXIT_USAGE, AnalyzerError

#: Exit codes (docs/DESIGN.md, "Exit codes").


REPORT_EPILOG = """\
examples:
  freecell-analyzer report runs/ms32000 --out reports/ms32000
  freecell-analyzer report runs/cells3 runs/cells4 --out reports/cells --allow-mixed
  freecell-analyzer report runs/fc-1k runs/fc-32k --allow-mixed --normalise --out reports/sizes
  python -m reports.report runs/ms32000 --out reports/ms32000

exit codes:
  0 written, 1 failure, 2 bad usage or input (empty or non-run directory,
  mixed configurations without --allow-mixed, runs of different deals
  without --normalise or --common-deals), 130 interrupted
"""

PUBLISH_EPILOG = """\
examples:
  freecell-analyzer publish runs/ms32000 --out datasets/ms32000 --version 1.0.0
  freecell-analyzer publish runs/ms32000 --out datasets/ms32000 --name freecell-ms32000 \\
      --version 1.0.1 --license CC-BY-4.0
  freecell-analyzer validate datasets/ms32000/1.0.0

exit codes:
  0 published, 1 failure, 2 bad usage or input (incomplete run, version
  already published), 130 interrupted
"""


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Adds `report` and `publish` to the main parser's subcommands."""
    from . import publish, report

    p = subparsers.add_parser(
        "report",
        help="tables and figures of one or more runs (report.html, report.md, CSV)",
        description="Write report.html (one self-contained page), report.md (figures as PNG beside it) and "
        "the summary tables as CSV for one run, or a comparison of several runs. Same input, same output bytes.",
        epilog=REPORT_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    report.add_arguments(p)
    p.set_defaults(func=report.handler)

    p = subparsers.add_parser(
        "publish",
        help="a citable dataset from a complete run (Parquet, card, datapackage, checksums)",
        description="Publish a complete run as DATASET_DIR/VERSION: one Parquet file sorted by deal, a Hugging "
        "Face dataset card (README.md), datapackage.json, SHA256SUMS, CITATION.cff and the run manifest. "
        "An existing version is never changed.",
        epilog=PUBLISH_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    publish.add_arguments(p)
    p.set_defaults(func=publish.handler)


def run_main(
    prog: str,
    description: str,
    add_arguments: Callable[[argparse.ArgumentParser], None],
    handler: Callable[[argparse.Namespace], int],
    argv: Sequence[str] | None = None,
) -> int:
    """Parses `argv`, runs `handler`, and turns an `AnalyzerError` into one line and exit 2."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return handler(args)
    except AnalyzerError as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return EXIT_USAGE


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m reports.cli {report,publish} ...``"""
    parser = argparse.ArgumentParser(
        prog="python -m reports.cli", description="FreeCell Analyzer reports and datasets."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    register(sub)
    args = parser.parse_args(argv)
    func: Callable[[argparse.Namespace], int] = args.func
    try:
        return func(args)
    except AnalyzerError as e:
        print(f"freecell-analyzer: error: {e}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    raise SystemExit(main())
