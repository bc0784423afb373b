"""Another run's requests and messages, in this run's ROS domain, are ignored (issue 29): the
second layer under the domain refusal. A real task manager and bridge (and evaluator); this
test is the agent of the run (the run id is its run directory's name) and, with other run ids,
the strays."""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import pytest
from aerialdojo_interfaces.msg import (
    AgentInfo,
    AgentMessage,
    BackendFault,
    EpisodeEvent,
    NodeInfo,
    TaskSpec,
)
from aerialdojo_interfaces.srv import SimExecute, SimReset, StartEpisode, Step
from builtin_interfaces.msg import Time
from rclpy.serialization import deserialize_message, serialize_message
from rostest import RosClient, running, specs_for
from std_msgs.msg import Header

from aerialdojo.bags.replay import AGENTS_TOPIC, EVENTS_TOPIC, read_events, read_topics
from aerialdojo.nodes.conversions import task_spec_msg
from aerialdojo.nodes.qos import AGENTS_QOS, EVENTS_QOS, FAULTS_QOS, NODES_QOS, TASK_QOS
from aerialdojo.params import NODE_PARAMETERS
from aerialdojo.protocols import load_suite
from aerialdojo.runtime import NODES_TOPIC
from aerialdojo.tasks.suite import resolve_suite
from aerialdojo.tf_tree import MAP_FRAME

pytestmark = pytest.mark.ros


def test_another_runs_requests_and_faults_change_nothing_and_are_logged_once(
    tmp_path: Path,
) -> None:
    ours, stray, other, bridge = tmp_path.name, "another-run", "a-third-run", "a-fourth-run"
    agent = RosClient("stand_in_agent", namespace="uav")
    tasks = agent.stand_in_for_agent()
    events = agent.collect(EpisodeEvent, "/aerialdojo/episode_events", EVENTS_QOS)
    faults = agent.node.create_publisher(AgentMessage, "/aerialdojo/agent_faults", FAULTS_QOS)
    bridge_faults = agent.node.create_publisher(BackendFault, "/sim/faults", FAULTS_QOS)
    episode_id = load_suite(resolve_suite("aerialdojo_mini"))[1].select()[0]
    log = tmp_path / "logs" / "task_manager.log"
    graph = specs_for(
        {"sim_bridge": {"image_width": 32, "image_height": 32}, "task_manager": {"auto_run": False}}
    )
    try:
        with running(graph, tmp_path):

            def start(run_id: str) -> StartEpisode.Response:
                request = StartEpisode.Request(run_id=run_id, episode_id=episode_id)
                return agent.call(StartEpisode, "/aerialdojo/start_episode", request)

            def step(run_id: str) -> Step.Response:
                request = Step.Request(
                    run_id=run_id, agent="uav", action="MoveForward", magnitude=1.0
                )
                return agent.call(Step, "/aerialdojo/step", request)

            refused = start(stray)
            assert not refused.success and "ignored" in refused.message, refused.message
            started = start(ours)
            assert started.success, started.message
            assert agent.spin_until(lambda: bool(tasks), timeout_s=30.0)
            assert tasks[-1].run_id == ours

            # Answered, and nothing more: no budget used, no refusal counted, no event.
            for _ in range(3):
                ignored = step(stray)
                assert not ignored.accepted and not ignored.done, ignored.message
                assert stray in ignored.message and ours in ignored.message
            faults.publish(
                AgentMessage(run_id=other, episode_id=episode_id, sender="uav", text="stray")
            )
            # Another run's task manager, resetting and moving this run's bridge: refused, and
            # the world stays as it was.
            reset = agent.call(SimReset, "/sim/reset", SimReset.Request(run_id=stray))
            executed = agent.call(
                SimExecute,
                "/sim/execute",
                SimExecute.Request(run_id=stray, agent="uav", action="MoveForward", magnitude=1.0),
            )
            for answer in (reset, executed):
                assert not answer.success and answer.message.startswith("ignored"), answer
                assert stray in answer.message and ours in answer.message
            # Another run's bridge, faulting in the episode both runs serve: ours goes on.
            bridge_faults.publish(
                BackendFault(run_id=bridge, episode_id=episode_id, agent="uav", reason="stray")
            )
            assert agent.spin_until(
                lambda: all(
                    f"run {run!r}" in log.read_text(errors="replace") for run in (other, bridge)
                ),
                timeout_s=30.0,
            ), "the task manager never heard the other runs' fault reports"

            moved = step(ours)
            assert moved.accepted and not moved.done, moved.message
            assert moved.steps_used == 1
            assert agent.spin_until(
                lambda: any(e.kind == EpisodeEvent.STEP for e in events), timeout_s=30.0
            )
            (started_at,) = [e.pose.position for e in events if e.kind == EpisodeEvent.STARTED]
            (moved_to,) = [e.pose.position for e in events if e.kind == EpisodeEvent.STEP]
            # One metre forward from the start: the stray MoveForward moved nothing.
            travelled = math.dist(
                (started_at.x, started_at.y, started_at.z), (moved_to.x, moved_to.y, moved_to.z)
            )
            assert travelled == pytest.approx(1.0, abs=1e-6), travelled
            assert agent.spin_until(
                lambda: any(e.kind == EpisodeEvent.STEP for e in events), timeout_s=30.0
            )
            kinds = [event.kind for event in events]
            assert kinds == [EpisodeEvent.STARTED, EpisodeEvent.STEP], kinds

            # Logged once per other run, however much it sent.
            text = log.read_text(errors="replace")
            assert text.count(f"of run {stray!r}") == 1, text
            assert text.count(f"of run {other!r}") == 1, text
            assert text.count(f"of run {bridge!r}") == 1, text
            bridge_log = (tmp_path / "logs" / "sim_bridge.log").read_text(errors="replace")
            assert bridge_log.count(f"of run {stray!r}") == 1, bridge_log
    finally:
        agent.close()


