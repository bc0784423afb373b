"""The robot backend's settings, read from the bridge's parameters and checked whole before
anything starts (the backend registry runs ``RobotSettings.from_parameters`` first)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from aerialdojo.errors import AerialDojoError, ConfigError
from aerialdojo.geofence import Geofence
from aerialdojo.params import NODE_PARAMETERS
from aerialdojo.protocols import load_suite
from aerialdojo.robot.arrival import ArrivalTolerance, TimeAllowance
from aerialdojo.robot.link import CameraTopics, LinkSettings
from aerialdojo.tasks.suite import Suite, resolve_suite

#: The views a robot's camera rig offers the agent: one forward RGB-D camera, the view
#: AerialDojo-200K's evaluated prompt gives (appendix A), and the AGOS UGV's front view.
ROBOT_VIEWS = ("front",)


@dataclass(frozen=True, kw_only=True)
class RobotSettings:
    """Everything the robot backend reads from the bridge's ``robot_*`` parameters.

    Attributes:
        link: where each agent's gate, odometry, cameras and collision signals are.
        tolerance: when a target counts as reached.
        allowance: how long an action may take.
        max_leg_m: goals longer than this are split (the gate's step-size cap).
        odometry_timeout_s: odometry older than this is stale: the vehicle's position is
            unknown.
        frame_timeout_s: longest wait after an arrival for a complete fresh set of frames.
        fence: the geofence of the site the suite was built from (the task manager's
            suite): every motion stays inside it with its margin.
        scenes: the suite's scenes (a site is one).
    """

    link: LinkSettings
    tolerance: ArrivalTolerance
    allowance: TimeAllowance
    max_leg_m: float
    odometry_timeout_s: float
    frame_timeout_s: float
    fence: Geofence
    scenes: tuple[str, ...]

    @classmethod
    def from_parameters(cls, parameters: Mapping[str, Any]) -> RobotSettings:
        """The settings of the bridge's parameters (each a ``params`` declaration, with its
        default where ``parameters`` lacks it).

        Raises:
            ConfigError: every problem at once, naming the ``sim_bridge`` field.
        """

        def value(name: str) -> Any:
            if name in parameters:
                return parameters[name]
            return next(s.default for s in NODE_PARAMETERS["sim_bridge"] if s.name == name)

        problems = []
        views = [str(view) for view in value("robot_views")]
        lists = {
            name: [str(topic) for topic in value(name)]
            for name in ("robot_image_topics", "robot_depth_topics", "robot_camera_info_topics")
        }
        for name, topics in lists.items():
            if len(topics) != len(views):
                problems.append(
                    f"sim_bridge.{name}: {len(topics)} topic(s) for {len(views)} view(s) of "
                    "robot_views; give one per view, in the same order"
                )
        problems += [
            f"sim_bridge.robot_views: {view!r} is not a view of a robot's rig "
            f"({', '.join(ROBOT_VIEWS)})"
            for view in views
            if view not in ROBOT_VIEWS
        ]
        if len(set(views)) != len(views):
            problems.append(f"sim_bridge.robot_views: {views} names a view twice")
        proximity_view = str(value("robot_proximity_view"))
        proximity_m = float(value("robot_proximity_m"))
        if proximity_m > 0.0 and proximity_view not in views:
            problems.append(
                f"sim_bridge.robot_proximity_view: {proximity_view!r} is not one of "
                f"robot_views ({', '.join(views)}), so no depth of it is relayed"
            )
        agents = [str(agent) for agent in value("agents")]
        if len(agents) > 1:
            problems += _shared_topics(value)
        site: tuple[Geofence, tuple[str, ...]] | None = None
        try:
            site = site_of(str(value("suite")))
        except ConfigError as error:
            problems += error.problems
        if problems or site is None:
            raise ConfigError(*problems)
        cameras = tuple(
            CameraTopics(view=view, image=image, depth=depth, camera_info=info)
            for view, image, depth, info in zip(views, *lists.values(), strict=True)
        )
        return cls(
            link=LinkSettings(
                goal_service=str(value("robot_goal_service")),
                hold_service=str(value("robot_hold_service")),
                status_topic=str(value("robot_status_topic")),
                odometry_topic=str(value("robot_odometry_topic")),
                cameras=cameras,
                contact_topic=str(value("robot_contact_topic")),
                proximity_view=proximity_view if proximity_m > 0.0 else "",
                proximity_m=proximity_m,
                mark_topic=str(value("robot_mark_topic")),
                service_timeout_s=float(value("robot_service_timeout_s")),
            ),
            tolerance=ArrivalTolerance(
                position_m=float(value("robot_position_tolerance_m")),
                speed_m_s=float(value("robot_speed_tolerance_m_s")),
                yaw_rad=math.radians(float(value("robot_yaw_tolerance_deg"))),
                planar=bool(value("robot_planar")),
                pass_m=float(value("robot_pass_radius_m")),
            ),
            allowance=TimeAllowance(
                speed_m_s=float(value("robot_speed_m_s")),
                yaw_rate_rad_s=math.radians(float(value("robot_yaw_rate_deg_s"))),
                factor=float(value("robot_allowance_factor")),
                settle_s=float(value("robot_settle_s")),
            ),
            max_leg_m=float(value("robot_max_leg_m")),
            odometry_timeout_s=float(value("robot_odometry_timeout_s")),
            frame_timeout_s=float(value("robot_frame_timeout_s")),
            fence=site[0],
            scenes=site[1],
        )


#: The topic and service parameters every agent reaches through its own namespace.
_PER_AGENT = (
    "robot_goal_service",
    "robot_hold_service",
    "robot_status_topic",
    "robot_odometry_topic",
    "robot_contact_topic",
    "robot_mark_topic",
)


def _shared_topics(value: Callable[[str], Any]) -> list[str]:
    """With several agents, an absolute name would be one topic for all of them."""
    names: list[tuple[str, str]] = [(name, str(value(name))) for name in _PER_AGENT]
    for name in ("robot_image_topics", "robot_depth_topics", "robot_camera_info_topics"):
        names += [(name, str(topic)) for topic in value(name)]
    return [
        f"sim_bridge.{name}: {topic!r} is absolute, so every agent would share it; with "
        "several agents give names relative to each agent's namespace"
        for name, topic in names
        if topic.startswith("/")
    ]


def site_of(suite_name: str) -> tuple[Geofence, tuple[str, ...]]:
    """The geofence and scenes of the suite the robot flies.

    Raises:
        ConfigError: no suite, or one not built from a surveyed site.
    """
    if not suite_name:
        raise ConfigError("sim_bridge.suite: the robot backend needs the suite it flies")
    try:
        _, suite = load_suite(resolve_suite(suite_name))
    except AerialDojoError as error:
        raise ConfigError(f"sim_bridge.suite: {error}") from error
    if not isinstance(suite, Suite) or suite.site is None:
        raise ConfigError(
            f"sim_bridge.suite: {suite_name!r} was not built from a surveyed site "
            "(aerialdojo tasks from-site, docs/sites.md): a robot flies only inside a "
            "site's geofence"
        )
    return suite.site.geofence, tuple(sorted({episode.scene for episode in suite.episodes}))
