"""Task manager node: serves the episodes of a suite and executes agents' actions.

Services: ``/aerialdojo/list_episodes``, ``/aerialdojo/start_episode``, ``/aerialdojo/step``.
Topics: ``/aerialdojo/task`` (TaskSpec, latched) and ``/aerialdojo/episode_events``
(EpisodeEvent, evaluator only). It enforces the action set, the budget and termination
(Stop, collision, budget) on top of the bridge's ``/sim/reset`` and ``/sim/execute``. A bridge
that fails or does not answer ends the attempt as an infrastructure failure, which is rerun,
never scored against the agent; so does an agent reporting on ``/aerialdojo/agent_faults``
that its policy's own service failed (a model server), and agents whose node is gone. So does
a bridge that leaves the graph, or is replaced by another (a restarted one announces a new
process on ``/aerialdojo/nodes``), during the attempt: at once, without waiting out
``sim_timeout_s``, because the agents may be waiting for frames the old bridge never finished
publishing. A reset names the subscribers this node sees on the bridge's topics, and the
bridge answers it only once its publishers have matched them. So does an agent restarted
during the attempt (``runner.RESTARTABLE``): a new process of an agent (its announcement on
``/aerialdojo/nodes``, or its first step) has lost its memory of the attempt
(``step_origin``). Each step names the episode and attempt it was decided for
(``TaskSpec.attempt``): one decided for another (an agent that was thinking on the previous
attempt's observations when the episode was rerun) is refused as stale, using no budget and
counting as no action of the agent; one that names no episode (a client started by hand) is
the running attempt's.
What the agent does is its own and scored (issue 25): a refused step goes back to it with the
reason, and more than ``refusals_allowed`` refusals in a row end the episode as
``INVALID_ACTION``; agents that send no action for ``agent_timeout_s`` end it as
``AGENT_TIMEOUT``; an agent whose policy raised an error of its own says so in its last step
(``Step.Request.agent_error``) and ends it as ``AGENT_ERROR``. A second attempt of an
episode (a rerun, or ``start_episode`` of an episode that ended) carries the next attempt
number and supersedes the first. Invalid requests are answered with a reason; every request
is queued and answered (``SERVICE_QOS``).

In an automatic run, ``RUN_STARTED`` names the selection before the first episode, so that
whoever scores the run can list the episodes that never started. The run's journal
(``run_journal``, in the run directory) says how far the run is: a task manager started in
place of one that died (``runner.RESTARTABLE``) resumes from it. It ends the attempt its
predecessor left under way as an infrastructure failure that says so, reruns that episode
within ``max_attempts`` and serves the rest; no episode that ended is served again.

On a robot (``operator_gate``), every attempt waits for the operator: the next episode is
announced on ``/aerialdojo/operator/prompt`` (its starts and task), and starts when the
operator's console calls ``/aerialdojo/operator/start``. Where the suite comes from a
surveyed site, an attempt starts only where the bridge measured each agent within the
site's start tolerance of its task's start; otherwise the prompt says how far off it is.
A fault the bridge reports outside a request (``/sim/faults``: a robot's safety gate that
stopped it while the agent thinks) ends the running attempt at once: an operator/safety
intervention (``INTERVENTION``: counted and reported, never scored, not retried in the run;
``aerialdojo rerun`` runs it) or an infrastructure failure.

The rules are not here: the suite's benchmark protocol (``aerialdojo.protocols``) gives each
episode a referee that plans every requested action (refusals use no budget) and applies
what the simulator did; this node only carries requests, commands, events and messages.
Where the referee hands a candidate between agents (AGOS) it is published on
``/agos/candidates``, and a message a decision carried on ``/agos/messages``; where agents
take turns, whose decision comes next (with how many messages it must have) goes on
``/agos/turn`` after each decision, so a run does not depend on process timing. Each step's
ground-truth facts go to the evaluator in its event's ``episode_json``.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import rclpy
from aerialdojo_interfaces.msg import (
    AgentMessage,
    AgosTurn,
    BackendFault,
    Candidate,
    EpisodeEvent,
    EpisodePrompt,
    NodeInfo,
    TaskSpec,
)
from aerialdojo_interfaces.srv import ListEpisodes, SimExecute, SimReset, StartEpisode, Step
from builtin_interfaces.msg import Time
from rclpy.client import Client
from rclpy.duration import Duration
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from std_msgs.msg import Header
from std_srvs.srv import Trigger

from aerialdojo.errors import AerialDojoError, ConfigError, DomainTakenError
from aerialdojo.events import ENDING_NAMES
from aerialdojo.geometry import Pose, wrap_angle
from aerialdojo.graph import (
    ACTING_NODES,
    BRIDGE_NODE,
    EVALUATOR_NODE,
    NAMESPACES,
    UNWATCHED_TOPICS,
    selected_episodes,
)
from aerialdojo.nodes.common import (
    RunFilter,
    announce_node,
    declare_node_parameters,
    node_process,
    param,
    process_name,
    time_ns,
    time_of_ns,
    wall_timer,
)
from aerialdojo.nodes.conversions import (
    candidate_msg,
    pose_from_msg,
    pose_msg,
    spawned_object_msg,
    task_spec_msg,
    turn_msg,
)
from aerialdojo.nodes.domain_guard import discovery_window_s, refuse_if_domain_taken
from aerialdojo.nodes.qos import (
    EVENTS_QOS,
    FAULTS_QOS,
    HANDOFF_QOS,
    NODES_QOS,
    SERVICE_QOS,
    TASK_QOS,
    publisher_without_events,
)
from aerialdojo.params import NODE_PARAMETERS
from aerialdojo.protocols import EpisodeLike, load_suite
from aerialdojo.protocols.referee import (
    HandoffCandidate,
    PlannedStep,
    Referee,
    RefusalCount,
    SimOutcome,
    StepRequest,
    TeammateMessage,
    Verdict,
)
from aerialdojo.robot.console import task_line
from aerialdojo.run_journal import JOURNAL_FILE, JournalError, RunJournal
from aerialdojo.runtime import (
    DOMAIN_CHECKED_ENV,
    NODES_TOPIC,
    PROGRESS_LISTENER_ENV,
    RUN_DIR_ENV,
)
from aerialdojo.step_origin import (
    AgentProcesses,
    attempt_name,
    restarted_agent_message,
    stale_refusal,
)
from aerialdojo.tasks.records import suite_identity
from aerialdojo.tasks.site_record import StartTolerance
from aerialdojo.tasks.suite import Suite, resolve_suite
from aerialdojo.tf_tree import MAP_FRAME

_TERMINAL_NAMES = {int(kind): name for kind, name in ENDING_NAMES.items()}
#: How often the running attempt's bridge and agents are checked, and a bridge call looks
#: whether its bridge is gone, wall seconds.
_ATTEMPT_WATCH_S = 0.5
#: Longest wait for the progress line's acknowledgement of RUN_STARTED once it is seen.
_ACK_WAIT_S = 5.0
_CALL_POLL_S = 0.2
#: The share of ``sim_timeout_s`` a reset may spend waiting for the bridge's publishers to
#: match the run's subscribers: the rest is the scene's load, and the answer.
_MATCH_SHARE = 0.5
#: The endings of an attempt that are not the agent's: never scored.
_EXCLUDED = (EpisodeEvent.INFRA_FAILURE, EpisodeEvent.INTERVENTION)
#: The agent each acting node acts for, by the node's fully qualified name (``NodeInfo.node``).
_AGENT_OF_NODE = {f"/{NAMESPACES[node]}/{node}": NAMESPACES[node] for node in ACTING_NODES}


@dataclass
class _Attempt:
    """The running (or just finished) attempt of one episode."""

    episode: EpisodeLike
    referee: Referee
    attempt: int
    index: int
    count: int
    stamp: Time
    refusals: RefusalCount = field(default_factory=RefusalCount)
    termination: int | None = None
    finished: threading.Event = field(default_factory=threading.Event)
    #: When the agents last asked for a step or got an answer (monotonic seconds).
    last_activity: float = field(default_factory=time.monotonic)
    #: The bridge process that reset it (``<host>:<pid>``), and how many bridge
    #: announcements had arrived then: one arriving later from another process replaced it.
    bridge: str = ""
    announcements_at_start: int = 0
    #: The process acting for each agent: another one during the attempt replaced it.
    agents: AgentProcesses = field(default_factory=AgentProcesses)

    @property
    def pose(self) -> Pose:
        """The scored agent's pose, which events carry."""
        return self.referee.scored_pose


