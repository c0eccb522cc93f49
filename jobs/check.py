"""``status`` and ``validate`` for a run directory.

``status`` says what is done: coverage, missing ranges, outcome counts.
``validate`` checks that what is there is right: every chunk complete and of
the run's one configuration, no deal twice, the schema, row invariants (a
solved row has a solution and its lengths, an unsolvable row has none,
more cells never lose a deal that fewer cells win, min-cells rows agree),
and solutions replayed through the independent `analyzer.verifier`, which
never imports the engine: a sample by default, every one with ``--all``.

Both read the directory only; neither needs Ray.
"""

from __future__ import annotations

import collections
import dataclasses
import math
import multiprocessing
import os
import random
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import pyarrow as pa

from analyzer import verifier
from analyzer.errors import EXIT_FAILURE, EXIT_INCOMPLETE, EXIT_OK
from analyzer.schema import OUTCOMES

from .chunks import ChunkInfo, Scan, scan
from .config import RunConfig
from .ranges import DealRange, count, format_deals, intersect, subtract
from .rundir import Manifest, require_run_dir

#: Complete chunks hold wrong data.
EXIT_INVALID: Final = EXIT_FAILURE

#: Solutions replayed by ``validate`` without ``--all``.
DEFAULT_SAMPLE: Final = 100
#: Problems of one kind printed before "... and N more".
SHOW_PROBLEMS: Final = 20
#: Replays above this many run in a process pool (each takes ~10 ms).
PARALLEL_REPLAYS: Final = 2000

LIMIT_REASONS: Final = ("positions", "bytes", "time")


def _describe(manifest: Manifest, directory: Path) -> str:
    return (
        f"run {directory}: deals {format_deals(manifest.deals, limit=8)}; {manifest.config.describe()}; "
        f"config {manifest.config_hash[:12]}"
    )


def _coverage_lines(manifest: Manifest, found: Scan) -> tuple[list[str], tuple[DealRange, ...]]:
    total = count(manifest.deals)
    have = count(intersect(manifest.deals, found.covered()))
    missing = subtract(manifest.deals, found.covered())
    pct = 100.0 * have / total if total else 100.0
    lines = [f"coverage: {have}/{total} deals ({pct:.1f}%)"]
    if missing:
        lines.append(f"missing: {count(missing)} deals: {format_deals(missing, limit=20)}")
    return lines, missing


def _chunk_lines(found: Scan) -> list[str]:
    lines = [
        f"chunks: {len(found.complete)} complete, {len(found.bad)} invalid, "
        f"{len(found.temp_files)} temporary files"
    ]
    for bad in found.bad:
        lines.append(f"  invalid {bad.path.name}: {bad.reason}")
    for other in found.other_files:
        lines.append(f"  ignored {other.name}: not a chunk file")
    return lines


def _outcome_line(counts: Mapping[str, int], rows: int) -> str:
    return f"rows: {rows}; " + ", ".join(f"{k} {counts.get(k, 0)}" for k in OUTCOMES)


@dataclass
class Report:
    """What ``status`` or ``validate`` found: lines for stdout, the exit
    code, and the same facts as data for ``--json`` (`to_dict`).

    `verbose_lines` (when set) is what ``--verbose`` prints instead of
    `lines`; ``--quiet`` prints only the last line (the verdict)."""

    lines: list[str] = field(default_factory=list)
    exit_code: int = EXIT_OK
    data: dict[str, object] = field(default_factory=dict)
    verbose_lines: list[str] | None = None

    def text(self, verbosity: int = 0) -> str:
        """The report as text: -1 the verdict line, 0 the lines, 1 every line.

        >>> r = Report(["run x", "status: complete"])
        >>> r.text(-1), r.text(1) == r.text()
        ('status: complete', True)
        """
        if verbosity < 0:
            return self.lines[-1] if self.lines else ""
        if verbosity > 0 and self.verbose_lines is not None:
            return "\n".join(self.verbose_lines)
        return "\n".join(self.lines)

    def to_dict(self) -> dict[str, object]:
        """The report as one JSON-ready object (README, "Machine-readable
        output"): `data` and the exit code.

        >>> Report(["status: complete"], data={"status": "complete"}).to_dict()
        {'status': 'complete', 'exit_code': 0}
        """
        return {**self.data, "exit_code": self.exit_code}


