"""A colour-seeking explorer: the honest baseline of the AerialDojo action space.

It uses only what an agent is given: the goal (a colour named in the text, or the dominant
colour at the centre of the reference image) and its own RGB-D views. It explores with
depth-checked moves, turns toward pixels of the target colour, approaches them along a
free corridor and stops when they are close. It never reads ground truth, so its success
rate is a floor that any serious agent should beat.
"""

from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass

import numpy as np

from aerialdojo.actions import STOP, Action
from aerialdojo.agents.observation import AgentObservation, GoalDescription, ViewData
from aerialdojo.geometry import wrap_angle

#: Reference RGB of colour names a goal text may use.
COLOUR_NAMES: dict[str, tuple[int, int, int]] = {
    "red": (200, 30, 30),
    "orange": (230, 120, 20),
    "yellow": (230, 210, 30),
    "green": (40, 160, 50),
    "cyan": (30, 190, 200),
    "blue": (30, 70, 200),
    "purple": (130, 40, 170),
    "pink": (230, 110, 170),
    "brown": (120, 75, 35),
    "white": (235, 235, 235),
    "black": (25, 25, 25),
    "grey": (128, 128, 128),
    "gray": (128, 128, 128),
}

_STEP_SIZES = (5.0, 3.0, 1.0)
#: A target whose channels differ by less than this is white, grey or black.
_NEUTRAL_SPREAD = 30.0
_TURN = 15.0


@dataclass(frozen=True, kw_only=True)
class SeekerSettings:
    """Tuning of the colour seeker.

    Attributes:
        stop_distance_m: stop when the target pixels are this close.
        clearance_m: free distance kept beyond a move's end.
        body_radius_m: half-width of the corridor checked in depth for a move.
        min_blob_fraction: share of a view's pixels that must match to count as a sighting.
        max_blob_fraction: a larger matching share is scenery (ground, water, a facade).
        stop_blob_fraction: share the target must fill in the front view to stop at it;
            an object close enough to stop at fills much of the view.
        chroma_tolerance: largest chromaticity distance of a matching pixel.
        cruise_altitude_m: height above ground the explorer keeps (from the down view).
        roam_radius_m: the explorer heads back toward its start (by odometry) beyond this
            horizontal distance; scenes end somewhere, and targets are within 100 m.
    """

    stop_distance_m: float = 2.5
    clearance_m: float = 1.0
    body_radius_m: float = 0.6
    min_blob_fraction: float = 0.002
    max_blob_fraction: float = 0.6
    stop_blob_fraction: float = 0.04
    chroma_tolerance: float = 0.06
    cruise_altitude_m: float = 6.0
    roam_radius_m: float = 45.0


