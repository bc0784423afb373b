"""CityNav policies on the GSM and the nadir view, ROS-free.

``GsmPolicy`` searches like the paper's human pilots (CityNav, appendix B, "Human Navigation
Strategy"): it flies to the landmarks the description names, to the side the description
says, and searches around them; a potential goal there is approached from above and the UAV
descends to it and stops. ``ColourSearchPolicy`` is the colour baseline: the same search and
descent without the landmark map, over the whole city from its start. Both act only on the
GNSS pose, the nadir view (through the GSM) and the description.
"""

from __future__ import annotations

import math
import re

import numpy as np
from scipy import ndimage

from aerialdojo.actions import STOP, Action
from aerialdojo.citynav.city import Landmark
from aerialdojo.citynav.gsm import GeoSemanticMap
from aerialdojo.citynav.reference import DOWN, FORWARD, LEFT, RIGHT, UP
from aerialdojo.geometry import Pose, wrap_angle

#: Altitude above the ground of the search: the nadir view is 80 m across there.
SEARCH_ALTITUDE_M = 40.0
#: The UAV stops this high above the surface of the goal it found.
STOP_ABOVE_M = 8.0
#: A landmark's surroundings where a related goal is searched.
NEAR_M = 60.0
#: Directions a description gives, as unit vectors (east, north).
_DIRECTIONS = {
    "north": (0.0, 1.0),
    "south": (0.0, -1.0),
    "east": (1.0, 0.0),
    "west": (-1.0, 0.0),
    "north-east": (math.sqrt(0.5), math.sqrt(0.5)),
    "north-west": (-math.sqrt(0.5), math.sqrt(0.5)),
    "south-east": (math.sqrt(0.5), -math.sqrt(0.5)),
    "south-west": (-math.sqrt(0.5), -math.sqrt(0.5)),
}


def steer(pose: Pose, target: tuple[float, float], arrive_m: float = 2.6) -> Action | None:
    """The next level action towards ``target`` (None when within ``arrive_m``)."""
    dx, dy = target[0] - pose.x, target[1] - pose.y
    if math.hypot(dx, dy) <= arrive_m:
        return None
    error = wrap_angle(math.atan2(dy, dx) - pose.yaw)
    if abs(error) > math.radians(15.0):
        return LEFT if error > 0 else RIGHT
    return FORWARD


class _SearchPolicy:
    """Search a region of the GSM at ``SEARCH_ALTITUDE_M``, approach the nearest potential
    goal inside it, descend to it and stop."""

    def __init__(self) -> None:
        self.gsm: GeoSemanticMap | None = None
        self.region = np.zeros((0, 0), dtype=bool)
        self.steps_left = 0
        self._target: tuple[float, float, float] | None = None

    def reset(self, gsm: GeoSemanticMap, budget: int) -> None:
        """Start an episode with a fresh GSM and ``budget`` actions."""
        self.gsm = gsm
        self.steps_left = budget
        self._target = None
        self.region = self.search_region(gsm)

    def search_region(self, gsm: GeoSemanticMap) -> np.ndarray:
        """Cells where the goal may be."""
        raise NotImplementedError

    def act(self, pose: Pose) -> Action:
        """The next action; the GSM was updated with this pose's view."""
        assert self.gsm is not None
        action = self._decide(pose)
        self.steps_left -= 1
        return action

    def _decide(self, pose: Pose) -> Action:
        assert self.gsm is not None
        gsm = self.gsm
        altitude = pose.z - gsm.city.ground_z
        # The first potential goal in the region is kept: re-reading it as more of a large
        # goal comes into view moves it under the UAV, which then circles.
        if self._target is None:
            self._target = self._potential_goal((pose.x, pose.y))
        if self._target is not None:
            return self._home(pose, self._target)
        # Leave room for the descent at the end of the budget.
        if self.steps_left <= (altitude - STOP_ABOVE_M) / 2.0 + 1.0:
            return DOWN if altitude - 2.0 >= STOP_ABOVE_M else Action(STOP)
        if altitude > SEARCH_ALTITUDE_M + 1.0:
            return DOWN
        if altitude < SEARCH_ALTITUDE_M - 1.0:
            return UP
        waypoint = self._next_unexplored(pose)
        if waypoint is None:
            return Action(STOP)
        return steer(pose, waypoint) or FORWARD

    def _potential_goal(self, near: tuple[float, float]) -> tuple[float, float, float] | None:
        """The potential goal inside the region nearest to ``near``: (x, y, surface height)."""
        assert self.gsm is not None
        found = self.gsm.layers["potential_goals"] & self.region
        if not found.any():
            return None
        labels, count = ndimage.label(found)
        xs, ys = self.gsm.grid.cell_centres()
        best = None
        for label in range(1, count + 1):
            blob = labels == label
            centre = (float(xs[blob].mean()), float(ys[blob].mean()))
            distance = math.dist(centre, near)
            if best is None or distance < best[0]:
                height = float(np.nanmax(self.gsm.goal_height[blob]))
                best = (distance, (*centre, height))
        assert best is not None
        return best[1]

    def _home(self, pose: Pose, target: tuple[float, float, float]) -> Action:
        """Fly over ``target``, then descend until ``STOP_ABOVE_M`` above its surface."""
        level = steer(pose, target[:2])
        if level is not None and self.steps_left > (pose.z - target[2] - STOP_ABOVE_M) / 2.0 + 1.0:
            return level
        if pose.z - 2.0 >= target[2] + STOP_ABOVE_M:
            return DOWN
        return Action(STOP)

    def _next_unexplored(self, pose: Pose) -> tuple[float, float] | None:
        """The centre of the unexplored region cell nearest to the UAV."""
        assert self.gsm is not None
        open_cells = self.region & ~self.gsm.layers["explored"]
        if not open_cells.any():
            return None
        xs, ys = self.gsm.grid.cell_centres()
        candidates = np.flatnonzero(open_cells)
        distance = np.hypot(xs.flat[candidates] - pose.x, ys.flat[candidates] - pose.y)
        nearest = candidates[int(np.argmin(distance))]
        return float(xs.flat[nearest]), float(ys.flat[nearest])


