"""What a node runs on, and the one-distribution rule (README, "ROS 2 distributions"): the
distribution a node reports, the warning of a mixed graph, and what the run's files say."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

from eventstream import event, straight_episode

from aerialdojo.events import EpisodeAssembler, EventKind
from aerialdojo.protocols import trace_builder
from aerialdojo.report.run import score_assembled, write_run
from aerialdojo.runtime import (
    UNKNOWN,
    NodeRecord,
    distribution_mismatch,
    platform_summary,
    python_version,
    ros_distro,
)


def test_a_sourced_installation_names_the_distribution_else_the_installed_wheels(
    tmp_path: Path,
) -> None:
    site = tmp_path / "site-packages"
    (site / "ros_rclpy-7.1.6.dist-info").mkdir(parents=True)  # names no distribution
    assert ros_distro({}, [str(site)]) == UNKNOWN
    (site / "ros_jazzy_rclpy-7.1.6.dist-info").mkdir()
    assert ros_distro({}, [str(tmp_path / "missing"), str(site)]) == "jazzy"
    assert ros_distro({"ROS_DISTRO": "humble"}, [str(site)]) == "humble"


def test_this_venv_reports_the_distribution_of_its_wheels() -> None:
    # The wheels route installs ros-jazzy-rclpy; a sourced installation sets ROS_DISTRO.
    assert ros_distro() not in ("", UNKNOWN)


def test_a_mixed_graph_is_named_node_by_node_and_an_unknown_one_is_not_a_mismatch() -> None:
    jazzy = [
        NodeRecord("/evaluator", "jazzy", "3.12.1"),
        NodeRecord("/sim_bridge", "jazzy", "3.12.1"),
    ]
    assert distribution_mismatch(jazzy) == ""
    assert distribution_mismatch([*jazzy, NodeRecord("/robot", UNKNOWN, "3.12.1")]) == ""
    mixed = [*jazzy, NodeRecord("/uav/px4_bridge", "humble", "3.10.12")]
    warning = distribution_mismatch(mixed)
    assert warning.startswith(
        "the graph's nodes run different ROS 2 distributions "
        "(humble: /uav/px4_bridge; jazzy: /evaluator, /sim_bridge)"
    )
    assert platform_summary(mixed) == {
        "ros_distro": "humble, jazzy",
        "python_version": "3.10.12, 3.12.1",
    }
    assert platform_summary(jazzy) == {"ros_distro": "jazzy", "python_version": "3.12.1"}


def test_the_run_records_what_its_nodes_ran_on_and_warns_of_a_mixed_graph(tmp_path: Path) -> None:
    assembler = EpisodeAssembler(trace_builder)
    for e in straight_episode("a", EventKind.STOPPED, [4, 7]):
        assembler.add(e)
    assembler.add(event(EventKind.RUN_FINISHED, message="1 of 1 episodes ran"))
    for node, distro in (("/evaluator", "jazzy"), ("/uav/uav_agent", "humble")):
        info = SimpleNamespace(node=node, ros_distro=distro, python_version=python_version())
        assembler.add_node_info(info)
    result = score_assembled(assembler, None)
    assert any("different ROS 2 distributions" in note for note in result.warnings)
    write_run(tmp_path, result)
    run = json.loads((tmp_path / "metrics.json").read_text())["run"]
    assert run["ros_distro"] == "humble, jazzy"
    assert run["python_version"] == python_version()
    assert "| /uav/uav_agent | humble |" in (tmp_path / "report.md").read_text()
    assert "humble: /uav/uav_agent; jazzy: /evaluator" in (tmp_path / "run_notes.md").read_text()
