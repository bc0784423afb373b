"""The operator console's logic: the card before each attempt, what an automatic operator
does next, the flight to a start, and the task manager's refusal of a misplaced start."""

from __future__ import annotations

import math

from aerialdojo.geometry import Pose
from aerialdojo.protocols import load_suite
from aerialdojo.protocols.aerialdojo import PROTOCOL
from aerialdojo.robot.console import (
    Next,
    Prompt,
    is_placed,
    next_step,
    placement_path,
    render,
    task_line,
)
from aerialdojo.robot.link import SafetyState
from aerialdojo.robot.safety import FaultClass, GateState
from aerialdojo.tasks.site_record import StartTolerance
from aerialdojo.tasks.suite import resolve_suite

START = Pose(-13.09, 2.89, 1.38, math.radians(76.9))
PROMPT = Prompt(
    episode_id="Alley_0-base-0000-sem",
    attempt=0,
    index=0,
    count=2,
    starts={"uav": START},
    task="find the green delivery van",
    tolerance_m=0.5,
    tolerance_deg=10.0,
)
READY = SafetyState(state=GateState.READY)


def test_the_task_line_is_what_the_agent_is_told() -> None:
    _, suite = load_suite(resolve_suite("alley_rehearsal"))
    rules = PROTOCOL.episodes
    assert rules is not None
    semantic = rules.describe_task(suite.episode("Alley_0-base-0000-sem"), suite, {})
    assert task_line(semantic) == (
        "find the green delivery van, S of the Red Footbridge: a dusty delivery van with a "
        "pale box body and a green cab, parked on the east side of the yard beside a grey "
        "trash can"
    )
    image = rules.describe_task(suite.episode("Alley_0-base-0001-img"), suite, {})
    assert task_line(image).endswith("(from a reference image)")


def test_the_card_shows_each_robot_against_its_start_and_its_gate() -> None:
    near = Pose(START.x + 0.3, START.y, START.z, START.yaw)
    card = render(PROMPT, {"uav": near}, {"uav": READY})
    assert "episode 1/2: Alley_0-base-0000-sem (attempt 1)" in card
    assert "0.30 m and 0.0 deg off, within the tolerance (0.5 m, 10 deg)" in card
    assert "gate: ready" in card
    far = Pose(START.x, START.y, START.z, START.yaw + math.radians(20.0))
    fault = SafetyState(state=GateState.FAULT, fault_class=FaultClass.INTERVENTION,
                        fault="deadman_lost", detail="silent for 1.2 s")  # fmt: skip
    card = render(
        Prompt(**{**PROMPT.__dict__, "status": "the uav is placed 0.00 m and 20.0 deg off"}),
        {"uav": far},
        {"uav": fault},
    )
    assert "20.0 deg off, OUTSIDE the tolerance" in card
    assert "gate: FAULT (intervention): deadman_lost: silent for 1.2 s" in card
    assert "not started: the uav is placed" in card
    assert "robot: no odometry" in render(PROMPT, {"uav": None}, {"uav": None})


def test_an_automatic_operator_clears_engages_places_then_starts() -> None:
    away = Pose(-20.0, -5.0, 3.0, 0.0)
    fault = SafetyState(state=GateState.FAULT, fault_class=FaultClass.INTERVENTION, fault="x")
    standby = SafetyState(state=GateState.STANDBY)
    moving = SafetyState(state=GateState.MOVING)
    assert next_step("uav", PROMPT, None, READY, fly=True) is Next.WAIT
    assert next_step("uav", PROMPT, away, fault, fly=True) is Next.CLEAR
    assert next_step("uav", PROMPT, away, standby, fly=True) is Next.ENGAGE
    assert next_step("uav", PROMPT, away, READY, fly=True) is Next.PLACE
    assert next_step("uav", PROMPT, away, READY, fly=False) is Next.WAIT  # placed by hand
    assert next_step("uav", PROMPT, away, moving, fly=True) is Next.WAIT
    assert next_step("uav", PROMPT, START, READY, fly=True) is Next.START
    # Placed means well within the tolerance, so the task manager's measurement agrees.
    assert is_placed(Pose(START.x + 0.2, START.y, START.z, START.yaw), START, PROMPT)
    assert not is_placed(Pose(START.x + 0.3, START.y, START.z, START.yaw), START, PROMPT)


def test_a_flight_to_the_start_climbs_crosses_descends_and_turns_in_legs_the_gate_takes() -> None:
    here = Pose(-11.4, 13.7, 3.4, 1.6)
    path = placement_path(here, START, max_leg_m=5.0, transit_z=6.0)
    assert path[-1] == START
    assert max(p.z for p in path) == 6.0
    assert all(p.yaw == here.yaw for p in path[:-1])  # the heading changes last, in place
    previous = here
    for pose in path:
        assert pose.distance_to(previous.position) <= 5.0 + 1e-9
        previous = pose
    # Below the transit height already: straight there.
    assert placement_path(START, START, max_leg_m=5.0, transit_z=0.0) == (
        Pose(START.x, START.y, START.z, START.yaw),
        START,
    )


def test_a_start_placed_beyond_the_site_s_tolerance_is_refused_with_how_far() -> None:
    tolerance = StartTolerance(position_m=0.5, yaw_rad=math.radians(10.0))
    assert tolerance.refusal("uav", START, Pose(START.x + 0.4, START.y, START.z, START.yaw)) == ""
    refusal = tolerance.refusal(
        "uav", START, Pose(START.x + 0.8, START.y, START.z, START.yaw + math.radians(12.0))
    )
    assert refusal == (
        "the uav is placed 0.80 m and 12.0 deg from its start (-13.09, 2.89, 1.38, yaw "
        "76.9 deg); the site allows 0.5 m and 10 deg"
    )
    # Headings wrap: 359 deg is 1 deg from 0.
    zero = Pose(0.0, 0.0, 1.0, 0.0)
    assert tolerance.refusal("uav", zero, Pose(0.0, 0.0, 1.0, math.radians(359.0))) == ""
    assert "0.60 m and 0.0 deg" in tolerance.refusal("uav", zero, Pose(0.0, 0.0, 1.6, 0.0))
