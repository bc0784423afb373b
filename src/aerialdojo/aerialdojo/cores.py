"""How many of the cores this process may run on are idle now; ROS-free. Linux's
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


def idle_cores(window_s: float = 0.2, *, stat_path: str = PROC_STAT) -> float:
    """The idle cores among those this process may run on (``os.sched_getaffinity``), as a
    sum of each core's idle share over the next ``window_s`` seconds (the caller sleeps
    meanwhile, so its own core counts as idle); where the per-core times cannot be read,
    the cores less the 1-minute load average, at least 0.

    Args:
        window_s: how long to watch; the kernel counts in ticks of 10 ms, so 0.2 s gives
            each core 20.
        stat_path: the kernel's per-core times.
    """
    cores = allowed_cores()
    before = _core_times(stat_path, cores)
    after = None
    if before is not None:
        time.sleep(window_s)
        after = _core_times(stat_path, cores)
    if before is None or after is None:
        return max(0.0, len(cores) - os.getloadavg()[0])
    idle = 0.0
    for core, (idle_then, total_then) in before.items():
        idle_now, total_now = after.get(core, (idle_then, total_then))
        if total_now > total_then:
            idle += (idle_now - idle_then) / (total_now - total_then)
    return idle


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
