"""The graph of a robot config: its nodes and namespaces, the wall clock for every node, the
suite each node that needs the site's geofence reads, the robot's settings checked before
anything starts, and the DDS domain a graph driving robots outside it must share."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from aerialdojo.cli import EXIT_USAGE, main
from aerialdojo.errors import ConfigError
from aerialdojo.graph import NodeSpec, needs_robot_domain, run_specs
from aerialdojo.tasks.suite import resolve_suite


def _specs(config: Path, tmp_path: Path, **overrides: dict[str, object]) -> dict[str, NodeSpec]:
    specs = run_specs(config, run_id="r", output_dir=str(tmp_path), overrides=overrides)
    return {spec.name: spec for spec in specs}


def test_a_robot_graph_runs_every_node_on_the_wall_clock_and_shares_the_site(
    repo: Path, tmp_path: Path
) -> None:
    specs = _specs(repo / "config" / "robot_sim.yaml", tmp_path)
    assert [(name, spec.namespace) for name, spec in specs.items()] == [
        ("sim_robot", ""),
        ("safety_gate", "uav"),
        ("sim_bridge", ""),
        ("task_manager", ""),
        ("evaluator", ""),
        ("uav_agent", "uav"),
        ("operator_console", ""),
    ]
    assert {name: spec.parameters["use_sim_time"] for name, spec in specs.items()} == dict.fromkeys(
        specs, False
    )
    for reader in ("sim_bridge", "safety_gate", "evaluator"):
        assert specs[reader].parameters["suite"] == "alley_rehearsal"
    console = specs["operator_console"].parameters
    assert console["agents"] == ["uav"]
    assert console["odometry_topic"] == "/mavros/local_position/odom"
    # One override of the task manager's suite moves every reader with it.
    path = str(resolve_suite("alley_rehearsal"))
    moved = _specs(repo / "config" / "robot_sim.yaml", tmp_path, task_manager={"suite": path})
    for reader in ("sim_bridge", "safety_gate", "evaluator"):
        assert moved[reader].parameters["suite"] == path
    # A simulator graph keeps its simulated clock: every node but the bridge on /clock.
    embedded = _specs(repo / "config" / "eval.yaml", tmp_path)
    assert {name: spec.parameters["use_sim_time"] for name, spec in embedded.items()} == {
        "sim_bridge": False,
        "task_manager": True,
        "evaluator": True,
        "uav_agent": True,
    }


def test_a_robot_s_settings_and_suite_are_checked_before_anything_starts(
    repo: Path, tmp_path: Path
) -> None:
    config = yaml.safe_load((repo / "config" / "robot_mavros.yaml").read_text())
    bridge = config["sim_bridge"]["ros__parameters"]
    bridge.update(robot_views=["front", "down"], robot_proximity_view="left")
    config["task_manager"]["ros__parameters"]["suite"] = "aerialdojo_mini"
    config["uav_agent"]["ros__parameters"]["views"] = ["front", "down"]
    path = tmp_path / "robot.yaml"
    path.write_text(yaml.safe_dump(config))
    with pytest.raises(ConfigError) as raised:
        run_specs(path, run_id="r", output_dir=str(tmp_path))
    problems = "\n".join(raised.value.problems)
    assert f"{path}: sim_bridge.robot_image_topics: 1 topic(s) for 2 view(s)" in problems
    assert f"{path}: sim_bridge.robot_views: 'down' is not a view of a robot's rig" in problems
    assert "sim_bridge.robot_proximity_view: 'left' is not one of robot_views" in problems
    assert "'aerialdojo_mini' was not built from a surveyed site" in problems
    assert f"{path}: uav_agent.views: 'down' is not a view of the uav on the robot backend" in (
        problems
    )


def test_two_robots_never_share_an_absolute_topic(repo: Path, tmp_path: Path) -> None:
    config = yaml.safe_load((repo / "config" / "robot_mavros.yaml").read_text())
    config["sim_bridge"]["ros__parameters"]["agents"] = ["uav", "ugv"]
    path = tmp_path / "robots.yaml"
    path.write_text(yaml.safe_dump(config))
    with pytest.raises(ConfigError) as raised:
        run_specs(path, run_id="r", output_dir=str(tmp_path))
    problems = "\n".join(raised.value.problems)
    assert "sim_bridge.robot_odometry_topic: '/mavros/local_position/odom' is absolute" in problems
    assert "sim_bridge.robot_image_topics: '/camera/camera/color/image_raw' is absolute" in (
        problems
    )


def test_a_graph_driving_robots_outside_it_must_join_their_domain(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    real = run_specs(repo / "config" / "robot_mavros.yaml", run_id="r", output_dir=str(tmp_path))
    rehearsal = run_specs(repo / "config" / "robot_sim.yaml", run_id="r", output_dir=str(tmp_path))
    simulated = run_specs(repo / "config" / "eval.yaml", run_id="r", output_dir=str(tmp_path))
    assert needs_robot_domain(real)
    assert not needs_robot_domain(rehearsal)  # its robot is one of its nodes
    assert not needs_robot_domain(simulated)
    monkeypatch.delenv("ROS_DOMAIN_ID")
    code = main(["eval", "--config", str(repo / "config" / "robot_mavros.yaml"), "--output",
                 str(tmp_path / "runs")])  # fmt: skip
    assert code == EXIT_USAGE
    assert "ROS_DOMAIN_ID: this graph drives robots whose drivers run outside it" in (
        capsys.readouterr().err
    )
    assert not (tmp_path / "runs").exists()  # refused before anything was written
