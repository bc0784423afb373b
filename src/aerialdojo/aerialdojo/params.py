"""Every node parameter in one place: name, default, description and constraints.

Nodes declare their parameters from these tables (with descriptors, so ``ros2 param describe``
explains them); the CLI and the launch file validate a config file against the same tables
before any process starts, so a bad file fails with the file and field named, and defaults are
never repeated between launch file, CLI and node.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from aerialdojo.agents.plugins import PLUGIN_PATTERN
from aerialdojo.agos.vocabulary import (
    ABLATIONS,
    ANNOTATION_BUDGET,
    CONFIRMATION_BUDGET,
    MODE_AGENT,
    MODES,
    settings_problems,
)
from aerialdojo.backends import backend_names
from aerialdojo.errors import ConfigError
from aerialdojo.protocols.referee import REFUSALS_ALLOWED
from aerialdojo.protocols.settings import OBSERVATIONS, PAPER_OBSERVATION, PAPER_ODOMETRY
from aerialdojo.robot.vehicles import vehicle_names
from aerialdojo.run_contract import run_id_problem

ParamValue = bool | int | float | str | list[str] | list[float] | list[int]


@dataclass(frozen=True, kw_only=True)
class ParamSpec:
    """One declared parameter.

    Attributes:
        name: parameter name.
        default: default value; its Python type fixes the parameter type (an empty list
            stands for a list of strings).
        description: shown by ``ros2 param describe``.
        choices: legal values of a string parameter (empty: any).
        pattern: a regular expression a string outside ``choices`` may match instead.
        minimum: inclusive lower bound of a number or of every element of a number list.
        above: exclusive lower bound (a value must be greater).
        maximum: inclusive upper bound.
        item_type: element type of a list whose default is empty (``float`` for a number
            list); an empty default otherwise stands for a list of strings.
        refuse: says why a value is refused (None: it is not), for rules the fields above
            cannot state (a run id is one directory name).

    Every number must be finite: NaN or infinity in a config is a mistake, refused before
    anything starts rather than failing a node mid-run; every integer must fit the 64 bits
    a ROS parameter carries.
    """

    name: str
    default: ParamValue
    description: str
    choices: tuple[str, ...] = ()
    pattern: str = ""
    minimum: float | None = None
    above: float | None = None
    maximum: float | None = None
    item_type: type = str
    refuse: Callable[[Any], str | None] | None = None

    def check(self, value: Any, where: str) -> ParamValue:
        """Return ``value`` converted to this parameter's type.

        Args:
            value: the value read from a config file or command line.
            where: what to name in errors, e.g. ``"config/eval.yaml: task_manager.suite"``.

        Raises:
            ConfigError: wrong type, empty list, a choice or bound violated.
        """
        example = self.default
        if example == [] and isinstance(value, list) and value:
            example = _EMPTY_LIST_EXAMPLES[self.item_type]
        checked = _coerce(example, value, where)
        matches = bool(self.pattern) and re.fullmatch(self.pattern, str(checked)) is not None
        if self.choices and checked not in self.choices and not matches:
            also = f", or {self.pattern_text}" if self.pattern else ""
            raise ConfigError(f"{where}: {checked!r} is not one of {', '.join(self.choices)}{also}")
        refused = self.refuse(checked) if self.refuse is not None else None
        if refused:
            raise ConfigError(f"{where}: {checked!r} {refused}")
        numbers = checked if isinstance(checked, list) else [checked]
        for number in numbers:
            if isinstance(number, bool) or not isinstance(number, int | float):
                continue
            if not math.isfinite(number):
                raise ConfigError(f"{where}: {number!r} is not a finite number")
            if isinstance(number, int) and not _INT64_MIN <= number <= _INT64_MAX:
                raise ConfigError(
                    f"{where}: {number!r} does not fit the 64-bit integer of a ROS parameter"
                )
            if self.minimum is not None and number < self.minimum:
                raise ConfigError(f"{where}: {number!r} is below the minimum {self.minimum:g}")
            if self.above is not None and number <= self.above:
                raise ConfigError(f"{where}: {number!r} must be greater than {self.above:g}")
            if self.maximum is not None and number > self.maximum:
                raise ConfigError(f"{where}: {number!r} is above the maximum {self.maximum:g}")
        return checked

    @property
    def pattern_text(self) -> str:
        """How errors name the pattern."""
        return "package.module:ClassName" if self.pattern == PLUGIN_PATTERN else self.pattern


def _coerce(default: ParamValue, value: Any, where: str) -> ParamValue:
    expected = type(default).__name__
    if isinstance(default, bool):
        if isinstance(value, bool):
            return value
    elif isinstance(default, int):
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif isinstance(default, float):
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
    elif isinstance(default, str):
        if isinstance(value, str):
            return value
    elif isinstance(value, list):
        if not value:
            if default:
                # rcl cannot carry an empty list (its type is unknown): it would silently fall
                # back to the default, so refuse instead of pretending.
                raise ConfigError(f"{where}: an empty list cannot be passed as a ROS parameter")
            return []
        element = type(default[0]).__name__ if default else type(value[0]).__name__
        items = [_coerce(_EXAMPLE[element], item, f"{where}[{i}]") for i, item in enumerate(value)]
        return items  # type: ignore[return-value]
    raise ConfigError(f"{where}: expected {expected}, got {type(value).__name__} {value!r}")


_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_EXAMPLE: dict[str, ParamValue] = {"str": "", "float": 0.0, "int": 0, "bool": False}
#: What the elements of a list parameter with an empty default look like, by ``item_type``.
_EMPTY_LIST_EXAMPLES: dict[type, ParamValue] = {str: [""], float: [0.0], int: [0]}

P = ParamSpec


def _agos_agent_parameters(policy: str) -> tuple[ParamSpec, ...]:
    """The parameters both AGOS agent nodes declare; ``policy`` describes the policy."""
    return (
        P(
            name="policy",
            default="colour_shape",
            choices=("colour_shape", "vlm"),
            pattern=PLUGIN_PATTERN,
            description=f"{policy}: colour_shape (the image heuristics), vlm (a "
            "vision-language model under the AGOS-Bench role prompts, docs/vlm_agents.md) or "
            "package.module:ClassName (any class implementing "
            "aerialdojo.agos.policies.AgosPolicy)",
        ),
        P(name="seed", default=0, minimum=0, description="Seed of the policy's choices"),
        P(
            name="observation_timeout_s",
            default=60.0,
            minimum=0.1,
            description="Longest wait for the observation set a step produced, seconds",
        ),
        *_vlm_parameters("WAIT"),
    )


def _vlm_parameters(fallback: str) -> tuple[ParamSpec, ...]:
    """The model agent's parameters (``policy: vlm``; docs/vlm_agents.md)."""
    return (
        P(
            name="vlm_base_url",
            default="http://127.0.0.1:8000/v1",
            description="OpenAI-compatible server (vLLM, SGLang, llama.cpp, Ollama, hosted)",
        ),
        P(name="vlm_model", default="", description="Model name the server serves"),
        P(
            name="vlm_api_key_env",
            default="OPENAI_API_KEY",
            description="NAME of the environment variable holding the API key (never the key); "
            "unset: no key",
        ),
        P(
            name="vlm_timeout_s",
            default=60.0,
            minimum=0.1,
            description="Longest wait for one reply, seconds; a server that hangs is retried, "
            "then an infrastructure failure",
        ),
        P(
            name="vlm_max_retries",
            default=3,
            minimum=0,
            description="Further attempts after a 429, 5xx, timeout or refused connection",
        ),
        P(
            name="vlm_backoff_s",
            default=1.0,
            minimum=0.0,
            description="First wait between attempts without Retry-After, doubled each time",
        ),
        P(
            name="vlm_max_concurrency",
            default=1,
            minimum=1,
            description="Requests in flight at once to one server from this node",
        ),
        P(name="vlm_temperature", default=0.0, minimum=0.0, description="Sampling temperature"),
        P(name="vlm_max_tokens", default=512, minimum=1, description="Longest reply, tokens"),
        P(
            name="vlm_prompt_dir",
            default="",
            description="Edited copy of a prompt template directory; empty: the shipped ones",
        ),
        P(
            name="vlm_repair_turns",
            default=2,
            minimum=0,
            description="Repair requests after a reply naming no legal action (not decisions)",
        ),
        P(
            name="vlm_fallback",
            default=fallback,
            description="Decision taken when no reply is legal after the repair turns",
        ),
        P(name="vlm_history", default=8, minimum=0, description="Previous decisions shown"),
        P(
            name="vlm_image_format",
            default="png",
            choices=("png", "jpeg"),
            description="Encoding of RGB views sent to the model (depth: always PNG)",
        ),
        P(
            name="vlm_depth_max_m",
            default=50.0,
            minimum=1.0,
            description="Depth shown as grey levels from white at 0 m to black at this range",
        ),
        P(
            name="vlm_price_input_per_mtok",
            default=0.0,
            minimum=0.0,
            description="Price of a million input tokens, for the report's cost",
        ),
        P(
            name="vlm_price_output_per_mtok",
            default=0.0,
            minimum=0.0,
            description="Price of a million output tokens, for the report's cost",
        ),
        P(
            name="transcript_dir",
            default="",
            description="Where requests and replies are recorded; set by aerialdojo eval to "
            "the run's transcripts/",
        ),
        P(
            name="replay_transcripts",
            default="",
            description="A recorded run directory whose replies are replayed instead of asking "
            "a server (aerialdojo eval --replay-transcripts)",
        ),
    )


