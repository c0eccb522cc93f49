"""Every exception the package raises on bad input, defined once.

All are subclasses of `ValueError`; the engine bindings raise these same
classes. Messages name the bad input.
"""

from __future__ import annotations

import errno
from typing import Final

# Exit codes of every command (docs/DESIGN.md, "Exit codes"), defined once.
EXIT_OK: Final = 0
EXIT_FAILURE: Final = 1
EXIT_USAGE: Final = 2
EXIT_INCOMPLETE: Final = 3
EXIT_INTERRUPTED: Final = 130
#: After SIGTERM (128 + 15, as shells report it); ``run`` handles it like Ctrl-C.
EXIT_TERMINATED: Final = 143


class AnalyzerError(ValueError):
    """Base of the package's input errors. The command line prints the
    message on one line and exits with `exit_code` (2: bad usage or input;
    a subclass, or an instance, may name another documented code)."""

    exit_code: int = EXIT_USAGE


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


class StorageError(AnalyzerError):
    """An output that cannot be written: disk full, read-only, no
    permission. `resumable` says whether running the same command again,
    once fixed, continues (exit 3) or the output must change (exit 2);
    nothing already written is lost either way."""

    def __init__(self, message: str, resumable: bool = False) -> None:
        super().__init__(message)
        self.resumable = resumable
        self.exit_code = EXIT_INCOMPLETE if resumable else EXIT_USAGE

    def __reduce__(self) -> tuple[type[StorageError], tuple[str, bool]]:
        return (type(self), (str(self), self.resumable))


def storage_error(e: OSError, what: str) -> StorageError:
    """One line for an `OSError` met while writing `what`: a full disk or
    quota is resumable, the rest (read-only, no permission) is not.

    >>> err = storage_error(OSError(errno.ENOSPC, "No space left on device"), "out/x")
    >>> str(err), err.exit_code
    ('cannot write out/x: the disk is full', 3)
    """
    reason = {
        errno.ENOSPC: "the disk is full",
        errno.EDQUOT: "the disk quota is exhausted",
        errno.EROFS: "the file system is read-only",
        errno.EACCES: "permission denied",
        errno.EPERM: "permission denied",
    }.get(e.errno or 0, e.strerror or str(e))
    full = e.errno in (errno.ENOSPC, errno.EDQUOT)
    return StorageError(f"cannot write {what}: {reason}", resumable=full)


class EngineError(RuntimeError):
    """The native engine failed (a bug, never a user mistake)."""


__all__ = [
    "EXIT_FAILURE",
    "EXIT_INCOMPLETE",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_TERMINATED",
    "EXIT_USAGE",
    "AnalyzerError",
    "BoardError",
    "CardError",
    "DealNumberError",
    "EngineError",
    "IllegalMoveError",
    "NotationError",
    "RangeError",
    "StorageError",
    "UsageError",
    "VariantError",
    "storage_error",
]
