"""The batch layer's input errors: subclasses of `analyzer.errors.AnalyzerError`,
so the CLI prints them as one line and exits 2 (docs/DESIGN.md, "Subcommands
and where they live"). Candidates to move into `analyzer/errors.py`.
"""

from __future__ import annotations

from analyzer.errors import AnalyzerError


class ConfigError(AnalyzerError):
    """A run configuration that cannot be used (bad cells, limits or JSON)."""


class RunDirError(AnalyzerError):
    """An output directory that is not usable for this run: a file, a
    directory of another configuration, or not a run directory."""


__all__ = ["ConfigError", "RunDirError"]
