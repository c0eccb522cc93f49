"""Ray batch jobs over ranges of Microsoft deals, writing Parquet.

- `jobs.ranges`: DEALS text (``1-32000``, ``1-1000,5000-6000``) and range arithmetic.
- `jobs.config`: the run configuration, its canonical JSON and hash, provenance.
- `jobs.runformat`: the run directory, described once: layout, names, metadata
  keys, manifest and history, index, lock, the checked reader, row invariants.
- `jobs.chunks`: solve a range of deals into an Arrow table; escalation passes (no Ray).
- `jobs.task`: the bodies of the Ray tasks (imports only the standard library
  at the top, so a worker without the engine fails with advice).
- `jobs.run`: the driver (``freecell-analyzer run``, ``python -m jobs.run``).
- `jobs.plan`: ``plan``, a run's cost estimated from a sample.
- `jobs.check`: ``status`` and ``validate``.
- `jobs.cli`: ``register(subparsers)`` for `analyzer.cli`.

The on-disk layout is described in docs/DESIGN.md, "Runs on disk".
"""
