"""The task of an episode, ROS-free: what any benchmark's episodes and suites offer the task
manager and the oracle (``EpisodeLike``, ``SuiteLike``), and the agent-visible task: what
``TaskSpec`` carries, never the target's coordinates. Each benchmark protocol describes its
episodes with it; the task manager turns it into the message
(``nodes.conversions.task_spec_msg``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from aerialdojo.actions import AERIALDOJO_ACTIONS
from aerialdojo.spawns import SpawnedObject


class EpisodeLike(Protocol):
    """What the task manager reads of any benchmark's episode."""

    @property
    def episode_id(self) -> str: ...

    @property
    def scene(self) -> str: ...

    @property
    def agents(self) -> tuple[str, ...]: ...

    @property
    def spawns(self) -> tuple[SpawnedObject, ...]:
        """Objects the simulator spawns by blueprint when the episode starts."""
        ...


class SuiteLike(Protocol):
    """What the task manager reads of any benchmark's loaded suite."""

    @property
    def name(self) -> str: ...

    @property
    def path(self) -> Path: ...

    def episode(self, episode_id: str) -> Any:
        """The episode called ``episode_id``; ``KeyError`` naming it otherwise."""
        ...

    def select(self, text: str = "") -> list[str]:
        """Episode ids a filter selects (``""``: the suite's default selection)."""
        ...


@dataclass(frozen=True, kw_only=True)
class ActionDescription:
    """One legal action of an agent (``ActionSpec``).

    Attributes:
        agent: the agent allowed to use it.
        name: e.g. ``MoveForward`` or ``MOVE_TO_UAV_WAYPOINT``.
        magnitudes: allowed values; empty where it takes none.
        unit: ``m``, ``deg`` or "".
        takes_argument: ``Step.argument`` names a waypoint, cell or candidate.
        max_uses: times the agent may take it in an episode; 0: no limit (AGOS: the
            annotation and confirmation budgets).
    """

    agent: str
    name: str
    magnitudes: tuple[float, ...] = ()
    unit: str = ""
    takes_argument: bool = False
    max_uses: int = 0


@dataclass(frozen=True, kw_only=True)
class TaskDescription:
    """What agents are told about an episode.

    Attributes:
        episode_id: the episode.
        benchmark: its benchmark's name.
        scene: scene or town.
        setting: e.g. ``base`` or ``hard``.
        object_name: the target's name (``GoalSpec.object_name``).
        landmark_name: its nearest landmark, "" where not told.
        direction: compass direction from the landmark, "" where not told.
        image_goal: the goal is given by reference images (ImageOGS, AGOS).
        description: the goal text (SemanticOGS description, AGOS instruction).
        reference_images: absolute paths of the reference images, in order.
        agents: the agents of the episode.
        actions: every legal action of every agent.
        action_budget: actions (decisions) allowed, Stop included.
        success_radius_m: the radius the agents are told.
        global_localization: odometry is in the map frame (False: relative to the start).
        views: the camera views the agents are given; empty: every view of their rigs as
            their benchmark describes it (AGOS).
        odometry: the agents are given odometry (AerialDojo-200K's protocol: no).
        mode: the protocol variant the agents work under (AGOS: ``agent`` or ``baseline``);
            "" where a benchmark has one.
        map_image: the top-down map of the episode region (AGOS: M, ``agos.maps``), RGB
            uint8, north up; None where agents get none.
    """

    episode_id: str
    benchmark: str
    scene: str
    setting: str
    object_name: str
    landmark_name: str = ""
    direction: str = ""
    image_goal: bool = False
    description: str = ""
    reference_images: tuple[Path, ...] = ()
    agents: tuple[str, ...]
    actions: tuple[ActionDescription, ...]
    action_budget: int
    success_radius_m: float
    global_localization: bool
    views: tuple[str, ...] = ()
    odometry: bool = True
    mode: str = ""
    map_image: np.ndarray | None = None


def aerialdojo_actions(agents: tuple[str, ...]) -> tuple[ActionDescription, ...]:
    """The AerialDojo action set with its magnitudes, for each of ``agents``."""
    return tuple(
        ActionDescription(agent=agent, name=kind.name, magnitudes=kind.magnitudes, unit=kind.unit)
        for agent in agents
        for kind in AERIALDOJO_ACTIONS
    )
