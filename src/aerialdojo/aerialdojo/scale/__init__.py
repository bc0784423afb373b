"""Evaluation at benchmark scale: episodes sharded over Ray workers, one isolated node graph
per worker, each finished episode written once under the run directory, and one merged
report whatever the number of workers (docs/scale.md)."""
