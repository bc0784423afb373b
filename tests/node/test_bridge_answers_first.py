"""An embedded simulator's action is answered before its observation is rendered
(``sim_bridge``; docs/performance.md, change 37): the set rendered after the answer carries
the answer's stamp, and a render that fails after the answer reaches the task manager as the
simulator's fault on ``/sim/faults`` (which ends the attempt as an infrastructure failure),
never as an agent left waiting for a set that does not come. The next action executes while
that set still renders (change 75), and the sets still go out in order."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace

import pytest
import rclpy
from aerialdojo_interfaces.msg import BackendFault
from aerialdojo_interfaces.srv import SimExecute, SimReset
from rclpy.executors import SingleThreadedExecutor
from rostest import RosClient, first_mini_reset
from sensor_msgs.msg import Image

from aerialdojo.errors import SimulatorFaultError
from aerialdojo.nodes.common import time_ns
from aerialdojo.nodes.qos import FAULTS_QOS, SENSOR_QOS
from aerialdojo.nodes.sim_bridge import SimBridge
from aerialdojo.sim.backend import CameraFrame, SimulatorBackend, StartedObservation

pytestmark = pytest.mark.ros

HandOver = Callable[[CameraFrame], None] | None


def _take_views_through(
    backend: SimulatorBackend,
    finish: Callable[[StartedObservation, HandOver], dict[str, CameraFrame]],
) -> None:
    """From now on the bridge takes the views of ``backend``'s started observations through
    ``finish``, which gets the real started observation (rendering every view) and the
    bridge's hand-over; ``del backend.start_observe`` restores the backend's own."""
    start_every_view = backend.start_observe

    def start(agent: str, with_ground_truth_ids: bool = False) -> StartedObservation:
        started = start_every_view(agent, with_ground_truth_ids)
        return replace(started, finish_views=lambda hand_over: finish(started, hand_over))

    backend.start_observe = start  # type: ignore[method-assign]


@contextmanager
def _bridge_and_client() -> Iterator[tuple[SimBridge, RosClient]]:
    """The embedded simulator's bridge spinning here at 32x32, and a client of it."""
    rclpy.init(args=["--ros-args", "-p", "image_width:=32", "-p", "image_height:=32"])
    bridge = SimBridge()
    assert bridge._backend.next_observation_time_s() is not None  # the embedded simulator
    executor = SingleThreadedExecutor()
    executor.add_node(bridge)
    spinning = threading.Thread(target=executor.spin, daemon=True)
    spinning.start()
    client = RosClient()
    try:
        yield bridge, client
    finally:
        client.close()
        executor.shutdown()
        bridge.destroy_node()
        rclpy.shutdown()
        spinning.join(timeout=5)


def test_the_set_after_an_early_answer_has_its_stamp_and_a_failed_render_is_a_fault() -> None:
    with _bridge_and_client() as (bridge, client):
        images = client.collect(Image, "/uav/camera/front/image", SENSOR_QOS)
        faults = client.collect(BackendFault, "/sim/faults", FAULTS_QOS)
        request = first_mini_reset()
        reset = client.call(SimReset, "/sim/reset", request)
        assert reset.success, reset.message
        step = SimExecute.Request(agent="uav", action="MoveUp", magnitude=1.0)
        answer = client.call(SimExecute, "/sim/execute", step)
        assert answer.success, answer.message
        stamp = time_ns(answer.stamp)
        assert stamp > time_ns(reset.stamp)
        assert client.spin_until(
            lambda: any(time_ns(image.header.stamp) == stamp for image in images), 30
        ), f"no front image of the answer's stamp; got {[time_ns(i.header.stamp) for i in images]}"

        def fail(started: StartedObservation, hand_over: HandOver) -> dict[str, CameraFrame]:
            # As a failed chunk's future raises from ``StartedObservation.result``.
            started.finish_views(None)
            raise SimulatorFaultError("the render of uav failed")

        _take_views_through(bridge._backend, fail)
        answer = client.call(SimExecute, "/sim/execute", step)
        assert answer.success, answer.message  # the outcome was known; the render failed after
        assert client.spin_until(lambda: bool(faults), 30), "the failed render was not reported"
        assert faults[0].episode_id == request.episode_id and faults[0].agent == "uav"
        assert not faults[0].intervention
        assert "the render of uav failed" in faults[0].reason
        assert all(time_ns(image.header.stamp) != time_ns(answer.stamp) for image in images)