def _as_run(event: EpisodeEvent, run_id: str, **fields: object) -> EpisodeEvent:
    """A copy of ``event`` as the run ``run_id`` would have sent it, with ``fields`` changed."""
    copy = deserialize_message(serialize_message(event), EpisodeEvent)
    copy.run_id = run_id
    for name, value in fields.items():
        setattr(copy, name, value)
    return copy


def test_the_evaluator_neither_records_nor_scores_another_runs_events(tmp_path: Path) -> None:
    """A second run of the same suite in the domain sends events of the episode this run is
    in (a start, a collision, its end of run), its task, its oracle agent's and its nodes'
    announcements: this run's evaluator scores its own episode, records and reports only its
    own, and says once that it ignored the other run."""
    ours, stray = "ours", "another-run"
    agent = RosClient("stand_in_agent", namespace="uav")
    tasks = agent.stand_in_for_agent()
    events = agent.collect(EpisodeEvent, EVENTS_TOPIC, EVENTS_QOS)
    strays = agent.node.create_publisher(EpisodeEvent, EVENTS_TOPIC, EVENTS_QOS)
    stray_task = agent.node.create_publisher(TaskSpec, "/aerialdojo/task", TASK_QOS)
    stray_agent = agent.node.create_publisher(AgentInfo, AGENTS_TOPIC, AGENTS_QOS)
    stray_node = agent.node.create_publisher(NodeInfo, NODES_TOPIC, NODES_QOS)
    episode_id = load_suite(resolve_suite("aerialdojo_mini"))[1].select()[0]
    graph = specs_for(
        {
            "sim_bridge": {"image_width": 32, "image_height": 32},
            "task_manager": {"episodes": [episode_id]},
            "evaluator": {"output_dir": str(tmp_path), "run_id": ours},
        }
    )
    run_dir = tmp_path / ours
    try:
        with running(graph, run_dir) as processes:
            evaluator = next(p for p in processes if p.spec.name == "evaluator")
            assert agent.spin_until(
                lambda: bool(tasks) and any(e.kind == EpisodeEvent.STARTED for e in events),
                timeout_s=120.0,
            ), "the episode never started"
            (started,) = [e for e in events if e.kind == EpisodeEvent.STARTED]
            assert started.run_id == ours
            foreign_task = deserialize_message(serialize_message(tasks[-1]), TaskSpec)
            foreign_task.run_id = stray
            stray_task.publish(foreign_task)
            stray_agent.publish(
                AgentInfo(
                    run_id=stray, agent="uav", node="/uav/stray_agent", policy="oracle",
                    privileged=True, description="another run's oracle",
                )
            )  # fmt: skip
            stray_node.publish(
                NodeInfo(
                    node="/stray_task_manager", ros_distro="humble", python_version="3.10.12",
                    run_dir=str(tmp_path / stray), host="elsewhere", pid=1,
                )
            )  # fmt: skip
            for event in (
                _as_run(started, stray),
                _as_run(started, stray, kind=EpisodeEvent.COLLIDED, step=1, collided=True),
                _as_run(started, stray, kind=EpisodeEvent.RUN_FINISHED, episode_id=""),
            ):
                strays.publish(event)
            assert agent.spin_until(
                lambda: f"of run {stray!r}" in evaluator.log_path.read_text(errors="replace"),
                timeout_s=30.0,
            ), evaluator.log_path.read_text(errors="replace")

            for action, magnitude in (("MoveForward", 1.0), ("Stop", 0.0)):
                request = Step.Request(run_id=ours, agent="uav", action=action, magnitude=magnitude)
                answer = agent.call(Step, "/aerialdojo/step", request)
                assert answer.accepted, answer.message
            try:
                code = evaluator.process.wait(timeout=120)
            except subprocess.TimeoutExpired:
                pytest.fail(evaluator.log_path.read_text(errors="replace")[-3000:])
            log = evaluator.log_path.read_text(errors="replace")
    finally:
        agent.close()
    assert code == 0, log[-3000:]
    assert log.count(f"of run {stray!r}") == 1, log
    (scored,) = json.loads((run_dir / "metrics.json").read_text())["episodes"]
    assert scored["episode_id"] == episode_id
    assert scored["termination"] == "stopped" and scored["steps_used"] == 2, scored
    report = (run_dir / "report.md").read_text() + (run_dir / "metrics.json").read_text()
    for stray_trace in ("PRIVILEGED", "stray_agent", "stray_task_manager", "humble"):
        assert stray_trace not in report, stray_trace
    side = read_topics(run_dir / "bag", ["/aerialdojo/task", AGENTS_TOPIC, NODES_TOPIC])
    assert {task.run_id for task in side["/aerialdojo/task"]} == {ours}
    assert side[AGENTS_TOPIC] == []
    assert "/stray_task_manager" not in {info.node for info in side[NODES_TOPIC]}
    recorded = list(read_events(run_dir / "bag"))
    assert {event.run_id for event in recorded} == {ours}
    kinds = [event.kind for event in recorded]
    assert kinds == [
        EpisodeEvent.RUN_STARTED,
        EpisodeEvent.STARTED,
        EpisodeEvent.STEP,
        EpisodeEvent.STOPPED,
        EpisodeEvent.RUN_FINISHED,
    ], kinds


