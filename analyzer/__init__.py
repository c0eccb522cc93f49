"""FreeCell Analyzer: proved solvability of Microsoft FreeCell deals.

The typed public API over the native engine (`analyzer._engine`, built from
the Rust crate in `engine/`). The independent checker of everything the
engine produces is `analyzer.verifier`, which never imports the engine.

>>> import analyzer
>>> print(analyzer.deal(617).rows().splitlines()[0])
7D TD TH KD 4C 4S JD
>>> r = analyzer.solve(617, cells=4)
>>> r.outcome, r.move_rule
('solved', 'product')
>>> analyzer.verifier.replay(617, r.solution).won
True
"""

from __future__ import annotations

import os as _os
import sys as _sys


def _engine_elsewhere() -> None:
    """Finds the compiled engine when this package's own directory lacks it.

    ``ray job submit --working-dir .`` uploads the sources without the
    compiled engine (``*.so`` is git-ignored, and Ray's upload follows
    .gitignore), and the uploaded directory comes first on ``sys.path``. The
    job ships the built wheel (``--runtime-env-json '{"py_modules":
    ["dist/freecell_analyzer-....whl"]}'``, README "Batch runs on Ray"); its
    ``analyzer`` directory is then later on ``sys.path``, and is added to
    this package's search path so that ``analyzer._engine`` imports from it.
    `jobs.task.require_engine` still checks that every worker's engine is
    the driver's."""
    here = _os.path.dirname(_os.path.abspath(__file__))
    if any(n.startswith("_engine.") and n.endswith((".so", ".pyd")) for n in _os.listdir(here)):
        return
    for entry in _sys.path:
        other = _os.path.join(_os.path.abspath(entry or "."), "analyzer")
        if other == here or not _os.path.isdir(other):
            continue
        if any(n.startswith("_engine.") and n.endswith((".so", ".pyd")) for n in _os.listdir(other)):
            __path__.append(other)
            return


_engine_elsewhere()

# Arrow's memory pool in this process and the processes it starts (Ray's
# workers among them), unless the user names one: the C library's malloc,
# which keeps a freed buffer (glibc: one of up to 32 MiB) for the next.
# pyarrow's default (mimalloc) gives a buffer of tens of megabytes (a row
# group's solutions) back to the system when it is freed, and the next one
# is memory the kernel must zero again, which on a virtual machine whose
# host reclaims freed pages costs more than the work itself: a run's seal
# of 200,000 rows took 1.6-2.0 s of CPU with mimalloc and 1.0-1.2 s with
# this pool (docs/solver-log.md, session 45). Read by pyarrow when it is
# first imported, so set before anything imports it; the pool decides
# where buffers live, never their bytes. (``system`` is in every pyarrow
# build; naming a backend a build lacks makes pyarrow print a warning.)
_os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")

from . import verifier  # noqa: E402
from ._api import (  # noqa: E402
    Board,
    Limits,
    MinCellsResult,
    SolveProgress,
    SolveResult,
    Variant,
    deal,
    min_cells,
    solve,
    solve_range,
    solve_range_columns,
    solve_range_table,
)
from .errors import (  # noqa: E402
    AnalyzerError,
    BoardError,
    CardError,
    DealNumberError,
    EngineError,
    IllegalMoveError,
    NotationError,
    RangeError,
    VariantError,
)

__version__ = "0.1.0"

__all__ = [
    "AnalyzerError",
    "Board",
    "BoardError",
    "CardError",
    "DealNumberError",
    "EngineError",
    "IllegalMoveError",
    "Limits",
    "MinCellsResult",
    "NotationError",
    "RangeError",
    "SolveProgress",
    "SolveResult",
    "Variant",
    "VariantError",
    "__version__",
    "deal",
    "min_cells",
    "solve",
    "solve_range",
    "solve_range_columns",
    "solve_range_table",
    "verifier",
]
