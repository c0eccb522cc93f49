"""``status`` and ``validate`` for a run directory.

``status`` says what is done from the run's index and a listing of its
directories, without opening a data file, so it answers at once at any size
(the parts of finished tasks not yet sealed, if any, are read through the
checked reader and counted in the answer):
coverage, missing ranges, outcome counts, files, the invocations and who
holds the run now. ``validate`` checks that what is there is right: every
data file read through the one checked reader (`jobs.runformat.read_checked`:
its sha256 against the index, page checksums, metadata, schema,
configuration, every deal present once, the row invariants), no two files
overlapping, and solutions replayed through the independent
`analyzer.verifier`, which never imports the engine: a sample by default,
every one with ``--all``. It streams one row group at a time, so its memory
does not grow with the run.

Both read the directory only; neither needs Ray.
"""

from __future__ import annotations

import dataclasses
import math
import multiprocessing
import os
import random
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final

from analyzer import verifier
from analyzer._lazy import LazyModule
from analyzer.errors import EXIT_FAILURE, EXIT_INCOMPLETE, EXIT_OK
from analyzer.headline import Headline, share_text
from analyzer.schema import OUTCOMES

from .config import RunConfig

if TYPE_CHECKING:
    import pyarrow as pa
else:  # ``status`` needs no pyarrow
    pa = LazyModule("pyarrow")
from .ranges import DealRange, count, format_deals, intersect
from .runformat import (
    FileInvalid,
    Invocation,
    Manifest,
    RunState,
    describe_holder,
    lock_holder,
    pc,
    read_checked,
    run_state,
    strings,
)

#: Complete files hold wrong data.
EXIT_INVALID: Final = EXIT_FAILURE

#: Solutions replayed by ``validate`` without ``--all``.
DEFAULT_SAMPLE: Final = 100
#: Problems of one kind printed before "... and N more".
SHOW_PROBLEMS: Final = 20
#: Invocations ``status`` lists (``--verbose``: every one).
SHOW_INVOCATIONS: Final = 5
#: Replays above this many run in a process pool (each takes ~10 ms).
PARALLEL_REPLAYS: Final = 2000


def _describe(manifest: Manifest, directory: Path) -> str:
    return (
        f"run {directory}: deals {format_deals(manifest.deals, limit=8)}; {manifest.config.describe()}; "
        f"config {manifest.config_hash[:12]}"
    )


def _coverage_lines(state: RunState) -> tuple[list[str], tuple[DealRange, ...]]:
    m = state.manifest
    total = count(m.deals)
    have = count(intersect(m.deals, state.covered()))
    missing = state.missing()
    lines = [f"coverage: {have:,}/{total:,} deals ({share_text(have, total) if total else '100 %'})"]
    parts = count(intersect(missing, [r for r, _ in state.disk.parts]))
    if missing:
        lines.append(f"missing: {count(missing):,} deals: {format_deals(missing, limit=20)}")
    if parts:
        lines.append(f"solved, not yet sealed into data files: {parts:,} deals in {len(state.disk.parts)} parts")
    if state.disk.retry_parts:
        lines.append(
            f"re-solved by an unfinished --retry-limits pass, not yet written into their data files: "
            f"{len(state.disk.retry_parts):,} deals (the same command resumes it)"
        )
    return lines, missing


def _file_lines(state: RunState) -> list[str]:
    lines = [
        f"files: {len(state.sealed)} data files, {state.bytes() / 1e6:,.1f} MB; file span {state.manifest.file_deals:,} deals; "
        f"{len(state.disk.temp_files)} temporary files"
    ]
    lines += [f"  PROBLEM {p}" for p in state.problems()[:SHOW_PROBLEMS]]
    lines += [f"  pending {p}" for p in state.unsettled()[:SHOW_PROBLEMS]]
    lines += [f"  ignored {p}: not part of the run" for p in state.disk.strays[:SHOW_PROBLEMS]]
    return lines


