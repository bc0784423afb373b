"""AGOS through the real task manager and simulator bridge processes over DDS: the task both
agents get, per-agent action sets, refusals that use no budget, the candidate the E2A tool
publishes and freezes, the UGV's front view while driving and its six-view ring after
STOP_OBSERVE, REJECT reopening the search, and a false CONFIRM ending the episode."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from aerialdojo_interfaces.msg import AgentMessage, Candidate, EpisodeEvent
from aerialdojo_interfaces.srv import StartEpisode, Step
from nav_msgs.msg import Odometry
from rostest import RosClient, running, specs_for
from sensor_msgs.msg import Image

from aerialdojo.agos.episodes import load_agos_suite
from aerialdojo.agos.sensors import RING_VIEWS
from aerialdojo.nodes.qos import EVENTS_QOS, HANDOFF_QOS, SENSOR_QOS, STATE_QOS, TASK_QOS
from aerialdojo.tasks.suite import resolve_suite

pytestmark = pytest.mark.ros


@pytest.fixture
def client():
    ros = RosClient()
    yield ros
    ros.close()


def _graph() -> list:
    return specs_for(
        {
            "sim_bridge": {
                "backend": "agos",
                "agents": ["uav", "ugv"],
                "image_width": 48,
                "image_height": 48,
            },
            # Refusals in a row are checked one by one below, not ended as invalid_action.
            "task_manager": {
                "suite": "agos_mini",
                "auto_run": False,
                "sim_timeout_s": 30.0,
                "refusals_allowed": 10,
            },
        }
    )


def _step(
    client: RosClient, agent: str, action: str, argument: str = "", message: str = ""
) -> Step.Response:
    request = Step.Request(agent=agent, action=action, argument=argument, teammate_message=message)
    return client.call(Step, "/aerialdojo/step", request)


def test_the_protocol_runs_through_the_nodes(client: RosClient, tmp_path: Path) -> None:
    events = client.collect(EpisodeEvent, "/aerialdojo/episode_events", EVENTS_QOS)
    candidates = client.collect(Candidate, "/agos/candidates", HANDOFF_QOS)
    fronts = client.collect(Image, "/ugv/camera/front/image", SENSOR_QOS)
    rings = client.collect(Image, "/ugv/camera/ring_back/image", SENSOR_QOS)
    downs = client.collect(Image, "/uav/camera/down/image", SENSOR_QOS)
    odometry = client.collect(Odometry, "/ugv/odom", STATE_QOS)
    turns = client.collect(AgentMessage, "/agos/turn", TASK_QOS)
    messages = client.collect(AgentMessage, "/agos/messages", HANDOFF_QOS)
    suite = load_agos_suite(resolve_suite("agos_mini"))
    episode = next(e for e in suite.episodes if e.setting == "mid")
    with running(_graph(), tmp_path) as processes:
        started = client.call(
            StartEpisode,
            "/aerialdojo/start_episode",
            StartEpisode.Request(episode_id=episode.episode_id),
        )
        assert started.success, started.message
        task = started.task
        assert (task.benchmark, list(task.agents), task.action_budget) == (
            "agos",
            ["uav", "ugv"],
            80,
        )
        assert task.global_localization and task.success_radius_m == 50.0
        assert len(task.goal.reference_images) == len(episode.reference_images) >= 3
        assert "region x" in task.goal.description and episode.target_name not in str(task)
        by_agent = {a: [s.name for s in task.actions if s.agent == a] for a in task.agents}
        assert by_agent["uav"] == [
            "MOVE_TO_UAV_WAYPOINT", "ANNOTATE_CANDIDATE", "NO_RELIABLE_CANDIDATE", "WAIT"
        ]  # fmt: skip
        assert "GO_TO_CANDIDATE" in by_agent["ugv"] and "CONFIRM" in by_agent["ugv"]

        for agent, action, argument, fragment in [
            ("uav", "CONFIRM", "", "not a uav action"),
            ("uav", "ANNOTATE_CANDIDATE", "Z9", "A1 .. E5"),
            ("uav", "MOVE_TO_UAV_WAYPOINT", "U0_0", "not a legal option"),
            ("ugv", "WAIT", "", "not the ugv's turn: the uav decides first"),
        ]:
            refused = _step(client, agent, action, argument)
            assert not refused.accepted and fragment in refused.message
            assert refused.steps_used == 0 and refused.steps_left == 80

        annotated = _step(client, "uav", "ANNOTATE_CANDIDATE", "C3")
        assert annotated.accepted and not annotated.done and annotated.steps_used == 1
        assert client.spin_until(lambda: bool(candidates), 10.0)
        candidate = candidates[-1]
        assert (candidate.candidate_id, candidate.grid_cell) == ("C001", "C3")
        assert candidate.status == Candidate.ACTIVE and len(candidate.polygon.points) == 4
        assert candidate.center.x == pytest.approx(episode.uav_start.x)  # C3 is below the UAV
        assert client.spin_until(
            lambda: any(m.header.stamp == annotated.stamp for m in downs), 10.0
        ), "no nadir view with the annotation's stamp"
        assert client.spin_until(lambda: len(turns) >= 2, 10.0)
        assert [(t.receiver, t.candidate_id) for t in turns[:2]] == [("uav", ""), ("ugv", "C001")]
        frozen = _step(client, "uav", "WAIT")
        assert not frozen.accepted and "frozen while candidate C001" in frozen.message

        went = _step(client, "ugv", "GO_TO_CANDIDATE", "C001")
        assert went.accepted and went.steps_used == 2
        assert client.spin_until(
            lambda: (
                any(m.header.stamp == went.stamp for m in fronts)
                and any(m.header.stamp == went.stamp for m in odometry)
            ),
            10.0,
        ), "no front view and odometry with the drive's stamp"
        driven = next(m for m in odometry if m.header.stamp == went.stamp)
        assert driven.header.frame_id == "map"  # global localisation: map-frame odometry
        moved = (driven.pose.pose.position.x, driven.pose.pose.position.y)
        assert moved != pytest.approx((episode.ugv_start.x, episode.ugv_start.y))
        observed = _step(client, "ugv", "STOP_OBSERVE")
        assert client.spin_until(
            lambda: any(m.header.stamp == observed.stamp for m in rings), 10.0
        ), "no ring view with STOP_OBSERVE's stamp"
        assert not any(m.header.stamp == observed.stamp for m in fronts)
        rejected = _step(client, "ugv", "REJECT")
        assert rejected.accepted and not rejected.done
        assert client.spin_until(lambda: candidates[-1].status == Candidate.REJECTED, 10.0)
        # Search resumes: the UAV, held until the UGV closed the candidate, is free first;
        # its decision carries a message, delivered before the UGV's turn that counts it.
        assert _step(client, "uav", "WAIT", message="resuming the search").accepted
        assert client.spin_until(lambda: any(m.sequence == 1 for m in messages), 10.0)
        delivered = next(m for m in messages if m.sequence == 1)
        assert (delivered.sender, delivered.receiver, delivered.text) == (
            "uav",
            "ugv",
            "resuming the search",
        )
        assert client.spin_until(lambda: turns[-1].receiver == "ugv", 10.0)
        assert turns[-1].sequence == 1
        assert _step(client, "ugv", "STOP_OBSERVE").accepted
        assert _step(client, "uav", "WAIT").accepted
        confirmed = _step(client, "ugv", "CONFIRM")
        assert confirmed.accepted and confirmed.done
        assert confirmed.termination == EpisodeEvent.STOPPED
        assert "false CONFIRM" in confirmed.message and confirmed.steps_used == 8

        assert client.spin_until(lambda: events and events[-1].kind == EpisodeEvent.STOPPED, 10.0)
        assert [e.kind for e in events][:2] == [EpisodeEvent.STARTED, EpisodeEvent.STEP]
        record = json.loads(events[0].episode_json)
        assert record["benchmark"] == "agos" and record["agos"]["uav_budget"] == 80
        facts = [json.loads(e.episode_json) for e in events[1:]]
        assert [f["action"] for f in facts] == [
            "ANNOTATE_CANDIDATE", "GO_TO_CANDIDATE", "STOP_OBSERVE", "REJECT", "WAIT",
            "STOP_OBSERVE", "WAIT", "CONFIRM",
        ]  # fmt: skip
        assert facts[0]["candidate"]["candidate_id"] == "C001" and facts[1]["path"]
        assert facts[-1]["verdict"]["valid"] is False
        assert len(RING_VIEWS) == 6
        assert all(p.process.poll() is None for p in processes), "a node died"
