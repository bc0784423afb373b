"""Each discrete action of the benchmarks as the poses a robot must reach, in the episode
frame (the site's ``map``, ENU, REP-103/105).

One table, keyed by action name, says what every action a robot can do becomes:

- AerialDojo-200K (section 3.1) and CityNav (section 3.1, the same motions with its own
  magnitudes): a body-frame translation at the current yaw, or a turn in place; Stop moves
  nothing (``actions.target_pose``, the embedded simulator's own kinematics).
- AGOS-Bench (appendix A.1): the UAV flies to a waypoint of the town's grid at its altitude;
  the UGV drives the shortest directed road path to the anchor a road waypoint names
  (MOVE_TO_ROAD_WAYPOINT, and GO_TO_CANDIDATE once the task manager has turned the candidate
  into its approach anchor), through every fine node of the road graph, heading along the
  road; observing, confirming, rejecting, annotating and waiting move nothing.

A plan is then cut where it would leave the site's geofence (``fence_cut``): the step stops
at the fence, as an embedded scene's motion stops at the edge of its world, and says so.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from aerialdojo.actions import AERIALDOJO_ACTIONS, CITYNAV_ACTIONS, STOP, Action, target_pose
from aerialdojo.agos import vocabulary as agos
from aerialdojo.errors import InvalidActionError, UnknownSceneError
from aerialdojo.geofence import Geofence
from aerialdojo.geometry import Pose, wrap_angle

if TYPE_CHECKING:
    from aerialdojo.agos.town import TownMap


@dataclass(frozen=True)
class MotionWorld:
    """What planning an episode's motions may read: the episode's scene, and for the AGOS
    actions its town's public map (roads and the UAV grid), loaded on first use."""

    scene: str

    @cached_property
    def town(self) -> TownMap:
        """The AGOS town map of the scene.

        Raises:
            InvalidActionError: the scene is no AGOS town, so it has no roads or UAV grid.
        """
        from aerialdojo.agos.worlds import town_map  # noqa: PLC0415 - AGOS runs only

        try:
            return town_map(self.scene)
        except UnknownSceneError as error:
            raise InvalidActionError(
                f"AGOS road and grid actions need an AGOS town's map; {error}"
            ) from None


Motion = Callable[[Pose, Action, str, MotionWorld], tuple[Pose, ...]]


def _body_motion(pose: Pose, action: Action, argument: str, world: MotionWorld) -> tuple[Pose, ...]:
    return (target_pose(pose, action),)


def _no_motion(pose: Pose, action: Action, argument: str, world: MotionWorld) -> tuple[Pose, ...]:
    return ()


def _grid_flight(pose: Pose, action: Action, argument: str, world: MotionWorld) -> tuple[Pose, ...]:
    waypoint = world.town.uav_grid.waypoint(argument)
    return (Pose(waypoint.x, waypoint.y, waypoint.z, pose.yaw),)


def _road_drive(pose: Pose, action: Action, argument: str, world: MotionWorld) -> tuple[Pose, ...]:
    from aerialdojo.agos.planning import drive_to, parse_road_waypoint  # noqa: PLC0415

    town = world.town
    drive = drive_to(town.roads, pose, parse_road_waypoint(argument, town.roads), town.ground_z)
    poses = []
    previous = pose
    for x, y, z in drive.points:
        moved = math.hypot(x - previous.x, y - previous.y)
        # Heading along the road to each node; a node on the spot keeps the last heading.
        yaw = math.atan2(y - previous.y, x - previous.x) if moved > 1e-6 else previous.yaw
        previous = Pose(x, y, z, yaw)
        poses.append(previous)
    if poses:
        # The drive ends heading along its last road segment, as the simulator leaves it.
        poses[-1] = drive.final_pose
    return tuple(poses)


#: What each action a robot can do becomes; actions not here are refused.
ACTION_MOTIONS: dict[str, Motion] = {
    **{kind.name: _body_motion for kind in (*AERIALDOJO_ACTIONS, *CITYNAV_ACTIONS)},
    STOP: _no_motion,
    agos.MOVE_TO_UAV_WAYPOINT: _grid_flight,
    agos.MOVE_TO_ROAD_WAYPOINT: _road_drive,
    agos.GO_TO_CANDIDATE: _road_drive,
    **dict.fromkeys(
        (
            agos.ANNOTATE_CANDIDATE,
            agos.NO_RELIABLE_CANDIDATE,
            agos.WAIT,
            agos.STOP_OBSERVE,
            agos.CONFIRM,
            agos.REJECT,
        ),
        _no_motion,
    ),
}


@dataclass(frozen=True)
class MotionPlan:
    """The poses one action leads through, in the episode frame.

    Attributes:
        waypoints: in order; the last is where the action ends. Empty: nothing moves.
        geofenced: the plan was cut where it would have left the geofence.
    """

    waypoints: tuple[Pose, ...]
    geofenced: bool = False

    @property
    def target(self) -> Pose | None:
        """Where the action ends; None when nothing moves."""
        return self.waypoints[-1] if self.waypoints else None