def answer_pointers(config: RunConfig) -> dict[str, str]:
    """Where the whole deal lists are when a headline shows only their start:
    the CSV files ``report`` writes."""
    if config.min_cells:
        return {"unsolvable": "the report's min_cells_deals.csv", "limit": "the report's min_cells_deals.csv"}
    return {k: f"the report's {k}.csv" for k in ("unsolvable", "limit", "error")}


def _answer(state: RunState) -> tuple[Headline, int, list[str]]:
    """The answer so far: the sealed files' (from the index), with the rows
    of unsealed parts added when there are some (a run stopped before it
    sealed them: a long min-cells run seals nothing until a whole file span
    is done); the deals taken from parts; parts the checked reader refused."""
    if state.unsealed_parts():
        return state.headline_with_parts()
    return state.headline(), 0, []


def answer_lines(state: RunState) -> list[str]:
    """The run's answer (`RunState.headline`, with unsealed parts), what
    ``status`` and ``run``'s closing summary open with."""
    h, in_parts, bad = _answer(state)
    lines = h.lines(csv=answer_pointers(state.manifest.config))
    if in_parts:
        lines[0] += f"; {in_parts:,} of them in parts not yet sealed into data files"
    lines += [f"  (a part the checked reader refused, not counted above: {b})" for b in bad]
    if state.unanswered():
        lines.append(f"  ({state.unanswered()} data files have no part of the answer in the index: not counted above)")
    return lines


def answer_data(state: RunState, lines: Sequence[str] | None = None) -> dict[str, object]:
    """The answer as data (``status --json`` and ``run --json``); `lines`
    are its `answer_lines` when already made."""
    h, in_parts, bad = _answer(state)
    text = list(lines) if lines is not None else answer_lines(state)
    return {
        **h.to_dict(),
        "deals_in_parts": in_parts,
        "parts_refused": bad,
        "files_not_counted": state.unanswered(),
        "text": text,
    }


def _outcome_line(counts: Mapping[str, int], rows: int) -> str:
    return f"rows: {rows:,}; " + ", ".join(f"{k} {counts.get(k, 0):,}" for k in OUTCOMES)


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


def _run_data(state: RunState, directory: Path) -> dict[str, object]:
    """The facts `status` and `validate` share, for `Report.to_dict`: all
    from the run's manifest, index and directory listing."""
    m = state.manifest
    missing = state.missing()
    counts = state.outcome_counts()
    return {
        "dir": str(directory),
        "deals": format_deals(m.deals),
        "config": m.config.to_dict(),
        "config_hash": m.config_hash,
        "deals_total": count(m.deals),
        "deals_present": count(intersect(m.deals, state.covered())),
        "missing": format_deals(missing),
        "deals_missing": count(missing),
        "files": {
            "sealed": len(state.sealed),
            "bytes": state.bytes(),
            "file_deals": m.file_deals,
            "problems": state.problems(),
            "pending": state.unsettled(),
            "parts": len(state.disk.parts),
            "retry_parts": len(state.disk.retry_parts),
            "temporary": len(state.disk.temp_files),
            "ignored": [str(p.relative_to(directory)) for p in state.disk.strays],
        },
        "rows": state.rows(),
        "outcomes": {k: counts.get(k, 0) for k in OUTCOMES},
        "passes": m.passes,
        "invocations": [dataclasses.asdict(h) for h in m.history],
    }


