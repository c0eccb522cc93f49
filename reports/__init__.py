"""pandas summaries, plots, HTML/Markdown reports and dataset publishing."""