class ColourSeekerPolicy:
    """Explore, turn toward the target colour, approach it, stop near it."""

    def __init__(self, seed: int = 0, settings: SeekerSettings | None = None) -> None:
        self._seed = seed
        self._rng = random.Random(seed)
        self._settings = settings or SeekerSettings()
        self._target_rgb: np.ndarray | None = None
        self._turn_direction = "TurnLeft"
        self._steps_since_turn = 0

    def reset(self, goal: GoalDescription) -> None:
        """Start a new episode with ``goal``."""
        # Seeded by the episode, so that an episode plays the same whatever ran before it in
        # this process (a sharded run's batches, a rerun of failures).
        self._rng = random.Random(f"{self._seed}:{goal.episode_id}")
        self._target_rgb = target_colour(goal)
        self._turn_direction = self._rng.choice(("TurnLeft", "TurnRight"))
        self._steps_since_turn = 0

    def act(self, observation: AgentObservation) -> Action:
        """Choose the next action from one observation set."""
        sighting = self._sight(observation)
        if sighting is not None:
            return self._approach(observation, *sighting)
        return self._explore(observation)

    # -- target ------------------------------------------------------------------------

    def _sight(self, observation: AgentObservation) -> tuple[str, np.ndarray] | None:
        """The view with the largest target-coloured region and that region's mask."""
        if self._target_rgb is None:
            return None
        best: tuple[str, np.ndarray] | None = None
        best_count = 0
        settings = self._settings
        for name, view in observation.views.items():
            mask = colour_mask(view.rgb, self._target_rgb, settings.chroma_tolerance)
            count = int(mask.sum())
            # A region filling most of a view is ground, water or a wall, not an object.
            plausible = settings.min_blob_fraction * mask.size <= count
            plausible &= count <= settings.max_blob_fraction * mask.size
            if plausible and count > best_count:
                best, best_count = (name, mask), count
        return best

    def _approach(self, observation: AgentObservation, view_name: str, mask: np.ndarray) -> Action:
        view = observation.views[view_name]
        if view_name == "left":
            return Action("TurnLeft", _TURN)
        if view_name == "right":
            return Action("TurnRight", _TURN)
        distance = float(np.median(view.depth[mask]))
        if view_name == "down":
            return self._descend_toward(view, mask, distance)
        rows, cols = np.nonzero(mask)
        bearing = math.degrees(
            math.atan2(cols.mean() - view.intrinsics[0, 2], view.intrinsics[0, 0])
        )
        if distance <= self._settings.stop_distance_m:
            if mask.mean() >= self._settings.stop_blob_fraction:
                return Action(STOP)
            return Action(self._turn_direction, _TURN)  # a small patch close by: not it
        if bearing > _TURN / 2:
            return Action("TurnRight", _TURN)
        if bearing < -_TURN / 2:
            return Action("TurnLeft", _TURN)
        elevation = math.degrees(
            math.atan2(view.intrinsics[1, 2] - rows.mean(), view.intrinsics[1, 1])
        )
        if elevation < -30.0 and free_distance(observation.views.get("down"), self._settings) > 3.0:
            return Action("MoveDown", 1.0)
        return self._move(
            "MoveForward", view, min(distance - self._settings.stop_distance_m + 1.0, 5.0)
        )

    def _descend_toward(self, view: ViewData, mask: np.ndarray, distance: float) -> Action:
        """The target is below: centre it (image up is body forward), then descend."""
        rows, cols = np.nonzero(mask)
        forward_px = view.intrinsics[1, 2] - rows.mean()
        left_px = view.intrinsics[0, 2] - cols.mean()
        scale = distance / view.intrinsics[0, 0]
        forward_m, left_m = forward_px * scale, left_px * scale
        if distance <= self._settings.stop_distance_m:
            if mask.mean() >= self._settings.stop_blob_fraction:
                return Action(STOP)
            return Action(self._turn_direction, _TURN)  # a small patch close by: not it
        if max(abs(forward_m), abs(left_m)) < 1.5:
            return Action("MoveDown", 2.0 if distance > 5.0 else 1.0)
        if abs(forward_m) >= abs(left_m):
            return (
                Action("MoveForward", _largest_step(abs(forward_m)))
                if forward_m > 0
                else Action(self._turn_direction, _TURN)
            )
        return Action("MoveLeft" if left_m > 0 else "MoveRight", _largest_step(abs(left_m)))

    # -- exploration -------------------------------------------------------------------

    def _explore(self, observation: AgentObservation) -> Action:
        down = observation.views.get("down")
        altitude = free_distance(down, self._settings) if down is not None else math.inf
        if altitude < self._settings.cruise_altitude_m - 2.0:
            return Action("MoveUp", 2.0)
        homing = _turn_toward_start(observation, self._settings.roam_radius_m)
        if homing is not None:
            return homing
        self._steps_since_turn += 1
        if self._steps_since_turn > 6 and self._rng.random() < 0.25:
            self._steps_since_turn = 0
            self._turn_direction = self._rng.choice(("TurnLeft", "TurnRight"))
            return Action(self._turn_direction, _TURN)
        front = observation.views["front"]
        return self._move("MoveForward", front, 5.0)

    def _move(self, name: str, view: ViewData, wanted_m: float) -> Action:
        """The largest step of ``name`` up to ``wanted_m`` with a free corridor, else a turn."""
        free = free_distance(view, self._settings) - self._settings.clearance_m
        for step in _STEP_SIZES:
            if step <= wanted_m + 1e-9 and step <= free:
                return Action(name, step)
        return Action(self._turn_direction, _TURN)