def status(directory: Path | str) -> Report:
    """The answer so far (deals per outcome, the unsolvable and limit deals),
    then coverage, missing ranges, files and invocations of a run directory,
    from its index. Exit code 0 when complete, 3 when deals are missing or
    files need the next run's attention. Raises `RunDirError` (exit 2) when
    `directory` is not a run directory."""
    d = Path(directory)
    state = run_state(d)
    m = state.manifest
    answer = answer_lines(state)
    report = Report([*answer, _describe(m, d)])
    cov, missing = _coverage_lines(state)
    report.lines += cov
    report.lines += _file_lines(state)
    report.lines.append(_outcome_line(state.outcome_counts(), state.rows()))
    if m.passes:
        report.lines.append(f"escalation passes: {len(m.passes)} (last budgets: {m.passes[-1]})")
    holder = lock_holder(d)

    def invocation(i: int, h: Invocation) -> str:
        wall = f", {h.wall_s:.1f} s" if h.wall_s is not None else ""
        return f"invocation {i}: {h.kind} {h.deals}: {h.status} (started {h.started_at}{wall})"

    shown = m.history[-SHOW_INVOCATIONS:]
    report.lines += [invocation(i, h) for i, h in enumerate(shown, len(m.history) - len(shown) + 1)]
    if len(m.history) > SHOW_INVOCATIONS:
        report.lines.append(f"  ({len(m.history)} invocations in all; --verbose lists every one)")
    history = [invocation(i, h) for i, h in enumerate(m.history, 1)]
    if holder is not None:
        report.lines.append(f"running now: {describe_holder(holder)}")
    complete = not missing and not state.problems() and not state.unsettled()
    report.lines.append("status: complete" if complete else "status: incomplete (run the same command again to resume)")
    report.verbose_lines = [
        *(line for line in report.lines[:-1] if not line.startswith(("invocation ", "  ("))),
        *history,
        report.lines[-1],
    ]
    report.exit_code = EXIT_OK if complete else EXIT_INCOMPLETE
    report.data = {
        "command": "status",
        "headline": answer_data(state, answer),
        **_run_data(state, d),
        "running": holder,
        "status": "complete" if complete else "incomplete",
    }
    return report


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


