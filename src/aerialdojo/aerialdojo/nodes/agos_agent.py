"""What the two AGOS agent nodes share: the task with its town, region and top-down map, the
turn protocol, map-frame odometry, the handoff topics and the step service (AGOS-Bench: two
agents in separate processes that cooperate only through ``/agos/candidates`` and
``/agos/messages``).

The task manager announces on ``/agos/turn`` (AgosTurn) whose decision comes next, which
candidate is being verified, how many candidates there are and how many messages the agent
has been delivered, and under AGOS-Agent where its teammate is; an agent decides only on
its turn, once it holds every view of the stamp its own last step produced, every candidate
and every message the turn counts, so its decision never depends on how fast the other
process was.

The node runs the ``policy`` parameter's ``agos.policies.AgosPolicy`` (the colour-shape
heuristics, a vision-language model, or a ``package.module:ClassName`` plug-in): per episode
an ``AgosTask`` (with the task's ``mode``: AGOS-Agent's candidates or the Baseline's messages
only, and the map M), per turn an ``AgosObservation`` with the candidates (the one the turn
names active, the others closed), the teammate's position and the messages delivered: those
the teammate's decisions carried and the protocol's notices (the initial exchange of
positions, inspection requests, arrival and confirmation). A decision's own message goes
with its step (``Step.teammate_message``); the task manager numbers and delivers it. A rerun
of an episode has the same id and a later stamp: candidates and messages stamped before the
rerun's task belong to the attempt before. A subclass says which views an observation set
holds after its last decision.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace

from aerialdojo_interfaces.msg import AgentMessage, AgosTurn, Candidate, TaskSpec

from aerialdojo.agents.observation import ViewData, tell_refused
from aerialdojo.agents.plugins import agos_policy, policy_identity
from aerialdojo.agos.episodes import parse_task_text
from aerialdojo.agos.grid import Region
from aerialdojo.agos.policies import AgosObservation, AgosTask, CandidateView
from aerialdojo.agos.town import TownMap
from aerialdojo.agos.vocabulary import MODE_AGENT
from aerialdojo.agos.worlds import town_map
from aerialdojo.geometry import Pose
from aerialdojo.image_codec import image_to_array
from aerialdojo.nodes.agent_node import AgentNode
from aerialdojo.nodes.common import param, parameters_of, time_ns
from aerialdojo.nodes.qos import HANDOFF_QOS, TASK_QOS
from aerialdojo.protocols.referee import MessageKind, StepRequest, TeammateMessage


class AgosAgentNode(AgentNode):
    """Base of the AGOS agent nodes.

    Args:
        name: node name, also its parameter table.
        agent: ``uav`` or ``ugv``.
        views: every view the agent's rig can publish.
    """

    def __init__(self, name: str, agent: str, views: tuple[str, ...]) -> None:
        self._rig_views = views
        super().__init__(name, default_agent=agent)
        self.agent = agent
        self.policy = agos_policy(agent, parameters_of(self, name), name)
        self.town: TownMap | None = None
        self.region: Region | None = None
        self.actions: tuple[str, ...] = ()
        self.mode = MODE_AGENT
        # Stamp of the current attempt's task, nanoseconds: what is older is of an attempt
        # before (a rerun has the episode's id).
        self._task_ns = 0
        # (episode id, candidate id) -> (stamp ns, newest view): a candidate of the next
        # episode may arrive before its task does.
        self._candidates: dict[tuple[str, str], tuple[int, CandidateView]] = {}
        # Episode id -> (stamp ns, message) of the messages the other agent's decisions
        # carried; they too may arrive before the task.
        self._inbox: dict[str, list[tuple[int, TeammateMessage]]] = {}
        # The turn granted to this agent (None while it has none): its episode, the
        # candidate under verification it names, the team's decision it is, how many
        # candidates and messages this agent must hold, and the teammate's position.
        self._turn: AgosTurn | None = None
        # The turn of the step under way, given back if the step is refused.
        self._stepped_turn: AgosTurn | None = None
        # Decisions this agent stepped in the current attempt.
        self._decided = 0
        self.create_subscription(Candidate, "/agos/candidates", self._on_candidate, HANDOFF_QOS)
        self.create_subscription(AgentMessage, "/agos/messages", self._on_message, HANDOFF_QOS)
        self.create_subscription(AgosTurn, "/agos/turn", self._on_turn, TASK_QOS)
        self.announce(str(param(self, "policy")), **policy_identity(self.policy))

    # -- for subclasses ----------------------------------------------------------------

    def start_episode(self) -> None:
        """A new episode began; ``self.town``, ``region``, ``actions`` and ``mode`` are set."""

    def ready(self) -> bool:
        """Whether the subclass holds what its next decision needs (default: yes)."""
        return True

    # -- the AgentNode hooks -----------------------------------------------------------

    def subscribed_views(self) -> Sequence[str]:
        return self._rig_views

    def begin_episode(self, task: TaskSpec) -> None:
        self.town = town_map(task.scene)
        self.region = parse_task_text(task.goal.description)
        own = [spec for spec in task.actions if spec.agent == self.agent]
        self.actions = tuple(spec.name for spec in own)
        self.mode = task.mode or MODE_AGENT
        self._task_ns = time_ns(task.header.stamp)
        self._candidates = {
            key: entry for key, entry in self._candidates.items() if key[0] == task.episode_id
        }
        self._inbox = {task.episode_id: self._inbox.get(task.episode_id, [])}
        self._decided = 0
        references = tuple(image_to_array(image).copy() for image in task.goal.reference_images)
        self.policy.reset(
            AgosTask(
                episode_id=task.episode_id,
                agent=self.agent,
                town=self.town,
                region=self.region,
                instruction=task.goal.description,
                reference_images=references,
                map_image=image_to_array(task.map_image).copy() if task.map_image.data else None,
                actions=self.actions,
                mode=self.mode,
                max_uses={spec.name: spec.max_uses for spec in own if spec.max_uses},
                action_budget=int(task.action_budget),
                success_radius_m=float(task.success_radius_m),
            )
        )
        self.start_episode()
        self.get_logger().info(
            f"episode {task.episode_id} ({self.mode}): {len(references)} reference views"
        )

    def decide(self, pose: Pose, views: dict[str, ViewData]) -> StepRequest:
        turn = self._turn
        assert turn is not None  # may_act() holds a turn
        teammate = turn.teammate_position[0] if turn.teammate_position else None
        candidates = self.candidates
        decision = self.policy.act(
            AgosObservation(
                pose=pose,
                views=views,
                candidates=candidates,
                active=candidates.get(turn.candidate_id) if turn.candidate_id else None,
                messages=self.inbox[: turn.messages],
                decision=turn.decision,
                teammate=(teammate.x, teammate.y) if teammate is not None else None,
            )
        )
        return StepRequest(
            agent=self.agent,
            action=decision.action,
            argument=decision.argument,
            teammate_message=decision.message,
        )

    def may_act(self) -> bool:
        turn = self._turn
        if self.town is None or turn is None or turn.episode_id != self.episode_id:
            return False
        if turn.decision <= self._decided:
            # A turn of a rerun of this episode that came before its task: the team's next
            # decision of this attempt is past every one this agent made.
            return False
        if len(self._held_candidates()) < turn.candidates:
            return False  # the candidate messages of the other agent's decision are on their way
        if len(self.inbox) < turn.messages:
            return False  # so are the messages delivered before this turn
        return self.ready()

    def try_act(self) -> None:
        was_pending = self.step_pending
        super().try_act()
        if self.step_pending and not was_pending:
            self._stepped_turn, self._turn = self._turn, None  # the turn is used
            self._decided += 1

    def refused(self, request: StepRequest, reason: str) -> None:
        """The referee refused this agent's decision: its turn is still its own (no turn is
        announced after a refusal), and the policy, told why, decides again (AGOS-Bench's
        parser-validator hands it back)."""
        self._turn = self._stepped_turn
        self._decided -= 1
        tell_refused(self.policy, reason)

    def waiting_for(self, waited_s: float) -> str:
        if self._turn is None or self._turn.episode_id != self.episode_id:
            return f"no turn on /agos/turn for episode {self.episode_id} after {waited_s:.0f} s"
        return ""

    # -- handoff topics ----------------------------------------------------------------

    def _held_candidates(self) -> dict[str, CandidateView]:
        """This attempt's candidates by id, as their newest messages say."""
        return {
            candidate_id: view
            for (episode_id, candidate_id), (stamp, view) in self._candidates.items()
            if episode_id == self.episode_id and stamp >= self._task_ns
        }

    @property
    def candidates(self) -> dict[str, CandidateView]:
        """This attempt's candidates by id as of the current turn: the one it names under
        verification, every other one closed (a CONFIRM that closes one as confirmed ends
        the episode). The status is the turn's, not the newest candidate message's, which
        may still be on its way."""
        active_id = self._turn.candidate_id if self._turn is not None else ""
        return {
            candidate_id: replace(view, active=candidate_id == active_id)
            for candidate_id, view in self._held_candidates().items()
        }

    @property
    def inbox(self) -> tuple[TeammateMessage, ...]:
        """The messages delivered to this agent this attempt, in the order sent."""
        delivered = [
            message
            for stamp, message in self._inbox.get(self.episode_id, [])
            if stamp >= self._task_ns
        ]
        return tuple(sorted(delivered, key=lambda message: message.sequence))

    def _on_candidate(self, msg: Candidate) -> None:
        candidate = CandidateView(
            msg.candidate_id,
            (msg.center.x, msg.center.y),
            active=msg.status == Candidate.ACTIVE,
            confirmed=msg.status == Candidate.CONFIRMED,
            grid_cell=msg.grid_cell,
        )
        stamp = time_ns(msg.header.stamp)
        self._candidates[(msg.episode_id, msg.candidate_id)] = (stamp, candidate)
        self.try_act()

    def _on_turn(self, msg: AgosTurn) -> None:
        # Kept even when it arrives before its episode's task (topics are not ordered); only
        # a turn of the agent's current episode lets it act.
        self._waiting_since = time.monotonic()
        self._turn = msg if msg.agent == self.agent else None
        self.try_act()

    def _on_message(self, msg: AgentMessage) -> None:
        if msg.sender == self.agent or self._run.foreign(msg.run_id, "a teammate message"):
            return
        self.get_logger().info(f"message from {msg.sender}: {msg.text}")
        if msg.sequence and msg.receiver == self.agent:
            message = TeammateMessage(
                sender=msg.sender,
                receiver=msg.receiver,
                text=msg.text,
                sequence=msg.sequence,
                kind=MessageKind(msg.kind),
                candidate_id=msg.candidate_id,
            )
            self._inbox.setdefault(msg.episode_id, []).append((time_ns(msg.header.stamp), message))
            self.try_act()
