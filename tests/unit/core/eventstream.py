"""Builds episode event streams as rosbags message objects (the real generated types of our
.msg files), for tests that exercise event assembly and bags without ROS."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from aerialdojo.bags.recorder import BagRecorder
from aerialdojo.bags.replay import EVENTS_TOPIC
from aerialdojo.bags.typestore import aerialdojo_typestore
from aerialdojo.events import EventKind

# The .msg files in the source tree: these tests need no built workspace.
INTERFACE_MSG_DIR = Path(__file__).resolve().parents[3] / "src" / "aerialdojo_interfaces" / "msg"
TYPESTORE = aerialdojo_typestore(INTERFACE_MSG_DIR)
EVENT_TYPE = "aerialdojo_interfaces/msg/EpisodeEvent"
_types = TYPESTORE.types


def record(episode_id: str, *, scene: str = "Mall_0", family: str = "urban") -> dict[str, Any]:
    return {
        "episode_id": episode_id,
        "benchmark": "aerialdojo",
        "scene": scene,
        "family": family,
        "setting": "base",
        "split": "test",
        "action_budget": 90,
        "target": [10.0, 0.0, 2.0],
        "reference_length_m": 12.0,
        "success_radius_m": 3.0,
    }


def event(
    kind: EventKind,
    episode_id: str = "",
    *,
    step: int = 0,
    position: tuple[float, float, float] = (0.0, 0.0, 2.0),
    action: str = "",
    attempt: int = 0,
    message: str = "",
    episode_json: str = "",
    stamp_s: int = 0,
    run_id: str = "",
) -> Any:
    msgs = _types
    pose = msgs["geometry_msgs/msg/Pose"](
        position=msgs["geometry_msgs/msg/Point"](*position),
        orientation=msgs["geometry_msgs/msg/Quaternion"](0.0, 0.0, 0.0, 1.0),
    )
    header = msgs["std_msgs/msg/Header"](
        stamp=msgs["builtin_interfaces/msg/Time"](sec=stamp_s, nanosec=0), frame_id="map"
    )
    return msgs[EVENT_TYPE](
        header=header,
        run_id=run_id,
        episode_id=episode_id,
        attempt=attempt,
        episode_index=0,
        episode_count=1,
        agent="uav",
        kind=int(kind),
        action=action,
        magnitude=0.0,
        argument="",
        step=step,
        pose=pose,
        collided=kind is EventKind.COLLIDED,
        collision_object="wall" if kind is EventKind.COLLIDED else "",
        message=message,
        episode_json=episode_json,
    )


def straight_episode(episode_id: str, final_kind: EventKind, xs: list[float]) -> list[Any]:
    """STARTED at x=0, one MoveForward event per x in ``xs``; the last one gets ``final_kind``
    (for STOPPED a Stop event follows the moves)."""
    events = [event(EventKind.STARTED, episode_id, episode_json=json.dumps(record(episode_id)))]
    for step, x in enumerate(xs, start=1):
        last = step == len(xs) and final_kind is not EventKind.STOPPED
        events.append(
            event(
                final_kind if last else EventKind.STEP,
                episode_id,
                step=step,
                position=(x, 0.0, 2.0),
                action="MoveForward",
                stamp_s=step,
            )
        )
    if final_kind is EventKind.STOPPED:
        events.append(
            event(
                EventKind.STOPPED,
                episode_id,
                step=len(xs) + 1,
                position=(xs[-1], 0.0, 2.0),
                action="Stop",
                stamp_s=len(xs),
            )
        )
    return events


def checkpointed_bag(path: Path, events: list[Any]) -> Path:
    """A closed bag at ``path`` whose chunks end at every start and end (as the evaluator's
    do); returns its MCAP file."""
    recorder = BagRecorder(path, TYPESTORE)
    recorder.add_topic(EVENTS_TOPIC, EVENT_TYPE)
    for index, e in enumerate(events):
        recorder.write(EVENTS_TOPIC, index * 1000, TYPESTORE.serialize_cdr(e, EVENT_TYPE))
        if e.kind != EventKind.STEP:
            recorder.checkpoint()
    recorder.close()
    return next(path.glob("*.mcap"))
