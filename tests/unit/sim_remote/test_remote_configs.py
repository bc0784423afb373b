"""The shipped run configs of the remote backends, and the factory's answers without a client."""

from __future__ import annotations

from pathlib import Path

import pytest

from aerialdojo.backends import create_backend
from aerialdojo.errors import ConfigError
from aerialdojo.graph import load_config, node_specs
from aerialdojo.sim.remote.frames import TOWN10HD_OFFSET
from aerialdojo.sim.remote.settings import CarlaAirSettings, ProjectAirSimSettings

CONFIG = Path(__file__).resolve().parents[3] / "config"


def test_the_projectairsim_config_names_the_server_and_the_seed_camera_rate() -> None:
    config = load_config(CONFIG / "projectairsim.yaml")
    bridge = next(spec for spec in node_specs(config) if spec.name == "sim_bridge")
    settings = ProjectAirSimSettings.from_parameters(bridge.parameters)
    assert bridge.parameters["backend"] == "projectairsim"
    assert (settings.topics_port, settings.services_port) == (8989, 8990)
    assert 1.0 / settings.capture_interval_s == pytest.approx(15.0)
    assert settings.policy.timeout_s < config["task_manager"]["sim_timeout_s"]


def test_the_carla_air_config_bridges_both_agents_on_town10hd() -> None:
    config = load_config(CONFIG / "carla_air.yaml")
    bridge = next(spec for spec in node_specs(config) if spec.name == "sim_bridge")
    settings = CarlaAirSettings.from_parameters(bridge.parameters)
    assert bridge.parameters["agents"] == ["uav", "ugv"]
    assert (settings.map_name, settings.offset) == ("Town10HD", TOWN10HD_OFFSET)
    assert (settings.carla_port, settings.airsim_port) == (2000, 41451)


def test_settings_refuse_bad_parameters_before_any_client_is_needed() -> None:
    with pytest.raises(ConfigError, match="carla_air_map_offset: expected three"):
        create_backend(
            "carla_air",
            agents=["uav"],
            image_width=8,
            image_height=8,
            fov_deg=90.0,
            seed=0,
            agent_radius_m=0.25,
            seconds_per_action=1.0,
            parameters={"carla_air_map_offset": [1.0, 2.0]},
        )


@pytest.mark.parametrize(
    ("backend", "venv"),
    [("projectairsim", ".venv-projectairsim"), ("carla_air", ".venv-carla-air")],
)
def test_a_missing_client_names_the_venv_to_run_in(backend: str, venv: str) -> None:
    try:
        create_backend(
            backend,
            agents=["uav"],
            image_width=8,
            image_height=8,
            fov_deg=90.0,
            seed=0,
            agent_radius_m=0.25,
            seconds_per_action=1.0,
            parameters={"projectairsim_scene_dir": str(CONFIG)},
        )
    except ConfigError as error:
        if "client, which lives in" not in str(error):
            raise
        assert f"lives in {venv}" in str(error) and f"{venv}/bin/python" in str(error)
    else:
        pytest.skip(f"the {backend} client is importable here")
