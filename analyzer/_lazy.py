"""A module imported on first use.

``status`` answers from a run's index alone and needs neither
pyarrow.compute nor pyarrow.parquet nor pandas, which take most of a second
to import; the modules on its path (`jobs.runformat`, `analyzer.headline`)
name them through `LazyModule`.
"""

from __future__ import annotations

import importlib
from typing import Any


class LazyModule:
    """Stands for module `name` and imports it when an attribute is first read.

    >>> LazyModule("json").dumps([1])
    '[1]'
    """

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        return getattr(importlib.import_module(self._name), attr)


__all__ = ["LazyModule"]