class TaskManager(Node):
    """Serves a task suite over services and runs it episode by episode."""

    def __init__(self) -> None:
        super().__init__("task_manager")
        self._run_dir = os.environ.get(RUN_DIR_ENV, "")
        journal_path = Path(self._run_dir) / JOURNAL_FILE if self._run_dir else None
        #: This task manager was started in place of one that died: its run's journal exists.
        self._resuming = journal_path is not None and journal_path.exists()
        # Before it serves or announces anything, which another run's agents, bridge and
        # evaluator in the domain would take for their own run's; unless its launcher holds
        # the domain and has looked already (a run started beside it is refused by the
        # other run's own checks), or it takes over its own run (the graph may still list
        # the predecessor, killed outright, which would be taken for another run).
        domain = os.environ.get("ROS_DOMAIN_ID", "")
        if not self._resuming and (not domain or os.environ.get(DOMAIN_CHECKED_ENV) != domain):
            window_s = discovery_window_s()
            refuse_if_domain_taken(self, window_s)
            if window_s:  # says where a graph's first seconds went
                self.get_logger().info(
                    f"no other run's task manager in ROS domain {domain or 0} "
                    f"(listened up to {window_s:g} s)"
                )
        declare_node_parameters(self, "task_manager")
        announce_node(self)
        self._run = RunFilter(self)
        suite_path = resolve_suite(param(self, "suite"))
        self._protocol, self._suite = load_suite(suite_path)
        #: Named in RUN_STARTED, so that a run's record says which suite it ran.
        self._suite_identity = suite_identity(suite_path, self._suite.name)
        assert self._protocol.episodes is not None  # load_suite refuses the others
        self._rules = self._protocol.episodes
        self._settings: dict[str, Any] = {
            spec.name: param(self, spec.name) for spec in NODE_PARAMETERS["task_manager"]
        }
        problems = self._rules.check_settings(self._settings) if self._rules.check_settings else []
        if problems:
            raise ConfigError(f"task_manager: {'; '.join(problems)}")
        self._selection = selected_episodes(self._suite, self._settings)
        # Once: the start-up check looks ten times a second, and a selection can be 200,000.
        self._selection_agents = {
            agent
            for episode_id in self._selection
            for agent in self._suite.episode(episode_id).agents
        }
        site = self._suite.site if isinstance(self._suite, Suite) else None
        #: How far a robot may be placed from its task's start (suites of a surveyed site).
        self._start_tolerance: StartTolerance | None = site.start_tolerance if site else None
        self._operator_gate = bool(param(self, "operator_gate"))
        self._operator_go = threading.Event()
        #: The episode whose attempt waits for the operator's start; None: none waits.
        self._awaiting_operator: str | None = None
        self._sim_timeout_s = float(param(self, "sim_timeout_s"))
        self._agent_timeout_s = float(param(self, "agent_timeout_s"))
        self._refusals_allowed = int(param(self, "refusals_allowed"))
        self._lock = threading.Lock()
        self._attempt: _Attempt | None = None
        self._attempts: dict[str, int] = {}  # attempts so far, by episode id
        self._last_stamp = Time()  # the latest stamp the bridge gave; resets must be later
        #: The bridge processes of this run, in the order they announced themselves
        #: (appended on the subscription's thread; read anywhere).
        self._bridge_announcements: list[str] = []
        #: The latest process each agent of this run announced (written on the
        #: subscription's thread; read anywhere).
        self._agent_processes: dict[str, str] = {}
        #: Where an automatic run keeps its journal (None: served by hand, or no run
        #: directory), and the journal once there is one.
        self._journal_path = journal_path if param(self, "auto_run") else None
        self._journal: RunJournal | None = None
        if self._resuming and self._journal_path is not None:
            # Refused (JournalError) before anything is served: main ends the node with it.
            self._journal = RunJournal.load(self._journal_path, self._run.run_id, self._selection)
            self._last_stamp = time_of_ns(self._journal.last_stamp_ns)
            self.get_logger().warning(
                f"resuming run {self._run.run_id!r} from {self._journal_path}: started in "
                "place of a task manager that ended during the run"
            )
        #: When the progress line was first seen subscribed (``_progress_listening``).
        self._progress_seen_at: float | None = None

        # Service callbacks and the episode thread wait on the bridge's answers, so these
        # come in on a node of their own with an executor and a thread of its own (``main``),
        # as do the nodes' announcements and the attempt's watch, which must be heard while a
        # call waits. Not rclpy's multi-threaded executor: up to Jazzy it hands a ready
        # callback to its pool again and again while the first copy waits there
        # (ros2/rclpy#1452; ``spinning.run_with_realtime_thread``). Its spin thread then
        # ran hot for whole episodes, and steps took four to eight times as long.
        self.bridge_link = Node(
            "task_manager_bridge_link",
            context=self.context,
            # Not the command line's remaps: ``__node:=`` would give it this node's name.
            use_global_arguments=False,
            start_parameter_services=False,
        )
        self._reset_client = self.bridge_link.create_client(SimReset, "/sim/reset")
        self._execute_client = self.bridge_link.create_client(SimExecute, "/sim/execute")
        # Without event handlers: the services' executor rebuilds its wait set at every
        # request; the agents and the evaluator still warn.
        self._task_pub = publisher_without_events(self, TaskSpec, "/aerialdojo/task", TASK_QOS)
        self._candidates_pub = publisher_without_events(
            self, Candidate, "/agos/candidates", HANDOFF_QOS
        )
        self._turn_pub = publisher_without_events(self, AgosTurn, "/agos/turn", TASK_QOS)
        self._messages_pub = publisher_without_events(
            self, AgentMessage, "/agos/messages", HANDOFF_QOS
        )
        self._events_pub = publisher_without_events(
            self, EpisodeEvent, "/aerialdojo/episode_events", EVENTS_QOS
        )
        for srv_type, name, callback in (
            (ListEpisodes, "/aerialdojo/list_episodes", self._on_list),
            (StartEpisode, "/aerialdojo/start_episode", self._on_start),
            (Step, "/aerialdojo/step", self._on_step),
        ):
            self.create_service(srv_type, name, callback, qos_profile=SERVICE_QOS)
        self.create_subscription(
            AgentMessage, "/aerialdojo/agent_faults", self._on_agent_fault, FAULTS_QOS
        )
        self.create_subscription(BackendFault, "/sim/faults", self._on_backend_fault, FAULTS_QOS)
        self.bridge_link.create_subscription(NodeInfo, NODES_TOPIC, self._on_node_info, NODES_QOS)
        wall_timer(self.bridge_link, _ATTEMPT_WATCH_S, self._watch_attempt)
        self._prompt_pub = publisher_without_events(
            self, EpisodePrompt, "/aerialdojo/operator/prompt", TASK_QOS
        )
        self.create_service(Trigger, "/aerialdojo/operator/start", self._on_operator_start)
        self.get_logger().info(
            f"suite {self._suite.name} ({self._protocol.title}): "
            f"{len(self._selection)} episodes selected"
        )

    # -- episode selection --------------------------------------------------------------

    def _on_list(
        self, request: ListEpisodes.Request, response: ListEpisodes.Response
    ) -> ListEpisodes.Response:
        try:
            response.episode_ids = self._suite.select(request.filter)
        except AerialDojoError as error:
            response.message = str(error)
            return response
        response.success = True
        return response

    # -- starting ----------------------------------------------------------------------

    def _on_start(
        self, request: StartEpisode.Request, response: StartEpisode.Response
    ) -> StartEpisode.Response:
        if self._run.foreign(request.run_id, "a start_episode request"):
            response.message = self._run.refusal(request.run_id)
            return response
        try:
            episode = self._suite.episode(request.episode_id)
        except KeyError as error:
            response.message = str(error.args[0])
            return response
        attempt, message = self.start(episode, index=0, count=1)
        response.message = message
        if attempt is not None:
            response.success = True
            response.task = self._task_msg(attempt)
            response.stamp = attempt.stamp
        return response

    def start(self, episode: EpisodeLike, *, index: int, count: int) -> tuple[_Attempt | None, str]:
        """Reset the simulator for the next attempt of ``episode`` and announce it; returns
        the attempt, or None and the reason it could not start."""
        with self._lock:
            if self._attempt is not None and self._attempt.termination is None:
                return None, (
                    f"episode {self._attempt.episode.episode_id} is still running; "
                    "finish it (Stop) before starting another"
                )
            attempt = self._attempts.get(episode.episode_id, 0)
            self._attempts[episode.episode_id] = attempt + 1
            referee = self._rules.referee(episode, self._suite, self._settings)
            request = SimReset.Request(
                run_id=self._run.run_id,
                episode_id=episode.episode_id,
                scene=episode.scene,
                agents=list(referee.starts),
                poses=[pose_msg(pose) for pose in referee.starts.values()],
                objects=[spawned_object_msg(spawn) for spawn in episode.spawns],
                after=self._last_stamp,
                match_timeout_s=self._sim_timeout_s * _MATCH_SHARE,
            )
            result, reason = self._call(self._reset_client, request, before=self._subscribed)
            refusal = reason if result is None else result.message
            if result is not None and result.success:
                self._last_stamp = result.stamp
                placed = dict(zip(request.agents, map(pose_from_msg, result.poses), strict=False))
                refusal = self._placement_refusal(referee.starts, placed)
            if refusal:
                if self._operator_gate:
                    # Nothing started: the operator hears why and tries again.
                    self._attempts[episode.episode_id] = attempt
                    return None, refusal
                kind = (
                    EpisodeEvent.INTERVENTION
                    if result is not None and result.intervention
                    else EpisodeEvent.INFRA_FAILURE
                )
                self._publish_event(
                    _Attempt(episode, referee, attempt, index, count, Time()), kind, message=refusal
                )
                return None, f"the episode could not start: {refusal}"
            started = _Attempt(
                episode,
                referee,
                attempt,
                index,
                count,
                result.stamp,
                RefusalCount(self._refusals_allowed),
                bridge=result.bridge_process,
                announcements_at_start=len(self._bridge_announcements),
                agents=AgentProcesses.at_start(self._agent_processes, episode.agents),
            )
            self._attempt = started
            record = referee.start_record()
            placement = _placement_record(referee.starts, placed)
            if placement:
                record["placement"] = placement
            self._publish_event(started, EpisodeEvent.STARTED, episode_json=json.dumps(record))
            self._task_pub.publish(self._task_msg(started))
            for message in referee.opening_messages():
                self._publish_message(message, started)
            self._publish_turn(started)
            self.get_logger().info(
                f"episode {index + 1}/{count} {episode.episode_id} started "
                f"({attempt_name(attempt)})"
            )
            return started, "started"

    def _placement_refusal(self, starts: dict[str, Pose], placed: dict[str, Pose]) -> str:
        """Why the agents the bridge placed may not start (a robot placed too far from its
        start), or "" when they may."""
        if self._start_tolerance is None:
            return ""
        refusals = [
            self._start_tolerance.refusal(agent, starts[agent], pose)
            for agent, pose in placed.items()
        ]
        return "; ".join(filter(None, refusals))

    def _task_msg(self, attempt: _Attempt) -> TaskSpec:
        task = self._rules.describe_task(attempt.episode, self._suite, self._settings)
        message = task_spec_msg(task, Header(stamp=attempt.stamp, frame_id=MAP_FRAME))
        message.run_id = self._run.run_id
        message.attempt = attempt.attempt
        return message

    # -- stepping ----------------------------------------------------------------------

    def _on_step(self, request: Step.Request, response: Step.Response) -> Step.Response:
        with self._quiet_on_shutdown():
            return self._answer_step(request, response)

    def _answer_step(self, request: Step.Request, response: Step.Response) -> Step.Response:
        if self._run.foreign(request.run_id, "a step request"):
            # Answered (a service answers every request), and nothing else: no budget, no
            # refusal counted, no event.
            response.message = self._run.refusal(request.run_id)
            return response
        with self._lock:
            attempt = self._attempt
            if attempt is None or attempt.termination is not None:
                response.message = "no episode is running; start one first"
                # Done: an agent whose step outlived its episode (its task manager died and
                # one resumed the run) waits for the next task instead of asking again.
                response.done = True
                return response
            stale = stale_refusal(
                request.episode_id, request.attempt, attempt.episode.episode_id, attempt.attempt
            )
            if stale:
                # Done: the agent takes the running attempt's task (latched) and acts on it.
                # Not its activity either: the running attempt has not heard from it.
                response.message = stale
                response.done = True
                return response
            if ended := attempt.agents.replaced(request.agent, request.agent_process):
                # The step names the agent's process now, whether or not its announcement has
                # come: without it, the held one (the process that ended) would be the next
                # attempt's, and the new process would end that attempt too.
                self._agent_processes[request.agent] = request.agent_process
                self._end_restarted(attempt, request.agent, ended)
                response.message = restarted_agent_message(request.agent, ended)
                response.done = True
                return response
            if request.agent_error and request.agent in attempt.episode.agents:
                self._end_agent_error(attempt, request, response)
                return response
            attempt.last_activity = time.monotonic()
            try:
                return self._step(attempt, request, response)
            finally:
                attempt.last_activity = time.monotonic()

    def _step(
        self, attempt: _Attempt, request: Step.Request, response: Step.Response
    ) -> Step.Response:
        referee = attempt.referee
        asked = StepRequest(
            agent=request.agent,
            action=request.action,
            magnitude=request.magnitude,
            argument=request.argument,
            teammate_message=request.teammate_message,
        )
        try:
            planned = referee.plan(asked)
        except AerialDojoError as error:
            response.message = str(error)
            response.steps_used = referee.steps_used
            response.steps_left = referee.steps_left
            if request.agent in attempt.episode.agents and attempt.refusals.refused(request.agent):
                self._end_invalid(attempt, request, str(error), response)
            return response
        attempt.refusals.accepted(request.agent)
        response.accepted = True
        kind, reason = self._execute(attempt, request, planned)
        response.collided = kind == EpisodeEvent.COLLIDED
        response.done = kind != EpisodeEvent.STEP
        response.termination = kind if response.done else 0
        response.steps_used = referee.steps_used
        response.steps_left = referee.steps_left
        response.stamp = attempt.stamp
        response.message = ": ".join(filter(None, (_TERMINAL_NAMES.get(kind, ""), reason)))
        return response

    def _end_invalid(
        self, attempt: _Attempt, request: Step.Request, reason: str, response: Step.Response
    ) -> None:
        """The refusal after ``refusals_allowed`` in a row: the episode ends as the agent's
        decision failure, scored (docs/protocols/: where the paper names no rule for an
        illegal action, the episode fails with termination ``invalid_action``)."""
        refused = attempt.refusals.in_a_row(request.agent)
        message = f"{request.agent}: {refused} refused steps in a row; the last: {reason}"
        self._finish(attempt, EpisodeEvent.INVALID_ACTION, request, message=message)
        response.done = True
        response.termination = EpisodeEvent.INVALID_ACTION
        response.stamp = attempt.stamp
        response.message = f"{_TERMINAL_NAMES[EpisodeEvent.INVALID_ACTION]}: {message}"

    def _end_agent_error(
        self, attempt: _Attempt, request: Step.Request, response: Step.Response
    ) -> None:
        """The agent's policy raised an error of its own instead of deciding: the episode
        ends as the agent's failure, scored (docs/protocols/: as an illegal action or
        silence, what the agent's own code does is the agent's); its node exits next."""
        message = f"{request.agent}: its policy raised {request.agent_error}"
        self._finish(attempt, EpisodeEvent.AGENT_ERROR, None, message=message)
        response.done = True
        response.termination = EpisodeEvent.AGENT_ERROR
        response.steps_used = attempt.referee.steps_used
        response.steps_left = attempt.referee.steps_left
        response.stamp = attempt.stamp
        response.message = f"{_TERMINAL_NAMES[EpisodeEvent.AGENT_ERROR]}: {message}"

    def _execute(
        self, attempt: _Attempt, request: Step.Request, planned: PlannedStep
    ) -> tuple[int, str]:
        """Execute an accepted step, apply it and publish what it did; returns the
        EpisodeEvent kind it ended with and why."""
        outcome = None
        if planned.command is not None:
            command = planned.command
            result, reason = self._call(
                self._execute_client,
                SimExecute.Request(
                    run_id=self._run.run_id,
                    agent=command.agent,
                    action=command.action,
                    magnitude=command.magnitude,
                    argument=command.argument,
                ),
                attempt=attempt,
            )
            if result is None or not result.success:
                reason = reason if result is None else result.message
                kind = (
                    EpisodeEvent.INTERVENTION
                    if result is not None and result.intervention
                    else EpisodeEvent.INFRA_FAILURE
                )
                self._finish(attempt, kind, request, message=reason)
                return kind, reason
            attempt.stamp = self._last_stamp = result.stamp
            outcome = SimOutcome(
                pose=pose_from_msg(result.pose),
                collided=result.collided,
                collision_object=result.collision_object,
                geofenced=result.geofenced,
            )
        verdict = attempt.referee.apply(planned, outcome)
        if verdict.candidate is not None:
            self._publish_candidate(verdict.candidate, attempt)
        for message in verdict.messages:
            self._publish_message(message, attempt)
        if verdict.done:
            self._finish(attempt, int(verdict.kind), request, verdict=verdict)
        else:
            self._publish_event(
                attempt,
                EpisodeEvent.STEP,
                request=request,
                message=verdict.reason,
                episode_json=_facts_json(verdict),
            )
            self._publish_turn(attempt)
        return int(verdict.kind), verdict.reason

    def _on_agent_fault(self, fault: AgentMessage) -> None:
        """An agent could not decide for reasons outside it (its model server died or hangs):
        the running attempt of that episode ends as an infrastructure failure and is rerun."""
        if self._run.foreign(fault.run_id, "an agent's fault report"):
            return
        self._end_running(
            fault.episode_id, EpisodeEvent.INFRA_FAILURE, f"{fault.sender}: {fault.text}"
        )

    def _on_backend_fault(self, fault: BackendFault) -> None:
        """The bridge found its simulator or robot failed, or a robot stopped by its operator
        or safety layer, outside a request: the running attempt of that episode ends."""
        if self._run.foreign(fault.run_id, "a bridge's fault report"):
            return
        kind = EpisodeEvent.INTERVENTION if fault.intervention else EpisodeEvent.INFRA_FAILURE
        self._end_running(fault.episode_id, kind, f"{fault.agent}: {fault.reason}")

    def _end_running(self, episode_id: str, kind: int, message: str) -> None:
        """End the running attempt of ``episode_id`` as ``kind`` (none other: a fault of an
        attempt that ended must not end the next)."""
        with self._lock:
            attempt = self._attempt
            if (
                attempt is None
                or attempt.termination is not None
                or attempt.episode.episode_id != episode_id
            ):
                return
            self._finish(attempt, kind, None, message=message)

    def _publish_turn(self, attempt: _Attempt) -> None:
        """Where agents take turns, announce whose decision comes next, with the candidate
        under verification, after the candidate messages of the decision just made."""
        turn = attempt.referee.turn()
        if turn is None:
            return
        header = Header(stamp=attempt.stamp, frame_id=MAP_FRAME)
        self._turn_pub.publish(turn_msg(turn, attempt.episode.episode_id, header))

    def _publish_message(self, message: TeammateMessage, attempt: _Attempt) -> None:
        """Deliver a message a decision carried or a notice, before the turn that follows."""
        self._messages_pub.publish(
            AgentMessage(
                header=Header(stamp=attempt.stamp, frame_id=MAP_FRAME),
                run_id=self._run.run_id,
                episode_id=attempt.episode.episode_id,
                sender=message.sender,
                receiver=message.receiver,
                kind=int(message.kind),
                text=message.text,
                candidate_id=message.candidate_id,
                sequence=message.sequence,
            )
        )

    def _publish_candidate(self, candidate: HandoffCandidate, attempt: _Attempt) -> None:
        header = Header(stamp=attempt.stamp, frame_id=MAP_FRAME)
        self._candidates_pub.publish(candidate_msg(candidate, attempt.episode.episode_id, header))

    def _finish(
        self,
        attempt: _Attempt,
        kind: int,
        request: Step.Request | None,
        *,
        message: str = "",
        verdict: Verdict | None = None,
    ) -> None:
        attempt.termination = kind
        if verdict is not None:
            message = verdict.reason
        self._publish_event(
            attempt,
            kind,
            request=request,
            message=message,
            collision_object=verdict.collision_object if verdict is not None else "",
            episode_json=_facts_json(verdict) if verdict is not None else "",
        )
        self.get_logger().info(
            f"episode {attempt.episode.episode_id} ended: {_TERMINAL_NAMES[kind]} after "
            f"{attempt.referee.steps_used} actions{f' ({message})' if message else ''}"
        )
        attempt.finished.set()

    # -- plumbing ----------------------------------------------------------------------

    def _call(
        self,
        client: Client,
        request: Any,
        *,
        attempt: _Attempt | None = None,
        before: Callable[[Any], None] | None = None,
    ) -> tuple[Any, str]:
        """Call a bridge service: its answer, or None and why, naming the limit that ran out
        (a limit set too short for the simulator fails every attempt, and must say so).
        A call for ``attempt`` gives up as soon as the bridge that reset it is gone or
        replaced: neither will answer. A call for no attempt yet (a reset) is sent again, with
        the limit afresh, when a new bridge process announces itself while it waits: it may
        have gone to a bridge that died (killed outright, it stays in the graph for a while),
        and the new one answers the copy (an answer to the first is dropped). ``before``
        completes the request once the service is served (the bridge's topics are known
        then).

        Raises:
            ExternalShutdownException: this node is shutting down (SIGINT, SIGTERM). No
                answer comes then and nothing can be published: the attempt is not the
                bridge's failure, and a task manager started in this one's place ends it.
        """
        limit = f"task_manager.sim_timeout_s = {self._sim_timeout_s:g} s"
        deadline = time.monotonic() + self._sim_timeout_s
        answered = threading.Event()
        future = None
        announced = len(self._bridge_announcements)
        while True:
            if not self.context.ok():
                raise ExternalShutdownException()
            if attempt is not None and (reason := self._bridge_lost(attempt)):
                break
            # A process after one the call may have gone to: the first announcement of the
            # run names the bridge that a first reset goes to.
            if (
                attempt is None
                and future is not None
                and len(self._bridge_announcements) > max(announced, 1)
            ):
                self.get_logger().warning(
                    f"a new simulator bridge announced itself while {client.srv_name} waited; "
                    "asking it again"
                )
                client.remove_pending_request(future)
                future = None
                deadline = time.monotonic() + self._sim_timeout_s
            if future is None and client.service_is_ready():
                if before is not None:
                    before(request)
                announced = len(self._bridge_announcements)
                answered = threading.Event()
                future = client.call_async(request)
                future.add_done_callback(lambda _, done=answered: done.set())
            if answered.wait(_CALL_POLL_S) and future is not None:
                return future.result(), ""
            if time.monotonic() >= deadline:
                reason = (
                    f"{client.srv_name} was not served within {limit}"
                    if future is None
                    else f"no answer from {client.srv_name} within {limit}"
                )
                break
        if future is not None:
            client.remove_pending_request(future)
        self.get_logger().error(reason)
        return None, reason

    def _subscribed(self, request: SimReset.Request) -> None:
        """Name in a reset the subscribers this node sees on each topic the bridge publishes:
        the bridge sends the episode's first frames only once it has matched them."""
        try:
            topics = self.get_publisher_names_and_types_by_node(
                BRIDGE_NODE, "/" + NAMESPACES[BRIDGE_NODE]
            )
        except RuntimeError:  # NodeNameNonExistentError: its node information lags its service
            topics = []
        counts = {topic: self.count_subscribers(topic) for topic, _ in topics}
        request.subscribed_topics = [topic for topic, count in counts.items() if count]
        request.subscriber_counts = [count for count in counts.values() if count]

    def _on_node_info(self, info: NodeInfo) -> None:
        """Note each bridge and agent process of this run as it announces itself."""
        if info.run_dir != self._run_dir:
            return
        process = process_name(info.host, info.pid)
        if info.node == "/" + BRIDGE_NODE:
            self._bridge_announcements.append(process)
        elif (agent := _AGENT_OF_NODE.get(info.node)) is not None:
            self._agent_processes[agent] = process

    def _bridge_lost(self, attempt: _Attempt) -> str:
        """Why the bridge that reset ``attempt`` will serve it no more (it left the graph, or
        another bridge process announced itself since), or "" while it is there."""
        if not self._reset_client.service_is_ready():
            return f"the simulator bridge ({attempt.bridge}) left the graph during the episode"
        replacements = {
            bridge
            for bridge in self._bridge_announcements[attempt.announcements_at_start :]
            if bridge != attempt.bridge
        }
        if replacements:
            return (
                f"the simulator bridge was restarted during the episode ({attempt.bridge} "
                f"replaced by {', '.join(sorted(replacements))})"
            )
        return ""

    def _restarted_agent(self, attempt: _Attempt) -> tuple[str, str] | None:
        """The agent of ``attempt`` whose node announced a new process since the attempt
        started, and the process that ended; None while every agent's is the one acting."""
        for agent in attempt.episode.agents:
            if ended := attempt.agents.replaced(agent, self._agent_processes.get(agent, "")):
                return agent, ended
        return None

    def _end_restarted(self, attempt: _Attempt, agent: str, ended: str) -> None:
        """End ``attempt``, whose ``agent`` was restarted during it, as an infrastructure
        failure: the new process knows nothing of the attempt (its task, its steps, its
        teammate's messages), and the episode is rerun like any other such failure."""
        message = restarted_agent_message(agent, ended)
        self.get_logger().error(message)
        self._finish(attempt, EpisodeEvent.INFRA_FAILURE, None, message=message)

    def _watch_attempt(self) -> None:
        """End the running attempt as an infrastructure failure when its bridge is gone
        (its agents may wait for frames the old bridge never finished publishing), or when
        one of its agents was restarted: the new agent process may wait for the frames of a
        step it never saw, and would never act."""
        # Never waits for the lock: its holder is a step or a reset calling the bridge, and
        # that call gives up on a lost bridge by itself. Nothing while the node shuts down:
        # the bridge looks gone then, and nothing can be published.
        if not self.context.ok() or not self._lock.acquire(blocking=False):
            return
        try:
            with self._quiet_on_shutdown():
                attempt = self._attempt
                if attempt is None or attempt.termination is not None:
                    return
                if lost := self._bridge_lost(attempt):
                    self.get_logger().error(lost)
                    self._finish(attempt, EpisodeEvent.INFRA_FAILURE, None, message=lost)
                elif restarted := self._restarted_agent(attempt):
                    self._end_restarted(attempt, *restarted)
        finally:
            self._lock.release()

    def _publish_event(
        self,
        attempt: _Attempt,
        kind: int,
        *,
        request: Step.Request | None = None,
        message: str = "",
        collision_object: str = "",
        episode_json: str = "",
    ) -> None:
        event = EpisodeEvent(
            header=Header(stamp=attempt.stamp, frame_id=MAP_FRAME),
            run_id=self._run.run_id,
            episode_id=attempt.episode.episode_id,
            attempt=attempt.attempt,
            episode_index=attempt.index,
            episode_count=attempt.count,
            kind=kind,
            step=attempt.referee.steps_used,
            pose=pose_msg(attempt.pose),
            collided=kind == EpisodeEvent.COLLIDED,
            collision_object=collision_object,
            message=message,
            episode_json=episode_json,
        )
        if request is not None:
            event.agent = request.agent
            event.action = request.action
            event.magnitude = request.magnitude
            event.argument = request.argument
        self._events_pub.publish(event)

    # -- automatic run -----------------------------------------------------------------

    def run_selection(self) -> None:
        """Serve every selected episode in turn, rerunning infrastructure failures, then
        announce the end of the run; or, started in place of a task manager that died,
        resume the run where its journal says it is. Runs on its own thread while the
        executor spins."""
        with self._quiet_on_shutdown():
            self._serve_selection()

    @contextlib.contextmanager
    def _quiet_on_shutdown(self) -> Iterator[None]:
        """Whatever fails once the node shuts down (SIGINT, SIGTERM) failed because rclpy
        did (``publisher's context is invalid``): raise ``ExternalShutdownException``, which
        ends the node with status 0, the status the runner restarts a task manager after.
        The attempt under way is then the successor's to end, from the run's journal."""
        try:
            yield
        except ExternalShutdownException:
            raise
        except Exception:
            if self.context.ok():
                raise
            raise ExternalShutdownException() from None

    def _serve_selection(self) -> None:
        journal = self._journal_of_run()
        self._events_pub.publish(
            EpisodeEvent(
                run_id=self._run.run_id,
                kind=EpisodeEvent.RUN_STARTED,
                episode_count=len(self._selection),
                episode_json=json.dumps(
                    {
                        "selection": self._selection,
                        "suite": self._suite_identity,
                        "settings": self._protocol.settings_of(self._settings),
                    }
                ),
            )
        )
        ready_timeout_s = float(param(self, "ready_timeout_s"))
        missing = self._wait_until_ready(ready_timeout_s)
        if missing:
            self._publish_finished(
                f"not started: within {ready_timeout_s:g} s no {'; no '.join(missing)}"
            )
            return
        max_attempts = int(param(self, "max_attempts"))
        if journal is not None and journal.interrupted is not None:
            self._end_interrupted(journal, max_attempts)
        if journal is not None and journal.summary is not None:
            self._publish_finished(journal.summary)  # it may not have reached anyone
            return
        position = journal.position if journal is not None else 0
        not_scored = list(journal.not_scored) if journal is not None else []
        for index in range(position, len(self._selection)):
            episode_id = self._selection[index]
            episode = self._suite.episode(episode_id)
            attempt_number = journal.attempts if journal is not None else 0
            while True:
                self._note(
                    partial(RunJournal.claim, index=index, last_stamp_ns=time_ns(self._last_stamp))
                )
                self._attempts[episode_id] = attempt_number
                attempt, reason = self._start_next(episode, index)
                if attempt is not None:
                    self._wait_for_end(attempt)
                ending = attempt.termination if attempt is not None else None
                scored = attempt is not None and ending not in _EXCLUDED
                # A person or the safety layer stopped the robot: flying the episode again is
                # the team's decision (aerialdojo rerun), not the run's.
                given_up = not scored and (
                    ending == EpisodeEvent.INTERVENTION or attempt_number + 1 >= max_attempts
                )
                if not scored and ending != EpisodeEvent.INTERVENTION:
                    if attempt is not None:
                        reason = "infrastructure failure during the episode"
                    self.get_logger().warning(
                        f"{episode_id} {attempt_name(attempt_number)} failed ({reason}); "
                        f"{'giving up' if given_up else 'rerunning'}"
                    )
                if given_up:
                    not_scored.append(episode_id)
                done = scored or given_up
                self._note(
                    partial(RunJournal.ended, done=done, episode_id=episode_id, scored=scored)
                )
                if done:
                    break
                attempt_number += 1
        summary = (
            f"{len(self._selection) - len(not_scored)} of {len(self._selection)} episodes ran"
            + (f"; not scored: {', '.join(not_scored)}" if not_scored else "")
        )
        self._publish_finished(summary)
        self._note(lambda journal: journal.finished(summary))

    def _journal_of_run(self) -> RunJournal | None:
        """The journal the run resumes from, or a new one for a run that starts now (None
        where the run keeps none, or it could not be written)."""
        if self._journal is None and self._journal_path is not None and not self._resuming:
            try:
                self._journal = RunJournal.begin(
                    self._journal_path, self._run.run_id, self._selection
                )
            except OSError as error:
                self._journal_lost(error)
        return self._journal

    def _note(self, write: Callable[[RunJournal], None]) -> None:
        """``write`` a step of the run into its journal, if it keeps one; a journal that
        cannot be written (a full disk) is given up, with an error logged, rather than
        ending the run with it."""
        if self._journal is None:
            return
        try:
            write(self._journal)
        except OSError as error:
            self._journal_lost(error)

    def _journal_lost(self, error: OSError) -> None:
        """Run on without a journal; one left behind, out of date, must not be resumed from
        (a task manager resuming from it would serve episodes again), so it goes too."""
        assert self._journal_path is not None
        self.get_logger().error(
            f"the run's journal {self._journal_path} could not be written "
            f"({error.strerror or error}): a task manager started in place of this one "
            "would run the selection again from its start"
        )
        self._journal = None
        with contextlib.suppress(OSError):
            self._journal_path.unlink(missing_ok=True)

    def _end_interrupted(self, journal: RunJournal, max_attempts: int) -> None:
        """End the attempt the predecessor left under way as an infrastructure failure
        (the evaluator closes it, excluded with the cause); its episode is rerun next while
        attempts are left."""
        interrupted = journal.interrupted
        assert interrupted is not None
        episode = self._suite.episode(self._selection[interrupted.index])
        referee = self._rules.referee(episode, self._suite, self._settings)
        stopped = _Attempt(
            episode,
            referee,
            interrupted.attempt,
            interrupted.index,
            len(self._selection),
            self._last_stamp,
        )
        message = (
            "the task manager was restarted during the episode (its process "
            f"{interrupted.pid} ended); this attempt is not scored"
        )
        self._publish_event(stopped, EpisodeEvent.INFRA_FAILURE, message=message)
        given_up = interrupted.attempt + 1 >= max_attempts
        self.get_logger().warning(
            f"{episode.episode_id} {attempt_name(interrupted.attempt)} failed ({message}); "
            f"{'giving up' if given_up else 'rerunning'}"
        )
        self._note(
            lambda journal: journal.ended(
                done=given_up, episode_id=episode.episode_id, scored=False
            )
        )

    def _start_next(self, episode: EpisodeLike, index: int) -> tuple[_Attempt | None, str]:
        """Start the next attempt of ``episode``; on a robot, once its operator says go, as
        often as the operator tries (each refusal, such as a robot placed off its start, is
        announced on the prompt)."""
        count = len(self._selection)
        if not self._operator_gate:
            return self.start(episode, index=index, count=count)
        status = ""
        while rclpy.ok():
            # A start given while nothing waited (a second keypress) must not start this.
            self._operator_go.clear()
            self._awaiting_operator = episode.episode_id
            self._prompt(episode, index, status)
            self._operator_go.wait()
            self._awaiting_operator = None
            attempt, status = self.start(episode, index=index, count=count)
            if attempt is not None:
                return attempt, status
        return None, "the task manager is shutting down"

    def _prompt(self, episode: EpisodeLike, index: int, status: str) -> None:
        """Announce the attempt that waits for the operator, and why the last one did not
        start."""
        referee = self._rules.referee(episode, self._suite, self._settings)
        task = self._rules.describe_task(episode, self._suite, self._settings)
        tolerance = self._start_tolerance or StartTolerance()
        self._prompt_pub.publish(
            EpisodePrompt(
                header=Header(stamp=self.get_clock().now().to_msg(), frame_id=MAP_FRAME),
                episode_id=episode.episode_id,
                attempt=self._attempts.get(episode.episode_id, 0),
                episode_index=index,
                episode_count=len(self._selection),
                agents=list(referee.starts),
                starts=[pose_msg(pose) for pose in referee.starts.values()],
                task=task_line(task),
                start_tolerance_m=tolerance.position_m,
                start_tolerance_deg=math.degrees(tolerance.yaw_rad),
                status=status,
            )
        )

    def _on_operator_start(
        self, request: Trigger.Request, response: Trigger.Response
    ) -> Trigger.Response:
        """The operator placed the robots and engaged their gates: start the waiting
        attempt."""
        if not self._operator_gate:
            response.message = "this run does not wait for an operator (operator_gate is false)"
            return response
        awaiting = self._awaiting_operator
        if awaiting is None:
            response.message = "no episode waits for the operator (one is running or starting)"
            return response
        self._operator_go.set()
        response.success = True
        response.message = f"starting {awaiting}"
        return response

    def _wait_for_end(self, attempt: _Attempt) -> None:
        """Wait until ``attempt`` ends; when the agents send no action for
        ``agent_timeout_s`` (wall time: a stalled agent stops no clock), end it as theirs
        (``AGENT_TIMEOUT``, scored), or as an infrastructure failure where an agent's node
        is gone from the graph (an agent that reports a fault ends the attempt at once)."""
        while not attempt.finished.wait(timeout=1.0):
            with self._lock:
                idle_s = time.monotonic() - attempt.last_activity
                if attempt.termination is not None or idle_s < self._agent_timeout_s:
                    continue
                silent = f"no action from the agents for {self._agent_timeout_s:g} s"
                gone = self._agents_not_listening(set(attempt.episode.agents))
                if gone:
                    nodes = ", ".join(f"/{agent}" for agent in gone)
                    self._finish(
                        attempt,
                        EpisodeEvent.INFRA_FAILURE,
                        None,
                        message=f"{silent}: no agent node left in {nodes}",
                    )
                else:
                    self._finish(attempt, EpisodeEvent.AGENT_TIMEOUT, None, message=silent)

    def _wait_until_ready(self, timeout_s: float) -> list[str]:
        """Wait until the bridge, the evaluator, the agents and the awaited viewers are
        there; returns what was still missing when ``timeout_s`` passed (nothing: ready)."""
        # Wall time: simulation time stands still until the bridge publishes /clock.
        deadline = time.monotonic() + timeout_s
        while rclpy.ok():
            missing = self._missing_for_start()
            if not missing or time.monotonic() > deadline:
                return missing
            time.sleep(0.1)
        return ["task manager running (it is shutting down)"]

    def _missing_for_start(self) -> list[str]:
        missing = []
        if not self._reset_client.service_is_ready():
            missing.append(f"bridge ({self._reset_client.srv_name} not served)")
        if not self._evaluator_listening():
            missing.append(
                f"evaluator (no /{EVALUATOR_NODE} subscribed to /aerialdojo/episode_events)"
            )
        if (progress := os.environ.get(PROGRESS_LISTENER_ENV)) and not self._progress_listening(
            progress
        ):
            missing.append(
                f"progress line of aerialdojo eval (no {progress} subscribed to "
                "/aerialdojo/episode_events that received RUN_STARTED)"
            )
        if agents := self._agents_not_listening():
            missing.append(
                f"agent node in {', '.join(f'/{a}' for a in agents)} subscribed to "
                "/aerialdojo/task with a client of /aerialdojo/step"
            )
        if viewers := self._viewers_not_watching():
            missing.append(f"viewer {', '.join(viewers)} watching the task and the bridge's topics")
        return missing

    def _evaluator_listening(self) -> bool:
        """The run's evaluator subscribes to the episode events, which it does last, once its
        recording subscriptions have found their publishers. Other listeners (the CLI's
        progress line, waited for by its own name, an operator's console, a scale worker) do
        not stand in for it: a run once started for the CLI's alone, and the evaluator's late
        subscriptions got only the last 10 of the bridge's first 29 states (``STATE_QOS``),
        so the bag lacked the rest."""
        return self._listening_to_events(EVALUATOR_NODE, "/" + NAMESPACES[EVALUATOR_NODE])

    def _progress_listening(self, node_name: str) -> bool:
        """Whether the progress line ``node_name`` listens and has the run's first event.
        Seeing its subscription is not enough: discovery is not symmetric, and a line this
        node had matched was itself matched 0.8 s into the first episode and got its first
        67 steps at once. Once every listener acknowledged ``RUN_STARTED``, each has matched
        this publisher. A listener that never does (a killed process's, until its lease
        ends) holds the run up ``_ACK_WAIT_S`` at most."""
        if not self._listening_to_events(node_name):
            return False
        if self._resuming:
            # The line listened to the predecessor and shows no bar for a while yet: the
            # events it has not matched yet wait for it (EVENTS_QOS).
            return True
        if self._events_pub.wait_for_all_acked(Duration(seconds=0)):
            return True
        if self._progress_seen_at is None:
            self._progress_seen_at = time.monotonic()
        if time.monotonic() - self._progress_seen_at < _ACK_WAIT_S:
            return False
        self.get_logger().warning(
            f"a listener of /aerialdojo/episode_events has not acknowledged RUN_STARTED after "
            f"{_ACK_WAIT_S:g} s; starting anyway"
        )
        return True

    def _listening_to_events(self, node_name: str, namespace: str | None = None) -> bool:
        """Whether this node sees ``node_name`` (in ``namespace``, or any) subscribed to the
        episode events. An event published before the publisher itself has matched that
        subscription still reaches it: the publisher keeps them for it (``EVENTS_QOS``)."""
        return any(
            info.node_name == node_name and namespace in (None, info.node_namespace)
            for info in self.get_subscriptions_info_by_topic("/aerialdojo/episode_events")
        )

    def _agents_not_listening(self, agents: set[str] | None = None) -> list[str]:
        """The agents of the selection (or of ``agents``) without a node in their namespace
        (``/uav``, ``/ugv``) subscribed to the task topic and a node there with a client of
        the step service.
        Other subscribers (the evaluator's recorder, a viewer) do not count: an agent that is
        not listening yet would miss its first frames. And a step request reaches this node
        only from a client it has discovered: one sent earlier is lost, and the agent would
        wait for its answer until the attempt timed out."""
        needed = self._selection_agents if agents is None else agents
        listening = {
            info.node_namespace.strip("/")
            for info in self.get_subscriptions_info_by_topic("/aerialdojo/task")
        }
        return sorted(needed - self._with_step_client(needed & listening))

    def _with_step_client(self, agents: set[str]) -> set[str]:
        """The agents of ``agents`` with a node in their namespace that has a client of the
        step service."""
        stepping = set()
        for name, namespace in self.get_node_names_and_namespaces():
            agent = namespace.strip("/")
            if agent not in agents:
                continue
            try:
                clients = self.get_client_names_and_types_by_node(name, namespace)
            except RuntimeError:  # NodeNameNonExistentError: its node information lags
                continue
            if any(service == "/aerialdojo/step" for service, _ in clients):
                stepping.add(agent)
        return stepping

    def _viewers_not_watching(self) -> list[str]:
        """The nodes of ``await_viewers`` not yet subscribed to the task and to each topic the
        bridge publishes: a viewer such as ``aerialdojo eval --live`` misses no episode's
        start."""
        viewers = set(self._settings["await_viewers"])
        if not viewers:
            return []
        try:
            bridged = self.get_publisher_names_and_types_by_node(
                BRIDGE_NODE, "/" + NAMESPACES[BRIDGE_NODE]
            )
        except RuntimeError:  # NodeNameNonExistentError: its node information lags its service
            return sorted(viewers)
        watched = ({"/aerialdojo/task"} | {topic for topic, _ in bridged}) - set(UNWATCHED_TOPICS)
        subscribers = [
            {info.node_name for info in self.get_subscriptions_info_by_topic(topic)}
            for topic in watched
        ]
        return sorted(v for v in viewers if any(v not in nodes for nodes in subscribers))

    def _publish_finished(self, summary: str) -> None:
        self._events_pub.publish(
            EpisodeEvent(
                header=Header(stamp=self._attempt.stamp if self._attempt else Time()),
                run_id=self._run.run_id,
                kind=EpisodeEvent.RUN_FINISHED,
                episode_count=len(self._selection),
                message=summary,
            )
        )
        self.get_logger().info(f"run finished: {summary}")