def _run_data(manifest: Manifest, directory: Path, found: Scan, missing: Sequence[DealRange]) -> dict[str, object]:
    """The facts `status` and `validate` share, for `Report.to_dict`."""
    return {
        "dir": str(directory),
        "deals": format_deals(manifest.deals),
        "config": manifest.config.to_dict(),
        "config_hash": manifest.config_hash,
        "deals_total": count(manifest.deals),
        "deals_present": count(intersect(manifest.deals, found.covered())),
        "missing": format_deals(missing),
        "deals_missing": count(missing),
        "chunks": {
            "complete": len(found.complete),
            "invalid": [{"file": bad.path.name, "reason": bad.reason} for bad in found.bad],
            "temporary": len(found.temp_files),
            "ignored": sorted(other.name for other in found.other_files),
        },
        "rows": found.rows(),
        "outcomes": {k: found.outcome_counts().get(k, 0) for k in OUTCOMES},
        "runs": [dataclasses.asdict(r) for r in manifest.runs],
    }


def status(directory: Path | str) -> Report:
    """Coverage, missing ranges and outcome counts of a run directory.
    Exit code 0 when complete, 3 when deals are missing or chunks invalid.
    Raises `RunDirError` (exit 2) when `directory` is not a run directory."""
    d = Path(directory)
    manifest = require_run_dir(d)
    found = scan(d, manifest.config)
    report = Report([_describe(manifest, d)])
    cov, missing = _coverage_lines(manifest, found)
    report.lines += cov
    report.lines += _chunk_lines(found)
    report.lines.append(_outcome_line(found.outcome_counts(), found.rows()))
    history: list[str] = []
    if manifest.runs:
        last = manifest.runs[-1]
        wall = f", {last.wall_s:.1f} s" if last.wall_s is not None else ""
        report.lines.append(f"last run: {last.status} (started {last.started_at}{wall}); {len(manifest.runs)} runs in all")
        for i, r in enumerate(manifest.runs, start=1):
            took = f", {r.wall_s:.1f} s" if r.wall_s is not None else ""
            history.append(f"  run {i}: {r.status}, deals {r.deals or '-'} (started {r.started_at}{took})")
    complete = not missing and not found.bad
    report.lines.append("status: complete" if complete else "status: incomplete (run the same command again to resume)")
    report.verbose_lines = [*report.lines[:-1], *history, report.lines[-1]]
    report.exit_code = EXIT_OK if complete else EXIT_INCOMPLETE
    report.data = {"command": "status", **_run_data(manifest, d, found, missing), "status": "complete" if complete else "incomplete"}
    return report


# ---------------------------------------------------------------------------
# Row invariants
# ---------------------------------------------------------------------------

Row = Mapping[str, object]


def row_problems(row: Row, config: RunConfig) -> list[str]:
    """What is wrong with one result row, as messages naming deal and cells.

    >>> from jobs.config import build_config
    >>> row_problems({"deal_number": 5, "cells": 4, "variant": "freecell", "move_rule": "product",
    ...               "outcome": "unsolvable", "solution": "3a", "limit_reason": None,
    ...               "solution_length_single": None, "solution_length_multi": None, "error": None,
    ...               "positions_expanded": 9, "positions_stored": 9, "peak_bytes": 1, "elapsed_s": 0.1,
    ...               "min_cells": None}, build_config())
    ['deal 5 with 4 cells: unsolvable but has a solution']
    """
    out: list[str] = []
    where = f"deal {row['deal_number']} with {row['cells']} cells"
    outcome = row["outcome"]
    v = config.variant
    if row["variant"] != v.name:
        out.append(f"{where}: variant {row['variant']!r}, the run's is {v.name!r}")
    if row["move_rule"] != v.move_rule:
        out.append(f"{where}: move rule {row['move_rule']!r}, the run's is {v.move_rule!r}")
    if outcome not in OUTCOMES:
        return [*out, f"{where}: unknown outcome {outcome!r}"]
    solution, single, multi = row["solution"], row["solution_length_single"], row["solution_length_multi"]
    if outcome == "solved":
        if not isinstance(solution, str) or not solution.strip():
            out.append(f"{where}: solved but has no solution")
        elif multi != len(solution.split()):
            out.append(f"{where}: solution has {len(solution.split())} moves but solution_length_multi is {multi}")
        if not isinstance(single, int) or not isinstance(multi, int) or single < multi:
            out.append(f"{where}: solution lengths single={single} multi={multi} (need single >= multi)")
    else:
        if solution is not None:
            out.append(f"{where}: {outcome} but has a solution")
        if single is not None or multi is not None:
            out.append(f"{where}: {outcome} but has solution lengths")
    if outcome == "limit":
        if row["limit_reason"] not in LIMIT_REASONS:
            out.append(f"{where}: limit without a reason in {', '.join(LIMIT_REASONS)} ({row['limit_reason']!r})")
    elif row["limit_reason"] is not None:
        out.append(f"{where}: {outcome} but has limit_reason {row['limit_reason']!r}")
    if outcome == "error":
        if not row["error"]:
            out.append(f"{where}: error without a message")
    elif row["error"] is not None:
        out.append(f"{where}: {outcome} but has error {row['error']!r}")
    for name in ("positions_expanded", "positions_stored", "peak_bytes"):
        value = row[name]
        if not isinstance(value, int) or value < 0:
            out.append(f"{where}: {name} is {value!r}")
    elapsed = row["elapsed_s"]
    if not isinstance(elapsed, float | int) or not math.isfinite(elapsed) or elapsed < 0:
        out.append(f"{where}: elapsed_s is {elapsed!r}")
    if not config.min_cells and row["min_cells"] is not None:
        out.append(f"{where}: min_cells {row['min_cells']} in a run that did not ask for it")
    return out


