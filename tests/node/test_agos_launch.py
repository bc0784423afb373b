"""``ros2 launch aerialdojo agos.launch.py`` and ``aerialdojo eval --config config/agos.yaml``
start the same AGOS graph: agos.launch.py includes eval.launch.py with the AGOS config as its
default, and that config gives the UAV and UGV agents their own namespaces. The same holds
for ``citynav.launch.py`` and ``config/citynav.yaml``.

As in test_entry_points, launch itself is not installable from PyPI, so the launch file runs
against recording stand-ins of the launch classes it uses.
"""

from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path

import pytest
from test_entry_points import _launch_nodes, _Recorded, _stand_in_modules

from aerialdojo.graph import run_specs


def _benchmark_launch(repo: Path, monkeypatch: pytest.MonkeyPatch, benchmark: str = "agos") -> list:
    modules = _stand_in_modules()
    modules["launch.launch_description_sources"] = types.ModuleType(
        "launch.launch_description_sources"
    )
    modules["launch.actions"].IncludeLaunchDescription = type(
        "IncludeLaunchDescription", (_Recorded,), {}
    )
    modules["launch.launch_description_sources"].PythonLaunchDescriptionSource = type(
        "PythonLaunchDescriptionSource", (_Recorded,), {}
    )
    for name, module in modules.items():
        monkeypatch.setitem(sys.modules, name, module)
    spec = importlib.util.spec_from_file_location(
        f"{benchmark}_launch", repo / "launch" / f"{benchmark}.launch.py"
    )
    launch_file = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(launch_file)
    return launch_file.generate_launch_description().args[0]


def test_agos_launch_includes_the_evaluation_graph_with_the_agos_config(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    entities = _benchmark_launch(repo, monkeypatch)
    declared = {e.args[0]: e for e in entities if type(e).__name__ == "DeclareLaunchArgument"}
    assert set(declared) == {"config", "episodes", "output_dir", "run_id"}
    assert all(e.kwargs["description"] for e in declared.values())
    assert declared["config"].kwargs["default_value"].endswith("config/agos.yaml")
    (include,) = [e for e in entities if type(e).__name__ == "IncludeLaunchDescription"]
    assert include.args[0].args[0] == str(repo / "launch" / "eval.launch.py")
    forwarded = {name: value.name for name, value in include.kwargs["launch_arguments"]}
    assert forwarded == {name: name for name in declared}

    config = repo / "config" / "agos.yaml"
    arguments = {"config": str(config), "episodes": "2", "output_dir": str(tmp_path), "run_id": "a"}
    nodes = [a for a in _launch_nodes(repo, arguments, monkeypatch) if type(a).__name__ == "Node"]
    launched = {(n.kwargs["executable"], n.kwargs["namespace"] or "") for n in nodes}
    started = {
        (spec.executable, spec.namespace)
        for spec in run_specs(config, run_id="a", output_dir=str(tmp_path), episodes=2)
    }
    assert (
        launched
        == started
        == {
            ("sim_bridge", ""),
            ("task_manager", ""),
            ("evaluator", ""),
            ("agos_uav_agent", "uav"),
            ("ugv_agent", "ugv"),
        }
    )
    bridge = next(n for n in nodes if n.kwargs["executable"] == "sim_bridge")
    assert bridge.kwargs["parameters"][0]["backend"] == "agos"
    assert bridge.kwargs["parameters"][0]["agents"] == ["uav", "ugv"]


def test_citynav_launch_starts_the_citynav_graph_of_its_config(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    entities = _benchmark_launch(repo, monkeypatch, "citynav")
    declared = {e.args[0]: e for e in entities if type(e).__name__ == "DeclareLaunchArgument"}
    assert declared["config"].kwargs["default_value"].endswith("config/citynav.yaml")
    config = repo / "config" / "citynav.yaml"
    arguments = {"config": str(config), "episodes": "1", "output_dir": str(tmp_path), "run_id": "c"}
    nodes = [a for a in _launch_nodes(repo, arguments, monkeypatch) if type(a).__name__ == "Node"]
    launched = {(n.kwargs["executable"], n.kwargs["namespace"] or "") for n in nodes}
    assert launched == {
        ("sim_bridge", ""),
        ("task_manager", ""),
        ("evaluator", ""),
        ("citynav_agent", "uav"),
    }
    agent = next(n for n in nodes if n.kwargs["executable"] == "citynav_agent")
    assert agent.kwargs["parameters"][0]["oracle_suite"] == "citynav_mini"