def target_colour(goal: GoalDescription) -> np.ndarray | None:
    """RGB of the colour the goal points at: the first colour name in the object name or
    description (both goal types name the object, AerialDojo-200K, section 3.2), else the median
    colour at the centre of the first reference image."""
    words = re.findall(r"[a-z]+", f"{goal.object_name} {goal.description}".lower())
    for word in words:
        if word in COLOUR_NAMES:
            return np.array(COLOUR_NAMES[word], dtype=np.float64)
    if goal.reference_images:
        image = goal.reference_images[0]
        height, width = image.shape[:2]
        centre = image[height // 3 : 2 * height // 3, width // 3 : 2 * width // 3].reshape(-1, 3)
        median: np.ndarray = np.median(centre, axis=0).astype(np.float64)
        return median
    return None


def colour_mask(rgb: np.ndarray, target: np.ndarray, tolerance: float) -> np.ndarray:
    """Pixels whose chromaticity (RGB / sum) is within ``tolerance`` of the target's, and
    whose brightness is plausible for it under shading (0.35x to 1.6x); for a neutral target
    (white, grey, black), unsaturated pixels of about its brightness.

    Chromaticity ignores how brightly a surface is lit, so one colour matches on sunny and
    shaded faces alike.
    """
    pixels = rgb.astype(np.float32)
    brightness = pixels.sum(axis=2)
    target_brightness = float(target.sum())
    if float(target.max() - target.min()) < _NEUTRAL_SPREAD:
        # White, grey, black: chromaticity is meaningless near neutral; match low saturation
        # and a brightness band instead.
        spread = pixels.max(axis=2) - pixels.min(axis=2)
        neutral = spread <= 0.12 * np.maximum(pixels.max(axis=2), 1.0) + 6.0
        band = (brightness >= 0.6 * target_brightness - 20) & (
            brightness <= 1.3 * target_brightness + 20
        )
        neutral_matching: np.ndarray = neutral & band
        return neutral_matching
    chroma = pixels / np.maximum(brightness, 1.0)[..., None]
    target_chroma = (target / max(target_brightness, 1.0)).astype(np.float32)
    close = np.abs(chroma - target_chroma).max(axis=2) <= tolerance
    lit = (brightness >= 0.35 * target_brightness) & (brightness <= 1.6 * target_brightness + 30)
    matching: np.ndarray = close & lit
    return matching


def free_distance(view: ViewData | None, settings: SeekerSettings) -> float:
    """Distance along the optical axis to the nearest surface inside the body's corridor."""
    if view is None:
        return 0.0
    depth = view.depth
    height, width = depth.shape
    fx, fy, cx, cy = (
        view.intrinsics[0, 0],
        view.intrinsics[1, 1],
        view.intrinsics[0, 2],
        view.intrinsics[1, 2],
    )
    columns = (np.arange(width) - cx) / fx
    rows = (np.arange(height) - cy) / fy
    finite = np.isfinite(depth)
    hit_depth = np.where(finite, depth, 0.0)  # sky pixels block nothing
    lateral = np.abs(columns)[None, :] * hit_depth
    vertical = np.abs(rows)[:, None] * hit_depth
    corridor = (lateral <= settings.body_radius_m) & (vertical <= settings.body_radius_m)
    hits = depth[corridor & finite]
    return float(hits.min()) if hits.size else math.inf


def _turn_toward_start(observation: AgentObservation, roam_radius_m: float) -> Action | None:
    """A turn toward the start when the agent has roamed too far and is not facing back;
    never without odometry."""
    odometry = observation.odometry
    if odometry is None or math.hypot(odometry.x, odometry.y) <= roam_radius_m:
        return None
    home = math.atan2(-odometry.y, -odometry.x)
    off = math.degrees(wrap_angle(home - odometry.yaw))
    if abs(off) <= 45.0:
        return None
    return Action("TurnLeft" if off > 0 else "TurnRight", _TURN)


def _largest_step(distance_m: float) -> float:
    for step in _STEP_SIZES:
        if step <= distance_m:
            return step
    return _STEP_SIZES[-1]