def plan_motion(
    start: Pose,
    action: Action,
    argument: str,
    world: MotionWorld,
    *,
    fence: Geofence | None = None,
    max_leg_m: float = 0.0,
) -> MotionPlan:
    """The poses ``action`` leads through from ``start``.

    Args:
        start: the pose the action starts from (the episode's nominal pose, so that the
            arrival tolerance of one step does not carry into the next).
        action: an action the episode's referee already accepted.
        argument: its waypoint or anchor id, where it takes one.
        world: the episode's scene.
        fence: cut the plan where it would leave this geofence (with its margin).
        max_leg_m: split legs longer than this into equal ones (the safety gate caps the
            length of one goal); 0: do not split.

    Raises:
        InvalidActionError: an action no robot here can do, or an argument naming no
            waypoint or reachable anchor.
    """
    motion = ACTION_MOTIONS.get(action.name)
    if motion is None:
        raise InvalidActionError(
            f"the robot backend cannot execute {action.name!r}; it executes "
            f"{', '.join(sorted(ACTION_MOTIONS))}"
        )
    waypoints = motion(start, action, argument, world)
    geofenced = False
    if fence is not None and waypoints:
        waypoints, geofenced = fence_cut(start, waypoints, fence)
    if max_leg_m > 0.0:
        waypoints = split_legs(start, waypoints, max_leg_m)
    return MotionPlan(waypoints, geofenced)


#: The resolution of the search for the point where a leg leaves the fence, metres.
FENCE_STEP_M = 0.05


def fence_cut(
    start: Pose, waypoints: tuple[Pose, ...], fence: Geofence
) -> tuple[tuple[Pose, ...], bool]:
    """``waypoints`` up to the last point inside ``fence`` (with its margin) along the path
    from ``start``, and whether the path was cut. A turn in place is never cut; a path from a
    start outside the fence is cut at the start (nothing moves).

    The cut lies within ``FENCE_STEP_M`` of the fence's margin, on its inside: legs are
    walked in steps of that length to the first point outside (the fence may be concave),
    and the crossing is then bisected.
    """
    kept: list[Pose] = []
    previous = start
    for waypoint in waypoints:
        inside = _last_inside(previous, waypoint, fence)
        if inside is None:
            return tuple(kept), True
        if inside < 1.0:
            a, b = previous.position, waypoint.position
            cut = a + inside * (b - a)
            kept.append(Pose(float(cut[0]), float(cut[1]), float(cut[2]), previous.yaw))
            return tuple(kept), True
        kept.append(waypoint)
        previous = waypoint
    return tuple(kept), False


def _last_inside(a: Pose, b: Pose, fence: Geofence) -> float | None:
    """The largest fraction of the leg a -> b whose whole length up to it stays inside
    ``fence``; None when ``a`` itself is outside."""
    if not fence.contains(a.position):
        return None
    length = float(np.linalg.norm(b.position - a.position))
    if length == 0.0:
        return 1.0
    steps = max(1, math.ceil(length / FENCE_STEP_M))
    inside = 0.0
    for index in range(1, steps + 1):
        fraction = index / steps
        if not fence.contains(a.position + fraction * (b.position - a.position)):
            low, high = inside, fraction
            for _ in range(20):
                middle = (low + high) / 2.0
                if fence.contains(a.position + middle * (b.position - a.position)):
                    low = middle
                else:
                    high = middle
            return low
        inside = fraction
    return 1.0


def split_legs(start: Pose, waypoints: tuple[Pose, ...], max_leg_m: float) -> tuple[Pose, ...]:
    """``waypoints`` with every leg longer than ``max_leg_m`` split into equal legs; the
    intermediate poses keep the leg's start yaw, the leg's end its own."""
    split: list[Pose] = []
    previous = start
    for waypoint in waypoints:
        length = float(np.linalg.norm(waypoint.position - previous.position))
        pieces = max(1, math.ceil(length / max_leg_m - 1e-9))
        for index in range(1, pieces):
            point = previous.position + (index / pieces) * (waypoint.position - previous.position)
            split.append(Pose.from_position(point, previous.yaw))
        split.append(waypoint)
        previous = waypoint
    return tuple(split)


def path_length(start: Pose, waypoints: tuple[Pose, ...]) -> float:
    """Metres travelled from ``start`` through ``waypoints``."""
    length, previous = 0.0, start
    for waypoint in waypoints:
        length += float(np.linalg.norm(waypoint.position - previous.position))
        previous = waypoint
    return length


def turn_angle(start: Pose, waypoints: tuple[Pose, ...]) -> float:
    """Radians turned from ``start`` through ``waypoints``, each turn the shorter way."""
    angle, previous = 0.0, start
    for waypoint in waypoints:
        angle += abs(wrap_angle(waypoint.yaw - previous.yaw))
        previous = waypoint
    return angle
