"""Batch runs: sweep files and Monte Carlo (spec), one run on a worker (worker), where runs
execute (execute: in-process, local Dask, a cluster), the table and its files (run, table,
plot, metrics) and the `blocksim sweep` command (cli)."""
