"""Settings of the remote backends, built from the bridge's parameters (no client needed).

The parameter table (``params.NODE_PARAMETERS["sim_bridge"]``) is the one source of every
default, bound and description: values the bridge did not pass take the table's defaults, and
every value is checked against its declaration, so a wrong type or range names the parameter.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from aerialdojo.errors import ConfigError
from aerialdojo.params import NODE_PARAMETERS, ParamValue
from aerialdojo.sim.remote.connection import CallPolicy
from aerialdojo.sim.remote.frames import MapOffset

#: Back-off before a second connection attempt, seconds (doubled before each further one).
CONNECT_BACKOFF_S = 0.5

_BRIDGE = {spec.name: spec for spec in NODE_PARAMETERS["sim_bridge"]}
#: Parameters every ROS node has, set by aerialdojo rather than declared in the table.
_ROS_PARAMETERS = frozenset({"use_sim_time"})


def bridge_parameters(values: Mapping[str, Any]) -> dict[str, ParamValue]:
    """Every bridge parameter: the given values, the table's defaults for the others.

    Raises:
        ConfigError: a name the bridge does not declare, or a value of the wrong type or out
            of its bounds; the message names ``sim_bridge.<parameter>``.
    """
    unknown = sorted(set(values) - set(_BRIDGE) - _ROS_PARAMETERS)
    if unknown:
        raise ConfigError(f"sim_bridge has no parameter(s) {', '.join(unknown)}")
    return {
        name: spec.check(values.get(name, spec.default), f"sim_bridge.{name}")
        for name, spec in _BRIDGE.items()
    }


def _text(values: Mapping[str, ParamValue], name: str) -> str:
    return str(values[name])


def _integer(values: Mapping[str, ParamValue], name: str) -> int:
    value = values[name]
    assert isinstance(value, int)  # checked against the table
    return value


def _seconds(values: Mapping[str, ParamValue], name: str) -> float:
    value = values[name]
    assert isinstance(value, float)  # checked against the table
    return value


def call_policy(values: Mapping[str, ParamValue]) -> CallPolicy:
    """The timeout and attempts of one server request (``server_*`` parameters)."""
    return CallPolicy(
        timeout_s=_seconds(values, "server_timeout_s"),
        attempts=_integer(values, "server_attempts"),
        backoff_s=CONNECT_BACKOFF_S,
    )


@dataclass(frozen=True, kw_only=True)
class ProjectAirSimSettings:
    """Where the server is and how the backend uses it (the bridge's parameters).

    Attributes:
        host: server address.
        topics_port: NNG pair socket of the topics.
        services_port: NNG request/reply socket of the services.
        scene_dir: directory of ``scene_<name>.jsonc`` scene configs and their robot configs.
        capture_interval_s: simulated time between two captures of a camera.
        scene_load_timeout_s: longest wait for a scene load.
        frame_timeout_s: longest wall-clock wait for the fresh frames of one observation set.
        policy: timeout of every other request, and connection attempts.
    """

    host: str
    topics_port: int
    services_port: int
    scene_dir: str
    capture_interval_s: float
    scene_load_timeout_s: float
    frame_timeout_s: float
    policy: CallPolicy

    @classmethod
    def from_parameters(cls, parameters: Mapping[str, Any]) -> ProjectAirSimSettings:
        """Settings from the bridge's parameter values (missing ones take the table's
        defaults).

        Raises:
            ConfigError: an unknown parameter or a value of the wrong type or out of range.
        """
        values = bridge_parameters(parameters)
        return cls(
            host=_text(values, "server_host"),
            topics_port=_integer(values, "projectairsim_topics_port"),
            services_port=_integer(values, "projectairsim_services_port"),
            scene_dir=_text(values, "projectairsim_scene_dir"),
            capture_interval_s=_seconds(values, "capture_interval_s"),
            scene_load_timeout_s=_seconds(values, "scene_load_timeout_s"),
            frame_timeout_s=_seconds(values, "frame_timeout_s"),
            policy=call_policy(values),
        )


@dataclass(frozen=True, kw_only=True)
class CarlaAirSettings:
    """Where CARLA-Air runs and how the backend drives it (the bridge's parameters).

    Attributes:
        host: server address (CARLA and AirSim run in one process).
        carla_port: CARLA's RPC port.
        airsim_port: AirSim's RPC port.
        map_name: the CARLA map of the run; the only scene served.
        offset: AirSim's origin in that map.
        fixed_delta_s: simulated time of one synchronous tick.
        ugv_blueprint: blueprint of the ground vehicle.
        benchmark: whose rigs and actions the agents get (``aerialdojo`` or ``agos``).
        airsim_vehicle: AirSim vehicle name of the UAV ("" for the first).
        traffic: ``remove`` or ``synchronous``: what becomes of the launcher's traffic.
        traffic_manager_port: port of the traffic manager driving that traffic.
        seed: seed of the traffic manager (``synchronous``).
        frame_timeout_s: longest wall-clock wait for the frames of one observation set.
        policy: timeout of one request, and connection attempts.
    """

    host: str
    carla_port: int
    airsim_port: int
    map_name: str
    offset: MapOffset
    fixed_delta_s: float
    ugv_blueprint: str
    benchmark: str
    airsim_vehicle: str
    traffic: str
    traffic_manager_port: int
    seed: int
    frame_timeout_s: float
    policy: CallPolicy

    @classmethod
    def from_parameters(cls, parameters: Mapping[str, Any]) -> CarlaAirSettings:
        """Settings from the bridge's parameter values (missing ones take the table's
        defaults).

        Raises:
            ConfigError: an unknown parameter or a value of the wrong type or out of range.
        """
        values = bridge_parameters(parameters)
        offset = values["carla_air_map_offset"]
        assert isinstance(offset, list)  # checked against the table
        return cls(
            host=_text(values, "server_host"),
            carla_port=_integer(values, "carla_port"),
            airsim_port=_integer(values, "airsim_port"),
            map_name=_text(values, "carla_air_map"),
            offset=MapOffset.from_list(
                [float(v) for v in offset], "sim_bridge.carla_air_map_offset"
            ),
            fixed_delta_s=_seconds(values, "carla_air_fixed_delta_s"),
            ugv_blueprint=_text(values, "carla_air_ugv_blueprint"),
            benchmark=_text(values, "carla_air_benchmark"),
            airsim_vehicle=_text(values, "airsim_vehicle"),
            traffic=_text(values, "carla_air_traffic"),
            traffic_manager_port=_integer(values, "carla_air_traffic_manager_port"),
            seed=_integer(values, "seed"),
            frame_timeout_s=_seconds(values, "frame_timeout_s"),
            policy=call_policy(values),
        )
