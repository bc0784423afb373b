"""Which dead nodes the runner starts again (issue 29, last aim): the bridge after any exit,
the task manager only after a signal ended it (it resumes the run from its journal), never
after it refused to start (status 1: it would refuse again), an agent only after a signal
ended it (the task manager reruns the attempt it lost), never after an error of its own (the
agent's failure, which would happen again), and none more often than ``runner.RESTARTABLE``
allows. Stand-in processes that exit as the real ones do."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from aerialdojo.graph import NodeSpec
from aerialdojo.runner import NodeProcess, wait_for_graph

# Exits at once, as a node that died: with a status, or killed by a signal.
DIES = """
import os, sys
code = int(sys.argv[1])
if code < 0:
    os.kill(os.getpid(), -code)
sys.exit(code)
"""


def _node(tmp_path: Path, name: str, code: int) -> NodeProcess:
    command = [sys.executable, "-c", DIES, str(code)]
    log_path = tmp_path / f"{name}.log"
    log_file = log_path.open("wb")
    process = subprocess.Popen(command, stdout=log_file, start_new_session=True)
    spec = NodeSpec(executable=name, name=name, namespace="", parameters={})
    return NodeProcess(spec, process, log_path, log_file, command, {})


@pytest.mark.parametrize(
    ("name", "code", "restarts"),
    [
        ("task_manager", -9, 3),  # SIGKILL
        ("task_manager", 0, 3),  # rclpy's orderly exit on SIGINT or SIGTERM
        ("task_manager", 1, 0),  # a refusal of its own: bad input, another run's journal
        ("sim_bridge", 1, 3),
        ("uav_agent", -9, 3),  # SIGKILL
        ("uav_agent", 0, 3),  # SIGINT or SIGTERM
        ("uav_agent", 1, 0),  # its policy raised: the agent's own failure
        ("ugv_agent", -9, 3),
        ("evaluator", -9, 0),
    ],
)
def test_a_dead_node_is_started_again_as_its_policy_allows(
    tmp_path: Path, name: str, code: int, restarts: int
) -> None:
    node = _node(tmp_path, name, code)
    outcome = wait_for_graph([node], timeout_s=60.0)
    assert node.restarts == restarts
    assert outcome.failed_node == name and outcome.exit_codes[name] == code
    assert f"node {name} exited with status {code}" in outcome.message