def deal_problems(deal: int, rows: Sequence[Row], config: RunConfig) -> list[str]:
    """What is wrong across one deal's rows: more cells can never lose a
    deal fewer cells win; in min-cells runs every row carries the same
    `min_cells`, which is the smallest count solved, with every smaller one
    (from the variant's dealt cells up) present and proved unsolvable."""
    out: list[str] = []
    by_cells = {int(str(r["cells"])): r["outcome"] for r in rows}
    solved = [k for k, o in by_cells.items() if o == "solved"]
    unsolvable = [k for k, o in by_cells.items() if o == "unsolvable"]
    if solved and unsolvable and max(unsolvable) > min(solved):
        out.append(
            f"deal {deal}: solved with {min(solved)} cells but unsolvable with {max(unsolvable)} "
            "(more cells cannot lose a deal)"
        )
    if not config.min_cells:
        return out
    values = {r["min_cells"] for r in rows}
    if len(values) != 1:
        return [*out, f"deal {deal}: rows disagree on min_cells ({sorted(map(str, values))})"]
    m = values.pop()
    lo = config.cells[0]
    if m is None:
        stopped = any(o in ("limit", "error") for o in by_cells.values())
        if not stopped and not (unsolvable and len(unsolvable) == len(by_cells) and max(by_cells) == config.max_cells):
            out.append(f"deal {deal}: min_cells is null but the rows neither stop at a limit nor exhaust {config.max_cells} cells")
        return out
    k_min = int(str(m))
    if by_cells.get(k_min) != "solved":
        out.append(f"deal {deal}: min_cells {k_min} but that row is {by_cells.get(k_min, 'missing')}")
    for k in range(lo, k_min):
        if by_cells.get(k) != "unsolvable":
            out.append(f"deal {deal}: min_cells {k_min} but {k} cells is {by_cells.get(k, 'missing')}, not unsolvable")
    return out


# ---------------------------------------------------------------------------
# Replays
# ---------------------------------------------------------------------------

ReplayJob = tuple[int, int, str, int | None]


def replay_problem(job: ReplayJob, variant: Mapping[str, object]) -> str | None:
    """Replays one solution through the verifier; the problem, or ``None``."""
    deal, cells, solution, multi = job
    rules = verifier.VerifierVariant(**{**variant, "cells": cells})  # type: ignore[arg-type]
    report = verifier.replay(deal, solution, rules)
    if not report.won:
        return f"deal {deal} with {cells} cells: the verifier rejects the solution: {report.reason}"
    if multi is not None and report.total_moves != multi:
        return f"deal {deal} with {cells} cells: {report.total_moves} moves replayed, solution_length_multi says {multi}"
    return None


def _replay_batch(jobs: Sequence[ReplayJob], variant: Mapping[str, object]) -> list[str]:
    return [p for p in (replay_problem(j, variant) for j in jobs) if p is not None]


