"""One graph, one distribution (README, "ROS 2 distributions"): every node announces its ROS 2
distribution and Python on /aerialdojo/nodes. A node that reports another distribution than
the rest (the agent here, started with ROS_DISTRO=humble, as a robot-side node on a Humble
machine reports itself) makes the evaluator warn at once; the run's notes and report say
which node runs what, and metrics.json both distributions, the same bytes from the bag."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from rostest import running, specs_for

from aerialdojo.runtime import python_version, ros_distro

pytestmark = pytest.mark.ros


def test_a_node_on_another_distribution_is_flagged_live_and_from_the_bag(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    run_dir = runs / "mixed"
    nodes = {
        "sim_bridge": {"image_width": 48, "image_height": 48},
        # Two episodes: one can end before a node's announcement was discovered (Fast DDS
        # announces a participant again after about 3 s), and the notes would miss it.
        "task_manager": {"max_episodes": 2},
        "evaluator": {"output_dir": str(runs), "run_id": "mixed"},
        "uav_agent": {"policy": "oracle"},
    }
    specs = specs_for(nodes)
    harness = [spec for spec in specs if spec.name != "uav_agent"]
    agent = [spec for spec in specs if spec.name == "uav_agent"]
    with (
        running(harness, tmp_path / "harness") as harness_nodes,
        # Its own log directory, named as the run: a node takes only its run's tasks, and a
        # run's id is its directory's name.
        running(agent, tmp_path / "agent" / "harness", env={**os.environ, "ROS_DISTRO": "humble"}),
    ):
        # The evaluator exits once its report is written (run_status.json comes first).
        evaluator = next(node for node in harness_nodes if node.spec.name == "evaluator")
        deadline = time.monotonic() + 180
        while evaluator.process.poll() is None:
            assert time.monotonic() < deadline, "\n".join(
                log.read_text()[-2000:] for log in sorted(tmp_path.glob("**/logs/*.log"))
            )
            time.sleep(0.5)
    harness_distro = ros_distro()
    assert harness_distro != "humble"
    log = (tmp_path / "harness" / "logs" / "evaluator.log").read_text()
    warnings = re.findall(r"the graph's nodes run different ROS 2 distributions \((.*?)\)", log)
    assert warnings, log
    # The last warning names every node heard; a node of an earlier test in this session's
    # domain that is still shutting down may be heard too, so the harness's are a subset.
    humble, rest = warnings[-1].split("; ")
    assert humble == "humble: /uav/uav_agent", log
    assert rest.startswith(f"{harness_distro}: "), log
    assert {"/evaluator", "/sim_bridge", "/task_manager"} <= set(
        rest.removeprefix(f"{harness_distro}: ").split(", ")
    ), log
    assert f"({warnings[-1]})" in (run_dir / "run_notes.md").read_text()
    assert "| /uav/uav_agent | humble |" in (run_dir / "report.md").read_text()
    run = json.loads((run_dir / "metrics.json").read_text())["run"]
    assert run["ros_distro"] == ", ".join(sorted(["humble", harness_distro]))
    assert run["python_version"] == python_version()
    replay = subprocess.run(
        [sys.executable, "-m", "aerialdojo.cli", "evaluate-bag", str(run_dir / "bag"),
         "--out", str(tmp_path / "replay")],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert replay.returncode == 0, replay.stderr[-3000:]
    assert (tmp_path / "replay" / "metrics.json").read_bytes() == (
        run_dir / "metrics.json"
    ).read_bytes()
