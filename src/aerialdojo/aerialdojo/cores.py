"""How many of the cores this process may run on are free now; ROS-free. Linux's
``/proc/stat`` where there is one, the 1-minute load average elsewhere.

Why not the load average alone: it is an exponentially damped mean over a minute, so it
still counts work that has just ended. A merge that starts right after its caller wrote
its records saw a load of about 1 on an idle 2-core machine and left one core idle.
"""

from __future__ import annotations

import os
import time
from collections.abc import Collection

#: Per-core times since boot, in clock ticks (proc_stat(5)).
PROC_STAT = "/proc/stat"
#: The fields of a ``cpuN`` line that count a core as free: ``idle`` and ``iowait``
#: (waiting for I/O with nothing to run). The fields after ``steal`` (``guest``,
#: ``guest_nice``) are already counted in ``user`` and ``nice``, so a core's total is the
#: first eight.
_IDLE_FIELDS = (3, 4)
_COUNTED_FIELDS = 8


def free_cores(window_s: float = 0.2, windows: int = 5, *, stat_path: str = PROC_STAT) -> int:
    """How many of the cores this process may run on (``os.sched_getaffinity``) are mostly
    free: idle at least half the time since the watch began (the caller sleeps meanwhile,
    so its own core counts as free). Watched for ``window_s``, then ``window_s`` more at a
    time while some core looks busy, ``windows`` times at most: a core busy for a moment is
    not taken. Where the per-core times cannot be read, the cores less the 1-minute load
    average, rounded, at least 0.

    Why watch on: right after a caller wrote many files the kernel writes them back every 5
    s (``vm.dirty_writeback_centisecs``), each time a few tenths of a second of system time
    on an otherwise idle core; one fifth of a second that fell in such a burst read that
    core as busy (docs/performance.md, the merge's tenth pass). Work that holds a core keeps
    it busy however long it is watched.

    Args:
        window_s: how long each look lasts; the kernel counts in ticks of 10 ms, so 0.2 s
            gives each core 20.
        windows: the most looks.
        stat_path: the kernel's per-core times.
    """
    cores = allowed_cores()
    start = _core_times(stat_path, cores)
    free = None
    if start is not None:
        for _ in range(max(1, windows)):
            time.sleep(window_s)
            now = _core_times(stat_path, cores)
            free = _mostly_idle(start, now) if now is not None else None
            if free is None or free == len(start):
                break
    if free is None:
        return max(0, round(len(cores) - os.getloadavg()[0]))
    return free


def _mostly_idle(then: dict[int, tuple[int, int]], now: dict[int, tuple[int, int]]) -> int:
    """The cores of ``then`` idle at least half the ticks they counted until ``now``."""
    free = 0
    for core, (idle_then, total_then) in then.items():
        idle_now, total_now = now.get(core, (idle_then, total_then))
        if total_now > total_then and 2 * (idle_now - idle_then) >= total_now - total_then:
            free += 1
    return free


def allowed_cores() -> Collection[int]:
    """The cores this process may run on (all of them where affinity is unknown)."""
    if hasattr(os, "sched_getaffinity"):
        return os.sched_getaffinity(0)
    return range(os.cpu_count() or 1)


def _core_times(stat_path: str, cores: Collection[int]) -> dict[int, tuple[int, int]] | None:
    """Each of ``cores``' idle and total ticks since boot; None where the file is missing or
    names none of them (not Linux, a container without ``/proc``)."""
    try:
        with open(stat_path, encoding="ascii") as stream:
            lines = stream.readlines()
    except OSError:
        return None
    times = {}
    for line in lines:
        name, _, rest = line.partition(" ")
        if not name.startswith("cpu") or name == "cpu":
            continue
        try:
            core = int(name[3:])
            ticks = [int(field) for field in rest.split()[:_COUNTED_FIELDS]]
        except ValueError:
            return None
        if core in cores and len(ticks) > max(_IDLE_FIELDS):
            times[core] = (sum(ticks[field] for field in _IDLE_FIELDS), sum(ticks))
    return times or None
