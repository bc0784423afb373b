"""Episodes as typed, validated value objects (AerialDojo-200K, section 3.2)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from aerialdojo.actions import Action
from aerialdojo.geometry import Pose

REPRESENTATION_SEMANTIC = "semantic"  # SemanticOGS: a text description
REPRESENTATION_IMAGE = "image"  # ImageOGS: a reference image
#: Episode id suffix of each representation; twins differ only in it.
REPRESENTATION_SUFFIXES = {REPRESENTATION_SEMANTIC: "sem", REPRESENTATION_IMAGE: "img"}

#: ``<scene>-<setting>-<index>-<sem|img>``, e.g. ``Mall_0-base-0007-sem``.
EPISODE_ID_PATTERN = re.compile(
    r"^(?P<scene>[A-Za-z0-9_]+)-(?P<setting>[a-z_]+)-(?P<index>[0-9]{4,})-(?P<suffix>sem|img)$"
)


# A length in figures or words followed by a unit: a goal's description says what the target
# looks like and what it is near, never how far (AerialDojo-200K, section 3.2: the landmark
# and a coarse direction locate it).
_DISTANCE_IN_FIGURES = re.compile(
    r"\b\d+(?:[.,]\d+)?\s*(?:m|km|cm|metres?|meters?|kilomet(?:re|er)s?|ft|feet|foot|yards?|yds?|"
    r"mi|miles?)\b",
    re.IGNORECASE,
)
_DISTANCE_IN_WORDS = re.compile(
    r"\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|"
    r"thirty|forty|fifty|hundred|a few|several|a couple of)\s+"
    r"(?:metres?|meters?|kilomet(?:re|er)s?|feet|foot|yards?|miles?)\b",
    re.IGNORECASE,
)


def stated_distance(text: str) -> str | None:
    """The first distance a goal description states (``about 15 m``), or None: what suites
    (``tasks.validation``) and site files (``sites.site``) both refuse."""
    found = _DISTANCE_IN_FIGURES.search(text) or _DISTANCE_IN_WORDS.search(text)
    return found.group(0) if found else None


def make_episode_id(scene: str, setting: str, index: int, representation: str) -> str:
    """The stable, readable id of one twin of navigation task ``index`` of a scene and setting.

    Raises:
        KeyError: unknown representation.
    """
    return f"{scene}-{setting}-{index:04d}-{REPRESENTATION_SUFFIXES[representation]}"


@dataclass(frozen=True, kw_only=True)
class Goal:
    """G = [name, landmark, direction, representation] (AerialDojo-200K, section 3.2 "Task
    definition").

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
    """The collision-free reference trajectory and its statistics (AerialDojo-200K, eqs. 2-3).

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

    Attributes:
        episode_id: ``<scene>-<setting>-<index>-<sem|img>`` (``make_episode_id``).
        benchmark: ``"aerialdojo"``.
        scene: scene name, e.g. ``"Mall_0"``.
        family: scene family (``sim.annotations.FAMILIES``).
        distribution: ``"id"`` or ``"ood"``.
        split: ``"train"`` / ``"test"`` (id scenes), ``"adaptation"`` / ``"test"`` (ood).
        setting: ``"base"``, ``"standard"`` or ``"long_horizon"`` (``tasks.settings``).
        action_budget: actions the agent may take, Stop included.
        start: S, the start object's anchor position with the anchor's yaw turned 180 deg.
        goal: what the agent is told.
        target_object_id: the target's object id in the scene annotations.
        target_anchor: the target's anchor; success is a Stop within ``success_radius_m``.
        reference: the reference trajectory from ``start`` to the anchor.
        success_radius_m: success radius around the anchor position.
        agents: the agents of the episode.
        start_object_id: the object whose anchor the start is taken from.
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
    start_object_id: str = ""

    @property
    def task_id(self) -> str:
        """The navigation task both twins share: the episode id without its suffix."""
        return self.episode_id.rsplit("-", 1)[0]
