"""The task manager and the simulator bridge as real processes, driven over real DDS.

Covers the service contract (list/start/step), the one stamp shared by every view of a step,
the episode events, bad requests answered with a reason while the nodes keep running, and
simulator faults (a bridge that hangs, a bridge that dies) turned into infrastructure
failures rather than agent failures.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Callable
from hashlib import sha256
from pathlib import Path

import numpy as np
import pytest
from aerialdojo_interfaces.msg import EpisodeEvent, NodeInfo, TaskSpec
from aerialdojo_interfaces.srv import ListEpisodes, SimReset, StartEpisode, Step
from geometry_msgs.msg import PoseStamped, TransformStamped
from rostest import RosClient, first_mini_reset, running, specs_for
from sensor_msgs.msg import Image
from tf2_msgs.msg import TFMessage

from aerialdojo.nodes.conversions import pose_from_msg
from aerialdojo.nodes.qos import (
    EVENTS_QOS,
    NODES_QOS,
    SENSOR_QOS,
    SERVICE_QOS,
    STATE_QOS,
    TASK_QOS,
)
from aerialdojo.protocols.aerialdojo import GEOFENCE_NOTE
from aerialdojo.runtime import NODES_TOPIC, PROGRESS_LISTENER_ENV
from aerialdojo.tasks.suite import load_suite, resolve_suite
from aerialdojo.tf_tree import FrameTransform

pytestmark = pytest.mark.ros

BRIDGE = {"image_width": 48, "image_height": 48}


def _graph(sim_timeout_s: float = 30.0, **task_manager: object) -> list:
    return specs_for(
        {
            "sim_bridge": BRIDGE,
            "task_manager": {"auto_run": False, "sim_timeout_s": sim_timeout_s, **task_manager},
        }
    )


@pytest.fixture
def client():
    ros = RosClient()
    yield ros
    ros.close()


def _transform(msg: TransformStamped) -> FrameTransform:
    t, q = msg.transform.translation, msg.transform.rotation
    return FrameTransform(
        msg.header.frame_id, msg.child_frame_id, (t.x, t.y, t.z), (q.x, q.y, q.z, q.w)
    )


def _first_episode() -> str:
    return load_suite(resolve_suite("aerialdojo_mini")).select()[0]


def test_services_run_an_episode_and_refuse_bad_requests(client: RosClient, tmp_path: Path) -> None:
    events = client.collect(EpisodeEvent, "/aerialdojo/episode_events", EVENTS_QOS)
    fronts = client.collect(Image, "/uav/camera/front/image", SENSOR_QOS)
    downs = client.collect(Image, "/uav/camera/down/image", SENSOR_QOS)
    trees = client.collect(TFMessage, "/tf", STATE_QOS)
    mounts = client.collect(TFMessage, "/tf_static", TASK_QOS)
    truths = client.collect(PoseStamped, "/sim/ground_truth/uav/pose", STATE_QOS)
    with running(_graph(), tmp_path) as processes:
        listed = client.call(ListEpisodes, "/aerialdojo/list_episodes", ListEpisodes.Request())
        assert listed.success and _first_episode() in listed.episode_ids
        bad_filter = client.call(
            ListEpisodes, "/aerialdojo/list_episodes", ListEpisodes.Request(filter="colour=red")
        )
        assert not bad_filter.success and "unknown key 'colour'" in bad_filter.message

        early = client.call(Step, "/aerialdojo/step", Step.Request(agent="uav", action="Stop"))
        assert not early.accepted and "no episode is running" in early.message

        unknown = client.call(
            StartEpisode, "/aerialdojo/start_episode", StartEpisode.Request(episode_id="nope")
        )
        assert not unknown.success and "no episode 'nope'" in unknown.message

        episode_id = _first_episode()
        started = client.call(
            StartEpisode, "/aerialdojo/start_episode", StartEpisode.Request(episode_id=episode_id)
        )
        assert started.success, started.message
        task = started.task
        assert task.episode_id == episode_id and task.action_budget > 0
        assert len(task.actions) == 8 and not task.global_localization
        assert task.header.stamp == started.stamp

        again = client.call(
            StartEpisode, "/aerialdojo/start_episode", StartEpisode.Request(episode_id=episode_id)
        )
        assert not again.success and "still running" in again.message

        for request, fragment in [
            (Step.Request(agent="uav", action="MoveBackward", magnitude=1.0), "unknown action"),
            (Step.Request(agent="uav", action="MoveForward", magnitude=2.0), "does not take"),
            (Step.Request(agent="ugv", action="Stop"), "agent 'ugv' is not in episode"),
        ]:
            refused = client.call(Step, "/aerialdojo/step", request)
            assert not refused.accepted and fragment in refused.message
            assert refused.steps_used == 0  # refusals use no budget

        turned = client.call(
            Step, "/aerialdojo/step", Step.Request(agent="uav", action="TurnLeft", magnitude=15.0)
        )
        assert turned.accepted and not turned.done and turned.steps_used == 1
        assert turned.steps_left == task.action_budget - 1
        stamp = turned.stamp
        assert (stamp.sec, stamp.nanosec) > (started.stamp.sec, started.stamp.nanosec)
        assert client.spin_until(
            lambda: (
                any(m.header.stamp == stamp for m in fronts)
                and any(m.header.stamp == stamp for m in downs)
            ),
            timeout_s=10.0,
        ), "no front and down frames with the step's stamp"
        front = next(m for m in fronts if m.header.stamp == stamp)
        assert (front.width, front.height, front.encoding) == (48, 48, "rgb8")

        # The tf tree of the step places the body where the ground truth says it is, and its
        # static part holds the optical frames the images name.
        assert client.spin_until(
            lambda: (
                bool(mounts)
                and any(t.transforms[0].header.stamp == stamp for t in trees)
                and any(p.header.stamp == stamp for p in truths)
            ),
            timeout_s=10.0,
        ), "no /tf_static, or no /tf and ground truth with the step's stamp"
        optical = {t.child_frame_id for t in mounts[-1].transforms}
        assert front.header.frame_id in optical and len(optical) == 4
        tree = next(t for t in trees if t.transforms[0].header.stamp == stamp).transforms
        edges = {(m.header.frame_id, m.child_frame_id): _transform(m) for m in tree}
        body = edges[("map", "uav/odom")].matrix() @ edges[("uav/odom", "uav/base_link")].matrix()
        truth = pose_from_msg(next(p for p in truths if p.header.stamp == stamp).pose)
        np.testing.assert_allclose(body[:3, 3], truth.position, atol=1e-6)
        np.testing.assert_allclose(body[:2, 0], (np.cos(truth.yaw), np.sin(truth.yaw)), atol=1e-6)

        stopped = client.call(Step, "/aerialdojo/step", Step.Request(agent="uav", action="Stop"))
        assert stopped.accepted and stopped.done
        assert stopped.termination == EpisodeEvent.STOPPED and stopped.steps_used == 2
        after = client.call(Step, "/aerialdojo/step", Step.Request(agent="uav", action="Stop"))
        assert not after.accepted

        assert client.spin_until(lambda: len(events) >= 3, timeout_s=10.0)
        assert [e.kind for e in events] == [
            EpisodeEvent.STARTED, EpisodeEvent.STEP, EpisodeEvent.STOPPED
        ]  # fmt: skip
        assert '"target"' in events[0].episode_json and events[1].action == "TurnLeft"
        assert all(p.process.poll() is None for p in processes), "a node died on bad input"


def test_a_move_across_the_scene_edge_is_held_and_reported(
    client: RosClient, tmp_path: Path
) -> None:
    # This episode starts 5.7 m inside the flyable box of Flood_1, heading toward its edge.
    events = client.collect(EpisodeEvent, "/aerialdojo/episode_events", EVENTS_QOS)
    with running(_graph(), tmp_path):
        started = client.call(
            StartEpisode,
            "/aerialdojo/start_episode",
            StartEpisode.Request(episode_id="Flood_1-base-0000-sem"),
        )
        assert started.success, started.message
        forward = Step.Request(agent="uav", action="MoveForward", magnitude=5.0)
        inside = client.call(Step, "/aerialdojo/step", forward)
        assert inside.accepted and not inside.done and inside.message == ""
        held = client.call(Step, "/aerialdojo/step", forward)
        assert held.accepted and not held.done and not held.collided
        assert held.message == GEOFENCE_NOTE
        assert client.spin_until(lambda: len(events) >= 3, timeout_s=10.0)
        assert [(e.kind, e.message) for e in events[1:3]] == [
            (EpisodeEvent.STEP, ""),
            (EpisodeEvent.STEP, GEOFENCE_NOTE),
        ]


def test_a_hung_or_dead_bridge_is_an_infrastructure_failure(
    client: RosClient, tmp_path: Path
) -> None:
    events = client.collect(EpisodeEvent, "/aerialdojo/episode_events", EVENTS_QOS)
    with running(_graph(sim_timeout_s=3.0), tmp_path) as processes:
        bridge, task_manager = processes
        # The bridge's start and its first scene take seconds on a loaded machine: they get
        # the client's wait, and the hung step below gets the task manager's 3 s.
        assert client.call(SimReset, "/sim/reset", first_mini_reset()).success
        episode_id = _first_episode()
        started = client.call(
            StartEpisode, "/aerialdojo/start_episode", StartEpisode.Request(episode_id=episode_id)
        )
        assert started.success, started.message

        os.killpg(bridge.process.pid, signal.SIGSTOP)  # hung: alive, never answers
        try:
            hung = client.call(
                Step, "/aerialdojo/step", Step.Request(agent="uav", action="MoveUp", magnitude=1.0)
            )
        finally:
            os.killpg(bridge.process.pid, signal.SIGCONT)
        assert hung.accepted and hung.done
        assert hung.termination == EpisodeEvent.INFRA_FAILURE
        assert "did not answer" in hung.message or "no answer" in hung.message

        restarted = client.call(
            StartEpisode, "/aerialdojo/start_episode", StartEpisode.Request(episode_id=episode_id)
        )
        assert restarted.success, restarted.message
        bridge.process.kill()  # dead
        bridge.process.wait()
        dead = client.call(
            Step, "/aerialdojo/step", Step.Request(agent="uav", action="MoveUp", magnitude=1.0)
        )
        assert dead.done and dead.termination == EpisodeEvent.INFRA_FAILURE
        assert task_manager.process.poll() is None, "the task manager died with the bridge"

    assert client.spin_until(
        lambda: sum(e.kind == EpisodeEvent.INFRA_FAILURE for e in events) == 2, timeout_s=5.0
    )
    kinds = [e.kind for e in events]
    assert EpisodeEvent.STOPPED not in kinds and EpisodeEvent.COLLIDED not in kinds


def test_auto_run_serves_exactly_the_listed_episodes(tmp_path: Path) -> None:
    client = RosClient(namespace="uav")  # stands in for the UAV agent
    suite = load_suite(resolve_suite("aerialdojo_mini"))
    chosen = [suite.episodes[-1].episode_id, suite.episodes[0].episode_id]
    events = client.stand_in_for_evaluator()
    client.stand_in_for_agent()
    graph = specs_for(
        {"sim_bridge": BRIDGE, "task_manager": {"episodes": chosen, "max_episodes": 1}}
    )
    with running(graph, tmp_path):
        assert client.spin_until(
            lambda: any(e.kind == EpisodeEvent.STARTED for e in events), timeout_s=60.0
        ), (tmp_path / "logs" / "task_manager.log").read_text()
        started = next(e for e in events if e.kind == EpisodeEvent.STARTED)
        assert started.episode_id == chosen[0] and started.episode_count == 1
        stopped = client.call(Step, "/aerialdojo/step", Step.Request(agent="uav", action="Stop"))
        assert stopped.done
        assert client.spin_until(
            lambda: any(e.kind == EpisodeEvent.RUN_FINISHED for e in events), timeout_s=30.0
        )
    client.close()


@pytest.mark.parametrize(
    ("steps", "viewers", "evaluator", "progress", "never_came"),
    [
        (True, ["ghost_viewer"], True, "",
         "no viewer ghost_viewer watching the task and the bridge's topics"),
        # A request sent before the task manager discovered the client is lost.
        (False, [], True, "", "no agent node in /uav subscribed to /aerialdojo/task with a "
         "client of /aerialdojo/step"),
        # Events heard by others only (the CLI's progress line): the bag would lose the steps
        # made before the evaluator's recording subscriptions found their publishers.
        (True, [], False, "",
         "no evaluator (no /evaluator subscribed to /aerialdojo/episode_events)"),
        # The progress line aerialdojo eval names: a short run could end before it was found.
        (True, [], True, "ghost_monitor", "no progress line of aerialdojo eval "
         "(no ghost_monitor subscribed to /aerialdojo/episode_events that received "
         "RUN_STARTED)"),
    ],
    ids=["awaited viewer", "agent without a step client", "events heard but not by the evaluator",
         "the CLI's progress line named but absent"],
)  # fmt: skip
def test_a_run_waits_for_what_it_needs_and_names_what_never_came(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    *,
    steps: bool,
    viewers: list[str],
    evaluator: bool,
    progress: str,
    never_came: str,
) -> None:
    client = RosClient(namespace="uav")  # the agent (task) and the evaluator (events) are here
    events = (
        client.stand_in_for_evaluator()
        if evaluator
        else client.collect(EpisodeEvent, "/aerialdojo/episode_events", EVENTS_QOS)
    )
    if steps:
        client.stand_in_for_agent()
    else:
        client.collect(TaskSpec, "/aerialdojo/task", TASK_QOS)
    graph = specs_for(
        {
            "sim_bridge": BRIDGE,
            # Long enough for the task manager to discover the client on a busy machine.
            "task_manager": {"await_viewers": viewers, "ready_timeout_s": 15.0},
        }
    )
    if progress:
        monkeypatch.setenv(PROGRESS_LISTENER_ENV, progress)  # as aerialdojo eval sets it
    with running(graph, tmp_path):
        assert client.spin_until(
            lambda: any(e.kind == EpisodeEvent.RUN_FINISHED for e in events), timeout_s=60.0
        ), (tmp_path / "logs" / "task_manager.log").read_text()
    client.close()
    assert not any(e.kind == EpisodeEvent.STARTED for e in events)
    finished = next(e for e in events if e.kind == EpisodeEvent.RUN_FINISHED)
    assert finished.message.startswith("not started: within 15 s no "), finished.message
    assert finished.message.endswith(never_came), finished.message


def test_every_one_of_200_concurrent_steps_is_answered(client: RosClient, tmp_path: Path) -> None:
    # Issue 15, row 6: 11 of 200 concurrent calls were answered, 189 never were and nothing
    # was logged (the service kept the last ten requests). Also row 3: starting an episode
    # that ended is its next attempt, which supersedes the first.
    events = client.collect(EpisodeEvent, "/aerialdojo/episode_events", EVENTS_QOS)
    # Nine refusals in a row between accepted steps: allowed here, so the episode goes on.
    with running(_graph(refusals_allowed=9), tmp_path):
        episode_id = _first_episode()
        started = client.call(
            StartEpisode, "/aerialdojo/start_episode", StartEpisode.Request(episode_id=episode_id)
        )
        assert started.success, started.message
        # A client that sends many requests at once keeps them all too (SERVICE_QOS): a
        # KEEP_LAST writer may drop its own unacknowledged requests.
        step = client.node.create_client(Step, "/aerialdojo/step", qos_profile=SERVICE_QOS)
        assert step.wait_for_service(timeout_sec=30.0)
        turn = Step.Request(agent="uav", action="TurnLeft", magnitude=15.0)
        refused = Step.Request(agent="uav", action="MoveForward", magnitude=2.0)
        futures = [step.call_async(turn if i % 10 == 0 else refused) for i in range(200)]
        assert client.spin_until(lambda: all(f.done() for f in futures), timeout_s=300.0), (
            f"{sum(f.done() for f in futures)} of 200 answered"
        )
        answers = [f.result() for f in futures]
        accepted = [a for a in answers if a.accepted]
        assert sorted(a.steps_used for a in accepted) == list(range(1, 21))
        assert all("does not take" in a.message for a in answers if not a.accepted)

        client.call(Step, "/aerialdojo/step", Step.Request(agent="uav", action="Stop"))
        again = client.call(
            StartEpisode, "/aerialdojo/start_episode", StartEpisode.Request(episode_id=episode_id)
        )
        assert again.success, again.message
        assert client.spin_until(
            lambda: sum(e.kind == EpisodeEvent.STARTED for e in events) == 2, timeout_s=10.0
        )
        assert [e.attempt for e in events if e.kind == EpisodeEvent.STARTED] == [0, 1]


def _three_second_agent_timeout(episode_id: str) -> list:
    """A run of ``episode_id`` whose agents may be silent 3 s, with one rerun."""
    return specs_for(
        {
            "sim_bridge": BRIDGE,
            "task_manager": {"episodes": [episode_id], "agent_timeout_s": 3.0, "max_attempts": 2},
        }
    )


def _ended(events: list[EpisodeEvent], kind: int) -> Callable[[], bool]:
    return lambda: any(e.kind == kind for e in events)


def test_an_agent_that_never_acts_fails_its_episode_which_is_scored(tmp_path: Path) -> None:
    # Issue 15, row 1: an agent that never acted (it had ignored the rerun's task) held the
    # run until the CLI's one-hour timeout. Issue 25: its silence is its own failure, scored
    # (it was an infrastructure failure, rerun and then dropped from the score).
    client = RosClient(namespace="uav")  # listens to the task and never steps
    events = client.stand_in_for_evaluator()
    client.stand_in_for_agent()
    episode_id = _first_episode()
    graph = _three_second_agent_timeout(episode_id)
    with running(graph, tmp_path):
        assert client.spin_until(_ended(events, EpisodeEvent.RUN_FINISHED), timeout_s=120.0), (
            tmp_path / "logs" / "task_manager.log"
        ).read_text()
    client.close()
    kinds = [(e.kind, e.attempt) for e in events]
    assert kinds == [
        (EpisodeEvent.RUN_STARTED, 0),
        (EpisodeEvent.STARTED, 0),
        (EpisodeEvent.AGENT_TIMEOUT, 0),
        (EpisodeEvent.RUN_FINISHED, 0),
    ]
    assert events[2].message == "no action from the agents for 3 s"
    # The run names its selection and the suite it serves (name and digest of the file).
    mini = resolve_suite("aerialdojo_mini")
    # And the settings that change its numbers (issue 25, versioned scoring).
    assert json.loads(events[0].episode_json) == {
        "selection": [episode_id],
        "suite": {"name": "aerialdojo_mini", "sha256": sha256(mini.read_bytes()).hexdigest()},
        "settings": {
            "refusals_allowed": 2,
            "agent_timeout_s": 3.0,
            "observation": "front",
            "odometry": False,
        },
    }


def test_an_agent_node_that_leaves_mid_episode_is_an_infrastructure_failure(
    tmp_path: Path,
) -> None:
    # Silence is the agent's only while its node is there: one that is gone (its process
    # died) is the harness's failure, and the attempt is rerun.
    agent = RosClient(namespace="uav")
    agent.stand_in_for_agent()
    watcher = RosClient()
    events = watcher.stand_in_for_evaluator()
    episode_id = _first_episode()
    graph = _three_second_agent_timeout(episode_id)
    with running(graph, tmp_path):
        assert watcher.spin_until(_ended(events, EpisodeEvent.STARTED), timeout_s=120.0), (
            tmp_path / "logs" / "task_manager.log"
        ).read_text()
        agent.close()
        assert watcher.spin_until(_ended(events, EpisodeEvent.RUN_FINISHED), timeout_s=120.0), (
            tmp_path / "logs" / "task_manager.log"
        ).read_text()
    watcher.close()
    kinds = [(e.kind, e.attempt) for e in events]
    assert kinds[1:] == [
        (EpisodeEvent.STARTED, 0),
        (EpisodeEvent.INFRA_FAILURE, 0),
        (EpisodeEvent.STARTED, 1),
        (EpisodeEvent.INFRA_FAILURE, 1),
        (EpisodeEvent.RUN_FINISHED, 0),
    ]
    assert events[2].message == "no action from the agents for 3 s: no agent node left in /uav"


def test_refused_steps_go_back_with_the_reason_until_the_agent_fails(
    client: RosClient, tmp_path: Path
) -> None:
    events = client.collect(EpisodeEvent, "/aerialdojo/episode_events", EVENTS_QOS)
    illegal = Step.Request(agent="uav", action="MoveForward", magnitude=2.0)
    with running(_graph(refusals_allowed=2), tmp_path):
        episode_id = _first_episode()
        started = client.call(
            StartEpisode, "/aerialdojo/start_episode", StartEpisode.Request(episode_id=episode_id)
        )
        assert started.success, started.message
        for _ in range(2):  # refused, with the reason, twice in a row: the agent may go on
            refused = client.call(Step, "/aerialdojo/step", illegal)
            assert not refused.accepted and not refused.done
            assert "does not take magnitude 2" in refused.message
        # An accepted step starts the count again.
        turned = client.call(
            Step, "/aerialdojo/step", Step.Request(agent="uav", action="TurnLeft", magnitude=15.0)
        )
        assert turned.accepted and not turned.done
        answers = [client.call(Step, "/aerialdojo/step", illegal) for _ in range(3)]
        assert [(a.accepted, a.done) for a in answers] == [(False, False)] * 2 + [(False, True)]
        ended = answers[-1]
        assert ended.termination == EpisodeEvent.INVALID_ACTION and ended.steps_used == 1
        assert ended.message.startswith("invalid action: uav: 3 refused steps in a row; the last:")
        assert client.spin_until(_ended(events, EpisodeEvent.INVALID_ACTION), timeout_s=10.0)
    ending = next(e for e in events if e.kind == EpisodeEvent.INVALID_ACTION)
    assert (ending.episode_id, ending.step, ending.action) == (episode_id, 1, "MoveForward")


def test_a_step_that_reports_the_policys_error_ends_the_episode_as_the_agents(
    client: RosClient, tmp_path: Path
) -> None:
    # An agent whose policy raised was cut short with the run and excluded as an
    # infrastructure failure: an agent that crashed on the hard episodes lost none of them.
    events = client.collect(EpisodeEvent, "/aerialdojo/episode_events", EVENTS_QOS)
    with running(_graph(), tmp_path):
        episode_id = _first_episode()
        _start(client, episode_id)
        turned = client.call(
            Step, "/aerialdojo/step", Step.Request(agent="uav", action="TurnLeft", magnitude=15.0)
        )
        assert turned.accepted
        # Only an agent of the episode can end it so: the answer names the refusal.
        ugv = Step.Request(agent="ugv", agent_error="RuntimeError: not in this episode")
        assert not client.call(Step, "/aerialdojo/step", ugv).done
        failed = Step.Request(agent="uav", agent_error="RuntimeError: the model's parser broke")
        ended = client.call(Step, "/aerialdojo/step", failed)
        assert (ended.accepted, ended.done) == (False, True)
        assert ended.termination == EpisodeEvent.AGENT_ERROR and ended.steps_used == 1
        assert ended.message == (
            "agent error: uav: its policy raised RuntimeError: the model's parser broke"
        )
        assert client.spin_until(_ended(events, EpisodeEvent.AGENT_ERROR), timeout_s=10.0)
    ending = next(e for e in events if e.kind == EpisodeEvent.AGENT_ERROR)
    # The ending carries no action: the trace takes nothing from it.
    assert (ending.episode_id, ending.step, ending.action) == (episode_id, 1, "")


def _start(client: RosClient, episode_id: str) -> StartEpisode.Response:
    started = client.call(
        StartEpisode, "/aerialdojo/start_episode", StartEpisode.Request(episode_id=episode_id)
    )
    assert started.success, started.message
    return started


def test_a_step_decided_for_an_earlier_attempt_is_refused_as_stale_and_uses_no_budget(
    client: RosClient, tmp_path: Path
) -> None:
    # Issue 29: a slow agent's step, decided on the previous attempt's observations, was
    # applied to the rerun of its episode.
    events = client.collect(EpisodeEvent, "/aerialdojo/episode_events", EVENTS_QOS)
    tasks = client.collect(TaskSpec, "/aerialdojo/task", TASK_QOS)
    episode_id = _first_episode()
    with running(_graph(), tmp_path):
        assert _start(client, episode_id).task.attempt == 0
        turn = Step.Request(
            agent="uav", episode_id=episode_id, attempt=0, action="TurnLeft", magnitude=15.0
        )
        assert client.call(Step, "/aerialdojo/step", turn).steps_used == 1
        stop = Step.Request(agent="uav", episode_id=episode_id, attempt=0, action="Stop")
        assert client.call(Step, "/aerialdojo/step", stop).done
        rerun = _start(client, episode_id)  # the episode's next attempt
        assert rerun.task.attempt == 1
        assert client.spin_until(lambda: tasks and tasks[-1].attempt == 1, timeout_s=10.0)

        stale = client.call(Step, "/aerialdojo/step", turn)
        assert (stale.accepted, stale.done) == (False, True)
        assert stale.message == (
            f"stale: decided for attempt 1 of episode {episode_id}; attempt 2 is running"
        )
        other = Step.Request(agent="uav", episode_id="Mall_0-other", attempt=1, action="Stop")
        assert client.call(Step, "/aerialdojo/step", other).message == (
            f"stale: decided for attempt 2 of episode Mall_0-other; attempt 2 of episode "
            f"{episode_id} is running"
        )
        turn.attempt = 1
        current = client.call(Step, "/aerialdojo/step", turn)
        assert current.accepted and current.steps_used == 1  # the stale steps used none
        # A client started by hand names no episode: its step is the running attempt's.
        by_hand = client.call(Step, "/aerialdojo/step", Step.Request(agent="uav", action="Stop"))
        assert by_hand.accepted and by_hand.steps_used == 2

        def of_rerun() -> list[int]:
            return [event.kind for event in events if event.attempt == 1]

        assert client.spin_until(lambda: len(of_rerun()) >= 3, timeout_s=10.0)
        # The stale steps are none of the agent's actions: no event, no refusal counted.
        assert of_rerun() == [EpisodeEvent.STARTED, EpisodeEvent.STEP, EpisodeEvent.STOPPED]


def test_a_step_from_a_second_process_of_an_agent_ends_the_attempt_as_not_the_agents(
    client: RosClient, tmp_path: Path
) -> None:
    # Issue 29: an agent started in place of one that died lost its memory of the episode;
    # the attempt went on as if nothing had happened.
    events = client.collect(EpisodeEvent, "/aerialdojo/episode_events", EVENTS_QOS)
    episode_id = _first_episode()
    # The first process announced itself; the second's announcement never came (the task
    # manager then held the first as the next attempt's, and the second ended that one too:
    # seen on the ros2 launch route).
    announcements = client.node.create_publisher(NodeInfo, NODES_TOPIC, NODES_QOS)
    announcements.publish(
        NodeInfo(node="/uav/uav_agent", run_dir=str(tmp_path), host="robot", pid=100)
    )
    with running(_graph(), tmp_path):
        _start(client, episode_id)

        def turn(process: str, attempt: int = 0) -> Step.Response:
            request = Step.Request(
                agent="uav",
                episode_id=episode_id,
                attempt=attempt,
                agent_process=process,
                action="TurnLeft",
                magnitude=15.0,
            )
            return client.call(Step, "/aerialdojo/step", request)

        assert turn("robot:100").accepted and turn("robot:100").steps_used == 2
        restarted = turn("robot:200")
        assert (restarted.accepted, restarted.done) == (False, True)
        reason = (
            "the uav agent was restarted during the episode (its process robot:100 ended); "
            "this attempt is not scored"
        )
        assert restarted.message == reason
        assert client.spin_until(
            lambda: any(event.kind == EpisodeEvent.INFRA_FAILURE for event in events),
            timeout_s=10.0,
        )
        assert [(event.kind, event.message) for event in events][-1] == (
            EpisodeEvent.INFRA_FAILURE,
            reason,
        )
        # The new process acts on the episode's next attempt.
        assert _start(client, episode_id).task.attempt == 1
        assert turn("robot:200", attempt=1).accepted
