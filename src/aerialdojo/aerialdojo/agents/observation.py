"""What an agent node hands its policy: its own sensor data and the goal, nothing else."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from aerialdojo.actions import Action
from aerialdojo.geometry import Pose


@dataclass(frozen=True, kw_only=True)
class ViewData:
    """One camera view: RGB (HxWx3 uint8), planar depth in metres (HxW float32, +inf where
    nothing was hit) and the 3x3 pinhole matrix K."""

    rgb: np.ndarray
    depth: np.ndarray
    intrinsics: np.ndarray


@dataclass(frozen=True, kw_only=True)
class AgentObservation:
    """One synchronized observation set.

    Attributes:
        views: view name -> data: the views the task gives the agent (AerialDojo-200K's
            protocol: front only; four_views: front, left, right, down).
        odometry: pose relative to the episode start (no GPS in AerialDojo); None where
            the task gives no odometry (the AerialDojo-200K protocol).
    """

    views: dict[str, ViewData]
    odometry: Pose | None


@dataclass(frozen=True, kw_only=True)
class GoalDescription:
    """The goal as the agent is told it (TaskSpec.goal), never the target's coordinates.

    Attributes:
        episode_id: the episode the goal belongs to (``TaskSpec.episode_id``; a rerun of an
            episode has the same one).
        action_budget: actions the episode allows, Stop included (TaskSpec; 0: not told).
        success_radius_m: the radius the agent is told to stop within (0: not told).
        views: the views every observation set of the episode will hold, in the task's
            order (AerialDojo-200K's protocol: the front view).
        odometry: whether observation sets carry odometry (AerialDojo-200K's protocol: no).
    """

    episode_id: str = ""
    object_name: str
    landmark_name: str
    direction: str
    description: str = ""
    reference_images: list[np.ndarray] = field(default_factory=list)
    action_budget: int = 0
    success_radius_m: float = 0.0
    views: tuple[str, ...] = ()
    odometry: bool = False


class Policy(Protocol):
    """What an agent node runs: reset per episode, one action per observation set.

    A policy may also have ``refused(reason: str) -> None``: the referee refused the action
    it returned last, for ``reason``, and the node's next ``act`` asks again on the same
    observation set (``tell_refused``). Without it the policy is simply asked again.
    """

    def reset(self, goal: GoalDescription) -> None:
        """Start a new episode with ``goal``."""

    def act(self, observation: AgentObservation) -> Action:
        """The next action, from this observation set and the policy's own memory."""


def tell_refused(policy: object, reason: str) -> None:
    """Hand the referee's refusal of ``policy``'s last action to it, where it takes it (an
    optional ``refused(reason)`` method, ``Policy`` and ``agos.policies.AgosPolicy``)."""
    refused = getattr(policy, "refused", None)
    if callable(refused):
        refused(reason)
