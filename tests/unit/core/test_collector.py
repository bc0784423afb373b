"""The cyclic collector's pause, and keeping a merge's objects out of its passes."""

from __future__ import annotations

import gc
import weakref

from aerialdojo.collector import cyclic_gc_paused


def test_the_pause_ends_with_the_block_and_keeps_an_outer_pause() -> None:
    assert gc.isenabled()
    with cyclic_gc_paused():
        assert not gc.isenabled()
        with cyclic_gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


class _Record:
    """Stands for a merge's record: no cycles, weakly referable."""


def test_objects_kept_out_are_skipped_by_later_passes_and_still_freed() -> None:
    try:
        with cyclic_gc_paused(keep_out=True):
            kept = [_Record() for _ in range(1000)]
        assert gc.isenabled()
        walked = {id(item) for item in gc.get_objects()}  # what a full pass walks
        assert not any(id(item) in walked for item in kept)
        last = weakref.ref(kept[-1])
        del kept
        assert last() is None  # reference counting freed it, no pass needed
    finally:
        gc.unfreeze()
