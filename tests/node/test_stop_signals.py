"""A node stopped by SIGINT or SIGTERM ends in order. rclpy's signal thread wakes every
executor through guard conditions it holds by bare pointer, and an executor shut down while
the thread still walked them ended the process with SIGSEGV in ``rcl_trigger_guard_condition``
(librcl; seen at the end of runs in the task manager and in nodes ``aerialdojo eval``
started). ``node_process`` removes rclpy's handlers, joining that thread, before the node's
clean-up runs, and interrupts a callback that waits (on a model, a simulator) at once."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.ros

#: A node's main as the task manager's: two executors, one spun on a thread of its own, both
#: shut down in the clean-up that follows the stop.
NODE = textwrap.dedent(
    """
    import contextlib, sys, threading, time
    import rclpy
    from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
    from rclpy.signals import get_current_signal_handlers_options
    from aerialdojo.nodes.common import node_process

    with node_process():
        node = rclpy.create_node("stopped_by_a_signal")
        link_node = rclpy.create_node("stopped_by_a_signal_link")
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        link_executor = SingleThreadedExecutor()
        link_executor.add_node(link_node)

        def spin_link():
            with contextlib.suppress(ExternalShutdownException):
                link_executor.spin()

        link = threading.Thread(target=spin_link)
        link.start()
        if sys.argv[1:] == ["busy"]:
            # A callback that waits as a model's answer can: the stop must not wait for it.
            node.create_timer(0.0, lambda: print("waiting", flush=True) or time.sleep(300))
        else:
            print("spinning", flush=True)
        try:
            executor.spin()
        finally:
            handlers = get_current_signal_handlers_options()
            print(f"rclpy's handlers at the clean-up: {handlers.name}", flush=True)
            link_executor.shutdown(timeout_sec=5.0)
            link.join(timeout=5.0)
            executor.shutdown(timeout_sec=5.0)
    print("ended in order", flush=True)
    """
)


def _stopped(stop: signal.Signals, *args: str) -> str:
    """Start the node with ``args``, send ``stop`` once it says it spins or waits, and return
    what it said; it must end with status 0."""
    node = subprocess.Popen(
        [sys.executable, "-c", NODE, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert node.stdout is not None
        first = node.stdout.readline()
        assert first in ("spinning\n", "waiting\n"), first + node.stdout.read()
        node.send_signal(stop)
        said, _ = node.communicate(timeout=60)
    finally:
        node.kill()
    assert node.returncode == 0, said
    assert said.rstrip().endswith("ended in order"), said
    return said


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_stopped_node_cleans_up_after_rclpys_signal_thread_is_gone(
    stop: signal.Signals,
) -> None:
    assert "rclpy's handlers at the clean-up: NO" in _stopped(stop)


def test_a_stop_interrupts_a_callback_that_waits() -> None:
    # Within the 60 s _stopped allows, not after the callback's 300 s.
    assert "rclpy's handlers at the clean-up: NO" in _stopped(signal.SIGINT, "busy")
