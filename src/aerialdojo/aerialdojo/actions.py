"""Discrete action sets and their kinematics (AerialDojo-200K, section 3.1, "Actions").

AerialDojo-200K: MoveForward, MoveLeft, MoveRight by 1, 3 or 5 m; MoveUp, MoveDown by 1 or
2 m; TurnLeft, TurnRight by 15 deg; Stop. Sixteen choices, four degrees of freedom, no
backward motion. Translations are in the body frame at the current yaw; turns keep the
position.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from aerialdojo.errors import InvalidActionError
from aerialdojo.geometry import Pose, wrap_angle

STOP = "Stop"


@dataclass(frozen=True, slots=True)
class ActionType:
    """One action name, its legal magnitudes and their unit ("m", "deg" or "")."""

    name: str
    magnitudes: tuple[float, ...]
    unit: str


AERIALDOJO_ACTIONS: tuple[ActionType, ...] = (
    ActionType("MoveForward", (1.0, 3.0, 5.0), "m"),
    ActionType("MoveLeft", (1.0, 3.0, 5.0), "m"),
    ActionType("MoveRight", (1.0, 3.0, 5.0), "m"),
    ActionType("MoveUp", (1.0, 2.0), "m"),
    ActionType("MoveDown", (1.0, 2.0), "m"),
    ActionType("TurnLeft", (15.0,), "deg"),
    ActionType("TurnRight", (15.0,), "deg"),
    ActionType(STOP, (), ""),
)

#: CityNav, section 3.1: move-forward 5 m, turn-left/right 30 deg, ascend/descend 2 m, stop;
#: the same motions as above under their AerialDojo names, with CityNav's magnitudes.
CITYNAV_ACTIONS: tuple[ActionType, ...] = (
    ActionType("MoveForward", (5.0,), "m"),
    ActionType("TurnLeft", (30.0,), "deg"),
    ActionType("TurnRight", (30.0,), "deg"),
    ActionType("MoveUp", (2.0,), "m"),
    ActionType("MoveDown", (2.0,), "m"),
    ActionType(STOP, (), ""),
)

# Body-frame unit displacement (forward, left, up) of each translation.
_TRANSLATIONS = {
    "MoveForward": (1.0, 0.0, 0.0),
    "MoveLeft": (0.0, 1.0, 0.0),
    "MoveRight": (0.0, -1.0, 0.0),
    "MoveUp": (0.0, 0.0, 1.0),
    "MoveDown": (0.0, 0.0, -1.0),
}
_TURNS = {"TurnLeft": 1.0, "TurnRight": -1.0}


@dataclass(frozen=True, slots=True)
class Action:
    """One chosen action: a name and, where the action takes one, a magnitude."""

    name: str
    magnitude: float = 0.0


def aerialdojo_choices() -> list[Action]:
    """The 16 discrete choices of the AerialDojo action space, in a fixed order."""
    return [
        Action(kind.name, magnitude)
        for kind in AERIALDOJO_ACTIONS
        for magnitude in (kind.magnitudes or (0.0,))
    ]


def check_action(action: Action, action_set: tuple[ActionType, ...] = AERIALDOJO_ACTIONS) -> None:
    """Raise unless ``action`` is a legal choice of ``action_set``.

    Raises:
        InvalidActionError: unknown name, or a magnitude the action does not allow.
    """
    kinds = {kind.name: kind for kind in action_set}
    kind = kinds.get(action.name)
    if kind is None:
        raise InvalidActionError(
            f"unknown action {action.name!r}; legal actions: {', '.join(kinds)}"
        )
    if kind.magnitudes:
        if not any(math.isclose(action.magnitude, allowed) for allowed in kind.magnitudes):
            allowed = ", ".join(f"{m:g}" for m in kind.magnitudes)
            raise InvalidActionError(
                f"{action.name} does not take magnitude {action.magnitude:g} {kind.unit}; "
                f"allowed: {allowed} {kind.unit}"
            )
    elif action.magnitude != 0.0:
        raise InvalidActionError(f"{action.name} takes no magnitude, got {action.magnitude:g}")


def translational_length(actions: Iterable[Action]) -> float:
    """L of an action sequence (AerialDojo-200K, eq. 2): the sum of its translations'
    magnitudes, exactly; turns and Stop add nothing."""
    return float(sum(action.magnitude for action in actions if action.name in _TRANSLATIONS))


def target_pose(pose: Pose, action: Action) -> Pose:
    """The pose an AerialDojo action leads to when nothing is in the way.

    Raises:
        InvalidActionError: for actions that are not motions of this set (including Stop).
    """
    if action.name in _TRANSLATIONS:
        forward, left, up = _TRANSLATIONS[action.name]
        step = pose.body_to_world(forward, left, up) * action.magnitude
        return Pose(pose.x + step[0], pose.y + step[1], pose.z + step[2], pose.yaw)
    if action.name in _TURNS:
        return Pose(
            pose.x,
            pose.y,
            pose.z,
            wrap_angle(pose.yaw + _TURNS[action.name] * math.radians(action.magnitude)),
        )
    raise InvalidActionError(f"{action.name!r} is not a motion of the AerialDojo action set")
