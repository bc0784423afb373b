"""Pausing Python's cyclic garbage collector around work that builds many objects and no
reference cycles."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for the block (reference counting still frees
    everything that holds no cycle). Woken by every few hundred allocations, the collector
    walks every object still alive again and again: a planner search's growing node lists
    (a tenth of a generator's time or more), a bag's events as they are read (a third of
    ``evaluate-bag``), a merge's records. A block entered with the collector already paused
    leaves it paused."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
