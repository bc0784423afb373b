"""The AerialDojo-200K model agent: the fixed prompt of appendix A around the current RGB-D
views, the goal, the termination conditions and the interaction history (section 3.3,
"Benchmark framework"), one single-action JSON reply per step. The prompt shows the views and
odometry the task gives (the paper's protocol: the front view, no odometry)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from aerialdojo.actions import AERIALDOJO_ACTIONS, Action, ActionType
from aerialdojo.agents.observation import AgentObservation, GoalDescription, ViewData
from aerialdojo.agents.vlm.chat import Message
from aerialdojo.agents.vlm.config import VlmSettings
from aerialdojo.agents.vlm.images import (
    EncodedImage,
    encode_concurrently,
    encode_depth,
    encode_rgb,
    labelled_image,
)
from aerialdojo.agents.vlm.parsing import parse_aerialdojo_action
from aerialdojo.agents.vlm.prompts import PromptSet, prompt_directory
from aerialdojo.agents.vlm.session import ModelSession
from aerialdojo.errors import ConfigError
from aerialdojo.geometry import Pose

#: The paper's wheelbase, which the prompt states (AerialDojo-200K, section 3.1, "Aerial
#: embodiment"); no simulator here models it. The collision radius and the field of view
#: the prompt states are the run's own (``collision_radius_m``, the camera intrinsics).
WHEELBASE_MM = 250
#: The paper's collision radius, where the run does not say its own.
COLLISION_RADIUS_M = 0.25
#: The prompt's radius when the task does not say (section 3.2: Stop within 3 m).
DEFAULT_RADIUS_M = 3.0
#: The views shown when the goal does not name them (appendix A: the front view).
DEFAULT_VIEWS = ("front",)
REPLY_FORMAT = (
    '{"action": "<action name>", "magnitude": <one of its magnitudes>}\n'
    'For Stop: {"action": "Stop"}'
)

_SYSTEM_FIELDS = frozenset(
    {
        "inputs",
        "depth_max_m",
        "action_list",
        "wheelbase_mm",
        "collision_radius_mm",
        "budget",
        "success_radius_m",
        "reply_format",
    }
)
_USER_FIELDS = frozenset(
    {
        "object_name",
        "landmark_name",
        "direction",
        "description",
        "step",
        "budget",
        "steps_left",
        "history",
        "odometry",
    }
)
#: File stem -> the placeholders the code fills (docs/vlm_agents.md lists them).
TEMPLATE_FIELDS: dict[str, frozenset[str]] = {
    "system": _SYSTEM_FIELDS,
    "user_semantic": _USER_FIELDS,
    "user_image": _USER_FIELDS - {"description"},
    "repair": frozenset({"error", "reply_format"}),
}


def action_list(action_set: Sequence[ActionType] = AERIALDOJO_ACTIONS) -> str:
    """The action set as the prompt lists it: each name with its magnitudes."""
    lines = []
    for kind in action_set:
        if kind.magnitudes:
            magnitudes = " or ".join(f"{m:g}" for m in kind.magnitudes)
            lines.append(f"- {kind.name}: magnitude {magnitudes} ({kind.unit})")
        else:
            lines.append(f"- {kind.name}: no magnitude; declares that you have found the target")
    return "\n".join(lines)


def parse_fallback(text: str) -> Action:
    """``"Stop"`` or ``"<Action> <magnitude>"`` (e.g. ``"TurnLeft 15"``) as an Action.

    Raises:
        ConfigError: not a legal AerialDojo action.
    """
    name, _, magnitude = text.strip().partition(" ")
    try:
        return parse_aerialdojo_action(
            f'{{"action": "{name}", "magnitude": {magnitude.strip() or "null"}}}'
        )
    except Exception as error:
        raise ConfigError(f"vlm_fallback {text!r} is not a legal action: {error}") from error


def describe_action(action: Action) -> dict[str, Any]:
    """An action as transcripts record it."""
    return {"action": action.name, "magnitude": action.magnitude}


@dataclass
class VlmAerialDojoPolicy:
    """A ``Policy`` that asks a vision-language model for every action.

    Every view the goal names is shown as RGB and rendered depth, and odometry where the
    goal gives it.

    Args:
        session: the model conversation (live or replayed).
        prompts: the templates of ``TEMPLATE_FIELDS``.
        image_format: ``png`` or ``jpeg`` for RGB (depth is always PNG).
        depth_max_m: the depth rendering's far limit, as the prompt states it.
        history: previous actions shown (the interaction history's window).
        fallback: the action taken when no reply is legal within the repair turns.
        description: the model and server, as the agent node announces them.
        collision_radius_m: the collision radius the run uses (the bridge's
            ``agent_radius_m``), as the prompt states it.
    """

    session: ModelSession
    prompts: PromptSet
    image_format: str = "png"
    depth_max_m: float = 50.0
    history: int = 8
    fallback: Action = field(default_factory=lambda: Action("Stop"))
    description: str = ""
    collision_radius_m: float = COLLISION_RADIUS_M
    _goal: GoalDescription | None = None
    _views: tuple[str, ...] = DEFAULT_VIEWS
    _actions: list[str] = field(default_factory=list)
    _references: list[EncodedImage] = field(default_factory=list)
    _system: str = ""
    _refusal: str = ""

    def reset(self, goal: GoalDescription) -> None:
        """Start a new episode (or a rerun of one) with ``goal``; the system prompt follows
        with the first observation, whose cameras say the field of view."""
        self._goal = goal
        self._views = goal.views or DEFAULT_VIEWS
        self._actions = []
        self._refusal = ""
        self._references = [encode_rgb(image, self.image_format) for image in goal.reference_images]
        self.session.start_episode(goal.episode_id)
        self._system = ""

    def act(self, observation: AgentObservation) -> Action:
        """Ask the model for the next action.

        Raises:
            ModelServerError: the server failed (an infrastructure failure).
        """
        goal = self._goal
        if goal is None:
            raise RuntimeError("act() before reset()")
        outcome = self.session.decide(
            self.messages(observation),
            parse_aerialdojo_action,
            lambda error: self.prompts.render(
                "repair", {"error": error, "reply_format": REPLY_FORMAT}
            ),
            self.fallback,
            describe_action,
        )
        action = outcome.value
        note = " (fallback: no legal reply)" if outcome.fallback else ""
        magnitude = f" {action.magnitude:g}" if action.name != "Stop" else ""
        self._actions.append(f"{action.name}{magnitude}{note}")
        self._refusal = ""
        return action

    def refused(self, reason: str) -> None:
        """The referee refused the last action: it leaves the history (it was not
        executed) and the next request, on the same observation, says why."""
        last = self._actions.pop() if self._actions else "your last action"
        self._refusal = self.prompts.render(
            "repair",
            {"error": f"the referee refused {last}: {reason}", "reply_format": REPLY_FORMAT},
        )

    def messages(self, observation: AgentObservation) -> list[Message]:
        """The request of one decision: system prompt, user prompt, images."""
        goal = self._goal
        assert goal is not None
        step = len(self._actions) + 1
        shown = self._actions[-self.history :] if self.history else []
        first = step - len(shown)
        history = "\n".join(f"{first + k}. {text}" for k, text in enumerate(shown)) or "(none)"
        odometry = observation.odometry
        image_goal = bool(self._references)
        text = self.prompts.render(
            "user_image" if image_goal else "user_semantic",
            {
                "object_name": goal.object_name,
                "landmark_name": goal.landmark_name,
                "direction": goal.direction,
                "description": goal.description,
                "step": step,
                "budget": goal.action_budget or "?",
                "steps_left": max(goal.action_budget - step + 1, 0) if goal.action_budget else "?",
                "history": history,
                "odometry": _odometry(odometry),
            },
        )
        content: list[dict[str, Any]] = [{"type": "text", "text": text}]
        if self._refusal:
            content.append({"type": "text", "text": self._refusal})
        for index, image in enumerate(self._references, start=1):
            content += labelled_image(f"Reference image {index} of the target:", image)
        views = []
        for name in self._views:
            view = observation.views.get(name)
            if view is None:
                raise ValueError(f"the observation has no {name!r} view, which the goal names")
            views.append((name, view))
        encoded = encode_concurrently(
            [
                encoding
                for _, view in views
                for encoding in (
                    partial(encode_rgb, view.rgb, self.image_format),
                    partial(encode_depth, view.depth, self.depth_max_m),
                )
            ]
        )
        for index, (name, _) in enumerate(views):
            content += labelled_image(f"{name} view, RGB:", encoded[2 * index])
            content += labelled_image(f"{name} view, depth:", encoded[2 * index + 1])
        if not self._system:
            self._system = self._system_prompt(goal, observation)
        return [
            {"role": "system", "content": self._system},
            {"role": "user", "content": content},
        ]

    def _system_prompt(self, goal: GoalDescription, observation: AgentObservation) -> str:
        """The system prompt, with the field of view of the cameras that took
        ``observation`` and the run's collision radius (appendix A lists both)."""
        return self.prompts.render(
            "system",
            {
                "inputs": self._inputs(goal, observation),
                "depth_max_m": f"{self.depth_max_m:g}",
                "action_list": action_list(),
                "wheelbase_mm": WHEELBASE_MM,
                "collision_radius_mm": f"{1000.0 * self.collision_radius_m:g}",
                "budget": goal.action_budget or "the assigned number of",
                "success_radius_m": f"{goal.success_radius_m or DEFAULT_RADIUS_M:g}",
                "reply_format": REPLY_FORMAT,
            },
        )

    def _inputs(self, goal: GoalDescription, observation: AgentObservation) -> str:
        """The system prompt's list of inputs: the views with their field of view, and
        odometry where given."""
        fov = sorted({f"{horizontal_fov_deg(observation.views[name]):.0f}" for name in self._views})
        lines = [
            f"- RGB and depth images from your {', '.join(self._views)} camera(s): "
            f"{' / '.join(fov)}-degree horizontal field of view, taken after your last action."
        ]
        if goal.odometry:
            lines.append(
                "- Odometry: your position and heading relative to where the episode started "
                "(x forward, y left, z up of the start)."
            )
        return "\n".join(lines)


def horizontal_fov_deg(view: ViewData) -> float:
    """The horizontal field of view of the camera that took ``view``, degrees, from its
    intrinsics and image width."""
    width = view.rgb.shape[1]
    return math.degrees(2.0 * math.atan2(width / 2.0, float(view.intrinsics[0, 0])))


def _odometry(pose: Pose | None) -> str:
    """The user prompt's odometry sentence ("" where the task gives none)."""
    if pose is None:
        return ""
    return (
        f" Odometry: x {pose.x:.1f} m forward, y {pose.y:.1f} m left, z {pose.z:.1f} m up of "
        f"the start, heading {math.degrees(pose.yaw):.0f} deg from the start's."
    )


def vlm_aerialdojo_policy(values: Mapping[str, Any], where: str) -> VlmAerialDojoPolicy:
    """The model agent a ``uav_agent`` node's ``vlm_*`` parameters describe.

    Raises:
        ConfigError: settings no request could use, a fallback that is no legal action, or a
            prompt template with an unknown placeholder; naming ``<where>.<parameter>``.
    """
    settings = VlmSettings.from_parameters(values, where)
    try:
        fallback = parse_fallback(settings.fallback)
    except ConfigError as error:
        raise ConfigError(f"{where}.{error}") from error
    return VlmAerialDojoPolicy(
        session=settings.session("uav"),
        prompts=PromptSet.load(
            prompt_directory(settings.prompt_dir, "aerialdojo"), TEMPLATE_FIELDS
        ),
        image_format=settings.image_format,
        depth_max_m=settings.depth_max_m,
        history=settings.history,
        fallback=fallback,
        description=settings.description,
        collision_radius_m=float(values.get("collision_radius_m", COLLISION_RADIUS_M)),
    )
