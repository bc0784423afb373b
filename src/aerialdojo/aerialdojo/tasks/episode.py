"""Episodes as typed, validated value objects (seed 000, section 3.2)."""

from __future__ import annotations

from dataclasses import dataclass, field

from aerialdojo.actions import Action
from aerialdojo.geometry import Pose

REPRESENTATION_SEMANTIC = "semantic"  # SemanticOGS: a text description
REPRESENTATION_IMAGE = "image"  # ImageOGS: a reference image


@dataclass(frozen=True, kw_only=True)
class Goal:
    """G = [name, landmark, direction, representation] (seed 000, 3.2 "Task definition").

    Attributes:
        object_name: the target object's name.
        landmark_name: the target's nearest landmark.
        direction: compass direction of the target from that landmark (N, NE, ... NW).
        representation: ``"semantic"`` or ``"image"``.
        description: the semantic description (both twins carry it; agents of an ImageOGS
            task are shown the image, not this text).
        reference_image: path of the reference image, relative to the suite file; empty for
            SemanticOGS.
    """

    object_name: str
    landmark_name: str
    direction: str
    representation: str
    description: str
    reference_image: str = ""


@dataclass(frozen=True, kw_only=True)
class ReferencePath:
    """The collision-free reference trajectory and its statistics (seed 000, eqs. 2-3).

    Attributes:
        poses: q_0 .. q_K, q_0 = start, p_K = target anchor.
        actions: the legal actions that produce ``poses`` from the start.
        length_m: L, translational length (yaw rotations add nothing).
        euclidean_m: d_E = ||p_0 - p_g||.
        detour_ratio: kappa = L / d_E.
    """

    poses: tuple[Pose, ...]
    actions: tuple[Action, ...]
    length_m: float
    euclidean_m: float
    detour_ratio: float


@dataclass(frozen=True, kw_only=True)
class Episode:
    """One task instance with what is needed to run and to score it.

    Agents see only ``goal`` (and the action set and budget); the target anchor and the
    reference path are for the task manager and the evaluator.
    """

    episode_id: str
    benchmark: str
    scene: str
    family: str
    distribution: str
    split: str
    setting: str
    action_budget: int
    start: Pose
    goal: Goal
    target_object_id: str
    target_anchor: Pose
    reference: ReferencePath
    success_radius_m: float = 3.0
    agents: tuple[str, ...] = field(default=("uav",))
