"""``nodes.common.wait_for_future``: a node's wait on a service answer ends with its context,
so a node whose launcher died exits at once instead of answering in its DDS domain until
the wait's timeout (the task manager's 60 s ``sim_timeout_s``)."""

from __future__ import annotations

import threading
import time

import pytest
import rclpy
from rclpy.context import Context
from rclpy.task import Future

from aerialdojo.nodes.common import wait_for_future

pytestmark = pytest.mark.ros

#: Far longer than the test takes unless the wait ignores the shutdown.
TIMEOUT_S = 300.0


def test_a_wait_ends_when_its_context_shuts_down() -> None:
    context = Context()
    rclpy.init(context=context)
    try:
        unanswered = Future()
        threading.Timer(0.5, rclpy.shutdown, kwargs={"context": context}).start()
        started = time.monotonic()
        assert not wait_for_future(unanswered, TIMEOUT_S, context)
        assert time.monotonic() - started < TIMEOUT_S / 2
        assert not unanswered.done()
    finally:
        rclpy.try_shutdown(context=context)


def test_an_answer_ends_the_wait_with_success() -> None:
    context = Context()
    rclpy.init(context=context)
    try:
        answered = Future()
        threading.Timer(0.2, answered.set_result, args=("ok",)).start()
        assert wait_for_future(answered, TIMEOUT_S, context)
        assert answered.result() == "ok"
        assert not wait_for_future(Future(), 0.0, context)  # no answer, no time left
    finally:
        rclpy.try_shutdown(context=context)
