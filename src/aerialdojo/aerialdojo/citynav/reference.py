"""Shortest-path reference trajectories over the CityNav action set (CityNav, sections 3.1 and
5.2, "Necessity of human demonstrations": the shortest-path trajectories).

The UAV starts 100-150 m above the ground, above every roof, so the reference flies level at
its start altitude and then descends over the goal. The level part is the cheapest of all
paths made of one straight leg or two (turns of 30 deg count one action each, forward moves
of 5 m one each) that ends within ``LATERAL_TOLERANCE_M`` of the goal's ground position, found
exhaustively; the descent stops as soon as the UAV is within ``REFERENCE_RADIUS_M`` of the
goal in 3D, and never below ``floor_z`` (a roof under the goal, plus clearance). Replaying the
actions reaches the goal: the oracle scores SR = 100 % and SPL = 1 with them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from aerialdojo.actions import Action, target_pose, translational_length
from aerialdojo.errors import TaskGenerationError
from aerialdojo.geometry import Pose

FORWARD_M = 5.0
TURN_DEG = 30.0
VERTICAL_M = 2.0
HEADINGS = round(360.0 / TURN_DEG)
#: The level part ends this close to the goal's ground position.
LATERAL_TOLERANCE_M = 2.6
#: The reference stops this close to the goal in 3D: half CityNav's 20 m success radius.
REFERENCE_RADIUS_M = 10.0

FORWARD = Action("MoveForward", FORWARD_M)
LEFT = Action("TurnLeft", TURN_DEG)
RIGHT = Action("TurnRight", TURN_DEG)
UP = Action("MoveUp", VERTICAL_M)
DOWN = Action("MoveDown", VERTICAL_M)


@dataclass(frozen=True, kw_only=True)
class Reference:
    """A reference trajectory.

    Attributes:
        actions: the CityNav actions from the start, Stop excluded.
        poses: the pose after each action, the start first.
        length_m: L, translational length of the actions (SPL's reference length).
    """

    actions: tuple[Action, ...]
    poses: tuple[Pose, ...]
    length_m: float

    @property
    def end(self) -> Pose:
        """Where the reference stops."""
        return self.poses[-1]


def replay(start: Pose, actions: tuple[Action, ...]) -> Reference:
    """The poses and length of ``actions`` flown from ``start`` with nothing in the way.

    Raises:
        InvalidActionError: an action that is not a CityNav motion.
    """
    poses = [start]
    for action in actions:
        poses.append(target_pose(poses[-1], action))
    return Reference(actions=actions, poses=tuple(poses), length_m=translational_length(actions))


def _turns(steps: int) -> list[Action]:
    """The fewest turns that rotate by ``steps`` x 30 deg (positive: left)."""
    steps %= HEADINGS
    return [LEFT] * steps if steps <= HEADINGS // 2 else [RIGHT] * (HEADINGS - steps)


def _turn_cost(steps: np.ndarray) -> np.ndarray:
    steps = np.mod(steps, HEADINGS)
    return np.asarray(np.minimum(steps, HEADINGS - steps))


def level_actions(start: Pose, goal_xy: tuple[float, float]) -> list[Action]:
    """The cheapest one- or two-leg level path from ``start`` to within
    ``LATERAL_TOLERANCE_M`` of ``goal_xy``.

    Raises:
        TaskGenerationError: no such path (cannot happen for a finite goal).
    """
    offset = np.array((goal_xy[0] - start.x, goal_xy[1] - start.y))
    if np.linalg.norm(offset) <= LATERAL_TOLERANCE_M:
        return []
    most = math.ceil(float(np.linalg.norm(offset)) / FORWARD_M) + 3
    counts = np.arange(most + 1)
    angles = start.yaw + np.radians(TURN_DEG) * np.arange(HEADINGS)
    units = np.stack((np.cos(angles), np.sin(angles)), axis=1) * FORWARD_M
    first, second = np.meshgrid(np.arange(HEADINGS), np.arange(HEADINGS), indexing="ij")
    # Reached point of a moves along heading i then b along heading j: (i, j, a, b).
    reached = (
        units[first][:, :, None, None, :] * counts[None, None, :, None, None]
        + units[second][:, :, None, None, :] * counts[None, None, None, :, None]
    )
    error = np.linalg.norm(reached - offset, axis=-1)
    second_turn = np.where(
        counts[None, None, None, :] > 0, _turn_cost(second - first)[:, :, None, None], 0
    )
    cost = (
        _turn_cost(first)[:, :, None, None]
        + counts[None, None, :, None]
        + counts[None, None, None, :]
        + second_turn
    )
    cost = np.where(error <= LATERAL_TOLERANCE_M, cost + error / 100.0, np.inf)
    if not np.isfinite(cost).any():
        raise TaskGenerationError(f"no level path from {start} to {goal_xy}")
    i, j, a, b = np.unravel_index(int(np.argmin(cost)), cost.shape)
    actions = [*_turns(int(i)), *[FORWARD] * int(a)]
    if b:
        actions += [*_turns(int(j) - int(i)), *[FORWARD] * int(b)]
    return actions


def shortest_reference(start: Pose, goal: tuple[float, float, float], floor_z: float) -> Reference:
    """The reference from ``start`` to ``goal``: level legs, then the fewest descents (or
    climbs) that bring the UAV within ``REFERENCE_RADIUS_M``, never below ``floor_z``.

    Args:
        start: the start pose (above every obstacle).
        goal: the goal coordinates.
        floor_z: the lowest height the UAV may reach above the goal (roof plus clearance).

    Raises:
        TaskGenerationError: the goal cannot be reached within the radius above the floor.
    """
    level = level_actions(start, (goal[0], goal[1]))
    above = replay(start, tuple(level)).end
    lateral = math.hypot(above.x - goal[0], above.y - goal[1])
    reach = math.sqrt(max(REFERENCE_RADIUS_M**2 - lateral**2, 0.0))
    vertical: list[Action] = []
    z = above.z
    while abs(z - goal[2]) > reach:
        step = DOWN if z > goal[2] else UP
        if step is DOWN and z - VERTICAL_M < floor_z:
            break
        vertical.append(step)
        z += VERTICAL_M if step is UP else -VERTICAL_M
    reference = replay(start, (*level, *vertical))
    if reference.end.distance_to(goal) > REFERENCE_RADIUS_M:
        raise TaskGenerationError(
            f"goal {goal} is {reference.end.distance_to(goal):.1f} m from the lowest point "
            f"above its floor ({floor_z:.1f} m): beyond {REFERENCE_RADIUS_M:g} m"
        )
    return reference
