"""Where the report pages get their runs: the one seam between them and the
run-directory reader.

Every module of the report (summary, plots, report, reference) takes runs
from here, never from the reader directly, so a change of run format is
absorbed in this file alone. Behind it, `reports.load` reads every row
through the run format's one checked reader (`jobs.runformat.iter_run`:
each data file's sha256 against the run's index, page checksums, every deal
once, the row invariants) and every deal range through `jobs.ranges`; a run
that ``validate`` would call invalid raises `RunInvalidError` (exit 1).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from .load import (
    Run,
    RunError,
    RunInvalidError,
    RunManifest,
    cells_phrase,
    config_cells,
    count_deals,
    describe_config,
    format_ranges,
    load_runs,
    merge_ranges,
)

__all__ = [
    "Run",
    "RunError",
    "RunInvalidError",
    "RunManifest",
    "cells_phrase",
    "config_cells",
    "count_deals",
    "describe_config",
    "format_ranges",
    "merge_ranges",
    "read_runs",
]


def read_runs(
    paths: Sequence[Path | str], *, allow_mixed: bool = False, columns: Sequence[str] | None = None
) -> list[Run]:
    """The runs in `paths`, one per configuration (`RunError` for anything that
    is not a clean run, or for mixed configurations without `allow_mixed`)."""
    return load_runs(paths, allow_mixed=allow_mixed, columns=columns)