class GsmPolicy(_SearchPolicy):
    """Go to the named landmarks, on the side the description says, and search around them."""

    def search_region(self, gsm: GeoSemanticMap) -> np.ndarray:
        """Cells that satisfy every relation the description states of a named landmark
        ("north of Jesus Green", "the east side of King Street", "near Green Street"); the
        surroundings of all named landmarks if none is recognised."""
        xs, ys = gsm.grid.cell_centres()
        region = np.ones(xs.shape, dtype=bool)
        constrained = False
        text = gsm.description.lower()
        for landmark in gsm.named:
            mask = gsm.landmark_masks[landmark.name]
            if not mask.any():
                continue
            distance = ndimage.distance_transform_edt(~mask) * gsm.grid.resolution_m
            relation = _relation(text, landmark)
            if relation is None:
                continue
            kind, direction = relation
            cx, cy = landmark.centroid
            if kind == "side":
                along = (xs - cx) * direction[0] + (ys - cy) * direction[1]
                region &= (distance <= 12.0) & (along >= 0.0)
            elif kind == "of":
                along = (xs - cx) * direction[0] + (ys - cy) * direction[1]
                across = np.hypot(xs - cx, ys - cy)
                region &= (distance <= NEAR_M) & (along >= 0.38 * across)
            else:
                region &= distance <= NEAR_M
            constrained = True
        if not constrained or not region.any():
            near = np.zeros(xs.shape, dtype=bool)
            for mask in gsm.landmark_masks.values():
                near |= ndimage.distance_transform_edt(~mask) * gsm.grid.resolution_m <= NEAR_M
            region = near if near.any() else np.ones(xs.shape, dtype=bool)
        return region


def _relation(text: str, landmark: Landmark) -> tuple[str, tuple[float, float]] | None:
    """How the description relates the goal to ``landmark``: ("of", direction) for "north of
    X", ("side", direction) for "the east side of X", ("near", _) for "near X"."""
    name = re.escape(landmark.name.lower())
    side = re.search(rf"(\S+) side of {name}", text)
    if side and side.group(1) in _DIRECTIONS:
        return "side", _DIRECTIONS[side.group(1)]
    of = re.search(rf"(\S+) of {name}", text)
    if of and of.group(1) in _DIRECTIONS:
        return "of", _DIRECTIONS[of.group(1)]
    if re.search(rf"(near|by|on|in|at) (the )?{name}", text):
        return "near", (0.0, 0.0)
    return None


class ColourSearchPolicy(_SearchPolicy):
    """The colour baseline: searches the whole city outwards from its start for the goal's
    colour, without the landmark map."""

    def search_region(self, gsm: GeoSemanticMap) -> np.ndarray:
        """Every cell of the map."""
        return np.ones((gsm.grid.height, gsm.grid.width), dtype=bool)
