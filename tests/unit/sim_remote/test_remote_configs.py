"""The shipped run configs of the remote backends, and the factory's answers without a client."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from aerialdojo.backends import create_backend
from aerialdojo.errors import ConfigError
from aerialdojo.graph import load_config, node_specs
from aerialdojo.params import NODE_PARAMETERS
from aerialdojo.protocols import load_suite as load_any_suite
from aerialdojo.sim.backend import BackendOptions, aerialdojo_uav_rig
from aerialdojo.sim.remote.airsim_settings import settings_for_rig, settings_problems
from aerialdojo.sim.remote.frames import MapOffset
from aerialdojo.sim.remote.rigs import benchmark_rigs
from aerialdojo.sim.remote.settings import (
    CarlaAirSettings,
    ProjectAirSimSettings,
    bridge_parameters,
)
from aerialdojo.tasks.suite import load_suite, resolve_suite

TESTS = Path(__file__).resolve().parents[2]
CONFIG = TESTS.parent / "config"
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))  # for ``import fakes``

from fakes.carla_air_settings import STOCK_CARLA_AIR_SETTINGS  # noqa: E402


def test_the_projectairsim_config_names_the_server_and_the_seed_camera_rate() -> None:
    config = load_config(CONFIG / "projectairsim.yaml")
    bridge = next(spec for spec in node_specs(config) if spec.name == "sim_bridge")
    settings = ProjectAirSimSettings.from_parameters(bridge.parameters)
    assert bridge.parameters["backend"] == "projectairsim"
    assert (settings.topics_port, settings.services_port) == (8989, 8990)
    assert 1.0 / settings.capture_interval_s == pytest.approx(15.0)
    # A reset may load a scene: the task manager must outwait the load and one request more.
    sim_timeout_s = config["task_manager"]["sim_timeout_s"]
    assert settings.scene_load_timeout_s + settings.policy.timeout_s < sim_timeout_s


def test_the_carla_air_config_bridges_the_uav_on_town10hd_for_a_suite_of_its_world() -> None:
    config = load_config(CONFIG / "carla_air.yaml")
    bridge = next(spec for spec in node_specs(config) if spec.name == "sim_bridge")
    settings = CarlaAirSettings.from_parameters(bridge.parameters)
    # The suite the config names is shipped, on the config's map, for the UAV alone.
    assert bridge.parameters["agents"] == ["uav"]
    manager = next(spec for spec in node_specs(config) if spec.name == "task_manager")
    suite = load_suite(resolve_suite(manager.parameters["suite"]))
    assert {e.scene for e in suite.episodes} == {settings.map_name}
    assert {agent for e in suite.episodes for agent in e.agents} == {"uav"}
    assert (settings.map_name, settings.offset) == ("Town10HD", MapOffset(172.20, -183.86, 27.45))
    assert (settings.carla_port, settings.airsim_port) == (2000, 41451)


def test_the_shipped_airsim_settings_hold_the_uav_rig_of_the_carla_air_config() -> None:
    config = load_config(CONFIG / "carla_air.yaml")
    bridge = next(spec for spec in node_specs(config) if spec.name == "sim_bridge").parameters
    rig = aerialdojo_uav_rig(bridge["image_width"], bridge["image_height"], bridge["fov_deg"])
    shipped = json.loads((CONFIG / "carla_air" / "settings.json").read_text())
    assert shipped == settings_for_rig(rig), "regenerate config/carla_air/settings.json"
    assert settings_problems(shipped, rig) == []


def test_carla_airs_stock_airsim_settings_cannot_serve_the_rig() -> None:
    problems = settings_problems(STOCK_CARLA_AIR_SETTINGS, aerialdojo_uav_rig(640, 640))
    assert problems[0].startswith("PhysicsEngineName is 'FastPhysicsEngine'")
    assert [p.split(" is not among")[0] for p in problems[1:]] == [
        "camera 'front'",
        "camera 'left'",
        "camera 'right'",
        "camera 'down'",
    ]
    moved = settings_for_rig(aerialdojo_uav_rig(640, 640))
    moved["Vehicles"]["SimpleFlight"]["Cameras"]["down"]["Pitch"] = 0.0
    assert settings_problems(moved, aerialdojo_uav_rig(640, 640)) == [
        "camera 'down' has Pitch 0, the rig -90"
    ]


def test_remote_settings_take_every_default_from_the_parameter_table() -> None:
    table = {spec.name: spec.default for spec in NODE_PARAMETERS["sim_bridge"]}
    assert bridge_parameters({}) == table
    projectairsim = ProjectAirSimSettings.from_parameters({})
    carla_air = CarlaAirSettings.from_parameters({})
    assert (projectairsim.host, projectairsim.topics_port, projectairsim.services_port) == (
        table["server_host"],
        table["projectairsim_topics_port"],
        table["projectairsim_services_port"],
    )
    assert projectairsim.scene_load_timeout_s == table["scene_load_timeout_s"]
    assert (carla_air.carla_port, carla_air.airsim_port, carla_air.fixed_delta_s) == (
        table["carla_port"],
        table["airsim_port"],
        table["carla_air_fixed_delta_s"],
    )
    offset = carla_air.offset
    assert [offset.dx, offset.dy, offset.dz] == table["carla_air_map_offset"]
    assert carla_air.policy.timeout_s == table["server_timeout_s"]


def test_remote_settings_refuse_what_the_table_refuses() -> None:
    with pytest.raises(ConfigError, match=r"sim_bridge\.frame_timeout_s: 0\.0 is below"):
        ProjectAirSimSettings.from_parameters({"frame_timeout_s": 0.0})
    with pytest.raises(ConfigError, match=r"sim_bridge\.scene_load_timeout_s: .* above"):
        ProjectAirSimSettings.from_parameters({"scene_load_timeout_s": 1e9})
    with pytest.raises(ConfigError, match=r"sim_bridge\.airsim_port: expected int"):
        CarlaAirSettings.from_parameters({"airsim_port": "41451"})
    with pytest.raises(ConfigError, match=r"carla_air_traffic: 'keep' is not one of"):
        CarlaAirSettings.from_parameters({"carla_air_traffic": "keep"})
    with pytest.raises(ConfigError, match=r"sim_bridge has no parameter\(s\) server_port"):
        CarlaAirSettings.from_parameters({"server_port": 1})


def test_settings_refuse_bad_parameters_before_any_client_is_needed() -> None:
    with pytest.raises(ConfigError, match="carla_air_map_offset: expected three"):
        create_backend(
            "carla_air",
            BackendOptions(
                agents=["uav"],
                image_width=8,
                image_height=8,
                fov_deg=90.0,
                parameters={"carla_air_map_offset": [1.0, 2.0]},
            ),
        )


@pytest.mark.parametrize(
    ("backend", "venv"),
    [("projectairsim", ".venv-projectairsim"), ("carla_air", ".venv-carla-air")],
)
def test_a_missing_client_names_the_venv_to_run_in(backend: str, venv: str) -> None:
    try:
        create_backend(
            backend,
            BackendOptions(
                agents=["uav"],
                image_width=8,
                image_height=8,
                fov_deg=90.0,
                parameters={"projectairsim_scene_dir": str(CONFIG)},
            ),
        )
    except ConfigError as error:
        if "client, which lives in" not in str(error):
            raise
        assert f"lives in {venv}" in str(error) and f"{venv}/bin/python" in str(error)
    else:
        pytest.skip(f"the {backend} client is importable here")


def test_the_carla_air_agos_config_runs_its_shipped_suite_with_the_agos_rigs() -> None:
    config = load_config(CONFIG / "carla_air_agos.yaml")
    specs = node_specs(config)
    bridge = next(spec for spec in specs if spec.name == "sim_bridge").parameters
    settings = CarlaAirSettings.from_parameters(bridge)
    assert settings.benchmark == "agos" and bridge["agents"] == ["uav", "ugv"]
    manager = next(spec for spec in specs if spec.name == "task_manager")
    _protocol, suite = load_any_suite(resolve_suite(manager.parameters["suite"]))
    assert {e.scene for e in suite.episodes} == {settings.map_name}
    # Both AGOS agent nodes run, as on the embedded AGOS towns.
    assert {"agos_uav_agent", "ugv_agent"} <= {spec.name for spec in specs}
    # The AirSim settings shipped for it hold the nadir camera at the config's size.
    rig = benchmark_rigs(
        "agos", ["uav"], bridge["image_width"], bridge["image_height"], bridge["fov_deg"]
    )["uav"]
    assert [spec.name for spec in rig] == ["down"]
    shipped = json.loads((CONFIG / "carla_air" / "settings_agos.json").read_text())
    assert shipped == settings_for_rig(rig), "regenerate config/carla_air/settings_agos.json"
    assert settings_problems(shipped, rig) == []