def test_a_view_failing_after_the_front_view_went_out_is_a_fault() -> None:
    """Views go out as each is rendered (change 55): the agent may already hold the front
    view of a set whose left view then fails. The set is never completed, and the failure
    is the simulator's, reported like any failed render."""
    with _bridge_and_client() as (bridge, client):
        fronts = client.collect(Image, "/uav/camera/front/image", SENSOR_QOS)
        lefts = client.collect(Image, "/uav/camera/left/image", SENSOR_QOS)
        faults = client.collect(BackendFault, "/sim/faults", FAULTS_QOS)
        request = first_mini_reset()
        assert client.call(SimReset, "/sim/reset", request).success

        def front_view_then_fault(
            started: StartedObservation, hand_over: HandOver
        ) -> dict[str, CameraFrame]:
            # The front view handed over as the renderer hands each finished view, then the
            # next one fails.
            frames = started.finish_views(None)
            assert hand_over is not None, "the bridge no longer takes views as rendered"
            hand_over(frames["front"])
            raise SimulatorFaultError("the left view of uav failed")

        _take_views_through(bridge._backend, front_view_then_fault)
        step = SimExecute.Request(agent="uav", action="MoveUp", magnitude=1.0)
        answer = client.call(SimExecute, "/sim/execute", step)
        assert answer.success, answer.message
        stamp = time_ns(answer.stamp)
        assert client.spin_until(lambda: bool(faults), 30), "the failed view was not reported"
        assert faults[0].episode_id == request.episode_id and faults[0].agent == "uav"
        assert "the left view of uav failed" in faults[0].reason
        assert client.spin_until(
            lambda: any(time_ns(image.header.stamp) == stamp for image in fronts), 30
        ), "the front view rendered before the failure never went out"
        assert all(time_ns(image.header.stamp) != stamp for image in lefts)


def test_the_next_action_executes_while_the_last_set_still_renders() -> None:
    """The embedded simulator renders from a snapshot (``start_observe``): the bridge answers
    the next action while the set before it is still rendering, and its views go out after
    that set's, under their own stamp."""
    with _bridge_and_client() as (bridge, client):
        fronts = client.collect(Image, "/uav/camera/front/image", SENSOR_QOS)
        assert client.call(SimReset, "/sim/reset", first_mini_reset()).success
        release = threading.Event()

        def held(started: StartedObservation, hand_over: HandOver) -> dict[str, CameraFrame]:
            # This set's views render, but the render thread takes them only on release.
            assert release.wait(60), "the test never released the held set"
            return started.finish_views(hand_over)

        step = SimExecute.Request(agent="uav", action="MoveUp", magnitude=1.0)
        _take_views_through(bridge._backend, held)
        try:
            first = client.call(SimExecute, "/sim/execute", step)
            del bridge._backend.start_observe  # the next set is the backend's own again
            second = client.call(SimExecute, "/sim/execute", step, timeout_s=30.0)
            assert first.success and second.success, (first.message, second.message)
            stamps = (time_ns(first.stamp), time_ns(second.stamp))
            assert stamps[0] < stamps[1]
            assert not any(time_ns(image.header.stamp) in stamps for image in fronts)
        finally:
            release.set()
        assert client.spin_until(
            lambda: {time_ns(image.header.stamp) for image in fronts} >= set(stamps), 30
        ), "the two sets did not both go out"
        order = [time_ns(i.header.stamp) for i in fronts if time_ns(i.header.stamp) in stamps]
        assert order == list(stamps)
