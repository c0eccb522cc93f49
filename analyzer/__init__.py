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

from . import verifier
from ._api import (
    Board,
    Limits,
    MinCellsResult,
    SolveResult,
    Variant,
    deal,
    min_cells,
    solve,
    solve_range,
)
from .errors import (
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
    "SolveResult",
    "Variant",
    "VariantError",
    "__version__",
    "deal",
    "min_cells",
    "solve",
    "solve_range",
    "verifier",
]
