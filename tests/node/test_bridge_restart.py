"""A bridge that goes away in the middle of an episode, and the bridge started in its place
(issue 29): the task manager ends the episode at once as an infrastructure failure, rather
than leaving the agents to wait for frames the old bridge never finished publishing (five
minutes, the agent timeout, in ``benchmarks/recovery.py``), and the new bridge sends the
rerun's first frames only once it has matched every subscriber the task manager sees, so
that a subscriber which keeps no history (volatile) still gets them."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
from aerialdojo_interfaces.msg import EpisodeEvent
from aerialdojo_interfaces.srv import StartEpisode
from rostest import RosClient, running, specs_for
from sensor_msgs.msg import Image

from aerialdojo.nodes.common import time_ns
from aerialdojo.nodes.qos import EVENTS_QOS, sensor_qos
from aerialdojo.protocols import load_suite
from aerialdojo.tasks.suite import resolve_suite

pytestmark = pytest.mark.ros

#: Far above what either wait below may take: the old code answered with nothing at all, and
#: a rerun that waited out the simulator timeout would show as a failed start.
SIM_TIMEOUT_S = 120.0


def test_a_bridge_stopped_mid_episode_ends_it_at_once_and_its_restart_matches_first(
    tmp_path: Path,
) -> None:
    agent = RosClient("stand_in_agent", namespace="uav")
    agent.stand_in_for_agent()
    events = agent.collect(EpisodeEvent, "/aerialdojo/episode_events", EVENTS_QOS)
    # Volatile, as a live viewer subscribes: a frame sent before this matched never arrives.
    images = agent.collect(Image, "camera/front/image", sensor_qos(reliable=False))
    graph = specs_for(
        {
            "sim_bridge": {"image_width": 32, "image_height": 32},
            "task_manager": {
                "auto_run": False,
                "sim_timeout_s": SIM_TIMEOUT_S,
                "agent_timeout_s": 3600.0,
            },
        }
    )
    try:
        with running(graph, tmp_path) as processes:
            bridge = next(node for node in processes if node.spec.name == "sim_bridge")

            def start() -> StartEpisode.Response:
                started = agent.call(
                    StartEpisode,
                    "/aerialdojo/start_episode",
                    StartEpisode.Request(episode_id=episode_id),
                    timeout_s=SIM_TIMEOUT_S,
                )
                assert started.success, started.message
                return started

            assert agent.spin_until(
                lambda: agent.node.count_publishers("camera/front/image") > 0, timeout_s=60.0
            ), "the bridge never came up"
            episode_id = load_suite(resolve_suite("aerialdojo_mini"))[1].select()[0]
            first = start()
            bridge.process.send_signal(signal.SIGINT)
            bridge.process.wait(timeout=30)
            bridge.restart()  # as the CLI restarts it

            def ended() -> list[EpisodeEvent]:
                return [event for event in events if event.kind == EpisodeEvent.INFRA_FAILURE]

            assert agent.spin_until(lambda: bool(ended()), timeout_s=60.0), (
                "the episode of the stopped bridge did not end; events: "
                f"{[(event.kind, event.message) for event in events]}"
            )
            assert "simulator bridge" in ended()[0].message, ended()[0].message

            rerun = start()
            assert time_ns(rerun.stamp) > time_ns(first.stamp)
            assert agent.spin_until(
                lambda: any(image.header.stamp == rerun.stamp for image in images),
                timeout_s=30.0,
            ), f"no image of the rerun's stamp; got {[time_ns(m.header.stamp) for m in images]}"
    finally:
        agent.close()
