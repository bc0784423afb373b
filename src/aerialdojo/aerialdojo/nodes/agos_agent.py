"""What the AGOS UAV and UGV agent nodes share: the task, their own views by stamp, their
map-frame odometry, the handoff topics and the step service (AGOS-Bench: two agents in
separate processes that cooperate only through ``/agos/candidates`` and ``/agos/messages``).

The task manager announces on ``/agos/turn`` whose decision comes next and which candidate
is being verified; an agent decides only on its turn, once it holds every view of the stamp
its own last step produced and the candidate the turn names, so its decision never depends
on how fast the other process was. A subclass says which views an observation set holds
after its last decision and turns one set into a decision (``decide``).
"""

from __future__ import annotations

import time

from aerialdojo_interfaces.msg import AgentMessage, Candidate, TaskSpec
from aerialdojo_interfaces.srv import Step
from rclpy.node import Node
from rclpy.task import Future
from std_msgs.msg import Header

from aerialdojo.agents.observation import ViewData
from aerialdojo.agos.episodes import parse_task_text
from aerialdojo.agos.grid import Region
from aerialdojo.agos.policies import CandidateView, Decision, TargetSignature
from aerialdojo.agos.town import TownMap, town_map
from aerialdojo.geometry import Pose
from aerialdojo.nodes.common import (
    HANDOFF_QOS,
    TASK_QOS,
    declare_node_parameters,
    param,
    time_ns,
    wall_timer,
)
from aerialdojo.nodes.sensor_sync import ObservationSync
from aerialdojo.tf_tree import MAP_FRAME
from aerialdojo.transport import image_to_array


