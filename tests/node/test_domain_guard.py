"""One run per ROS domain, where the nodes see it: a task manager started in a domain where
another run's task manager announced itself refuses before it serves or announces anything,
and names that run; the first keeps serving. Every node names its run, host and process."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from aerialdojo_interfaces.msg import NodeInfo
from aerialdojo_interfaces.srv import ListEpisodes
from rostest import RosClient, running, specs_for

from aerialdojo.nodes.domain_guard import WINDOW_ENV
from aerialdojo.nodes.qos import NODES_QOS
from aerialdojo.run_contract import EXIT_USAGE
from aerialdojo.runtime import DOMAIN_CHECKED_ENV, NODES_TOPIC

pytestmark = pytest.mark.ros


def test_a_second_task_manager_in_the_domain_refuses_and_names_the_first(
    tmp_path: Path,
) -> None:
    specs = specs_for({"task_manager": {"auto_run": False}})
    first_dir, second_dir = tmp_path / "first", tmp_path / "second"
    unchecked = {k: v for k, v in os.environ.items() if k not in (DOMAIN_CHECKED_ENV, WINDOW_ENV)}
    client = RosClient()
    try:
        heard = client.collect(NodeInfo, NODES_TOPIC, NODES_QOS)
        with running(specs, first_dir) as (first,):
            assert client.spin_until(lambda: heard, 60.0), "the task manager never announced"
            (info,) = heard
            assert (info.node, info.run_dir) == ("/task_manager", str(first_dir))
            assert (info.host, info.pid) == (socket.gethostname(), first.process.pid)
            # Its environment keeps the run's DDS traffic on this host.
            environ = Path(f"/proc/{first.process.pid}/environ").read_bytes().split(b"\0")
            assert b"ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST" in environ

            with running(specs, second_dir, unchecked) as (second,):
                # Listening meanwhile: an announcement of the second would be heard.
                assert client.spin_until(lambda: second.process.poll() is not None, 60.0)
                assert second.process.returncode == 1
            log = (second_dir / "logs" / "task_manager.log").read_text()
            domain = os.environ["ROS_DOMAIN_ID"]
            assert f"ROS_DOMAIN_ID={domain} is in use by another aerialdojo run" in log
            assert f"run {first_dir} (host {info.host}, pid {info.pid})" in log
            assert "another domain" in log and "Traceback" not in log
            # The first still serves, and the second never announced itself to its evaluator.
            answer = client.call(ListEpisodes, "/aerialdojo/list_episodes", ListEpisodes.Request())
            assert answer.success and answer.episode_ids
            assert [message.pid for message in heard] == [first.process.pid]
    finally:
        client.close()


def test_aerialdojo_eval_refuses_a_domain_whose_run_holds_no_lock(
    repo: Path, tmp_path: Path
) -> None:
    """A run started without the CLI (``ros2 launch``, by hand, another host) holds no lock
    on this host: ``aerialdojo eval`` finds its task manager on the ROS graph instead, before
    any node of its own starts."""
    specs = specs_for({"task_manager": {"auto_run": False}})
    held = tmp_path / "held"
    with running(specs, held) as (task_manager,):
        log = held / "logs" / "task_manager.log"
        deadline = time.monotonic() + 60
        while "episodes selected" not in log.read_text():  # announced, after its own check
            assert time.monotonic() < deadline and task_manager.process.poll() is None
            time.sleep(0.1)
        refused = subprocess.run(
            [
                sys.executable, "-m", "aerialdojo.cli", "eval", "--config",
                str(repo / "config" / "oracle.yaml"), "--output", str(tmp_path),
                "--run-id", "second",
            ],
            capture_output=True, text=True, timeout=120, check=False,
            env={k: v for k, v in os.environ.items() if k != WINDOW_ENV},
        )  # fmt: skip
        assert task_manager.process.poll() is None  # undisturbed
    assert refused.returncode == EXIT_USAGE, refused.stderr[-3000:]
    assert "is in use by another aerialdojo run" in refused.stderr
    assert f"run {held} (host {socket.gethostname()}, pid {task_manager.process.pid})" in (
        refused.stderr
    )
    assert not (tmp_path / "second").exists()
