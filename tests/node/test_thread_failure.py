"""A thread of a node that dies ends its node with the error (issue 29, item 4): a reference
image that disappeared mid-run killed the task manager's episode thread, the process stayed
up, and the run waited an hour for episodes nobody would serve."""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import pytest
from rostest import RosClient, running, specs_for

from aerialdojo.tasks.suite import load_suite, resolve_suite

pytestmark = pytest.mark.ros


def test_the_task_manager_ends_with_the_error_its_episode_thread_died_of(
    tmp_path: Path,
) -> None:
    shipped = resolve_suite("aerialdojo_mini").parent
    suite_dir = tmp_path / "suite"
    shutil.copytree(shipped, suite_dir)
    image_episode = next(
        e for e in load_suite(suite_dir / "suite.json").select() if e.endswith("-img")
    )
    graph = specs_for(
        {
            "sim_bridge": {"image_width": 48, "image_height": 48},
            "task_manager": {"suite": str(suite_dir / "suite.json"), "episodes": [image_episode]},
            "evaluator": {"output_dir": str(tmp_path), "run_id": "vanished"},
        }
    )
    agent = RosClient("stand_in", namespace="uav")
    try:
        with running(graph, tmp_path / "vanished") as processes:
            task_manager = next(p for p in processes if p.spec.name == "task_manager")
            log = task_manager.log_path
            deadline = time.monotonic() + 120
            while "episodes selected" not in log.read_text(errors="replace"):
                assert task_manager.process.poll() is None, log.read_text()[-2000:]
                assert time.monotonic() < deadline, "the task manager never loaded its suite"
                time.sleep(0.2)
            # The suite was checked and loaded; now its reference images disappear, and the
            # agent arrives, so the run starts and the episode's task cannot be built.
            shutil.rmtree(suite_dir / "images")
            agent.stand_in_for_agent()
            try:
                code = task_manager.process.wait(timeout=120)
            except subprocess.TimeoutExpired:
                pytest.fail(f"the task manager kept running:\n{log.read_text()[-3000:]}")
    finally:
        agent.close()
    text = log.read_text(errors="replace")
    assert code == 1, text[-3000:]
    assert "the task manager's episode thread failed; ending the node" in text
    assert "FileNotFoundError" in text and "a thread of this node failed" in text
