"""The colour-seeking baseline acts on its own views and the goal only."""

from __future__ import annotations

import math

import numpy as np
import pytest

from aerialdojo.actions import Action, check_action
from aerialdojo.agents.colour_seeker import (
    ColourSeekerPolicy,
    SeekerSettings,
    colour_mask,
    free_distance,
    target_colour,
)
from aerialdojo.agents.observation import AgentObservation, GoalDescription, ViewData
from aerialdojo.geometry import Pose
from aerialdojo.sim.backend import CameraSpec

SIZE = 64
K = CameraSpec(name="v", width=SIZE, height=SIZE, fov_deg=90.0).intrinsics()
SKY = (150, 190, 230)
RED = (200, 30, 30)
AT_START = Pose(0.0, 0.0, 0.0, 0.0)


def _view(depth: float = math.inf, rgb: tuple[int, int, int] = SKY) -> ViewData:
    return ViewData(
        rgb=np.full((SIZE, SIZE, 3), rgb, dtype=np.uint8),
        depth=np.full((SIZE, SIZE), depth, dtype=np.float32),
        intrinsics=K,
    )


def _paint(
    view: ViewData, rows: slice, cols: slice, rgb: tuple[int, int, int], depth: float
) -> None:
    view.rgb[rows, cols] = rgb
    view.depth[rows, cols] = depth


def _observation(odometry: Pose = AT_START, **views: ViewData) -> AgentObservation:
    full = {"front": _view(), "left": _view(), "right": _view(), "down": _view(depth=8.0)}
    full.update(views)
    return AgentObservation(views=full, odometry=odometry)


def _policy(goal: str = "the red cargo container") -> ColourSeekerPolicy:
    policy = ColourSeekerPolicy(seed=1)
    policy.reset(GoalDescription(object_name="container", landmark_name="x", direction="N",
                                 description=goal))  # fmt: skip
    return policy


def test_target_colour_from_text_or_reference_image() -> None:
    assert target_colour(GoalDescription(object_name="blue van", landmark_name="", direction="")
                         ).tolist() == [30, 70, 200]  # fmt: skip
    reference = np.zeros((30, 30, 3), dtype=np.uint8)
    reference[10:20, 10:20] = (10, 200, 40)
    goal = GoalDescription(object_name="thing", landmark_name="", direction="",
                           reference_images=[reference])  # fmt: skip
    assert target_colour(goal).tolist() == [10, 200, 40]
    named = GoalDescription(object_name="red thing", landmark_name="", direction="",
                            reference_images=[reference])  # fmt: skip
    assert target_colour(named).tolist() == [200, 30, 30]  # the name wins over the image
    assert (
        target_colour(GoalDescription(object_name="kiosk", landmark_name="", direction="")) is None
    )


def test_neutral_targets_match_unsaturated_pixels_of_their_brightness() -> None:
    white, grey, black = (
        np.array(c, dtype=float) for c in ((235, 235, 235), (128,) * 3, (25,) * 3)
    )
    pixels = np.array(
        [[(230, 230, 226), (130, 128, 126), (20, 22, 25), (200, 30, 30)]], dtype=np.uint8
    )
    assert colour_mask(pixels, white, 0.06).tolist() == [[True, False, False, False]]
    assert colour_mask(pixels, grey, 0.06).tolist() == [[False, True, False, False]]
    assert colour_mask(pixels, black, 0.06).tolist() == [[False, False, True, False]]


def test_colour_mask_ignores_shading_but_not_hue() -> None:
    pixels = np.array([[RED, (100, 15, 15), (40, 160, 50), (128, 128, 128)]], dtype=np.uint8)
    assert colour_mask(pixels, np.array(RED, dtype=float), 0.06).tolist() == [
        [True, True, False, False]
    ]


def test_free_distance_sees_only_the_body_corridor() -> None:
    settings = SeekerSettings(body_radius_m=0.5)
    wall = _view()
    _paint(wall, slice(28, 36), slice(28, 36), SKY, 4.0)  # small block dead ahead
    assert free_distance(wall, settings) == pytest.approx(4.0)
    side = _view()
    _paint(side, slice(0, SIZE), slice(0, 8), SKY, 4.0)  # a wall far to the left
    assert free_distance(side, settings) == math.inf


