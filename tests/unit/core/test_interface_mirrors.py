"""The ROS-free mirrors of message constants hold the values the .msg files give them, so
code without ROS (the assembler, the robot backend) reads events and gate states right."""

from __future__ import annotations

from enum import IntEnum
from pathlib import Path

import pytest
from rosbags.typesys import get_types_from_msg

from aerialdojo.events import EventKind
from aerialdojo.robot.safety import FaultClass, GateState

MSG_DIR = Path(__file__).resolve().parents[3] / "src" / "aerialdojo_interfaces" / "msg"


def _constants(message: str) -> dict[str, int]:
    name = f"aerialdojo_interfaces/msg/{message}"
    constants, _ = get_types_from_msg((MSG_DIR / f"{message}.msg").read_text(), name)[name]
    return {constant: int(value) for constant, _, value in constants}


@pytest.mark.parametrize(
    ("message", "mirror", "prefix"),
    [
        ("EpisodeEvent", EventKind, ""),
        ("SafetyStatus", GateState, "STATE_"),
        ("SafetyStatus", FaultClass, "FAULT_"),
    ],
)
def test_each_mirror_has_every_constant_of_its_message(
    message: str, mirror: type[IntEnum], prefix: str
) -> None:
    constants = {
        name.removeprefix(prefix): value
        for name, value in _constants(message).items()
        if name.startswith(prefix)
    }
    assert {member.name: int(member) for member in mirror} == constants
