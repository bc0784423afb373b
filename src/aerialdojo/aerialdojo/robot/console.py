"""The operator console's logic, ROS-free: what it shows before each episode, and what an
automatic operator (rehearsals on the simulated robot, tests) does next.

Before every attempt on a robot the task manager announces the episode (``EpisodePrompt``):
its agents, their start poses and the task. The operator places each robot at its start (by
hand, or by flying it there through its safety gate), confirms, engages the gate (the
consent to arm and enter offboard) and starts; the console shows how far each robot is from
its start and whether its gate is ready.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum

from aerialdojo.geometry import Pose, wrap_angle
from aerialdojo.protocols.task import TaskDescription
from aerialdojo.robot.link import SafetyState
from aerialdojo.robot.motions import split_legs
from aerialdojo.robot.safety import GateState
from aerialdojo.step_origin import attempt_name


def task_line(task: TaskDescription) -> str:
    """The task in one line, as the operator reads it (the agents get the same)."""
    where = (
        f", {task.direction} of the {task.landmark_name}"
        if task.landmark_name and task.direction
        else ""
    )
    goal = " (from a reference image)" if task.image_goal else ""
    text = f": {task.description}" if task.description and not task.image_goal else ""
    return f"find the {task.object_name}{where}{goal}{text}"


@dataclass(frozen=True, kw_only=True)
class Prompt:
    """An announced attempt (``EpisodePrompt``), as the console reads it."""

    episode_id: str
    attempt: int
    index: int
    count: int
    starts: Mapping[str, Pose]
    task: str
    tolerance_m: float
    tolerance_deg: float
    status: str = ""


def placement_offset(pose: Pose, start: Pose) -> tuple[float, float]:
    """How far ``pose`` is from ``start``: metres and degrees of heading."""
    return (
        pose.distance_to(start.position),
        abs(math.degrees(wrap_angle(pose.yaw - start.yaw))),
    )


def is_placed(pose: Pose | None, start: Pose, prompt: Prompt, share: float = 0.5) -> bool:
    """Whether ``pose`` is within ``share`` of the start tolerance (a margin, so that the
    task manager's own measurement a moment later still agrees)."""
    if pose is None:
        return False
    offset_m, offset_deg = placement_offset(pose, start)
    return offset_m <= prompt.tolerance_m * share and offset_deg <= prompt.tolerance_deg * share


def render(
    prompt: Prompt,
    poses: Mapping[str, Pose | None],
    gates: Mapping[str, SafetyState | None],
) -> str:
    """The card the console prints before an attempt."""
    lines = [
        f"episode {prompt.index + 1}/{prompt.count}: {prompt.episode_id} "
        f"({attempt_name(prompt.attempt)})",
        f"  task: {prompt.task}",
    ]
    for agent, start in prompt.starts.items():
        lines.append(
            f"  {agent}: start ({start.x:.2f}, {start.y:.2f}, {start.z:.2f}) m, "
            f"yaw {math.degrees(start.yaw):.1f} deg"
        )
        pose = poses.get(agent)
        if pose is None:
            lines.append("    robot: no odometry")
        else:
            offset_m, offset_deg = placement_offset(pose, start)
            within = (
                "within"
                if offset_m <= prompt.tolerance_m and offset_deg <= prompt.tolerance_deg
                else "OUTSIDE"
            )
            lines.append(
                f"    robot: ({pose.x:.2f}, {pose.y:.2f}, {pose.z:.2f}) m, yaw "
                f"{math.degrees(pose.yaw):.1f} deg: {offset_m:.2f} m and {offset_deg:.1f} deg "
                f"off, {within} the tolerance ({prompt.tolerance_m:g} m, "
                f"{prompt.tolerance_deg:g} deg)"
            )
        gate = gates.get(agent)
        lines.append(f"    gate: {gate_text(gate)}")
    if prompt.status:
        lines.append(f"  not started: {prompt.status}")
    return "\n".join(lines)


def gate_text(gate: SafetyState | None) -> str:
    """A gate's state as the console shows it."""
    if gate is None:
        return "no status (is the safety gate running?)"
    if gate.state is GateState.FAULT:
        return f"FAULT ({gate.fault_class.name.lower()}): {gate.description}"
    return gate.state.name.lower()


class Next(Enum):
    """What an automatic operator does next for an announced attempt."""

    WAIT = "wait"  # for odometry, a status, the gate
    CLEAR = "clear"  # acknowledge a latched fault
    ENGAGE = "engage"  # consent to arm and enter offboard
    PLACE = "place"  # fly the robot to its start through the gate
    START = "start"  # tell the task manager to start


def next_step(
    agent: str,
    prompt: Prompt,
    pose: Pose | None,
    gate: SafetyState | None,
    *,
    fly: bool,
) -> Next:
    """What an automatic operator does next for ``agent``; START once it is placed and its
    gate holds it, ready (START for every agent starts the attempt).

    Args:
        fly: place the robot by flying it to its start; False: it must already be there.
    """
    if gate is None or pose is None:
        return Next.WAIT
    if gate.state is GateState.FAULT:
        return Next.CLEAR
    if gate.state is GateState.STANDBY:
        return Next.ENGAGE
    if gate.state is GateState.MOVING:
        return Next.WAIT
    if not is_placed(pose, prompt.starts[agent], prompt):
        return Next.PLACE if fly else Next.WAIT
    return Next.START


def placement_path(
    pose: Pose, start: Pose, *, max_leg_m: float, transit_z: float = 0.0
) -> tuple[Pose, ...]:
    """Waypoints that fly a robot from ``pose`` to ``start``: up (or down) to ``transit_z``
    when it is above both (0: straight), across, down to the start, then the start's
    heading; legs no longer than ``max_leg_m``."""
    points: list[Pose] = []
    if transit_z > max(pose.z, start.z):
        points.append(Pose(pose.x, pose.y, transit_z, pose.yaw))
        points.append(Pose(start.x, start.y, transit_z, pose.yaw))
    points.append(Pose(start.x, start.y, start.z, pose.yaw))
    points.append(start)
    return split_legs(pose, tuple(points), max_leg_m)