def test_an_agent_takes_no_task_of_another_run(tmp_path: Path) -> None:
    ours = tmp_path.name
    stray = RosClient("stray_task_manager")
    tasks = stray.node.create_publisher(TaskSpec, "/aerialdojo/task", TASK_QOS)
    events = stray.collect(EpisodeEvent, "/aerialdojo/episode_events", EVENTS_QOS)
    protocol, suite = load_suite(resolve_suite("aerialdojo_mini"))
    assert protocol.episodes is not None
    episode = suite.episode(suite.select()[0])
    settings = {spec.name: spec.default for spec in NODE_PARAMETERS["task_manager"]}
    task = protocol.episodes.describe_task(episode, suite, settings)
    agent_log = tmp_path / "logs" / "uav_agent.log"
    graph = specs_for(
        {
            "sim_bridge": {"image_width": 32, "image_height": 32},
            "task_manager": {"auto_run": False},
            "uav_agent": {},
        }
    )
    try:
        with running(graph, tmp_path):
            assert stray.spin_until(
                lambda: stray.node.count_subscribers("/aerialdojo/task") > 0, timeout_s=60.0
            ), "the agent never subscribed to the task"
            # Another run's task, stamped like a real one: the agent must not act on it.
            foreign = task_spec_msg(task, Header(stamp=Time(sec=1), frame_id=MAP_FRAME))
            foreign.run_id = "another-run"
            tasks.publish(foreign)
            assert stray.spin_until(
                lambda: "of run 'another-run'" in agent_log.read_text(errors="replace"),
                timeout_s=30.0,
            ), agent_log.read_text(errors="replace")
            started = stray.call(
                StartEpisode,
                "/aerialdojo/start_episode",
                StartEpisode.Request(run_id=ours, episode_id=episode.episode_id),
            )
            assert started.success, started.message
            # The agent acts on its own run's task, whose steps the task manager takes.
            assert stray.spin_until(
                lambda: any(e.kind == EpisodeEvent.STEP for e in events), timeout_s=60.0
            ), agent_log.read_text(errors="replace")
            assert "refused" not in agent_log.read_text(errors="replace")
    finally:
        stray.close()