NODE_PARAMETERS: dict[str, tuple[ParamSpec, ...]] = {
    "sim_bridge": (
        P(
            name="backend",
            default="embedded",
            choices=backend_names(),
            description="Simulator backend the bridge drives; projectairsim and carla_air run "
            "the bridge in .venv-projectairsim / .venv-carla-air (docs/simulators.md); agos "
            "runs AGOS towns and actions on the embedded simulator (docs/agos.md); citynav the "
            "embedded CityNav cities, pointcloud coloured point clouds such as SensatUrban's "
            "(docs/citynav.md)",
        ),
        P(
            name="seed",
            default=0,
            minimum=0,
            description="Seed of procedural scene generation (embedded) and of CARLA-Air's "
            "traffic manager (carla_air with carla_air_traffic: synchronous)",
        ),
        P(name="agents", default=["uav"], description="Agents whose sensors are published"),
        P(
            name="image_width",
            default=256,
            minimum=1,
            maximum=4096,
            description="Width of every camera image, pixels",
        ),
        P(
            name="image_height",
            default=256,
            minimum=1,
            maximum=4096,
            description="Height of every camera image, pixels",
        ),
        P(
            name="fov_deg",
            default=90.0,
            minimum=1.0,
            maximum=179.0,
            description="Horizontal field of view of every camera, degrees",
        ),
        P(
            name="publish_point_clouds",
            default=False,
            description="Also publish each view's depth as sensor_msgs/PointCloud2 on "
            "<agent>/camera/<view>/points (optical frame), for RViz and Foxglove 3D panels",
        ),
        P(
            name="agent_radius_m",
            default=0.25,
            minimum=0.01,
            maximum=5.0,
            description="Collision radius of the agent's swept sphere, metres",
        ),
        P(
            name="seconds_per_action",
            default=1.0,
            minimum=0.001,
            description="Simulation time one discrete action takes, seconds",
        ),
        P(
            name="server_host",
            default="127.0.0.1",
            description="Host of the simulator server (projectairsim, carla_air)",
        ),
        P(
            name="server_timeout_s",
            default=10.0,
            minimum=0.1,
            maximum=600.0,
            description="Longest wait for one answer of the simulator server (every request "
            "but a scene load), seconds; keep it below the task manager's sim_timeout_s",
        ),
        P(
            name="scene_load_timeout_s",
            default=300.0,
            minimum=1.0,
            maximum=3600.0,
            description="Longest wait for a ProjectAirSim scene load (LoadScene), seconds; the "
            "client's own default is 300 s; keep the task manager's sim_timeout_s above it",
        ),
        P(
            name="frame_timeout_s",
            default=10.0,
            minimum=0.1,
            maximum=600.0,
            description="Longest wait for the frames of one observation set, seconds of wall "
            "time (projectairsim: a fresh capture of every view after the action, stepping "
            "the clock on; carla_air: AirSim's images while ticking, the UGV's cameras)",
        ),
        P(
            name="server_attempts",
            default=3,
            minimum=1,
            maximum=20,
            description="Tries of a failing connection to the simulator server before it is "
            "an infrastructure failure",
        ),
        P(
            name="capture_interval_s",
            default=1.0 / 15.0,
            minimum=0.001,
            maximum=10.0,
            description="Simulated time between two captures of a camera, seconds "
            "(projectairsim; 1/15 s is the paper's 15 FPS)",
        ),
        P(
            name="projectairsim_topics_port",
            default=8989,
            minimum=1,
            maximum=65535,
            description="ProjectAirSim topic (NNG pair) port",
        ),
        P(
            name="projectairsim_services_port",
            default=8990,
            minimum=1,
            maximum=65535,
            description="ProjectAirSim service (NNG request/reply) port",
        ),
        P(
            name="projectairsim_scene_dir",
            default="",
            description="Directory of ProjectAirSim scene configs scene_<name>.jsonc and the "
            "robot configs they name; each agent is the robot actor of its name",
        ),
        P(
            name="carla_port",
            default=2000,
            minimum=1,
            maximum=65535,
            description="CARLA server port (carla_air: world, ground vehicle, its cameras)",
        ),
        P(
            name="airsim_port",
            default=41451,
            minimum=1,
            maximum=65535,
            description="AirSim RPC port inside CARLA-Air (carla_air: the UAV)",
        ),
        P(
            name="carla_air_map",
            default="Town10HD",
            description="CARLA map of the run (carla_air); the only scene the backend serves",
        ),
        P(
            name="carla_air_map_offset",
            default=[172.20, -183.86, 27.45],
            minimum=-100000.0,
            maximum=100000.0,
            description="AirSim origin in this map: airsim = (carla_x + dx, carla_y + dy, "
            "-carla_z + dz), [dx, dy, dz] metres (Town10HD default; docs/simulators.md)",
        ),
        P(
            name="carla_air_fixed_delta_s",
            default=0.05,
            minimum=0.001,
            maximum=1.0,
            description="Simulated time of one synchronous-mode tick (carla_air), seconds",
        ),
        P(
            name="carla_air_ugv_blueprint",
            default="vehicle.tesla.model3",
            description="Blueprint of the ground vehicle spawned for the ugv agent (carla_air)",
        ),
        P(
            name="carla_air_benchmark",
            default="aerialdojo",
            choices=("aerialdojo", "agos"),
            description="Whose rigs and actions the agents get on CARLA-Air (carla_air): "
            "aerialdojo, the four AerialDojo views and its motions; agos, AGOS-Bench's UAV "
            "nadir camera, the UGV's front view and six-view ring as CARLA sensors, and the "
            "AGOS decisions on the map's road graph and UAV grid",
        ),
        P(
            name="pointcloud_dir",
            default="",
            description="Directory searched (recursively) for <scene>.ply point clouds "
            "(pointcloud; SensatUrban layout, docs/citynav.md)",
        ),
        P(
            name="pointcloud_voxel_m",
            default=0.5,
            minimum=0.05,
            maximum=10.0,
            description="Edge of the voxels a point cloud is thinned to before its points are "
            "splatted (pointcloud), metres",
        ),
        P(
            name="airsim_vehicle",
            default="",
            description="AirSim vehicle name of the uav agent (carla_air); empty: the first",
        ),
        P(
            name="carla_air_traffic",
            default="remove",
            choices=("remove", "synchronous"),
            description="What becomes of the traffic CARLA-Air's launcher starts (carla_air): "
            "remove destroys every vehicle and walker but the bridge's; synchronous keeps "
            "the cars, switches their traffic manager to the world's ticks with the bridge's "
            "seed, and removes the walkers (the launcher steers them on its wall clock)",
        ),
        P(
            name="carla_air_traffic_manager_port",
            default=8000,
            minimum=1,
            maximum=65535,
            description="Port of the traffic manager that drives that traffic (carla_air; "
            "auto_traffic.py's --tm-port)",
        ),
        P(
            name="suite",
            default="",
            description="Suite of the run, set by aerialdojo from the task manager's: a robot "
            "backend flies only inside its site's geofence",
        ),
        P(
            name="robot_speed_m_s",
            default=1.0,
            above=0.0,
            maximum=20.0,
            description="robot: speed asked of the safety gate for every goal, m/s (at most "
            "its speed cap); the time allowance of an action is computed with it",
        ),
        P(
            name="robot_yaw_rate_deg_s",
            default=30.0,
            above=0.0,
            maximum=720.0,
            description="robot: heading rate the vehicle turns at (PX4 MPC_YAWRAUTO_MAX), "
            "deg/s, for the time allowance of a turn",
        ),
        P(
            name="robot_allowance_factor",
            default=1.5,
            minimum=1.0,
            maximum=20.0,
            description="robot: margin on an action's motion time (distance / speed + turn / "
            "yaw rate) for acceleration and tracking",
        ),
        P(
            name="robot_settle_s",
            default=3.0,
            minimum=0.0,
            maximum=60.0,
            description="robot: time added to every allowance to settle within the "
            "tolerances, seconds; a miss holds the robot and is an infrastructure failure",
        ),
        P(
            name="robot_position_tolerance_m",
            default=0.5,
            above=0.0,
            maximum=10.0,
            description="robot: arrival position error below this, metres (PX4's goto "
            "example: 0.5)",
        ),
        P(
            name="robot_speed_tolerance_m_s",
            default=0.3,
            above=0.0,
            maximum=5.0,
            description="robot: arrival speed below this, m/s (PX4's goto example: 0.3)",
        ),
        P(
            name="robot_yaw_tolerance_deg",
            default=7.0,
            above=0.0,
            maximum=180.0,
            description="robot: arrival heading error below this, degrees (PX4's goto example: 7)",
        ),
        P(
            name="robot_planar",
            default=False,
            description="robot: ground robots: arrival judged on the horizontal position, "
            "the episode's height kept for scoring",
        ),
        P(
            name="robot_pass_radius_m",
            default=1.0,
            above=0.0,
            maximum=20.0,
            description="robot: how close an intermediate waypoint of a path (a road drive, a "
            "split leg) must come before the next is sent, metres",
        ),
        P(
            name="robot_max_leg_m",
            default=5.0,
            above=0.0,
            maximum=100.0,
            description="robot: goals farther apart than this are split (keep it within the "
            "safety gate's step-size cap), metres",
        ),
        P(
            name="robot_goal_service",
            default="safety/goal",
            description="robot: the safety gate's VehicleGoal service (relative names are in "
            "each agent's namespace)",
        ),
        P(
            name="robot_hold_service",
            default="safety/hold",
            description="robot: the safety gate's hold service (std_srvs/Trigger)",
        ),
        P(
            name="robot_status_topic",
            default="safety/status",
            description="robot: the safety gate's SafetyStatus topic",
        ),
        P(
            name="robot_odometry_topic",
            default="vehicle/odom",
            description="robot: the vehicle's nav_msgs/Odometry in the site frame (ENU, map): "
            "MAVROS /mavros/local_position/odom, or the PX4 gate's vehicle/odom",
        ),
        P(
            name="robot_odometry_timeout_s",
            default=1.0,
            above=0.0,
            maximum=10.0,
            description="robot: odometry older than this is stale (hold, infrastructure "
            "failure), seconds",
        ),
        P(
            name="robot_views",
            default=["front"],
            description="robot: the camera views relayed to the agent from the drivers' topics "
            "(robot_image_topics, robot_depth_topics, robot_camera_info_topics: one each)",
        ),
        P(
            name="robot_image_topics",
            default=["/camera/color/image_raw"],
            description="robot: each view's colour image topic (rgb8 or bgr8, best-effort "
            "drivers welcome)",
        ),
        P(
            name="robot_depth_topics",
            default=["/camera/depth/image_rect_raw"],
            description="robot: each view's depth topic, aligned to its colour image "
            "(32FC1 metres or 16UC1 millimetres)",
        ),
        P(
            name="robot_camera_info_topics",
            default=["/camera/color/camera_info"],
            description="robot: each view's colour camera_info topic",
        ),
        P(
            name="robot_frame_timeout_s",
            default=2.0,
            above=0.0,
            maximum=60.0,
            description="robot: longest wait after an arrival for a fresh frame on every "
            "camera topic, seconds (then an infrastructure failure)",
        ),
        P(
            name="robot_contact_topic",
            default="",
            description="robot: a std_msgs/Bool contact sensor; true during a motion is a "
            "collision; empty: none",
        ),
        P(
            name="robot_proximity_m",
            default=0.0,
            minimum=0.0,
            maximum=20.0,
            description="robot: a valid depth closer than this in robot_proximity_view is a "
            "collision, metres; 0: off",
        ),
        P(
            name="robot_proximity_view",
            default="front",
            description="robot: the view whose depth robot_proximity_m watches",
        ),
        P(
            name="robot_mark_topic",
            default="operator/collision",
            description="robot: the operator's collision mark (std_msgs/Empty, from the "
            "console): the step in progress, or the next, collided",
        ),
        P(
            name="robot_service_timeout_s",
            default=2.0,
            above=0.0,
            maximum=60.0,
            description="robot: longest wait for the safety gate to answer a goal or a hold",
        ),
    ),
    "task_manager": (
        P(
            name="suite",
            default="aerialdojo_mini",
            description="Shipped suite name or path to a suite.json",
        ),
        P(
            name="episodes",
            default=[],
            description="Episode ids to run; empty: the selection below",
        ),
        P(
            name="filter",
            default="",
            description="Episode filter, e.g. 'split=test,setting=base'; empty: the suite's "
            "default selection",
        ),
        P(
            name="max_episodes",
            default=0,
            minimum=0,
            description="Run at most this many of the selected episodes; 0: all",
        ),
        P(
            name="auto_run",
            default=True,
            description="Serve the selected episodes one after another (false: wait for "
            "start_episode calls)",
        ),
        P(
            name="sim_timeout_s",
            default=60.0,
            minimum=0.1,
            description="Longest wait for the simulator bridge to answer, seconds",
        ),
        P(
            name="agent_timeout_s",
            default=300.0,
            minimum=1.0,
            description="Longest wait for the agents' next action, wall seconds: then the "
            "episode ends as the agent's failure (termination agent_timeout, scored), or as "
            "an infrastructure failure, rerun, where an agent reported a fault of its own "
            "services (/aerialdojo/agent_faults) or its node is gone",
        ),
        P(
            name="refusals_allowed",
            default=REFUSALS_ALLOWED,
            minimum=0,
            description="Refused steps in a row an agent may follow with another request "
            "(each refusal goes back to it with the referee's reason and uses no budget); the "
            "next refusal ends the episode as the agent's failure (termination "
            "invalid_action, scored: docs/protocols/)",
        ),
        P(
            name="max_attempts",
            default=3,
            minimum=1,
            description="Runs of an episode before an infrastructure failure is final",
        ),
        P(
            name="observation",
            default=PAPER_OBSERVATION,
            choices=tuple(OBSERVATIONS),
            description="AerialDojo: what the agent is given, front (the front RGB-D view, "
            "the evaluated prompt's: AerialDojo-200K, appendix A) or four_views (front, left, "
            "right, down, section 3.1)",
        ),
        P(
            name="odometry",
            default=PAPER_ODOMETRY,
            description="AerialDojo: give the agent odometry relative to its start (the "
            "paper's observation interface excludes GPS and localization: false)",
        ),
        P(
            name="mode",
            default=MODE_AGENT,
            choices=MODES,
            description="AGOS method (AGOS-Bench, Table 3): agent (AGOS-Agent: candidates, "
            "E2A, RGPP) or baseline (no candidate tools; coordination by messages)",
        ),
        P(
            name="ablation",
            default="full",
            choices=ABLATIONS,
            description="AGOS tools (AGOS-Bench, appendix A.5): full, no_e2a (candidate at "
            "the UAV's footprint), no_rgpp (no GO_TO_CANDIDATE), no_both; mode agent only",
        ),
        P(
            name="annotation_budget",
            default=ANNOTATION_BUDGET,
            minimum=1,
            description="AGOS: ANNOTATE_CANDIDATE decisions the UAV may make per episode "
            "(A of 'annotations used a/A', AGOS-Bench, appendix A.4.3)",
        ),
        P(
            name="confirmation_budget",
            default=CONFIRMATION_BUDGET,
            minimum=1,
            description="AGOS: CONFIRM decisions the UGV may make per episode; 1: a false "
            "CONFIRM ends the episode as a failure (AGOS-Bench, 'Verify')",
        ),
        P(
            name="require_fresh_observation",
            default=True,
            description="AGOS: a CONFIRM is valid only right after the UGV's STOP_OBSERVE "
            "(AGOS-Bench, appendix A.2.3, 'when this requirement is enabled')",
        ),
        P(
            name="action_budget",
            default=0,
            minimum=0,
            description="Actions allowed per episode, Stop included, where the benchmark "
            "leaves the budget to the run (CityNav); 0: each episode's own",
        ),
        P(
            name="operator_gate",
            default=False,
            description="Robots: every attempt waits for the operator's console "
            "(/aerialdojo/operator/prompt, /aerialdojo/operator/start): place, confirm, engage, "
            "start; a refused start (a robot placed off its start) is announced and tried again",
        ),
        P(
            name="ready_timeout_s",
            default=120.0,
            minimum=1.0,
            description="Longest wait for agents, evaluator and bridge before the first episode",
        ),
        P(
            name="await_viewers",
            default=[],
            description="Nodes (by name) the first episode also waits for until each subscribes "
            "to the task and to every topic of the bridge, so it sees the run from its first "
            "frame; aerialdojo eval --live adds its live view. Only for viewers that subscribe "
            "to topics as they appear (foxglove_bridge waits for a client)",
        ),
        P(
            name="discovery",
            default="localhost",
            choices=("localhost", "subnet"),
            description="Where the run's nodes find each other. localhost (default): its DDS "
            "traffic stays on this host (ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST, unless the "
            "environment names another range). subnet: a robot or multi-host run opts out, "
            "with SUBNET discovery and the multi-host transport profile (config/transport/)",
        ),
    ),
    "uav_agent": (
        P(
            name="policy",
            default="colour_seeker",
            choices=("colour_seeker", "oracle", "vlm"),
            pattern=PLUGIN_PATTERN,
            description="Policy acting on the UAV's own observations and the goal: "
            "colour_seeker (the baseline), oracle (replays the reference actions: privileged, "
            "it proves the harness), vlm (a vision-language model, docs/vlm_agents.md) or "
            "package.module:ClassName (any class implementing "
            "aerialdojo.agents.observation.Policy)",
        ),
        P(
            name="oracle_suite",
            default="",
            description="Suite whose reference actions the oracle replays: ground truth, so a "
            "run that uses it is reported as privileged; empty: the task manager's suite",
        ),
        P(name="seed", default=0, minimum=0, description="Seed of the policy's exploration"),
        P(
            name="views",
            default=list(OBSERVATIONS["four_views"]),
            description="Camera views the node subscribes to; of these, the policy is given "
            "the ones the task names (task_manager.observation). A graph (aerialdojo eval, "
            "eval.launch.py) subscribes to those alone unless this names others",
        ),
        P(
            name="observation_timeout_s",
            default=60.0,
            minimum=0.1,
            description="Longest wait for the observation set a step produced, seconds",
        ),
        P(
            name="collision_radius_m",
            default=0.25,
            minimum=0.01,
            maximum=5.0,
            description="The agent's collision radius as the run uses it, metres, which the "
            "model agent's prompt states (AerialDojo-200K, appendix A); aerialdojo eval and "
            "the launch files fill it from sim_bridge.agent_radius_m",
        ),
        *_vlm_parameters("Stop"),
    ),
    "citynav_agent": (
        P(
            name="policy",
            default="gsm",
            choices=("gsm", "colour", "oracle"),
            pattern=PLUGIN_PATTERN,
            description="CityNav policy on the GNSS pose, the nadir view and the GSM: gsm (go "
            "to the named landmarks, search around them), colour (the colour baseline, no map), "
            "oracle (replays the reference actions: privileged, it proves the harness) or "
            "package.module:ClassName (any class implementing "
            "aerialdojo.agents.observation.Policy: the nadir view and the map-frame pose)",
        ),
        P(
            name="seed",
            default=0,
            minimum=0,
            description="Seed given to a plug-in policy whose constructor takes one",
        ),
        P(
            name="oracle_suite",
            default="",
            description="Suite whose reference actions the oracle replays; empty: the task "
            "manager's suite",
        ),
        P(
            name="maps_dir",
            default="",
            description="Directory of city map files <scene>.json (landmarks from the public "
            "CityNav data, docs/citynav.md); empty: the embedded cities' maps",
        ),
        P(
            name="gsm_resolution_m",
            default=2.0,
            minimum=0.1,
            maximum=50.0,
            description="Cell edge of the geographic semantic map, metres",
        ),
        P(
            name="observation_timeout_s",
            default=60.0,
            minimum=0.1,
            description="Longest wait for the observation set a step produced, seconds",
        ),
    ),
    "agos_uav_agent": _agos_agent_parameters(
        "AGOS UAV policy acting on the nadir view and the reference images"
    ),
    "ugv_agent": _agos_agent_parameters(
        "AGOS UGV policy acting on its front view, six-view ring, the candidates and the "
        "reference images"
    ),
    "operator_console": (
        P(
            name="agents",
            default=["uav"],
            description="The robots the console shows and commands; set by aerialdojo from "
            "the bridge's agents",
        ),
        P(
            name="odometry_topic",
            default="vehicle/odom",
            description="Each robot's odometry (site frame), relative to its agent's namespace "
            "unless absolute; set by aerialdojo from the bridge's robot_odometry_topic",
        ),
        P(
            name="mode",
            default="interactive",
            choices=("interactive", "automatic"),
            description="interactive: the operator types commands (aerialdojo console); "
            "automatic: clear, engage, place and start alone (rehearsals on the simulated "
            "robot and tests only, never a real robot)",
        ),
        P(
            name="placement",
            default="manual",
            choices=("manual", "fly"),
            description="How the automatic operator places a robot at its start: manual (it "
            "must be there already) or fly (through its gate)",
        ),
        P(
            name="deadman_rate_hz",
            default=10.0,
            minimum=1.0,
            maximum=100.0,
            description="Rate of the operator's heartbeat to every gate (safety/deadman), Hz",
        ),
        P(
            name="fly_speed_m_s",
            default=1.0,
            above=0.0,
            maximum=10.0,
            description="Speed of a flight to a start, m/s (at most the gate's cap)",
        ),
        P(
            name="transit_altitude_m",
            default=0.0,
            minimum=0.0,
            maximum=500.0,
            description="Height a flight to a start climbs to first, metres in the site frame; "
            "0: straight there",
        ),
        P(
            name="max_leg_m",
            default=5.0,
            above=0.0,
            maximum=100.0,
            description="Longest leg of a flight to a start (within the gate's step-size cap)",
        ),
        P(
            name="service_timeout_s",
            default=5.0,
            above=0.0,
            maximum=60.0,
            description="Longest wait for a gate or the task manager to answer, seconds",
        ),
    ),
    "evaluator": (
        P(name="output_dir", default="runs", description="Directory that receives runs/<run_id>/"),
        P(
            name="run_id",
            default="",
            description="Name of this run's directory (one directory name, not a path); "
            "empty: a UTC timestamp",
            refuse=lambda run_id: run_id_problem(run_id) if run_id else None,
        ),
        P(
            name="success_radii_m",
            default=[],
            item_type=float,
            above=0.0,
            description="Success radii to score, metres, the first the primary one; empty: "
            "the benchmark's own (AerialDojo-200K 3 and 5 m, CityNav 20 m; AGOS-Bench success "
            "is the checker's verdict, not a radius)",
        ),
        P(
            name="agents",
            default=["uav"],
            description="Agents whose odometry, ground truth and images are recorded",
        ),
        P(name="record_bag", default=True, description="Record the run as a rosbag2 (MCAP) bag"),
        P(
            name="record_image_views",
            default=["front"],
            description=(
                "Camera views whose RGB images go into the bag: a view of every recorded "
                "agent, or agent/view for one agent's (AGOS: uav/down, ugv/front)"
            ),
        ),
        P(
            name="image_decimation",
            default=5,
            minimum=0,
            description="Record every n-th observation set of those views; 0: no images",
        ),
        P(
            name="image_compression",
            default="none",
            choices=("none", "png", "jpeg"),
            description="Record those images as sensor_msgs/CompressedImage on "
            "<topic>/compressed instead of raw",
        ),
        P(
            name="record_gsm",
            default=False,
            description="Record each agent's geographic semantic map (gsm/layers, CityNav) "
            "every image_decimation-th step",
        ),
        P(
            name="exit_when_finished",
            default=True,
            description="Exit after the report of a finished run is written",
        ),
        P(
            name="suite",
            default="",
            description="Suite of the run's episodes, for the report's maps (reference paths, "
            "scene overviews); empty: the task manager's",
        ),
    ),
    "safety_gate": (
        P(
            name="vehicle",
            default="mavros",
            choices=vehicle_names(),
            description='Vehicle adapter the gate commands (docs/robots.md, "Vehicles"): mavros '
            "(pose setpoints to MAVROS or any REP-147-shaped driver), px4 (px4_msgs over "
            "uXRCE-DDS), ugv (cmd_vel closed on odometry)",
        ),
        P(
            name="suite",
            default="",
            description="Suite built from a site (aerialdojo tasks from-site) whose geofence the "
            "gate enforces; set this or site",
        ),
        P(name="site", default="", description="Site file whose geofence the gate enforces"),
        P(
            name="rate_hz",
            default=20.0,
            above=2.0,
            maximum=200.0,
            description="Rate of the keep-alive and setpoint stream, Hz (PX4 and MAVROS need "
            "more than 2 Hz)",
        ),
        P(
            name="realtime_priority",
            default=10,
            minimum=0,
            maximum=99,
            description="SCHED_FIFO priority (1-99) of the thread that sends the keep-alive "
            "and handles the e-stop, the gate's other threads at nice -10 (needs root or "
            "CAP_SYS_NICE; refused, a warning and normal priority); 0: the scheduling the "
            "process was started with",
        ),
        P(
            name="status_rate_hz",
            default=5.0,
            minimum=2.0,
            maximum=100.0,
            description="Rate of safety/status besides every change, Hz",
        ),
        P(
            name="max_speed_m_s",
            default=1.0,
            above=0.0,
            maximum=20.0,
            description="Speed cap of every goal, m/s",
        ),
        P(
            name="max_accel_m_s2",
            default=1.0,
            above=0.0,
            maximum=20.0,
            description="Acceleration and braking of the setpoint ramp, m/s^2; the a of the "
            "stopping distance v^2/2a kept from the geofence",
        ),
        P(
            name="max_step_m",
            default=10.0,
            above=0.0,
            maximum=1000.0,
            description="Longest straight move one goal may ask for, m",
        ),
        P(
            name="max_yaw_rate_deg_s",
            default=45.0,
            above=0.0,
            maximum=360.0,
            description="Turn rate of the setpoint ramp, degrees/s",
        ),
        P(
            name="require_deadman",
            default=True,
            description="Engaging and moving need the operator console's heartbeat on "
            "safety/deadman",
        ),
        P(
            name="deadman_timeout_s",
            default=1.0,
            above=0.0,
            maximum=10.0,
            description="Longest silence of the operator's heartbeat before a fault, s",
        ),
        P(
            name="odometry_timeout_s",
            default=0.5,
            above=0.0,
            maximum=10.0,
            description="Oldest odometry the gate acts on before a fault, s",
        ),
        P(
            name="vehicle_timeout_s",
            default=3.0,
            above=0.0,
            maximum=30.0,
            description="Longest silence of the autopilot's status (mavros/State, PX4 "
            "vehicle_status) before a fault, s",
        ),
        P(
            name="min_battery_fraction",
            default=0.3,
            minimum=0.0,
            maximum=1.0,
            description="Battery below which the robot is stopped (a safety intervention)",
        ),
        P(
            name="tracking_error_m",
            default=2.0,
            above=0.0,
            description="How far the vehicle may lag the streamed setpoint ...",
        ),
        P(
            name="tracking_timeout_s",
            default=3.0,
            above=0.0,
            description="... for how long before it counts as not following (a motor that "
            "stops answering), s",
        ),
        P(
            name="odom_topic",
            default="",
            description="The vehicle's own odometry (nav_msgs/Odometry, ENU, site frame); empty: "
            "the vehicle's default (mavros: /mavros/local_position/odom, ugv: odom; px4 reads "
            "vehicle_odometry and republishes it as odom)",
        ),
        P(
            name="setpoint_topic",
            default="/mavros/setpoint_position/local",
            description="mavros: where the PoseStamped setpoints go",
        ),
        P(
            name="state_topic",
            default="/mavros/state",
            description="mavros: the autopilot's mode and arming (mavros_msgs/State); empty: not "
            "watched (no takeover detection by mode: docs/robots.md)",
        ),
        P(
            name="battery_topic",
            default="/mavros/battery",
            description="mavros, ugv: sensor_msgs/BatteryState; empty: not watched",
        ),
        P(
            name="controlled_modes",
            default=["OFFBOARD", "GUIDED"],
            description="mavros: the modes in which the vehicle obeys the gate (PX4 OFFBOARD, "
            "ArduPilot GUIDED); leaving them is a takeover",
        ),
        P(
            name="px4_namespace",
            default="/fmu",
            description="px4: the uXRCE-DDS topic prefix (/fmu, or /<ns>/fmu for a namespaced "
            "client)",
        ),
        P(
            name="px4_system_id",
            default=1,
            minimum=0,
            maximum=255,
            description="px4: MAV_SYS_ID of the vehicle, the target of its VehicleCommands",
        ),
        P(
            name="px4_offboard_warmup_s",
            default=1.5,
            above=1.0,
            maximum=10.0,
            description="px4: keep-alive streamed this long before offboard is requested (PX4 "
            "engages offboard only after more than 1 s of it)",
        ),
        P(
            name="cmd_vel_topic",
            default="cmd_vel",
            description="ugv: where the velocity commands go",
        ),
        P(
            name="cmd_vel_stamped",
            default=False,
            description="ugv: send geometry_msgs/TwistStamped (nav2 and diff_drive_controller on "
            "Jazzy) instead of Twist",
        ),
        P(
            name="max_angular_speed_deg_s",
            default=45.0,
            above=0.0,
            maximum=720.0,
            description="ugv: turn-rate cap of the velocity commands, degrees/s",
        ),
    ),
    "sim_robot": (
        P(
            name="contract",
            default="mavros",
            choices=("mavros", "px4", "ugv"),
            description='What the simulated robot speaks (docs/robots.md, "Simulated robot"): '
            "mavros (MAVROS-shaped topics over a PX4-like autopilot), px4 (px4_msgs topics with "
            "PX4's offboard and failsafe behaviour), ugv (cmd_vel and odom)",
        ),
        P(
            name="start_position_m",
            default=[0.0, 0.0, 2.0],
            description="Where the robot starts (the operator placed it there), site frame ENU, m",
        ),
        P(name="start_yaw_deg", default=0.0, description="Its heading at start, CCW from east"),
        P(
            name="scene",
            default="",
            description="Embedded scene its cameras render (a rehearsal site's "
            "embedded_scene); empty: no cameras",
        ),
        P(
            name="image_width",
            default=256,
            minimum=1,
            maximum=4096,
            description="Camera image width, pixels",
        ),
        P(
            name="image_height",
            default=256,
            minimum=1,
            maximum=4096,
            description="Camera image height, pixels",
        ),
        P(
            name="fov_deg",
            default=90.0,
            minimum=1.0,
            maximum=179.0,
            description="Camera horizontal field of view, degrees",
        ),
        P(
            name="camera_rate_hz",
            default=2.0,
            above=0.0,
            maximum=60.0,
            description="Rate of the rendered camera, depth and camera_info, Hz",
        ),
        P(
            name="rate_hz",
            default=50.0,
            minimum=5.0,
            maximum=500.0,
            description="Rate of the dynamics and of the odometry, Hz",
        ),
        P(
            name="time_constant_s",
            default=0.3,
            above=0.0,
            maximum=10.0,
            description="First-order time constant of the position and yaw response, s",
        ),
        P(
            name="max_speed_m_s",
            default=5.0,
            above=0.0,
            description="The vehicle's own speed limit (PX4 MPC_XY_VEL_MAX), m/s",
        ),
        P(
            name="latency_s",
            default=0.02,
            minimum=0.0,
            maximum=2.0,
            description="Delay between a command's arrival and its effect, s",
        ),
        P(
            name="odometry_noise_m",
            default=0.01,
            minimum=0.0,
            description="Standard deviation of the odometry's position noise, m",
        ),
        P(name="seed", default=0, minimum=0, description="Seed of the odometry noise"),
        P(
            name="battery_drain_per_s",
            default=0.0,
            minimum=0.0,
            maximum=1.0,
            description="Battery fraction used per second (starts full)",
        ),
        P(
            name="autopilot_parameters",
            default=[],
            description="NAME=VALUE overrides of the simulated autopilot's parameters (PX4's "
            "defaults otherwise, e.g. COM_OBL_RC_ACT=5 COM_OF_LOSS_T=1.0), served to "
            "aerialdojo preflight",
        ),
        P(
            name="px4_namespace",
            default="/fmu",
            description="px4: the uXRCE-DDS topic prefix",
        ),
        P(
            name="operator_offboard_switch",
            default=True,
            description="mavros: the simulated operator switches to OFFBOARD once setpoints have "
            "streamed for more than a second (as a pilot does with the mode switch)",
        ),
    ),
}