def _placement_record(starts: dict[str, Pose], placed: dict[str, Pose]) -> dict[str, Any]:
    """Where the bridge measured each agent that was not at its start (a robot the operator
    placed), for the STARTED record: the map-frame pose and its offset from the start."""
    record = {}
    for agent, pose in placed.items():
        offset_m = pose.distance_to(starts[agent].position)
        yaw_deg = math.degrees(wrap_angle(pose.yaw - starts[agent].yaw))
        if offset_m > PLACEMENT_NOTED_M or abs(yaw_deg) > PLACEMENT_NOTED_DEG:
            record[agent] = {
                "pose_xyz_m_yaw_deg": [pose.x, pose.y, pose.z, math.degrees(pose.yaw)],
                "offset_m": offset_m,
                "yaw_offset_deg": yaw_deg,
            }
    return record


#: A placement closer than this to its start is the start (a simulator's, up to rounding).
PLACEMENT_NOTED_M = 1e-3
PLACEMENT_NOTED_DEG = 1e-2


def _facts_json(verdict: Verdict) -> str:
    return json.dumps(verdict.facts) if verdict.facts is not None else ""


def main(args: list[str] | None = None) -> None:
    with node_process(args):
        try:
            node = TaskManager()
        except (DomainTakenError, JournalError) as error:
            # Exit status 1: the runner restarts no task manager that refused to start.
            rclpy.logging.get_logger("task_manager").fatal(str(error))
            sys.exit(1)
        # Services, faults and the operator here; the bridge's answers on a thread of their
        # own, which a service waiting for one never holds up.
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        link_executor = SingleThreadedExecutor()
        link_executor.add_node(node.bridge_link)

        def spin_link() -> None:
            with contextlib.suppress(ExternalShutdownException):
                link_executor.spin()

        link = threading.Thread(target=spin_link, name="the task manager's bridge link")
        link.start()
        if param(node, "auto_run"):
            # A failure on this thread ends the node (node_process), never leaving the run
            # to wait for episodes a dead thread will not serve.
            threading.Thread(
                target=node.run_selection, name="the task manager's episode thread", daemon=True
            ).start()
        try:
            executor.spin()
        finally:
            # Out of its wait before the process ends: a thread left in rcl_wait while
            # the interpreter tears down aborts the process (exit -6, not the node's own).
            link_executor.shutdown(timeout_sec=5.0)
            link.join(timeout=5.0)


if __name__ == "__main__":
    main()
