"""Every exception the package raises on bad input, defined once.

All are subclasses of `ValueError`; the engine bindings raise these same
classes. Messages name the bad input.
"""

from __future__ import annotations

from typing import ClassVar, Final

# Exit codes of every command (docs/DESIGN.md, "Exit codes"), defined once.
EXIT_OK: Final = 0
EXIT_FAILURE: Final = 1
EXIT_USAGE: Final = 2
EXIT_INCOMPLETE: Final = 3
EXIT_INTERRUPTED: Final = 130


class AnalyzerError(ValueError):
    """Base of the package's input errors. The command line prints the
    message on one line and exits with `exit_code` (2: bad usage or input;
    a subclass may name another documented code)."""

    exit_code: ClassVar[int] = EXIT_USAGE


class UsageError(AnalyzerError):
    """A command line that cannot be used: an unknown option, or an option
    value that is malformed or out of range."""


class DealNumberError(AnalyzerError):
    """A deal number outside 1..8,589,934,591 (or not an integer)."""


class CardError(AnalyzerError):
    """Text that is not a card."""


class BoardError(AnalyzerError):
    """Board text that cannot be read, or a board that is inconsistent."""


class NotationError(AnalyzerError):
    """Text that is not a move in standard notation."""


class IllegalMoveError(AnalyzerError):
    """A well-formed move that the rules do not allow in this position."""


class VariantError(AnalyzerError):
    """An unknown variant, move rule or out-of-range rule parameter."""


class RangeError(AnalyzerError):
    """A deal range such as ``5-1`` or ``abc``."""


class EngineError(RuntimeError):
    """The native engine failed (a bug, never a user mistake)."""


__all__ = [
    "EXIT_FAILURE",
    "EXIT_INCOMPLETE",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "AnalyzerError",
    "BoardError",
    "CardError",
    "DealNumberError",
    "EngineError",
    "IllegalMoveError",
    "NotationError",
    "RangeError",
    "UsageError",
    "VariantError",
]
