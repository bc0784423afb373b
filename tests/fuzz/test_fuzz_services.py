"""Fuzzed service requests to the real task manager, over real DDS: the simulator bridge and
the task manager run as node processes (as in ``aerialdojo eval``), and this process calls
``/aerialdojo/list_episodes``, ``start_episode`` and ``step`` with fuzzed fields. The
requests are parsed where the services hand them: ``Suite.select`` (filters),
``Suite.episode`` (episode ids) and the protocol's ``referee.plan`` (steps, ROS-free).

The property: every request is answered; a refusal says why, and a refused step ends its
episode only as the agent's ``invalid_action`` (``task_manager.refusals_allowed``); no node
dies; and the run directory gains no file beyond the nodes' logs and parameters."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aerialdojo_interfaces.msg import EpisodeEvent
from aerialdojo_interfaces.srv import ListEpisodes, StartEpisode, Step
from hypothesis import Phase, given, settings
from hypothesis import strategies as st
from rostest import RosClient, running, specs_for

from aerialdojo.actions import aerialdojo_choices
from aerialdojo.nodes.qos import SERVICE_QOS
from aerialdojo.runner import NodeProcess
from aerialdojo.tasks.suite import load_suite, resolve_suite

pytestmark = pytest.mark.ros

#: The task manager gives up on the bridge after SIM_TIMEOUT_S and answers; every request
#: must be answered well within ANSWER_S, whatever the machine's load.
SIM_TIMEOUT_S = 20.0
ANSWER_S = 3 * SIM_TIMEOUT_S
EPISODES = load_suite(resolve_suite("aerialdojo_mini")).select()
CHOICES = aerialdojo_choices()
SERVICES = {
    "list": (ListEpisodes, "/aerialdojo/list_episodes"),
    "start": (StartEpisode, "/aerialdojo/start_episode"),
    "step": (Step, "/aerialdojo/step"),
}


class Graph:
    """The bridge and the task manager as processes, and one client of each service."""

    def __init__(self, ros: RosClient, processes: list[NodeProcess], run_dir: Path) -> None:
        self.ros = ros
        self.processes = processes
        self.run_dir = run_dir
        self.clients = {
            name: ros.node.create_client(srv_type, service, qos_profile=SERVICE_QOS)
            for name, (srv_type, service) in SERVICES.items()
        }
        for name, client in self.clients.items():
            assert client.wait_for_service(timeout_sec=ANSWER_S), f"{name} never appeared"

    def call(self, name: str, request: Any) -> Any:
        future = self.clients[name].call_async(request)
        self.ros.executor.spin_until_future_complete(future, timeout_sec=ANSWER_S)
        assert future.done(), f"{SERVICES[name][1]} did not answer {request} in {ANSWER_S} s"
        return future.result()

    def alive(self) -> bool:
        return all(process.process.poll() is None for process in self.processes)


@pytest.fixture(scope="module")
def graph(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Graph]:
    run_dir = tmp_path_factory.mktemp("run")
    specs = specs_for(
        {
            "sim_bridge": {"image_width": 32, "image_height": 32},
            "task_manager": {"auto_run": False, "sim_timeout_s": SIM_TIMEOUT_S},
        }
    )
    ros = RosClient("fuzz_client")
    try:
        with running(specs, run_dir) as processes:
            yield Graph(ros, processes, run_dir)
    finally:
        ros.close()


texts = st.text(max_size=40).map(lambda text: text.replace("\x00", ""))  # C strings
magnitudes = st.floats() | st.sampled_from([0.0, 1.0, 3.0, 5.0, 15.0, 30.0, 90.0])
filters = (
    texts
    | st.builds(
        lambda key, value: f"{key}={value}",
        st.sampled_from(["split", "setting", "scene", "family", "colour", ""]),
        st.sampled_from(["test", "base", "val", "Mall_0", "urban", ""]) | texts,
    )
    | st.lists(st.sampled_from(["split=test", "setting=base", "family=urban"]), max_size=3).map(
        ",".join
    )
)
legal_steps = st.sampled_from(CHOICES).map(
    lambda action: Step.Request(agent="uav", action=action.name, magnitude=action.magnitude)
)
fuzzed_steps = st.builds(
    Step.Request,
    agent=st.sampled_from(["uav", "ugv", ""]) | texts,
    episode_id=st.sampled_from(["", *EPISODES[:2]]) | texts,
    attempt=st.integers(min_value=0, max_value=2**32 - 1),
    agent_process=st.sampled_from(["", "robot:1", "robot:2"]) | texts,
    agent_error=st.just("") | texts,
    action=st.sampled_from([action.name for action in CHOICES]) | texts,
    magnitude=magnitudes,
    argument=texts,
    teammate_message=texts,
)
requests = st.one_of(
    st.tuples(st.just("list"), st.builds(ListEpisodes.Request, filter=filters)),
    st.tuples(
        st.just("start"),
        st.builds(StartEpisode.Request, episode_id=st.sampled_from(EPISODES) | texts),
    ),
    st.tuples(st.just("step"), legal_steps | fuzzed_steps),
)


# No shrinking: every case talks to the same running nodes, so a case replayed to shrink it
# meets other state, and each replay costs real service calls. A failure is reported as
# found, with its blob.
@settings(phases=[Phase.explicit, Phase.reuse, Phase.generate])
@given(calls=st.lists(requests, min_size=1, max_size=4))
def test_every_fuzzed_request_is_answered_and_no_node_dies(
    graph: Graph, calls: list[tuple[str, Any]]
) -> None:
    for name, request in calls:
        answer = graph.call(name, request)
        if name == "list":
            assert answer.success or answer.message, "a filter refused without a reason"
            assert answer.success or not answer.episode_ids
        elif name == "start":
            assert answer.success or answer.message, "a start refused without a reason"
        else:
            assert answer.accepted or answer.message, "a step refused without a reason"
            if not answer.accepted:  # refused: no budget used, or the episode ends
                # The refusal that ends it, or a step that says the policy raised.
                ended_by_agent = answer.done and answer.termination in (
                    EpisodeEvent.INVALID_ACTION,
                    EpisodeEvent.AGENT_ERROR,
                )
                # With no episode running the refusal says done: nothing is left to step, and
                # an agent waits for its next task (a resumed run's rerun) instead of asking.
                no_episode = answer.steps_used == answer.steps_left == 0 and (
                    answer.message == "no episode is running; start one first"
                )
                # A step decided for another attempt, or by a second process of its agent,
                # says done with its reason: the agent waits for the running attempt's task.
                not_this_attempt = answer.message.startswith("stale: decided for") or (
                    "was restarted during the episode" in answer.message
                )
                assert not answer.done or ended_by_agent or no_episode or not_this_attempt, answer
            if answer.accepted and not math.isfinite(request.magnitude):
                pytest.fail(f"a step of magnitude {request.magnitude} was accepted")
        assert graph.alive(), f"a node died after {name} {request}"


def test_after_the_fuzz_the_nodes_still_run_an_episode_and_wrote_only_their_logs(
    graph: Graph,
) -> None:
    # An episode may still be running from the last case: a Stop ends it (or is refused).
    graph.call("step", Step.Request(agent="uav", action="Stop"))
    started = graph.call("start", StartEpisode.Request(episode_id=EPISODES[0]))
    assert started.success, started.message
    stopped = graph.call("step", Step.Request(agent="uav", action="Stop"))
    assert stopped.accepted and stopped.done, stopped.message
    assert graph.alive()
    written = {path.relative_to(graph.run_dir).parts[0] for path in graph.run_dir.rglob("*")}
    assert written <= {"logs", "params"}, written
