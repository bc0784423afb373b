"""Settings of the remote backends, read from the bridge's parameters (no client needed)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from aerialdojo.sim.remote.connection import CallPolicy, setting
from aerialdojo.sim.remote.frames import TOWN10HD_OFFSET, MapOffset

#: Back-off before a second connection attempt, seconds.
CONNECT_BACKOFF_S = 0.5


def call_policy(parameters: Mapping[str, Any]) -> CallPolicy:
    """The timeout and attempts of the ``server_*`` parameters.

    Raises:
        ConfigError: a value of the wrong type or out of range.
    """
    default = CallPolicy()
    return CallPolicy(
        timeout_s=setting(parameters, "server_timeout_s", default.timeout_s),
        attempts=setting(parameters, "server_attempts", default.attempts),
        backoff_s=CONNECT_BACKOFF_S,
    )


@dataclass(frozen=True, kw_only=True)
class ProjectAirSimSettings:
    """Where the server is and how the backend uses it (the bridge's parameters).

    Attributes:
        host: server address.
        topics_port: NNG pair socket of the topics (server default 8989).
        services_port: NNG request/reply socket of the services (server default 8990).
        scene_dir: directory of ``scene_<name>.jsonc`` scene configs and their robot configs.
        capture_interval_s: simulated time between two captures of a camera.
        policy: timeouts and connection attempts.
    """

    host: str = "127.0.0.1"
    topics_port: int = 8989
    services_port: int = 8990
    scene_dir: str = ""
    capture_interval_s: float = 1.0 / 15.0
    policy: CallPolicy = field(default_factory=CallPolicy)

    @classmethod
    def from_parameters(cls, parameters: Mapping[str, Any]) -> ProjectAirSimSettings:
        """Settings from the bridge's parameter values (missing ones take the defaults).

        Raises:
            ConfigError: a value of the wrong type or out of range.
        """
        default = cls()
        return cls(
            host=setting(parameters, "server_host", default.host),
            topics_port=setting(parameters, "projectairsim_topics_port", default.topics_port),
            services_port=setting(parameters, "projectairsim_services_port", default.services_port),
            scene_dir=setting(parameters, "projectairsim_scene_dir", default.scene_dir),
            capture_interval_s=setting(
                parameters, "capture_interval_s", default.capture_interval_s
            ),
            policy=call_policy(parameters),
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
        airsim_vehicle: AirSim vehicle name of the UAV ("" for the first).
        policy: timeouts and connection attempts.
    """

    host: str = "127.0.0.1"
    carla_port: int = 2000
    airsim_port: int = 41451
    map_name: str = "Town10HD"
    offset: MapOffset = TOWN10HD_OFFSET
    fixed_delta_s: float = 0.05
    ugv_blueprint: str = "vehicle.tesla.model3"
    airsim_vehicle: str = ""
    policy: CallPolicy = field(default_factory=CallPolicy)

    @classmethod
    def from_parameters(cls, parameters: Mapping[str, Any]) -> CarlaAirSettings:
        """Settings from the bridge's parameter values (missing ones take the defaults).

        Raises:
            ConfigError: a value of the wrong type or out of range.
        """
        default = cls()
        offset = setting(
            parameters,
            "carla_air_map_offset",
            [default.offset.dx, default.offset.dy, default.offset.dz],
        )
        return cls(
            host=setting(parameters, "server_host", default.host),
            carla_port=setting(parameters, "carla_port", default.carla_port),
            airsim_port=setting(parameters, "airsim_port", default.airsim_port),
            map_name=setting(parameters, "carla_air_map", default.map_name),
            offset=MapOffset.from_list(offset, "sim_bridge.carla_air_map_offset"),
            fixed_delta_s=setting(parameters, "carla_air_fixed_delta_s", default.fixed_delta_s),
            ugv_blueprint=setting(parameters, "carla_air_ugv_blueprint", default.ugv_blueprint),
            airsim_vehicle=setting(parameters, "airsim_vehicle", default.airsim_vehicle),
            policy=call_policy(parameters),
        )