def view_entry(entry: str) -> tuple[str, str]:
    """An ``evaluator.record_image_views`` entry as (agent, view): ``agent/view`` names that
    agent's view, a bare view ("" for the agent) every recorded agent's."""
    agent, _, view = entry.rpartition("/")
    return agent, view


def recorded_views(entries: Sequence[str], agents: Sequence[str]) -> list[tuple[str, str]]:
    """The (agent, view) pairs that ``evaluator.record_image_views`` names among ``agents``
    (``view_entry``)."""
    pairs = []
    for entry in entries:
        agent, view = view_entry(entry)
        pairs += [(owner, view) for owner in agents if agent in ("", owner)]
    return list(dict.fromkeys(pairs))


def validate_parameters(node: str, values: Mapping[str, Any], source: str) -> dict[str, ParamValue]:
    """Check a node's parameter values from a config file against its declarations.

    Args:
        node: node name (a key of ``NODE_PARAMETERS``).
        values: the ``ros__parameters`` mapping read from the file.
        source: file name used in error messages.

    Returns:
        The values converted to their declared types (defaults not filled in).

    Raises:
        ConfigError: unknown node, unknown parameter, or a bad value; one problem per
            parameter, each naming the file and the ``node.parameter`` field.
    """
    specs = NODE_PARAMETERS.get(node)
    if specs is None:
        raise ConfigError(f"{source}: unknown node {node!r}; known: {', '.join(NODE_PARAMETERS)}")
    by_name = {spec.name: spec for spec in specs}
    checked: dict[str, ParamValue] = {}
    problems: list[str] = []
    for name, value in values.items():
        spec = by_name.get(name)
        if name == "use_sim_time":
            problems.append(f"{source}: {node}.use_sim_time is set by aerialdojo, not the config")
        elif spec is None:
            problems.append(
                f"{source}: {node}.{name} is not a parameter of {node}; "
                f"known: {', '.join(sorted(by_name))}"
            )
        else:
            try:
                checked[name] = spec.check(value, f"{source}: {node}.{name}")
            except ConfigError as error:
                problems.extend(error.problems)
    if node == "task_manager":
        chosen = {spec.name: spec.default for spec in specs} | checked
        settings = settings_problems(str(chosen["mode"]), str(chosen["ablation"]))
        if settings:
            problems.append(f"{source}: task_manager.ablation: {'; '.join(settings)}")
    if problems:
        raise ConfigError(*problems)
    return checked
