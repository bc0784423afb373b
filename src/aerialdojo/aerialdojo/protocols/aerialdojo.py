"""The AerialDojo-200K protocol: single-UAV object-goal search (sections 3.1-3.3, 4.1).

Rules (``AerialDojoReferee``): the sixteen actions of section 3.1 with their magnitudes; an
episode ends with an explicit Stop, at the first collision, or when the action budget is
used; a motion the scene's geofence cut short is reported, not a collision. The agent is
given the front RGB-D view and no odometry unless the run chooses four views or odometry
(``protocols.settings``). Metrics: ``metrics.aerialdojo`` at 3 m (primary) and 5 m, maps
then families averaged equally; reports break results down by split family (ID/OOD) and
goal type (SemanticOGS/ImageOGS) as well (section 3.3, appendix C). Every rule with the
paper's sentence: docs/protocols/aerialdojo.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aerialdojo.actions import STOP, Action, check_action
from aerialdojo.errors import InvalidActionError
from aerialdojo.events import EventKind, PoseTraceBuilder
from aerialdojo.metrics import aerialdojo as metrics
from aerialdojo.metrics.aggregate import RULE_MAP_FAMILY_EQUAL
from aerialdojo.protocols import BenchmarkProtocol, EpisodeRules, register
from aerialdojo.protocols.referee import (
    PlannedStep,
    SimCommand,
    SimOutcome,
    StepRequest,
    TeammateMessage,
    Turn,
    Verdict,
    check_agent,
    refuse_message,
)
from aerialdojo.protocols.settings import OBSERVATIONS, aerialdojo_observation, on_off
from aerialdojo.protocols.task import TaskDescription, aerialdojo_actions
from aerialdojo.tasks.episode import REPRESENTATION_IMAGE, REPRESENTATION_SEMANTIC, Episode
from aerialdojo.tasks.stats import suite_stats
from aerialdojo.tasks.suite import Suite, load_suite, validate_suite

#: What a step's message says of a motion the scene's geofence cut short.
GEOFENCE_NOTE = "held at the edge of the scene (geofence, not a collision)"


class AerialDojoReferee:
    """The rules of one AerialDojo episode (section 3.2, "Task execution").

    Args:
        episode: the episode.
        settings: the task manager's parameters; ``observation`` and ``odometry`` say what
            the agent is given (``protocols.settings``), recorded with the episode.
    """

    def __init__(self, episode: Episode, settings: Mapping[str, Any] | None = None) -> None:
        self.episode = episode
        self.views, self.odometry = aerialdojo_observation(settings or {})
        self.starts = dict.fromkeys(episode.agents, episode.start)
        self.scored_pose = episode.start
        self._used = 0
        self._ended = False

    @property
    def steps_used(self) -> int:
        return self._used

    @property
    def steps_left(self) -> int:
        return max(self.episode.action_budget - self._used, 0)

    def start_record(self) -> dict[str, Any]:
        """The episode's ground truth and its conditions, the observation setting included."""
        record = ground_truth_record(self.episode)
        record["conditions"] |= observation_conditions(self.views, self.odometry)
        return record

    def plan(self, request: StepRequest) -> PlannedStep:
        """Accept one of the sixteen actions with a legal magnitude.

        Raises:
            InvalidActionError: the episode ended, the agent is not in it, the step carries
                a message, or the action or its magnitude is not legal.
        """
        if self._ended:
            raise InvalidActionError(f"episode {self.episode.episode_id} has ended")
        check_agent(self.episode.episode_id, self.episode.agents, request.agent)
        refuse_message(request)
        check_action(Action(request.action, request.magnitude))
        if request.action == STOP:
            return PlannedStep(request=request, command=None)
        return PlannedStep(
            request=request,
            command=SimCommand(
                agent=request.agent,
                action=request.action,
                magnitude=request.magnitude,
                argument=request.argument,
            ),
        )

    def apply(self, planned: PlannedStep, outcome: SimOutcome | None) -> Verdict:
        """Count the action, then end the episode on Stop, a collision or the last action of
        the budget, in that order."""
        self._used += 1
        note = ""
        if outcome is not None:
            self.scored_pose = outcome.pose
            if outcome.geofenced:
                note = GEOFENCE_NOTE
        if planned.command is None:
            verdict = Verdict(kind=EventKind.STOPPED)
        elif outcome is not None and outcome.collided:
            verdict = Verdict(
                kind=EventKind.COLLIDED,
                reason=f"collided with {outcome.collision_object}",
                collision_object=outcome.collision_object,
            )
        elif self._used >= self.episode.action_budget:
            verdict = Verdict(kind=EventKind.BUDGET_EXHAUSTED)
        else:
            verdict = Verdict(kind=EventKind.STEP, reason=note)
        self._ended = verdict.done
        return verdict

    def turn(self) -> Turn | None:
        return None

    def opening_messages(self) -> tuple[TeammateMessage, ...]:
        return ()


