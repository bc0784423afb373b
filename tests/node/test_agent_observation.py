"""What an AerialDojo agent is given, through the real graph: under the benchmark protocol
(AerialDojo-200K, appendix A: "the front-facing RGB-D inputs"; section 3.1: the interface
"excludes GPS measurements") the policy sees the front view alone and no odometry, although
the bridge publishes four views and odometry and the node subscribes to them all."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
import rclpy
from aerialdojo_interfaces.msg import EpisodeEvent
from aerialdojo_interfaces.srv import StartEpisode
from rclpy.executors import SingleThreadedExecutor
from rostest import RosClient, running, specs_for
from sensor_msgs.msg import Image

from aerialdojo.actions import STOP, Action
from aerialdojo.agents.observation import AgentObservation, GoalDescription
from aerialdojo.nodes.qos import EVENTS_QOS, SENSOR_QOS
from aerialdojo.nodes.uav_agent import UavAgent
from aerialdojo.tasks.suite import load_suite, resolve_suite

pytestmark = pytest.mark.ros


class RecordingPolicy:
    """Turns once, then stops; keeps every observation it was handed."""

    def __init__(self) -> None:
        self.observations: list[AgentObservation] = []

    def reset(self, goal: GoalDescription) -> None:
        self.observations.clear()

    def act(self, observation: AgentObservation) -> Action:
        self.observations.append(observation)
        return Action("TurnLeft", 15.0) if len(self.observations) == 1 else Action(STOP)


@pytest.mark.parametrize(
    ("settings", "views", "odometry"),
    [
        ({}, {"front"}, False),  # the protocol: the paper's setting is the default
        ({"observation": "four_views", "odometry": True}, {"front", "left", "right", "down"}, True),
    ],
)
def test_the_policy_gets_only_what_the_protocol_gives(
    tmp_path: Path, settings: dict[str, object], views: set[str], odometry: bool
) -> None:
    client = RosClient()
    downs = client.collect(Image, "/uav/camera/down/image", SENSOR_QOS)
    events = client.collect(EpisodeEvent, "/aerialdojo/episode_events", EVENTS_QOS)
    graph = specs_for(
        {
            "sim_bridge": {"image_width": 48, "image_height": 48},
            "task_manager": {"auto_run": False, **settings},
        }
    )
    # The agent node runs here, in the /uav namespace, so that its policy can be inspected.
    rclpy.init(args=["--ros-args", "-r", "__ns:=/uav"])
    policy = RecordingPolicy()
    agent = UavAgent(policy)
    executor = SingleThreadedExecutor()
    executor.add_node(agent)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()
    try:
        with running(graph, tmp_path):
            episode_id = load_suite(resolve_suite("aerialdojo_mini")).select()[0]
            started = client.call(
                StartEpisode,
                "/aerialdojo/start_episode",
                StartEpisode.Request(episode_id=episode_id),
            )
            assert started.success, started.message
            assert set(started.task.views) == views and started.task.odometry is odometry
            ended = client.spin_until(
                lambda: any(e.kind == EpisodeEvent.STOPPED for e in events), timeout_s=120.0
            )
            assert ended, [e.kind for e in events]
    finally:
        executor.shutdown()
        agent.destroy_node()
        rclpy.shutdown()
        spinner.join(timeout=10.0)
        client.close()
    assert len(policy.observations) == 2
    for observation in policy.observations:
        assert set(observation.views) == views
        assert (observation.odometry is not None) is odometry
    assert downs  # the bridge published the down view all along
