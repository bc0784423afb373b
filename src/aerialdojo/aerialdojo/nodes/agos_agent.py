"""What the two AGOS agent nodes share: the task with its town and region, the turn protocol,
map-frame odometry, the handoff topics and the step service (AGOS-Bench: two agents in
separate processes that cooperate only through ``/agos/candidates`` and ``/agos/messages``).

The task manager announces on ``/agos/turn`` whose decision comes next, which candidate
is being verified and how many messages the agent has been sent with decisions; an agent
decides only on its turn, once it holds every view of the stamp its own last step produced,
the candidate the turn names and every message the turn counts, so its decision never
depends on how fast the other process was.

The node runs the ``policy`` parameter's ``agos.policies.AgosPolicy`` (the colour-shape
heuristics, a vision-language model, or a ``package.module:ClassName`` plug-in): per episode
an ``AgosTask`` (with the task's ``mode``: AGOS-Agent's candidates or the Baseline's messages
only), per turn an ``AgosObservation`` with the messages the teammate's decisions carried.
A decision's own message goes with its step (``Step.teammate_message``); the task manager
numbers and delivers it. A rerun of an episode has the same id and a later stamp: candidates
and messages stamped before the rerun's task belong to the attempt before. A subclass says
which views an observation set holds after its last decision and adds its role's workflow
messages (information only: the turn does not count them, so no policy is shown them).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from aerialdojo_interfaces.msg import AgentMessage, Candidate, TaskSpec
from std_msgs.msg import Header

from aerialdojo.agents.observation import ViewData, tell_refused
from aerialdojo.agents.plugins import agos_policy, policy_identity
from aerialdojo.agos.episodes import parse_task_text
from aerialdojo.agos.grid import Region
from aerialdojo.agos.policies import AgosObservation, AgosTask, CandidateView, Decision
from aerialdojo.agos.town import TownMap, town_map
from aerialdojo.agos.vocabulary import MODE_AGENT
from aerialdojo.geometry import Pose
from aerialdojo.image_codec import image_to_array
from aerialdojo.nodes.agent_node import AgentNode
from aerialdojo.nodes.common import param, parameters_of, time_ns
from aerialdojo.nodes.qos import HANDOFF_QOS, TASK_QOS
from aerialdojo.protocols.referee import StepRequest, TeammateMessage, parse_turn_text
from aerialdojo.tf_tree import MAP_FRAME


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
        # The episode of the turn granted to this agent ("" while it has none), the
        # candidate under verification it names, the team's decision it is and how many
        # messages this agent must have been delivered.
        self._turn_episode = ""
        self._turn_candidate = ""
        self._turn_decision = 0
        self._turn_messages = 0
        # Decisions this agent stepped in the current attempt.
        self._decided = 0
        self.create_subscription(Candidate, "/agos/candidates", self._on_candidate, HANDOFF_QOS)
        self.create_subscription(AgentMessage, "/agos/messages", self._on_message, HANDOFF_QOS)
        self.create_subscription(AgentMessage, "/agos/turn", self._on_turn, TASK_QOS)
        self._messages = self.create_publisher(AgentMessage, "/agos/messages", HANDOFF_QOS)
        self.announce(str(param(self, "policy")), **policy_identity(self.policy))

    # -- for subclasses ----------------------------------------------------------------

    def start_episode(self) -> None:
        """A new episode began; ``self.town``, ``region``, ``actions`` and ``mode`` are set."""

    def ready(self) -> bool:
        """Whether the subclass holds what its next decision needs (default: yes)."""
        return True

    def deciding(self, decision: Decision, pose: Pose) -> None:
        """``decision`` was made at ``pose`` and is about to be stepped."""

    def candidate_changed(self, candidate: CandidateView) -> None:
        """A candidate appeared or closed."""

    def send(self, kind: int, text: str, receiver: str, candidate_id: str = "") -> None:
        """Publish a workflow message to the other agent (information, uncounted)."""
        self._messages.publish(
            AgentMessage(
                header=Header(stamp=self.get_clock().now().to_msg(), frame_id=MAP_FRAME),
                episode_id=self.episode_id,
                sender=self.agent,
                receiver=receiver,
                kind=kind,
                text=text,
                candidate_id=candidate_id,
            )
        )

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
        decision = self.policy.act(
            AgosObservation(
                pose=pose,
                views=views,
                candidates=self.candidates,
                active=self.active_candidate(),
                messages=self.inbox[: self._turn_messages],
                decision=self._turn_decision,
            )
        )
        self.deciding(decision, pose)
        return StepRequest(
            agent=self.agent,
            action=decision.action,
            argument=decision.argument,
            teammate_message=decision.message,
        )

    def may_act(self) -> bool:
        if self.town is None or self._turn_episode != self.episode_id:
            return False
        if self._turn_decision and self._turn_decision <= self._decided:
            # A turn of a rerun of this episode that came before its task: the team's next
            # decision of this attempt is past every one this agent made.
            return False
        if self._turn_candidate and self._turn_candidate not in self.candidates:
            return False  # the candidate messages of the other agent's decision are on their way
        if len(self.inbox) < self._turn_messages:
            return False  # so are the messages the other agent's decisions carried
        return self.ready()

    def try_act(self) -> None:
        was_pending = self.step_pending
        super().try_act()
        if self.step_pending and not was_pending:
            self._turn_episode = ""  # the turn is used
            self._decided += 1

    def refused(self, request: StepRequest, reason: str) -> None:
        """The referee refused this agent's decision: its turn is still its own, and the
        policy, told why, decides again (AGOS-Bench's parser-validator hands it back)."""
        self._turn_episode = self.episode_id
        self._decided -= 1
        tell_refused(self.policy, reason)

    def waiting_for(self, waited_s: float) -> str:
        if self._turn_episode != self.episode_id:
            return f"no turn on /agos/turn for episode {self.episode_id} after {waited_s:.0f} s"
        return ""

    # -- handoff topics ----------------------------------------------------------------

    @property
    def candidates(self) -> dict[str, CandidateView]:
        """This attempt's candidates by id."""
        return {
            candidate_id: view
            for (episode_id, candidate_id), (stamp, view) in self._candidates.items()
            if episode_id == self.episode_id and stamp >= self._task_ns
        }

    @property
    def inbox(self) -> tuple[TeammateMessage, ...]:
        """The messages the other agent's decisions carried this attempt, in the order sent."""
        delivered = [
            message
            for stamp, message in self._inbox.get(self.episode_id, [])
            if stamp >= self._task_ns
        ]
        return tuple(sorted(delivered, key=lambda message: message.sequence))

    def active_candidate(self) -> CandidateView | None:
        """The candidate being verified, as the current turn names it."""
        return self.candidates.get(self._turn_candidate) if self._turn_candidate else None

    def _on_candidate(self, msg: Candidate) -> None:
        candidate = CandidateView(
            msg.candidate_id,
            (msg.center.x, msg.center.y),
            active=msg.status == Candidate.ACTIVE,
            confirmed=msg.status == Candidate.CONFIRMED,
        )
        stamp = time_ns(msg.header.stamp)
        self._candidates[(msg.episode_id, msg.candidate_id)] = (stamp, candidate)
        if msg.episode_id == self.episode_id and stamp >= self._task_ns:
            self.candidate_changed(candidate)
        self.try_act()

    def _on_turn(self, msg: AgentMessage) -> None:
        # Kept even when it arrives before its episode's task (topics are not ordered); only
        # a turn of the agent's current episode lets it act.
        self._waiting_since = time.monotonic()
        if msg.receiver == self.agent:
            self._turn_episode, self._turn_candidate = msg.episode_id, msg.candidate_id
            self._turn_decision = parse_turn_text(msg.text)
            self._turn_messages = msg.sequence
            self.try_act()
        else:
            self._turn_episode = ""

    def _on_message(self, msg: AgentMessage) -> None:
        if msg.sender == self.agent:
            return
        self.get_logger().info(f"message from {msg.sender}: {msg.text}")
        if msg.sequence and msg.receiver == self.agent:
            message = TeammateMessage(
                sender=msg.sender, receiver=msg.receiver, text=msg.text, sequence=msg.sequence
            )
            self._inbox.setdefault(msg.episode_id, []).append((time_ns(msg.header.stamp), message))
            self.try_act()
