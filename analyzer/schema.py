"""The result table, described once.

Every column of a run's Parquet files is declared here with its Arrow type,
a description and a unit. The Arrow schema, the Parquet field metadata, the
dataset card's schema table and the docs are all generated from `COLUMNS`.
Readers check a file's names, types and nullability against it; the
descriptions and units are documentation and may be reworded without a new
`SCHEMA_VERSION`.

>>> [c.name for c in COLUMNS][:3]
['deal_number', 'variant', 'cells']
>>> arrow_schema().field("outcome").type
DictionaryType(dictionary<values=string, indices=int8, ordered=0>)
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from ._lazy import LazyModule

if TYPE_CHECKING:
    import pyarrow as pa
else:  # ``status`` imports this module and needs no pyarrow
    pa = LazyModule("pyarrow")

#: Bumped whenever a column is added, removed or changes meaning.
SCHEMA_VERSION: Final = "2"

#: The four outcomes of a solver run (REFERENCE.md, "Outcomes").
OUTCOMES: Final = ("solved", "unsolvable", "limit", "error")


@dataclass(frozen=True)
class Column:
    """One column: name, Arrow type (by name: ``int64``, ``category``, ...),
    whether it may be null, meaning, unit."""

    name: str
    kind: str
    nullable: bool
    description: str
    unit: str = ""

    @property
    def type(self) -> pa.DataType:
        if self.kind == "category":
            return pa.dictionary(pa.int8(), pa.string())
        t: pa.DataType = getattr(pa, self.kind)()
        return t

    def field(self) -> pa.Field[pa.DataType]:
        meta = {b"description": self.description.encode(), b"unit": self.unit.encode()}
        return pa.field(self.name, self.type, nullable=self.nullable, metadata=meta)


COLUMNS: Final[tuple[Column, ...]] = (
    Column("deal_number", "int64", False, "Microsoft deal number (1..8,589,934,591)."),
    Column("variant", "category", False, "Rule preset name (freecell, bakers_game, ...)."),
    Column("cells", "int8", False, "Number of free cells used for this row.", "cells"),
    Column("move_rule", "category", False, "Multi-card move rule: single, product, doubling or unlimited."),
    Column("outcome", "category", False, "solved, unsolvable (proved by exhaustive search), limit or error."),
    Column("limit_reason", "category", True, "For outcome=limit: the budget that ran out (positions, bytes, disk, time)."),
    Column("solution_length_single", "int32", True, "Solution length in single-card moves, automatic foundation moves included; null under the unlimited move rule when a multi-card move of the solution cannot be played as single-card moves.", "moves"),
    Column("solution_length_multi", "int32", True, "Solution length counting each multi-card move as one move.", "moves"),
    Column("solution", "string", True, "The solution in standard notation, moves separated by spaces."),
    Column("positions_expanded", "int64", False, "Positions whose moves the solver generated.", "positions"),
    Column("positions_stored", "int64", False, "Positions held in the solver's visited set.", "positions"),
    Column("peak_bytes", "int64", False, "Peak memory of the search (visited set and stack).", "bytes"),
    Column("elapsed_s", "float64", False, "Wall-clock time of the search.", "seconds"),
    Column("min_cells", "int8", True, "Smallest number of cells with which the deal is won (min-cells runs only; null when not asked or not determined). A min-cells run has a row per count searched: the minimum, solved, and one fewer, proved unsolvable; every other count follows from those.", "cells"),
    Column("error", "string", True, "For outcome=error: what went wrong."),
    Column("attempts", "int8", False, "Searches made for this row: 1, plus one per escalation pass (run --retry-limits) that re-solved it.", "searches"),
    Column("attempt_history", "string", True, "When attempts > 1: JSON list of every attempt in order, each with its budgets (max_positions, max_bytes, max_disk, max_seconds), cells and result (outcome, limit_reason, positions_expanded, peak_bytes, elapsed_s); the row's other columns are the last attempt's. Null for a first attempt, whose budgets are the run's limits."),
)

#: Columns whose values depend on the machine and load, not on the input;
#: every other column is a deterministic function of deal and configuration.
NONDETERMINISTIC: Final = frozenset({"elapsed_s"})


def arrow_schema(metadata: dict[str, str] | None = None) -> pa.Schema:
    """The Arrow schema of a result table, with optional file metadata."""
    schema = pa.schema([c.field() for c in COLUMNS])
    if metadata:
        schema = schema.with_metadata({k.encode(): v.encode() for k, v in metadata.items()})
    return schema


def string_array(values: Sequence[str | None]) -> pa.Array[Any]:
    """An Arrow string array of `values`, made from its buffers: unlike
    ``pyarrow.array``, which imports pandas on its first call when pandas is
    installed (a third of a second), this needs nothing but pyarrow.

    >>> string_array(["ab", None, "c"]).to_pylist()
    ['ab', None, 'c']
    """
    data = bytearray()
    ends = [0]
    for v in values:
        data += (v or "").encode()
        ends.append(len(data))
    offsets = struct.pack(f"<{len(ends)}i", *ends)
    valid = _bitmap([v is not None for v in values])
    return pa.Array.from_buffers(pa.string(), len(values), [valid, pa.py_buffer(offsets), pa.py_buffer(bytes(data))])


def _bitmap(valid: Sequence[bool]) -> pa.Buffer | None:
    """Arrow's validity bitmap of `valid`, None when all are valid."""
    if all(valid):
        return None
    bits = bytearray((len(valid) + 7) // 8)
    for i, v in enumerate(valid):
        if v:
            bits[i // 8] |= 1 << (i % 8)
    return pa.py_buffer(bytes(bits))


#: ``struct`` formats of the fixed-width kinds of `COLUMNS`.
_STRUCT: Final = {"int8": "b", "int32": "i", "int64": "q", "float64": "d"}


def constant_array(name: str, value: object, n: int) -> pa.Array[Any]:
    """Column `name` (its type as `COLUMNS` declares it) with `value` in all
    `n` rows, None for nulls; made from buffers, as `string_array` is.

    >>> constant_array("variant", "freecell", 2).to_pylist(), constant_array("min_cells", None, 2).to_pylist()
    (['freecell', 'freecell'], [None, None])
    >>> constant_array("cells", 4, 3).type, constant_array("attempts", 1, 1).to_pylist(), constant_array("error", "x", 2).to_pylist()
    (DataType(int8), [1], ['x', 'x'])
    """
    c = column(name)
    if value is None:
        return pa.nulls(n).cast(c.type)
    if c.kind == "category":
        codes = pa.Array.from_buffers(pa.int8(), n, [None, pa.py_buffer(bytes(n))])
        return pa.DictionaryArray.from_arrays(codes, string_array([str(value)]))
    if c.kind == "string":
        return string_array([str(value)] * n)
    one = struct.pack("<" + _STRUCT[c.kind], value)
    return pa.Array.from_buffers(c.type, n, [None, pa.py_buffer(one * n)])


def column(name: str) -> Column:
    """Looks a column up by name.

    >>> column("elapsed_s").unit
    'seconds'
    """
    for c in COLUMNS:
        if c.name == name:
            return c
    raise KeyError(name)


def markdown_table() -> str:
    """The schema as a Markdown table (for docs and the dataset card)."""
    lines = ["| column | type | nullable | unit | description |", "|---|---|---|---|---|"]
    for c in COLUMNS:
        lines.append(
            f"| `{c.name}` | `{c.type}` | {'yes' if c.nullable else 'no'} | {c.unit} | {c.description} |"
        )
    return "\n".join(lines)