def replay_all(jobs: Sequence[ReplayJob], variant: Mapping[str, object], workers: int | None = None) -> list[str]:
    """Replays `jobs`, in a process pool when there are many."""
    n = workers or os.cpu_count() or 1
    if len(jobs) < PARALLEL_REPLAYS or n < 2:
        return _replay_batch(jobs, variant)
    size = max(1, len(jobs) // (n * 8))
    batches = [jobs[i : i + size] for i in range(0, len(jobs), size)]
    problems: list[str] = []
    # spawn: the parent holds Arrow threads, which fork does not copy safely.
    with ProcessPoolExecutor(max_workers=n, mp_context=multiprocessing.get_context("spawn")) as pool:
        for found in pool.map(_replay_batch, batches, [variant] * len(batches)):
            problems += found
    return problems


class _Reservoir:
    """A uniform sample of `k` items from a stream, reproducible by seed."""

    def __init__(self, k: int | None, seed: int) -> None:
        self.k, self.rng, self.seen = k, random.Random(seed), 0
        self.items: list[ReplayJob] = []

    def add(self, item: ReplayJob) -> None:
        self.seen += 1
        if self.k is None or len(self.items) < self.k:
            self.items.append(item)
            return
        j = self.rng.randrange(self.seen)
        if j < self.k:
            self.items[j] = item


# ---------------------------------------------------------------------------
# validate
# ---------------------------------------------------------------------------


def _problem_lines(title: str, problems: Sequence[str], show: int | None = SHOW_PROBLEMS) -> list[str]:
    """PROBLEM lines: the first `show` problems (every one when None)."""
    if show is None:
        return [f"PROBLEM {title}: {p}" for p in problems]
    lines = [f"PROBLEM {title}: {p}" for p in problems[:show]]
    if len(problems) > show:
        lines.append(f"PROBLEM {title}: ... and {len(problems) - show} more")
    return lines


def _rows_by_deal(rows: Iterable[Row]) -> dict[int, list[Row]]:
    out: dict[int, list[Row]] = collections.defaultdict(list)
    for r in rows:
        out[int(str(r["deal_number"]))].append(r)
    return out


def validate(directory: Path | str, *, replay_every: bool = False, sample: int = DEFAULT_SAMPLE, seed: int = 0) -> Report:
    """Checks a run directory; see the module docstring. Exit code 0 when
    complete and valid; 3 when deals are missing or chunks are invalid (the
    next run recomputes them); 1 when complete chunks hold wrong data
    (duplicates, broken invariants, rejected solutions). Raises `RunDirError`
    (exit 2) when `directory` is not a run directory."""
    d = Path(directory)
    manifest = require_run_dir(d)
    config = manifest.config
    row_issues: list[str] = []
    sampler = _Reservoir(None if replay_every else max(0, sample), seed)
    engines: collections.Counter[str] = collections.Counter()

    def visit(info: ChunkInfo, table: pa.Table) -> None:
        engines[info.metadata["fca.engine_version"]] += 1
        rows = table.to_pylist()
        for r in rows:
            row_issues.extend(f"{info.path.name}: {p}" for p in row_problems(r, config))
            if r["outcome"] == "solved" and isinstance(r["solution"], str):
                sampler.add((int(r["deal_number"]), int(r["cells"]), r["solution"], r["solution_length_multi"]))
        for deal, group in _rows_by_deal(rows).items():
            row_issues.extend(f"{info.path.name}: {p}" for p in deal_problems(deal, group, config))

    found = scan(d, config, visit=visit)
    report = Report([_describe(manifest, d)])
    cov, missing = _coverage_lines(manifest, found)
    report.lines += cov
    report.lines += _chunk_lines(found)
    report.lines.append(_outcome_line(found.outcome_counts(), found.rows()))
    if len(engines) > 1:
        report.lines.append(f"note: chunks come from {len(engines)} engine versions: {dict(engines)}")

    invalid: list[str] = []
    dups = [f"deals {a.deals} ({a.path.name}) and {b.deals} ({b.path.name}) overlap" for a, b in found.overlaps()]
    invalid += _problem_lines("duplicates", dups)
    invalid += _problem_lines("invariants", row_issues)
    every = [*_problem_lines("duplicates", dups, None), *_problem_lines("invariants", row_issues, None)]
    report.lines.append(f"invariants: {found.rows()} rows checked, {len(row_issues)} problems; duplicates: {len(dups)}")

    replay_issues = replay_all(sampler.items, config.variant.as_dict()) if sampler.items else []
    what = "every" if replay_every else f"a sample of {len(sampler.items)} of the"
    report.lines.append(
        f"replay: {what} {sampler.seen} solutions replayed through analyzer.verifier, {len(replay_issues)} rejected"
    )
    invalid += _problem_lines("replay", replay_issues)
    every += _problem_lines("replay", replay_issues, None)
    verbose = [*report.lines, *every]
    report.lines += invalid

    if invalid:
        report.lines.append("result: INVALID (exit 1): complete chunks hold wrong data (see PROBLEM lines)")
        report.exit_code = EXIT_INVALID
    elif missing or found.bad:
        why = []
        if found.bad:
            why.append(f"{len(found.bad)} invalid chunks")
        if missing:
            why.append(f"{count(missing)} deals missing")
        report.lines.append(
            f"result: incomplete (exit 3): {', '.join(why)}; the next run with the same command recomputes them"
        )
        report.exit_code = EXIT_INCOMPLETE
    else:
        report.lines.append("result: valid and complete")
    report.verbose_lines = [*verbose, report.lines[-1]]
    result = "invalid" if invalid else "incomplete" if (missing or found.bad) else "valid"
    report.data = {
        "command": "validate",
        **_run_data(manifest, d, found, missing),
        "engine_versions": dict(engines),
        "invariants": {"rows_checked": found.rows(), "problems": row_issues},
        "duplicates": dups,
        "replay": {
            "solutions": sampler.seen,
            "replayed": len(sampler.items),
            "every": replay_every,
            "rejected": replay_issues,
        },
        "result": result,
    }
    return report
