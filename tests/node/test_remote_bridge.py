"""The real sim_bridge (in .venv-projectairsim, on the ProjectAirSim backend) and the real
task_manager, against the fake ProjectAirSim server in its own process, over real DDS.

An episode of a one-episode suite runs end to end: the frames published on the bridge's topics
carry the pixels the server sent for the pose the step produced; the server then leaves one
request unanswered mid-episode, which ends the attempt as an infrastructure failure (no crash),
and the task manager's rerun of the episode runs to Stop on a fresh connection.

Needs .venv-projectairsim (tools/bootstrap_backend.sh projectairsim); skipped without it.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from aerialdojo_interfaces.msg import EpisodeEvent
from aerialdojo_interfaces.srv import Step
from rostest import RosClient, specs_for
from sensor_msgs.msg import Image

from aerialdojo.image_codec import image_to_array
from aerialdojo.nodes.qos import SENSOR_QOS
from aerialdojo.runner import start_graph, stop_graph

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))

from fakes.projectairsim_process import FakeServerProcess  # noqa: E402
from fakes.projectairsim_scenes import write_scene_config  # noqa: E402
from fakes.remote_suite import write_one_episode_suite  # noqa: E402

VENV_PYTHON = REPO / ".venv-projectairsim" / "bin" / "python"

pytestmark = [
    pytest.mark.ros,
    pytest.mark.skipif(
        not VENV_PYTHON.exists(),
        reason="needs .venv-projectairsim: tools/bootstrap_backend.sh projectairsim",
    ),
]


@pytest.fixture
def client() -> Iterator[RosClient]:
    ros = RosClient(namespace="uav")  # this test is the UAV agent
    yield ros
    ros.close()


@pytest.fixture
def fake_server(tmp_path: Path) -> Iterator[FakeServerProcess]:
    server = FakeServerProcess(VENV_PYTHON, tmp_path / "fake_projectairsim.log")
    yield server
    server.close()


def _expected_front_colour(x: float, y: float, z: float, yaw: float) -> tuple[int, int, int]:
    """What the fake's front camera shows at a map pose (its ``expected_rgb`` in NED)."""
    north, east, yaw_ned = y, x, (math.pi / 2.0 - yaw + math.pi) % (2.0 * math.pi) - math.pi
    return (
        round(north * 10.0) % 256,
        round(east * 10.0) % 256,
        round(math.degrees(yaw_ned)) % 256,
    )


def _step(client: RosClient, action: str, magnitude: float = 0.0) -> Step.Response:
    return client.call(
        Step, "/aerialdojo/step", Step.Request(agent="uav", action=action, magnitude=magnitude)
    )


def test_an_episode_runs_through_the_bridge_and_a_hung_request_is_rerun(
    client: RosClient, fake_server: FakeServerProcess, tmp_path: Path
) -> None:
    suite = write_one_episode_suite(tmp_path / "suite", scene="Yard")
    scene_dir = tmp_path / "sim_config"
    write_scene_config(scene_dir, "Yard")
    events = client.stand_in_for_evaluator()
    fronts = client.collect(Image, "/uav/camera/front/image", SENSOR_QOS)
    client.stand_in_for_agent()
    # The runner starts the bridge on .venv-projectairsim's interpreter (node_interpreter).
    bridge, manager = start_graph(
        specs_for(
            {
                "sim_bridge": {
                    "backend": "projectairsim",
                    "image_width": 32,
                    "image_height": 24,
                    "projectairsim_scene_dir": str(scene_dir),
                    "projectairsim_topics_port": fake_server.ports["topics"],
                    "projectairsim_services_port": fake_server.ports["services"],
                    "server_timeout_s": 2.0,
                    "server_attempts": 2,
                },
                "task_manager": {"suite": str(suite), "max_attempts": 3},
            }
        ),
        tmp_path,
    )
    assert bridge.process.args[0] == str(VENV_PYTHON)
    try:

        def started(attempt: int) -> bool:
            return any(e.kind == EpisodeEvent.STARTED and e.attempt == attempt for e in events)

        assert client.spin_until(lambda: started(0), timeout_s=60.0), bridge.log_path.read_text()

        moved = _step(client, "MoveForward", 5.0)
        assert moved.accepted and not moved.done, moved.message
        assert client.spin_until(
            lambda: any(m.header.stamp == moved.stamp for m in fronts), timeout_s=10.0
        ), (
            f"no front frame stamped {moved.stamp}; received {[m.header.stamp for m in fronts]}"
            f"\n{bridge.log_path.read_text()[-2000:]}"
        )
        frame = next(m for m in fronts if m.header.stamp == moved.stamp)
        pixels = image_to_array(frame)
        assert pixels.shape == (24, 32, 3)
        # The suite starts at (0, 0, 10) facing +x: MoveForward 5 leads to (5, 0, 10).
        assert tuple(pixels[0, 0]) == _expected_front_colour(5.0, 0.0, 10.0, 0.0)

        fake_server.command("drop 1")
        hung = _step(client, "MoveLeft", 5.0)
        assert hung.done and hung.termination == EpisodeEvent.INFRA_FAILURE
        assert f"127.0.0.1:{fake_server.ports['services']}" in hung.message

        assert client.spin_until(lambda: started(1), timeout_s=60.0), "no rerun"
        for action, magnitude in (("MoveForward", 5.0), ("MoveLeft", 5.0)):
            assert _step(client, action, magnitude).accepted
        stopped = _step(client, "Stop")
        assert stopped.done and stopped.termination == EpisodeEvent.STOPPED
        assert client.spin_until(
            lambda: any(e.kind == EpisodeEvent.RUN_FINISHED for e in events), timeout_s=30.0
        )
        finished = next(e for e in events if e.kind == EpisodeEvent.RUN_FINISHED)
        assert finished.message.startswith("1 of 1 episodes ran"), finished.message
        assert bridge.process.poll() is None, "the bridge died on a simulator fault"
        assert manager.process.poll() is None
    finally:
        stop_graph([manager, bridge], grace_s=5.0)
