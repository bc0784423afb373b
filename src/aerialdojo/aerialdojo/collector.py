"""Pausing Python's cyclic garbage collector around work that builds many objects and no
reference cycles."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def cyclic_gc_paused(*, keep_out: bool = False) -> Iterator[None]:
    """Pause the cyclic garbage collector for the block (reference counting still frees
    everything that holds no cycle). Woken by every few hundred allocations, the collector
    walks every object still alive again and again: a planner search's growing node lists
    (a tenth of a generator's time or more), a bag's events as they are read (a third of
    ``evaluate-bag``), a merge's records. A block entered with the collector already paused
    leaves it paused.

    Args:
        keep_out: at the end of the block, exempt every object alive then from the
            collector's future passes (``gc.freeze``; reference counting still frees each
            when its last reference goes): for a merge's records and scores, alive until
            its report is written. 200,000 of them are about ten million tracked objects,
            and the collector's first passes over them once the pause ended cost a sixth
            of the merge. What the collector gives up is the cycles alive at that moment.
    """
    if not gc.isenabled():
        yield
        if keep_out:
            gc.freeze()
        return
    gc.disable()
    try:
        yield
        if keep_out:
            gc.freeze()
    finally:
        gc.enable()
