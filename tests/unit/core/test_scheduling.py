"""aerialdojo.scheduling: the real-time class for one thread, the nice boost for the rest,
and the refusal of both where the system does not allow them.

Each case runs in a forked child: scheduling is per thread and outlives the call, and a
refusal needs a user without the privilege (nobody, uid 65534), which only root can become.
"""

from __future__ import annotations

import os
import pickle
import sys
import threading
from collections.abc import Callable

import pytest

from aerialdojo.scheduling import boost_threads, make_thread_realtime

pytestmark = [
    pytest.mark.skipif(
        not sys.platform.startswith("linux"), reason="per-thread scheduling is Linux's"
    ),
    # Python 3.12 warns of any fork while other threads run; here they are other tests'
    # (the renderer's pool, rclpy's), and the child takes none of their locks: it sets its
    # own scheduling, pickles the result to a pipe it opened itself and leaves by os._exit.
    pytest.mark.filterwarnings(
        "ignore:This process .* is multi-threaded, use of fork:DeprecationWarning"
    ),
]

NOBODY = 65534


def in_child(work: Callable[[], object], *, uid: int | None = None) -> object:
    """``work()``'s result from a forked child, as ``uid`` where given."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never back into pytest
        code = 0
        try:
            os.close(read_end)
            if uid is not None:
                os.setuid(uid)
            result = work()
            with os.fdopen(write_end, "wb") as pipe:
                pickle.dump(result, pipe)
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        data = pipe.read()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, "the child failed"
    return pickle.loads(data)


def needs_privilege() -> None:
    def probe() -> str | None:
        return make_thread_realtime(1)

    refused = in_child(probe)
    if refused:
        pytest.skip(f"this machine refuses real-time scheduling to the tests: {refused}")


def thread_class() -> tuple[int, int, int]:
    """The calling thread's policy, real-time priority and nice value."""
    return (
        os.sched_getscheduler(0),
        os.sched_getparam(0).sched_priority,
        os.getpriority(os.PRIO_PROCESS, 0),
    )


def test_a_thread_made_realtime_runs_in_sched_fifo_and_the_others_do_not() -> None:
    needs_privilege()

    def work() -> tuple[str | None, tuple[int, int, int], tuple[int, int, int]]:
        seen: dict[str, tuple[int, int, int]] = {}
        outcome: list[str | None] = []

        def realtime() -> None:
            outcome.append(make_thread_realtime(7))
            seen["realtime"] = thread_class()

        thread = threading.Thread(target=realtime)
        thread.start()
        thread.join()
        return outcome[0], seen["realtime"], thread_class()

    refused, realtime, caller = in_child(work)  # type: ignore[misc]
    assert refused is None
    assert realtime[:2] == (os.SCHED_FIFO, 7)
    assert caller[:2] == (os.SCHED_OTHER, 0), "only the calling thread changes class"


def test_boost_reaches_every_thread_and_the_threads_started_later() -> None:
    needs_privilege()

    def work() -> tuple[str | None, list[int], int]:
        release = threading.Event()
        waiting = threading.Thread(target=release.wait)
        waiting.start()
        refused = boost_threads(-5)
        nice_values = [
            os.getpriority(os.PRIO_PROCESS, int(task)) for task in os.listdir("/proc/self/task")
        ]
        release.set()
        waiting.join()
        later: list[int] = []
        thread = threading.Thread(target=lambda: later.append(os.getpriority(os.PRIO_PROCESS, 0)))
        thread.start()
        thread.join()
        return refused, nice_values, later[0]

    refused, nice_values, later = in_child(work)  # type: ignore[misc]
    assert refused is None
    assert len(nice_values) == 2 and set(nice_values) == {-5}
    assert later == -5


def test_without_the_privilege_both_are_refused_with_the_reason_and_nothing_changes() -> None:
    if os.geteuid() != 0:
        pytest.skip("only root can become an unprivileged user to be refused")

    def work() -> tuple[str | None, str | None, tuple[int, int, int]]:
        return make_thread_realtime(7), boost_threads(-5), thread_class()

    realtime, boost, after = in_child(work, uid=NOBODY)  # type: ignore[misc]
    assert realtime is not None and "SCHED_FIFO priority 7 refused" in realtime
    assert "CAP_SYS_NICE" in realtime
    assert boost is not None and "nice -5 refused" in boost
    assert after == (os.SCHED_OTHER, 0, os.getpriority(os.PRIO_PROCESS, 0)), "left as it was"