def test_stops_when_the_target_is_close_ahead() -> None:
    front = _view()
    _paint(front, slice(24, 40), slice(24, 40), RED, 2.0)
    assert _policy().act(_observation(front=front)) == Action("Stop")


def test_a_small_close_patch_or_a_colour_filling_the_view_is_not_the_target() -> None:
    speck = _view()
    _paint(speck, slice(30, 33), slice(30, 33), RED, 2.0)  # 9 px: too small to be it up close
    assert _policy().act(_observation(front=speck)).name in ("TurnLeft", "TurnRight")
    red_ground = _view(depth=1.0, rgb=RED)  # the whole down view: ground, not an object
    assert _policy().act(_observation(down=red_ground)) != Action("Stop")


def test_turns_toward_a_target_seen_off_centre_or_in_a_side_view() -> None:
    front = _view()
    _paint(front, slice(24, 40), slice(52, 64), RED, 10.0)
    assert _policy().act(_observation(front=front)) == Action("TurnRight", 15.0)
    left = _view()
    _paint(left, slice(24, 40), slice(24, 40), RED, 10.0)
    assert _policy().act(_observation(left=left)) == Action("TurnLeft", 15.0)


def test_approaches_a_far_target_in_the_largest_free_step() -> None:
    front = _view()
    _paint(front, slice(28, 36), slice(28, 36), RED, 12.0)
    action = _policy().act(_observation(front=front))
    assert action == Action("MoveForward", 5.0)


def test_explores_without_colliding_and_climbs_when_low() -> None:
    policy = _policy("a kiosk")  # no colour: pure exploration
    blocked = _view(depth=1.5)  # a 1 m step would end 0.5 m from it
    action = policy.act(_observation(front=blocked))
    assert action.name in ("TurnLeft", "TurnRight")
    assert policy.act(_observation(down=_view(depth=2.0))) == Action("MoveUp", 2.0)
    open_front = policy.act(_observation())
    assert open_front == Action("MoveForward", 5.0)


def test_every_action_it_emits_is_legal() -> None:
    policy = _policy()
    rng = np.random.default_rng(0)
    for _ in range(200):
        front = _view(depth=float(rng.uniform(0.5, 30.0)))
        if rng.random() < 0.5:
            row, col = rng.integers(0, SIZE - 8, size=2)
            _paint(front, slice(row, row + 8), slice(col, col + 8), RED, float(rng.uniform(1, 20)))
        check_action(
            policy.act(_observation(front=front, down=_view(depth=float(rng.uniform(1, 20)))))
        )


def test_heads_back_toward_the_start_beyond_the_roam_radius() -> None:
    policy = _policy("a kiosk")
    far_east_facing_north_east = Pose(60.0, 0.0, 0.0, math.pi / 4)
    assert policy.act(_observation(far_east_facing_north_east)) == Action("TurnLeft", 15.0)
    far_east_facing_south = Pose(60.0, 0.0, 0.0, -math.pi / 2)
    assert policy.act(_observation(far_east_facing_south)) == Action("TurnRight", 15.0)
    far_east_facing_home = Pose(60.0, 0.0, 0.0, math.pi)
    assert policy.act(_observation(far_east_facing_home)) == Action("MoveForward", 5.0)


def test_an_episode_plays_the_same_whatever_ran_before_it() -> None:
    def actions(policy: ColourSeekerPolicy, episode_id: str) -> list[Action]:
        policy.reset(GoalDescription(episode_id=episode_id, object_name="container",
                                     landmark_name="x", direction="N"))  # fmt: skip
        return [policy.act(_observation(front=_view(depth=1.0))) for _ in range(40)]

    after_another = ColourSeekerPolicy(seed=1)
    actions(after_another, "first")
    assert actions(after_another, "second") == actions(ColourSeekerPolicy(seed=1), "second")
