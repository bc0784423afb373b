"""An agent node's steps through the real bridge, with this test serving the step service in
the task manager's place: a step that is never answered must not hold the agent (issue 15,
row 1). An agent whose request was lost used to wait for its answer through every later
attempt of the run, each ending at the 300 s agent timeout. Each step names the episode and
attempt whose task the agent acted on, and the agent's process (issue 29)."""

from __future__ import annotations

import socket
import threading
from pathlib import Path

import pytest
from aerialdojo_interfaces.msg import TaskSpec
from aerialdojo_interfaces.srv import SimReset, Step
from builtin_interfaces.msg import Time
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.executors import MultiThreadedExecutor
from rclpy.node import Node
from rostest import RosClient, running, specs_for
from std_msgs.msg import Header

from aerialdojo.nodes.conversions import pose_msg, task_spec_msg
from aerialdojo.nodes.qos import TASK_QOS
from aerialdojo.params import NODE_PARAMETERS
from aerialdojo.protocols import load_suite
from aerialdojo.tasks.suite import resolve_suite
from aerialdojo.tf_tree import MAP_FRAME

pytestmark = pytest.mark.ros


def test_an_agent_whose_step_is_never_answered_takes_the_reruns_task(tmp_path: Path) -> None:
    protocol, suite = load_suite(resolve_suite("aerialdojo_mini"))
    assert protocol.episodes is not None
    episode = suite.episode(suite.select()[0])
    settings = {spec.name: spec.default for spec in NODE_PARAMETERS["task_manager"]}
    referee = protocol.episodes.referee(episode, suite, settings)
    task = protocol.episodes.describe_task(episode, suite, settings)

    client = RosClient("stand_in_task_manager")
    requests: list[Step.Request] = []
    released = threading.Event()

    def serve_step(request: Step.Request, response: Step.Response) -> Step.Response:
        requests.append(request)
        if len(requests) == 1:
            released.wait()  # this answer is lost (until the test ends)
        response.accepted = response.done = True
        return response

    # The service on threads of its own: the first request holds one of them.
    server = Node("stand_in_step_service", context=client.context)
    server.create_service(
        Step, "/aerialdojo/step", serve_step, callback_group=ReentrantCallbackGroup()
    )
    serving = MultiThreadedExecutor(num_threads=2, context=client.context)
    serving.add_node(server)
    spinner = threading.Thread(target=serving.spin, daemon=True)
    spinner.start()
    tasks = client.node.create_publisher(TaskSpec, "/aerialdojo/task", TASK_QOS)

    def start(after: Time, attempt: int) -> Time:
        reset = client.call(
            SimReset,
            "/sim/reset",
            SimReset.Request(
                episode_id=episode.episode_id,
                scene=episode.scene,
                agents=list(referee.starts),
                poses=[pose_msg(pose) for pose in referee.starts.values()],
                after=after,
            ),
        )
        assert reset.success, reset.message
        message = task_spec_msg(task, Header(stamp=reset.stamp, frame_id=MAP_FRAME))
        message.attempt = attempt
        tasks.publish(message)
        return reset.stamp

    graph = specs_for({"sim_bridge": {"image_width": 48, "image_height": 48}, "uav_agent": {}})
    try:
        with running(graph, tmp_path) as processes:
            assert client.spin_until(
                lambda: client.node.count_subscribers("/aerialdojo/task") > 0, timeout_s=60.0
            ), "the agent never subscribed to the task"
            first = start(Time(), attempt=0)
            assert client.spin_until(lambda: len(requests) == 1, timeout_s=60.0)
            # The task manager gives up on the attempt and reruns it: same id, later stamp.
            start(first, attempt=1)
            assert client.spin_until(lambda: len(requests) == 2, timeout_s=60.0), (
                tmp_path / "logs" / "uav_agent.log"
            ).read_text()
            named = [(request.episode_id, request.attempt) for request in requests]
            assert named == [(episode.episode_id, 0), (episode.episode_id, 1)]
            agent = next(node for node in processes if node.spec.name == "uav_agent")
            process = f"{socket.gethostname()}:{agent.process.pid}"
            assert {request.agent_process for request in requests} == {process}
    finally:
        released.set()
        serving.shutdown()
        server.destroy_node()
        spinner.join(timeout=10.0)
        client.close()
