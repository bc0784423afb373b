"""The AerialDojo-200K action set (section 3.1): 16 choices, exact kinematics, clear refusals."""

from __future__ import annotations

import math

import pytest

from aerialdojo.actions import Action, aerialdojo_choices, check_action, target_pose
from aerialdojo.errors import InvalidActionError
from aerialdojo.geometry import Pose


def test_sixteen_choices_without_backward_motion() -> None:
    choices = aerialdojo_choices()
    assert len(choices) == 16
    assert len(set(choices)) == 16
    assert {c.name for c in choices} == {
        "MoveForward", "MoveLeft", "MoveRight", "MoveUp", "MoveDown",
        "TurnLeft", "TurnRight", "Stop",
    }  # fmt: skip
    assert {c.magnitude for c in choices if c.name == "MoveForward"} == {1.0, 3.0, 5.0}
    assert {c.magnitude for c in choices if c.name == "MoveUp"} == {1.0, 2.0}
    for choice in choices:
        check_action(choice)


@pytest.mark.parametrize(
    ("action", "expected"),
    [
        (Action("MoveForward", 5.0), (0.0, 5.0, 2.0)),  # facing north (yaw 90 deg)
        (Action("MoveLeft", 3.0), (-3.0, 0.0, 2.0)),
        (Action("MoveRight", 1.0), (1.0, 0.0, 2.0)),
        (Action("MoveUp", 2.0), (0.0, 0.0, 4.0)),
        (Action("MoveDown", 1.0), (0.0, 0.0, 1.0)),
    ],
)
def test_translations_are_in_the_body_frame(action: Action, expected: tuple[float, ...]) -> None:
    start = Pose(0.0, 0.0, 2.0, math.pi / 2)
    moved = target_pose(start, action)
    assert (moved.x, moved.y, moved.z) == pytest.approx(expected, abs=1e-12)
    assert moved.yaw == start.yaw


def test_turns_change_yaw_by_fifteen_degrees_and_wrap() -> None:
    start = Pose(1.0, 2.0, 3.0, math.radians(175.0))
    left = target_pose(start, Action("TurnLeft", 15.0))
    assert math.degrees(left.yaw) == pytest.approx(-170.0)
    assert (left.x, left.y, left.z) == (1.0, 2.0, 3.0)
    right = target_pose(left, Action("TurnRight", 15.0))
    assert math.degrees(right.yaw) == pytest.approx(175.0)


@pytest.mark.parametrize(
    ("action", "fragment"),
    [
        (Action("MoveBackward", 1.0), "unknown action 'MoveBackward'"),
        (Action("MoveForward", 2.0), "does not take magnitude 2"),
        (Action("MoveUp", 5.0), "allowed: 1, 2 m"),
        (Action("TurnLeft", 30.0), "allowed: 15 deg"),
        (Action("Stop", 1.0), "takes no magnitude"),
    ],
)
def test_illegal_actions_are_refused_with_the_reason(action: Action, fragment: str) -> None:
    with pytest.raises(InvalidActionError, match=fragment):
        check_action(action)


def test_stop_is_not_a_motion() -> None:
    with pytest.raises(InvalidActionError, match="not a motion"):
        target_pose(Pose(0, 0, 0, 0), Action("Stop"))