class Replayer:
    """Replays solutions as they stream by, in bounded memory: every one
    (`every`: one row group's solutions at a time, in a process pool when
    there are many), or a uniform sample of `sample` drawn by reservoir
    sampling over row positions (Li's "Algorithm L": only the sampled rows
    become Python objects). Reproducible by `seed`.

    >>> import pyarrow as pa
    >>> t = pa.table({"deal_number": [1, 2], "cells": [4, 4], "solution": ["x", "y"], "solution_length_multi": [1, 1]})
    >>> r = Replayer({}, every=False, sample=1, seed=0)
    >>> r.feed(t); r.seen, len(r.items)
    (2, 1)
    """

    def __init__(self, variant: Mapping[str, object], *, every: bool, sample: int, seed: int, workers: int | None = None) -> None:
        self.variant, self.every, self.k = variant, every, max(0, sample)
        self.rng = random.Random(seed)
        self.workers = workers or os.cpu_count() or 1
        self.seen = self.replayed = 0
        self.items: list[ReplayJob] = []
        self.problems: list[str] = []
        self.pool: ProcessPoolExecutor | None = None
        self._w = 0.0
        self._next = 0  # 1-based position of the next row to sample, once the reservoir is full

    def _skip(self) -> None:
        self._w *= math.exp(math.log(self.rng.random() or 1e-300) / self.k)
        self._next += math.floor(math.log(self.rng.random() or 1e-300) / math.log(1 - self._w)) + 1

    @staticmethod
    def _job(t: pa.Table, j: int) -> ReplayJob:
        multi = t.column("solution_length_multi")[j].as_py()
        return (int(t.column("deal_number")[j].as_py()), int(t.column("cells")[j].as_py()), str(t.column("solution")[j].as_py()), multi)

    def feed(self, solved: pa.Table) -> None:
        """Takes the solved rows of one row group (deal_number, cells, solution, solution_length_multi)."""
        n = solved.num_rows
        if self.every:
            jobs = [self._job(solved, j) for j in range(n)]
            self.seen += n
            self._replay(jobs)
            return
        start = self.seen
        self.seen += n
        j = 0
        while len(self.items) < self.k and j < n:
            self.items.append(self._job(solved, j))
            j += 1
            if len(self.items) == self.k:
                self._w = math.exp(math.log(self.rng.random() or 1e-300) / self.k)
                self._next = start + j
                self._skip()
        while self.k and len(self.items) == self.k and self._next <= self.seen:
            self.items[self.rng.randrange(self.k)] = self._job(solved, self._next - start - 1)
            self._skip()

    def _replay(self, jobs: Sequence[ReplayJob]) -> None:
        self.replayed += len(jobs)
        if len(jobs) < PARALLEL_REPLAYS or self.workers < 2:
            self.problems += _replay_batch(jobs, self.variant)
            return
        if self.pool is None:
            # spawn: the parent holds Arrow threads, which fork does not copy safely.
            self.pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=multiprocessing.get_context("spawn"))
        size = max(1, len(jobs) // (self.workers * 8))
        batches = [jobs[i : i + size] for i in range(0, len(jobs), size)]
        for found in self.pool.map(_replay_batch, batches, [self.variant] * len(batches)):
            self.problems += found

    def finish(self) -> list[str]:
        """Replays the sample (if sampling) and returns every problem found."""
        try:
            if not self.every and self.items:
                self._replay(self.items)
                self.items = []
        finally:
            self.close()
        return self.problems

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown()
            self.pool = None


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


def validate(directory: Path | str, *, replay_every: bool = False, sample: int = DEFAULT_SAMPLE, seed: int = 0) -> Report:
    """Checks a run directory; see the module docstring. Exit code 0 when
    complete and valid; 3 when deals are missing (the next run computes
    them); 1 when files hold wrong data or do not match the index (a file
    changed, two files overlap, broken invariants, rejected solutions).
    Raises `RunDirError` (exit 2) when `directory` is not a run directory."""
    d = Path(directory)
    state = run_state(d)
    m = state.manifest
    config = m.config
    replayer = Replayer(config.variant.as_dict(), every=replay_every, sample=sample, seed=seed)
    file_issues: list[str] = []
    rows = 0
    try:
        for e in state.sealed:
            try:
                for t in read_checked(d / e.file, config, entry=e, columns=["deal_number", "cells", "outcome", "solution", "solution_length_multi"]):
                    rows += t.num_rows
                    replayer.feed(t.filter(pc.equal(strings(t.column("outcome")), "solved")))
            except FileInvalid as err:
                file_issues.append(f"{e.file}: {err.reason}")
    finally:
        replay_issues = replayer.finish()
    report = Report([_describe(m, d)])
    cov, missing = _coverage_lines(state)
    report.lines += cov
    report.lines += _file_lines(state)
    report.lines.append(_outcome_line(state.outcome_counts(), state.rows()))
    file_problems = [*state.problems(), *file_issues]
    invalid = _problem_lines("files", file_problems)
    every = _problem_lines("files", file_problems, None)
    report.lines.append(f"checked: {len(state.sealed)} files, {rows:,} rows read and checked, {len(file_issues)} files refused")
    what = "every one of the" if replay_every else f"a sample of {replayer.replayed} of the"
    report.lines.append(
        f"replay: {what} {replayer.seen:,} solutions read replayed through analyzer.verifier, {len(replay_issues)} rejected"
    )
    invalid += _problem_lines("replay", replay_issues)
    every += _problem_lines("replay", replay_issues, None)
    verbose = [*report.lines, *every]
    report.lines += invalid
    if invalid:
        report.lines.append(
            "result: INVALID (exit 1): the run's files hold wrong data (see PROBLEM lines); remove the files named "
            "there and run the same command again to solve their deals anew"
        )
        report.exit_code = EXIT_INVALID
    elif missing or state.unsettled():
        report.lines.append(
            f"result: incomplete (exit 3): {count(missing):,} deals missing, {len(state.unsettled())} files to settle; "
            "the next run with the same command computes and checks them"
        )
        report.exit_code = EXIT_INCOMPLETE
    else:
        report.lines.append("result: valid and complete")
    report.verbose_lines = [*verbose, report.lines[-1]]
    result = "invalid" if invalid else "incomplete" if (missing or state.unsettled()) else "valid"
    report.data = {
        "command": "validate",
        **_run_data(state, d),
        "checked": {"files": len(state.sealed), "rows": rows, "refused": file_issues},
        "replay": {
            "solutions": replayer.seen,
            "replayed": replayer.replayed,
            "every": replay_every,
            "rejected": replay_issues,
        },
        "result": result,
    }
    return report
