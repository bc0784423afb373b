"""What the AGOS UAV and UGV agent nodes share: the task, their own views by stamp, their
map-frame odometry, the handoff topics and the step service (AGOS-Bench: two agents in
separate processes that cooperate only through ``/agos/candidates`` and ``/agos/messages``).

The task manager announces on ``/agos/turn`` whose decision comes next and which candidate
is being verified; an agent decides only on its turn, once it holds every view of the stamp
its own last step produced and the candidate the turn names, so its decision never depends
on how fast the other process was.

The node runs the ``policy`` parameter's ``agos.policies.AgosPolicy`` (the colour-shape
heuristics, a vision-language model, or a ``package.module:ClassName`` plug-in): per episode
an ``AgosTask``, per turn an ``AgosObservation`` with the teammate's messages of the attempt.
A decision's own message goes out before its step, so it reaches the teammate before its
turn; each message is stamped with the observation set its decision was made on, so a rerun
of an episode never shows the messages of the attempt before. A subclass says which views an
observation set holds after its last decision and adds its role's workflow messages.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from aerialdojo_interfaces.msg import AgentMessage, Candidate, TaskSpec
from builtin_interfaces.msg import Time
from std_msgs.msg import Header

from aerialdojo.agents.observation import ViewData
from aerialdojo.agents.plugins import agos_policy, policy_identity
from aerialdojo.agos.episodes import parse_task_text
from aerialdojo.agos.grid import Region
from aerialdojo.agos.policies import (
    AgosObservation,
    AgosTask,
    CandidateView,
    Decision,
    TeamMessage,
)
from aerialdojo.agos.town import TownMap, town_map
from aerialdojo.agos.vocabulary import MESSAGE_KINDS, UAV, UGV
from aerialdojo.geometry import Pose
from aerialdojo.image_codec import image_to_array
from aerialdojo.nodes.agent_node import AgentNode
from aerialdojo.nodes.common import param, parameters_of, time_ns
from aerialdojo.nodes.qos import HANDOFF_QOS, TASK_QOS
from aerialdojo.protocols.referee import StepRequest, parse_turn_text
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
        # (episode id, candidate id) -> newest view: a candidate of the next episode may
        # arrive before its task does.
        self._candidates: dict[tuple[str, str], CandidateView] = {}
        # The episode of the turn granted to this agent ("" while it has none) and the
        # candidate under verification the turn names.
        self._turn_episode = ""
        self._turn_candidate = ""
        self._turn_decision = 0
        # Decisions this agent stepped in the current attempt.
        self._decided = 0
        # The teammate's messages by episode, with their stamps: (stamp ns, message).
        self._inbox: dict[str, list[tuple[int, TeamMessage]]] = {}
        self._task_ns = 0
        self._decision_ns: int | None = None
        self.create_subscription(Candidate, "/agos/candidates", self._on_candidate, HANDOFF_QOS)
        self._inbox_sub = self.create_subscription(
            AgentMessage, "/agos/messages", self._on_message, HANDOFF_QOS
        )
        self.create_subscription(AgentMessage, "/agos/turn", self._on_turn, TASK_QOS)
        self._messages = self.create_publisher(AgentMessage, "/agos/messages", HANDOFF_QOS)
        self.teammate = next(other for other in (UAV, UGV) if other != agent)
        self.announce(str(param(self, "policy")), **policy_identity(self.policy))

    # -- for subclasses ----------------------------------------------------------------

    def start_episode(self) -> None:
        """A new episode began; ``self.town``, ``region`` and ``actions`` are set."""

    def ready(self) -> bool:
        """Whether the subclass holds what its next decision needs (default: yes)."""
        return True

    def deciding(self, decision: Decision, pose: Pose) -> None:
        """``decision`` was made at ``pose`` and is about to be stepped: the moment for the
        messages that must precede the teammate's next turn."""

    def candidate_changed(self, candidate: CandidateView) -> None:
        """A candidate appeared or closed."""

    def send(self, kind: int, text: str, receiver: str, candidate_id: str = "") -> None:
        """Publish an AgentMessage to the other agent, stamped with the observation set of
        the agent's latest decision."""
        stamp = (
            Time(sec=self._decision_ns // 1_000_000_000, nanosec=self._decision_ns % 1_000_000_000)
            if self._decision_ns is not None
            else self.get_clock().now().to_msg()
        )
        self._messages.publish(
            AgentMessage(
                header=Header(stamp=stamp, frame_id=MAP_FRAME),
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
        self.actions = tuple(spec.name for spec in task.actions if spec.agent == self.agent)
        self._candidates = {
            key: view for key, view in self._candidates.items() if key[0] == task.episode_id
        }
        self._inbox = {task.episode_id: self._inbox.get(task.episode_id, [])}
        self._task_ns = time_ns(task.header.stamp)
        self._decision_ns = None
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
                team_actions=tuple(spec.name for spec in task.actions),
                action_budget=int(task.action_budget),
                success_radius_m=float(task.success_radius_m),
            )
        )
        self.start_episode()
        self.get_logger().info(f"episode {task.episode_id}: {len(references)} reference views")

    def decide(self, pose: Pose, views: dict[str, ViewData]) -> StepRequest:
        self._decision_ns = self._expected_ns
        self._take_waiting_messages()
        decision = self.policy.act(
            AgosObservation(
                pose=pose,
                views=views,
                candidates=self.candidates,
                active=self.active_candidate(),
                messages=self.messages_received(),
                decision=self._turn_decision,
            )
        )
        self.deciding(decision, pose)
        if decision.message:
            self.send(AgentMessage.FREE_TEXT, decision.message, self.teammate)
        return StepRequest(agent=self.agent, action=decision.action, argument=decision.argument)

    def peers_matched(self) -> bool:
        """``/agos/messages`` is matched both ways with the teammate and with every other
        endpoint discovered on it: a message sent with a decision then reaches the teammate
        before its turn from the first decision on. Discovery between the two agents can lag
        the task manager's, and a message written before its reader matched arrives late."""
        writers = self.get_publishers_info_by_topic("/agos/messages")
        readers = self.get_subscriptions_info_by_topic("/agos/messages")
        return (
            any(info.node_namespace.strip("/") == self.teammate for info in writers)
            and any(info.node_namespace.strip("/") == self.teammate for info in readers)
            and self._inbox_sub.get_publisher_count() >= len(writers)
            and self._messages.get_subscription_count() >= len(readers)
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
        return self.ready()

    def try_act(self) -> None:
        was_pending = self._step_pending
        super().try_act()
        if self._step_pending and not was_pending:
            self._turn_episode = ""  # the turn is used
            self._decided += 1

    def waiting_for(self, waited_s: float) -> str:
        if self._turn_episode != self.episode_id:
            return f"no turn on /agos/turn for episode {self.episode_id} after {waited_s:.0f} s"
        return ""

    # -- handoff topics ----------------------------------------------------------------

    @property
    def candidates(self) -> dict[str, CandidateView]:
        """This episode's candidates by id."""
        return {
            candidate_id: view
            for (episode_id, candidate_id), view in self._candidates.items()
            if episode_id == self.episode_id
        }

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
        self._candidates[(msg.episode_id, msg.candidate_id)] = candidate
        if msg.episode_id == self.episode_id:
            self.candidate_changed(candidate)
        self.try_act()

    def _take_waiting_messages(self) -> None:
        """Handle the messages already delivered but not yet handed to ``_on_message``: the
        executor takes one message per subscription per round, so a turn can be handled
        while messages the teammate sent before its step still wait in the queue."""
        with self._inbox_sub.handle:
            while True:
                taken = self._inbox_sub.handle.take_message(AgentMessage, False)
                if taken is None:
                    return
                self._on_message(taken[0])

    def messages_received(self) -> tuple[TeamMessage, ...]:
        """The teammate's messages of this attempt, oldest first."""
        inbox = sorted(self._inbox.get(self.episode_id, []), key=lambda entry: entry[0])
        return tuple(message for stamp, message in inbox if stamp >= self._task_ns)

    def _on_turn(self, msg: AgentMessage) -> None:
        # Kept even when it arrives before its episode's task (topics are not ordered); only
        # a turn of the agent's current episode lets it act.
        self._waiting_since = time.monotonic()
        if msg.receiver == self.agent:
            self._turn_episode, self._turn_candidate = msg.episode_id, msg.candidate_id
            self._turn_decision = parse_turn_text(msg.text)
            self.try_act()
        else:
            self._turn_episode = ""

    def _on_message(self, msg: AgentMessage) -> None:
        if msg.sender == self.agent:
            return
        self.get_logger().info(f"message from {msg.sender}: {msg.text}")
        message = TeamMessage(
            sender=msg.sender,
            kind=MESSAGE_KINDS[msg.kind] if msg.kind < len(MESSAGE_KINDS) else "free_text",
            text=msg.text,
            candidate_id=msg.candidate_id,
        )
        self._inbox.setdefault(msg.episode_id, []).append((time_ns(msg.header.stamp), message))
