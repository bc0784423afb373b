"""``ros2 launch aerialdojo robot.launch.py site:=... vehicle:=...`` and ``aerialdojo eval
--config config/robot_<vehicle>.yaml task_manager.suite=...`` start the same graph:
robot.launch.py includes eval.launch.py with the vehicle's config and the site's suite as the
task manager's, and eval.launch.py builds its nodes with ``graph.run_specs`` as the CLI does.

As in test_entry_points, launch is not installable from PyPI: the launch files run against
recording stand-ins of the launch classes they use, and the package's share directory is the
checkout's (so the test reads the configs as they are, not as last installed).
"""

from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path
from typing import Any

import pytest
from test_entry_points import (
    _as_started,
    _launch_nodes,
    _LaunchContext,
    _Recorded,
    _stand_in_modules,
)

from aerialdojo.graph import run_specs
from aerialdojo.launch_files import robot_configs


def _robot_launch(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    modules = _stand_in_modules()
    modules["launch.launch_description_sources"] = types.ModuleType(
        "launch.launch_description_sources"
    )
    for name in ("IncludeLaunchDescription", "SetLaunchConfiguration"):
        setattr(modules["launch.actions"], name, type(name, (_Recorded,), {}))
    modules["launch.launch_description_sources"].PythonLaunchDescriptionSource = type(
        "PythonLaunchDescriptionSource", (_Recorded,), {}
    )
    share = tmp_path / "share"
    share.mkdir()
    (share / "config").symlink_to(repo / "config")
    ament = types.ModuleType("ament_index_python.packages")
    ament.get_package_share_directory = lambda package: str(share)  # type: ignore[attr-defined]
    modules["ament_index_python.packages"] = ament
    for name, module in modules.items():
        monkeypatch.setitem(sys.modules, name, module)
    spec = importlib.util.spec_from_file_location(
        "robot_launch", repo / "launch" / "robot.launch.py"
    )
    assert spec is not None and spec.loader is not None
    launch_file = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(launch_file)
    return launch_file


def test_robot_launch_and_the_cli_start_the_same_robot_graph(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    launch_file = _robot_launch(repo, tmp_path, monkeypatch)
    entities = launch_file.generate_launch_description().args[0]
    declared = {e.args[0]: e for e in entities if type(e).__name__ == "DeclareLaunchArgument"}
    assert set(declared) == {"site", "vehicle", "episodes", "output_dir", "run_id"}
    assert all(e.kwargs["description"] for e in declared.values())
    assert "default_value" not in declared["site"].kwargs  # a robot never flies a default site
    vehicles = declared["vehicle"].kwargs["choices"]
    assert vehicles == sorted(robot_configs(repo / "config"))
    assert {"mavros", "px4", "sim"} <= set(vehicles)

    arguments = {"site": "alley_rehearsal", "vehicle": "sim", "episodes": "2",
                 "output_dir": str(tmp_path / "runs"), "run_id": "r"}  # fmt: skip
    context = _LaunchContext(arguments)
    opaque = next(e for e in entities if type(e).__name__ == "OpaqueFunction")
    set_suite, include = opaque.kwargs["function"](context)
    name, value = set_suite.args
    assert name == "task_manager.suite"
    included = {key: item if isinstance(item, str) else item.perform(context)
                for key, item in include.kwargs["launch_arguments"]}  # fmt: skip
    assert include.args[0].args[0] == str(repo / "launch" / "eval.launch.py")
    config = repo / "config" / "robot_sim.yaml"
    assert Path(included["config"]).resolve() == config
    launched = _launch_nodes(
        repo, {**included, name: value.perform(context)}, monkeypatch
    )  # eval.launch.py, as the include runs it
    nodes = [a for a in launched if type(a).__name__ == "Node"]
    started = {
        _as_started(n.kwargs["executable"], n.kwargs["name"], n.kwargs["namespace"] or "",
                    n.kwargs["parameters"][0])
        for n in nodes
    }  # fmt: skip
    specs = run_specs(
        config,
        run_id="r",
        output_dir=str(tmp_path / "runs"),
        episodes=2,
        overrides={"task_manager": {"suite": "alley_rehearsal"}},
    )
    assert started == {
        _as_started(spec.executable, spec.name, spec.namespace, spec.parameters) for spec in specs
    }
    assert {spec.name for spec in specs} == {
        "sim_robot", "safety_gate", "sim_bridge", "task_manager", "evaluator", "uav_agent",
        "operator_console",
    }  # fmt: skip