def observation_conditions(views: tuple[str, ...], odometry: bool) -> dict[str, str]:
    """The observation setting as episode conditions: ``observation`` (``front`` or
    ``four_views``) and ``odometry`` (``on``/``off``)."""
    name = next(key for key, chosen in OBSERVATIONS.items() if chosen == views)
    return {"observation": name, "odometry": on_off(odometry)}


def ground_truth_record(episode: Episode) -> dict[str, Any]:
    """What the evaluator must know about an episode to score it (STARTED's episode_json).

    Only ground truth and bookkeeping: the target anchor, the reference length, the budget,
    and the episode's task groups (``conditions``: ID/OOD, SemanticOGS/ImageOGS).
    """
    anchor, start = episode.target_anchor, episode.start
    return {
        "episode_id": episode.episode_id,
        "benchmark": episode.benchmark,
        "scene": episode.scene,
        "family": episode.family,
        "setting": episode.setting,
        "split": episode.split,
        "action_budget": episode.action_budget,
        "start": [start.x, start.y, start.z, start.yaw],
        "target": [anchor.x, anchor.y, anchor.z],
        "reference_length_m": episode.reference.length_m,
        "success_radius_m": episode.success_radius_m,
        "conditions": {"distribution": episode.distribution, "goal": episode.goal.representation},
    }


def describe_task(episode: Episode, suite: Suite, settings: Mapping[str, Any]) -> TaskDescription:
    """Goal, action set, budget and what the agent observes (front view and no odometry
    unless the run chose otherwise), never the target's coordinates; an ImageOGS agent gets
    the reference image instead of the description (section 3.2, "Task definition").

    Raises:
        InvalidActionError: an ImageOGS episode without its reference image.
    """
    image_goal = episode.goal.representation == REPRESENTATION_IMAGE
    reference = suite.reference_image_path(episode)
    if image_goal and reference is None:
        raise InvalidActionError(
            f"episode {episode.episode_id}: ImageOGS goal without a reference image"
        )
    views, odometry = aerialdojo_observation(settings)
    return TaskDescription(
        episode_id=episode.episode_id,
        benchmark=episode.benchmark,
        scene=episode.scene,
        setting=episode.setting,
        object_name=episode.goal.object_name,
        landmark_name=episode.goal.landmark_name,
        direction=episode.goal.direction,
        image_goal=image_goal,
        description="" if image_goal else episode.goal.description,
        reference_images=(reference,) if image_goal and reference is not None else (),
        agents=episode.agents,
        actions=aerialdojo_actions(episode.agents),
        action_budget=episode.action_budget,
        success_radius_m=episode.success_radius_m,
        global_localization=False,
        views=views,
        odometry=odometry,
    )


def _referee(episode: Episode, _suite: Any, settings: Mapping[str, Any]) -> AerialDojoReferee:
    return AerialDojoReferee(episode, settings)


PROTOCOL = register(
    BenchmarkProtocol(
        name="aerialdojo",
        title="AerialDojo-200K",
        default_radii=metrics.DEFAULT_RADII,
        aggregation_rule=RULE_MAP_FAMILY_EQUAL,
        metric_specs=metrics.metric_specs,
        score_episode=metrics.score_episode,
        trace_builder=PoseTraceBuilder,
        radar_chart=True,
        headline_by_setting=True,
        group_keys=("distribution", "goal"),
        condition_labels={
            "distribution": {"id": "ID", "ood": "OOD"},
            "goal": {REPRESENTATION_SEMANTIC: "SemanticOGS", REPRESENTATION_IMAGE: "ImageOGS"},
            "observation": {"front": "front view", "four_views": "four views"},
        },
        condition_titles={"distribution": "split family", "goal": "goal type"},
        # docs/protocols/aerialdojo.md, "Scoring versions": which rule moved which number.
        scoring_version=3,
        scoring_settings=("observation", "odometry"),
        episodes=EpisodeRules(
            load_suite=load_suite,
            validate_suite=validate_suite,
            referee=_referee,
            describe_task=describe_task,
            ground_truth_record=ground_truth_record,
            suite_stats=suite_stats,
        ),
    )
)
