"""Ray batch jobs over ranges of Microsoft deals, writing Parquet.

- `jobs.ranges`: DEALS text (``1-32000``, ``1-1000,5000-6000``) and range arithmetic.
- `jobs.config`: the run configuration, its canonical JSON and hash, provenance.
- `jobs.chunks`: solve a chunk of deals into an Arrow table, write it
  atomically, scan a run directory for complete chunks (no Ray).
- `jobs.task`: the body of one Ray task (imports only the standard library
  at the top, so a worker without the engine fails with advice).
- `jobs.run`: the driver (``freecell-analyzer run``, ``python -m jobs.run``).
- `jobs.rundir`: ``run.json`` and the checks an output directory must pass.
- `jobs.check`: ``status`` and ``validate``.
- `jobs.cli`: ``register(subparsers)`` for `analyzer.cli`.

The on-disk layout is fixed by docs/DESIGN.md, "Runs on disk".
"""