class AgosAgentNode(Node):
    """Base of the AGOS agent nodes.

    Args:
        name: node name, also its parameter table.
        agent: ``uav`` or ``ugv``.
        views: every view the agent's rig can publish.
    """

    def __init__(self, name: str, agent: str, views: tuple[str, ...]) -> None:
        super().__init__(name)
        declare_node_parameters(self, name)
        self.agent = agent
        self.seed = int(param(self, "seed"))
        self._timeout_s = float(param(self, "observation_timeout_s"))
        self.episode_id = ""
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
        self._expected_ns: int | None = None
        self._waiting_since = time.monotonic()
        self._step_pending = False
        self._pending: Decision | None = None
        self._sensors = ObservationSync(self, views, self._try_act)
        self._subscribe_to_tasks = wall_timer(self, 0.1, self._subscribe_when_sensors_match)
        self.create_subscription(Candidate, "/agos/candidates", self._on_candidate, HANDOFF_QOS)
        self.create_subscription(AgentMessage, "/agos/messages", self._on_message, HANDOFF_QOS)
        self.create_subscription(AgentMessage, "/agos/turn", self._on_turn, TASK_QOS)
        self._messages = self.create_publisher(AgentMessage, "/agos/messages", HANDOFF_QOS)
        self._step_client = self.create_client(Step, "/aerialdojo/step")
        wall_timer(self, 5.0, self._warn_if_starved)

    # -- for subclasses ----------------------------------------------------------------

    def start_episode(self, signature: TargetSignature) -> None:
        """A new episode began; ``self.town``, ``region`` and ``actions`` are set."""
        raise NotImplementedError

    def expected_views(self) -> tuple[str, ...]:
        """The views the next observation set holds."""
        raise NotImplementedError

    def ready(self) -> bool:
        """Whether the subclass holds what its next decision needs (default: yes)."""
        return True

    def decide(self, pose: Pose, views: dict[str, ViewData]) -> Decision:
        """The next decision."""
        raise NotImplementedError

    def stepped(self, decision: Decision, pose: Pose) -> None:
        """A decision was accepted and executed."""

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

    # -- plumbing ----------------------------------------------------------------------

    def _on_task(self, task: TaskSpec) -> None:
        if self.agent not in task.agents or task.episode_id == self.episode_id:
            return
        self.episode_id = task.episode_id
        self.town = town_map(task.scene)
        self.region = parse_task_text(task.goal.description)
        self.actions = tuple(spec.name for spec in task.actions if spec.agent == self.agent)
        self._candidates = {
            key: view for key, view in self._candidates.items() if key[0] == task.episode_id
        }
        references = [image_to_array(image).copy() for image in task.goal.reference_images]
        self.start_episode(TargetSignature.from_references(references))
        self._expected_ns = time_ns(task.header.stamp)
        self._waiting_since = time.monotonic()
        self.get_logger().info(f"episode {task.episode_id}: {len(references)} reference views")
        self._try_act()

    @property
    def candidates(self) -> dict[str, CandidateView]:
        """This episode's candidates by id."""
        return {
            candidate_id: view
            for (episode_id, candidate_id), view in self._candidates.items()
            if episode_id == self.episode_id
        }

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
        self._try_act()

    def _on_turn(self, msg: AgentMessage) -> None:
        # Kept even when it arrives before its episode's task (topics are not ordered); only
        # a turn of the agent's current episode lets it act.
        self._waiting_since = time.monotonic()
        if msg.receiver == self.agent:
            self._turn_episode, self._turn_candidate = msg.episode_id, msg.candidate_id
            self._try_act()
        else:
            self._turn_episode = ""

    def _on_message(self, msg: AgentMessage) -> None:
        if msg.sender != self.agent:
            self.get_logger().info(f"message from {msg.sender}: {msg.text}")

    def _subscribe_when_sensors_match(self) -> None:
        # Only a node that will receive the first observation set may take a task: the task
        # manager starts an episode once the task topic has a subscriber.
        if self._sensors.publishers_matched:
            self._subscribe_to_tasks.cancel()
            self.create_subscription(TaskSpec, "/aerialdojo/task", self._on_task, TASK_QOS)

    def active_candidate(self) -> CandidateView | None:
        """The candidate being verified, as the current turn names it."""
        return self.candidates.get(self._turn_candidate) if self._turn_candidate else None

    def _try_act(self) -> None:
        stamp = self._expected_ns
        if stamp is None or self._step_pending or self.town is None:
            return
        if self._turn_episode != self.episode_id:
            return
        if (self._turn_candidate and self._turn_candidate not in self.candidates) or not (
            self.ready()
        ):
            return  # the candidate messages of the other agent's decision are on their way
        observed = self._sensors.observation(stamp, self.expected_views())
        if observed is None:
            return
        pose, data = observed
        decision = self.decide(pose, data)
        self._sensors.forget_before(stamp)
        self._turn_episode = ""
        self._step_pending = True
        self._pending = decision
        request = Step.Request(agent=self.agent, action=decision.action, argument=decision.argument)
        episode_id = self.episode_id
        self._step_client.call_async(request).add_done_callback(
            lambda future: self._on_step_done(future, pose, episode_id)
        )

    def _on_step_done(self, future: Future, pose: Pose, episode_id: str) -> None:
        self._step_pending = False
        response: Step.Response = future.result()
        decision = self._pending
        assert decision is not None
        if episode_id != self.episode_id:
            # The episode ended and the next began while this step was under way: its answer
            # is about the old episode, and the new one waits for its first observation.
            self._try_act()
            return
        if not response.accepted:
            self.get_logger().warning(f"{decision} refused: {response.message}")
            self._expected_ns = None
            return
        if response.done:
            self.get_logger().info(f"episode {self.episode_id} done: {response.message}")
            self._expected_ns = None
            self.stepped(decision, pose)
            return
        self._expected_ns = time_ns(response.stamp)
        self._waiting_since = time.monotonic()
        self.stepped(decision, pose)
        self._try_act()

    def _warn_if_starved(self) -> None:
        if self._step_pending:
            return
        waited = time.monotonic() - self._waiting_since
        if self._expected_ns is not None and self._turn_episode != self.episode_id:
            if waited > self._timeout_s:
                self.get_logger().warning(
                    f"no turn on /agos/turn for episode {self.episode_id} after {waited:.0f} s"
                )
            return
        warning = self._sensors.starvation(self._expected_ns, waited, self._timeout_s)
        if warning:
            self.get_logger().warning(warning)
