"""Ray batch jobs over ranges of Microsoft deals, writing Parquet."""
