"""What the AGOS UAV and UGV agent nodes share: the task, their own views by stamp, their
map-frame odometry, the handoff topics and the step service (AGOS-Bench: two agents in
separate processes that cooperate only through ``/agos/candidates`` and ``/agos/messages``).

The task manager announces on ``/agos/turn`` whose decision comes next, which candidate
is being verified and how many messages the agent has been sent with decisions; an agent
decides only on its turn, once it holds every view of the stamp its own last step produced,
the candidate the turn names and every message the turn counts, so its decision never
depends on how fast the other process was. The task's ``mode`` says whether the agents work
as AGOS-Agent (candidates) or as the Baseline (messages only). A subclass says which views
an observation set holds after its last decision and turns one set into a decision
(``decide``).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from aerialdojo_interfaces.msg import AgentMessage, Candidate, TaskSpec
from std_msgs.msg import Header

from aerialdojo.agos.episodes import parse_task_text
from aerialdojo.agos.grid import Region
from aerialdojo.agos.policies import CandidateView, TargetSignature
from aerialdojo.agos.town import TownMap, town_map
from aerialdojo.agos.vocabulary import MODE_AGENT
from aerialdojo.image_codec import image_to_array
from aerialdojo.nodes.agent_node import AgentNode
from aerialdojo.nodes.common import param
from aerialdojo.nodes.qos import HANDOFF_QOS, TASK_QOS
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
        self.seed = int(param(self, "seed"))
        self.town: TownMap | None = None
        self.region: Region | None = None
        self.actions: tuple[str, ...] = ()
        # Action -> most uses per episode (the annotation and confirmation budgets).
        self.limits: dict[str, int] = {}
        self.mode = MODE_AGENT
        # (episode id, sequence) -> text of the messages the other agent sent this one with
        # its decisions; they may arrive before the task does.
        self._inbox: dict[tuple[str, int], str] = {}
        self._turn_messages = 0
        # (episode id, candidate id) -> newest view: a candidate of the next episode may
        # arrive before its task does.
        self._candidates: dict[tuple[str, str], CandidateView] = {}
        # The episode of the turn granted to this agent ("" while it has none) and the
        # candidate under verification the turn names.
        self._turn_episode = ""
        self._turn_candidate = ""
        self.create_subscription(Candidate, "/agos/candidates", self._on_candidate, HANDOFF_QOS)
        self.create_subscription(AgentMessage, "/agos/messages", self._on_message, HANDOFF_QOS)
        self.create_subscription(AgentMessage, "/agos/turn", self._on_turn, TASK_QOS)
        self._messages = self.create_publisher(AgentMessage, "/agos/messages", HANDOFF_QOS)
        self.announce(str(param(self, "policy")))

    # -- for subclasses ----------------------------------------------------------------

    def start_episode(self, signature: TargetSignature) -> None:
        """A new episode began; ``self.town``, ``region``, ``actions``, ``limits`` and
        ``mode`` are set."""
        raise NotImplementedError

    def ready(self) -> bool:
        """Whether the subclass holds what its next decision needs (default: yes)."""
        return True

    def candidate_changed(self, candidate: CandidateView) -> None:
        """A candidate appeared or closed."""

    def send(self, kind: int, text: str, receiver: str, candidate_id: str = "") -> None:
        """Publish an AgentMessage to the other agent."""
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
        self.limits = {spec.name: spec.max_uses for spec in own if spec.max_uses}
        self.mode = task.mode or MODE_AGENT
        self._candidates = {
            key: view for key, view in self._candidates.items() if key[0] == task.episode_id
        }
        self._inbox = {key: text for key, text in self._inbox.items() if key[0] == task.episode_id}
        references = [image_to_array(image).copy() for image in task.goal.reference_images]
        self.start_episode(TargetSignature.from_references(references))
        self.get_logger().info(f"episode {task.episode_id}: {len(references)} reference views")

    def may_act(self) -> bool:
        if self.town is None or self._turn_episode != self.episode_id:
            return False
        if self._turn_candidate and self._turn_candidate not in self.candidates:
            return False  # the candidate messages of the other agent's decision are on their way
        if len(self.inbox) < self._turn_messages:
            return False  # so are the messages the other agent's decisions carried
        return self.ready()

    def try_act(self) -> None:
        was_pending = self._step_pending
        super().try_act()
        if self._step_pending and not was_pending:
            self._turn_episode = ""  # the turn is used

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

    @property
    def inbox(self) -> list[str]:
        """This episode's messages from the other agent's decisions, in the order sent."""
        return [
            text
            for (episode_id, _), text in sorted(self._inbox.items())
            if episode_id == self.episode_id
        ]

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

    def _on_turn(self, msg: AgentMessage) -> None:
        # Kept even when it arrives before its episode's task (topics are not ordered); only
        # a turn of the agent's current episode lets it act.
        self._waiting_since = time.monotonic()
        if msg.receiver == self.agent:
            self._turn_episode, self._turn_candidate = msg.episode_id, msg.candidate_id
            self._turn_messages = msg.sequence
            self.try_act()
        else:
            self._turn_episode = ""

    def _on_message(self, msg: AgentMessage) -> None:
        if msg.sender == self.agent:
            return
        self.get_logger().info(f"message from {msg.sender}: {msg.text}")
        if msg.sequence and msg.receiver == self.agent:
            self._inbox[(msg.episode_id, msg.sequence)] = msg.text
            self.try_act()
