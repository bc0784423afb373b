"""Operating-system scheduling for a process with one time-critical thread (the safety
gate's keep-alive and e-stop thread): a real-time class for that thread, a nice boost for
the threads it waits on. ROS-free; Linux semantics (the scheduling class and the nice
value are per thread there).

Why both: the time-critical thread shares the interpreter lock with the process's other
Python thread, and its requests arrive through the middleware's receive threads. A
real-time class alone wakes it at once, but then it waits for whichever thread holds the
interpreter lock, and a lock holder at normal priority can sit preempted behind the
machine's other work for tens of milliseconds. Boosted, those threads get a core back
first. Not real-time for them: their work grows with their inputs (odometry, requests),
and a real-time thread that is busy starves everything below it.
"""

from __future__ import annotations

import os
import threading

#: The nice value of the process's other threads: far ahead of the default 0 in Linux's fair
#: scheduler (about 9x the share of a nice-0 thread), still inside it.
BOOSTED_NICE = -10


def make_thread_realtime(priority: int) -> str | None:
    """Move the calling thread to ``SCHED_FIFO`` at ``priority`` (1-99).

    Returns:
        None once done, else why not (no permission, no such class on this system): the
        thread then keeps its class, and the caller says so.
    """
    set_scheduler = getattr(os, "sched_setscheduler", None)
    if set_scheduler is None:
        return "this system has no SCHED_FIFO (os.sched_setscheduler)"
    try:
        # pid 0 is the calling thread only, on Linux.
        set_scheduler(0, os.SCHED_FIFO, os.sched_param(priority))
    except OSError as error:
        return f"SCHED_FIFO priority {priority} refused: {error.strerror} ({_permission_hint()})"
    return None


def boost_threads(nice: int = BOOSTED_NICE) -> str | None:
    """Set every current thread of this process to ``nice``; threads started later inherit
    it from the thread that starts them.

    Returns:
        None once done, else why not for some thread (those keep their value).
    """
    refused: list[str] = []
    for task in _thread_ids():
        try:
            # PRIO_PROCESS with a thread id is that thread alone, on Linux.
            os.setpriority(os.PRIO_PROCESS, task, nice)
        except ProcessLookupError:
            continue  # the thread ended meanwhile
        except OSError as error:
            refused.append(f"thread {task}: {error.strerror}")
    if refused:
        return f"nice {nice} refused for {', '.join(refused)} ({_permission_hint()})"
    return None


def _thread_ids() -> list[int]:
    try:
        return [int(task) for task in os.listdir("/proc/self/task")]
    except FileNotFoundError:  # no /proc: the calling thread is what can be reached
        return [threading.get_native_id()]


def _permission_hint() -> str:
    return (
        "needs root, CAP_SYS_NICE, or an rtprio/nice limit in /etc/security/limits.conf "
        "for the user running it"
    )
