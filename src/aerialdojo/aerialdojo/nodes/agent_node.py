"""What every agent node does between tasks and steps, whatever its benchmark.

An agent node takes the latched task once its own sensor topics are matched and the step
service is ready, waits for the observation set of the stamp its last step produced (the
task's stamp for the first), decides, calls ``/aerialdojo/step`` and starts over with the
stamp the answer names. A subclass says which views the next set holds, whether it may act
now (AGOS: its turn), and turns a set into a decision.

A task is new when its episode id or its stamp is: the rerun of an episode after an
infrastructure failure comes with the same id and a later stamp, and the agent must take it,
even while a step of the old attempt still awaits its answer (one that never comes must not
hold the agent for the rest of the run). Each step names the episode and attempt it was
decided for, and this process (``step_origin``): the task manager refuses a step of an
earlier attempt as stale (answered done: the node waits for the running attempt's task), and
ends the attempt under way when another process of this agent steps in it (this one was
started in place of one that died, and knows nothing of that attempt).

A node started in place of one that died (``runner.RESTARTABLE``) announces its process at
once, and the task manager ends the attempt it joined and reruns the episode. The node gets
the rerun's task and first observation set as a node that starts late does, never waiting
for frames sent before its subscriptions matched: the task is latched, and the bridge's
sensor writers keep their last frames for a reader that matches late (``qos.sensor_qos``).

A policy that cannot decide for reasons outside it (``errors.PolicyFaultError``: its model
server died or hangs) does not fail the agent: the node says so on
``/aerialdojo/agent_faults`` and the task manager ends the attempt as an infrastructure
failure and reruns the episode. Any other error a policy raises is its own: the node says so
in a last step (``Step.Request.agent_error``), the task manager ends the episode as the
agent's failure (``AGENT_ERROR``, scored, as an illegal action or silence is), and the node
then exits with the error, which stops the run as any failed node does.

A step the referee refuses goes back to the policy with the reason (its optional
``refused(reason)``, ``agents.observation.tell_refused``) and the node asks it again on the
same observation set; the task manager ends the episode as the agent's ``invalid_action``
after ``refusals_allowed`` refusals in a row, and answers the last one ``done``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import rclpy
from aerialdojo_interfaces.msg import AgentInfo, AgentMessage, TaskSpec
from aerialdojo_interfaces.srv import Step
from rclpy.node import Node
from rclpy.task import Future
from std_msgs.msg import Header

from aerialdojo.agents.observation import ViewData
from aerialdojo.errors import PolicyFaultError
from aerialdojo.geometry import Pose
from aerialdojo.nodes.common import (
    RunFilter,
    announce_node,
    declare_node_parameters,
    node_process,
    param,
    process_name,
    time_ns,
    wall_timer,
)
from aerialdojo.nodes.qos import (
    AGENTS_QOS,
    FAULTS_QOS,
    TASK_QOS,
    publisher_without_events,
    subscription_without_events,
)
from aerialdojo.nodes.sensor_sync import ObservationSync
from aerialdojo.protocols.referee import StepRequest

#: How much of a policy's error its last step carries (its traceback ends the node's log).
_AGENT_ERROR_CHARS = 500
#: How long a node whose policy raised waits for the task manager's answer before it exits.
_ERROR_ANSWER_WAIT_S = 5.0


class AgentNode(Node):
    """Base of the agent nodes: task, observation sets by stamp, decisions, steps.

    Args:
        name: node name, also its parameter table in ``params.NODE_PARAMETERS``.
        default_agent: the agent's name outside a namespace; in one, the namespace names
            it (``/uav`` -> ``uav``).
    """

    def __init__(self, name: str, default_agent: str) -> None:
        super().__init__(name)
        declare_node_parameters(self, name)
        announce_node(self)
        self.agent = self.get_namespace().strip("/") or default_agent
        self._run = RunFilter(self)
        self.episode_id = ""
        self.attempt = 0
        self._process = process_name()
        self._task_key: tuple[str, int] | None = None
        self._timeout_s = float(param(self, "observation_timeout_s"))
        self._expected_ns: int | None = None
        self._waiting_since = time.monotonic()
        self._pending_task: tuple[str, int] | None = None  # the task whose step is under way
        self._step_sent_at = 0.0
        self._sensors = ObservationSync(self, self.subscribed_views(), self.try_act)
        self._step_client = self.create_client(Step, "/aerialdojo/step")
        # Without event handlers, as its subscriptions (``qos.subscription_without_events``).
        self._faults = publisher_without_events(
            self, AgentMessage, "/aerialdojo/agent_faults", FAULTS_QOS
        )
        self._subscribe_to_tasks = wall_timer(self, 0.1, self._subscribe_when_ready)
        wall_timer(self, 5.0, self._warn_if_starved)

    def announce(self, policy: str, *, privileged: bool = False, description: str = "") -> None:
        """Publish who acts for this agent on ``/aerialdojo/agents`` (latched), for the run's
        record and report; ``privileged``: the policy reads ground truth."""
        self._info_pub = publisher_without_events(self, AgentInfo, "/aerialdojo/agents", AGENTS_QOS)
        self._info_pub.publish(
            AgentInfo(
                header=Header(stamp=self.get_clock().now().to_msg()),
                run_id=self._run.run_id,
                agent=self.agent,
                node=self.get_fully_qualified_name(),
                policy=policy,
                privileged=privileged,
                description=description,
            )
        )
        if privileged:
            self.get_logger().warning(
                f"policy {policy} reads ground truth: this run is privileged ({description})"
            )

    @property
    def step_pending(self) -> bool:
        """A step of the current task awaits its answer."""
        return self._pending_task is not None and self._pending_task == self._task_key

    @property
    def awaited_stamp_ns(self) -> int | None:
        """Stamp of the observation set being decided on (or awaited), nanoseconds."""
        return self._expected_ns

    # -- for subclasses ----------------------------------------------------------------

    def subscribed_views(self) -> Sequence[str]:
        """Every view whose topics the agent subscribes to (its parameters are declared)."""
        raise NotImplementedError

    def begin_episode(self, task: TaskSpec) -> None:
        """A new task for this agent arrived; ``self.episode_id`` is set."""
        raise NotImplementedError

    def expected_views(self) -> tuple[str, ...]:
        """The views the next observation set holds."""
        raise NotImplementedError

    def may_act(self) -> bool:
        """Whether the agent may decide now (default: whenever its observation is there)."""
        return True

    def decide(self, pose: Pose, views: dict[str, ViewData]) -> StepRequest:
        """The next step, from the odometry pose and the views of the awaited stamp."""
        raise NotImplementedError

    def stepped(self, request: StepRequest, pose: Pose) -> None:
        """``request``, decided at ``pose``, was accepted and executed."""

    def refused(self, request: StepRequest, reason: str) -> None:
        """The referee refused ``request`` for ``reason``; the node asks the policy again on
        the same observation set next. A subclass hands the reason to its policy
        (``agents.observation.tell_refused``)."""

    def waiting_for(self, waited_s: float) -> str:
        """What the agent waits for besides its observation set, once it waited
        ``waited_s`` ("" when nothing); logged as a warning past the timeout."""
        return ""

    # -- plumbing ----------------------------------------------------------------------

    def _subscribe_when_ready(self) -> None:
        # Only a node that will receive the first observation set and can send its step may
        # take a task: the task manager starts an episode once the task topic has a
        # subscriber. A request sent before the client matched the service is lost (rmw
        # discovers the request and response topics independently), and the agent would wait
        # for its answer until the attempt timed out.
        if self._sensors.publishers_matched and self._step_client.service_is_ready():
            # Destroyed, not cancelled: a cancelled timer stays in every wait set.
            self.destroy_timer(self._subscribe_to_tasks)
            # Once, as rclpy's default event handlers would (the sensor subscriptions have
            # none: ``qos.subscription_without_events``); and again if the set never comes.
            for problem in self._sensors.unreachable_publishers():
                self.get_logger().warning(problem)
            subscription_without_events(self, TaskSpec, "/aerialdojo/task", self._on_task, TASK_QOS)

    def _on_task(self, task: TaskSpec) -> None:
        key = (task.episode_id, time_ns(task.header.stamp))
        if self.agent not in task.agents or key == self._task_key:
            return
        if self._run.foreign(task.run_id, "a task"):
            return
        self._task_key = key
        self.episode_id = task.episode_id
        self.attempt = task.attempt
        try:
            self.begin_episode(task)
        except Exception as error:
            self._policy_failed(error)
            return
        self._expected_ns = key[1]
        self._waiting_since = time.monotonic()
        self.try_act()

    def try_act(self) -> None:
        """Decide and step if the awaited observation set is complete and the agent may act;
        called whenever a message arrives."""
        stamp = self._expected_ns
        if stamp is None or self.step_pending or not self.may_act():
            return
        observed = self._sensors.observation(stamp, self.expected_views())
        if observed is None:
            return
        pose, views = observed
        try:
            request = self.decide(pose, views)
        except Exception as error:
            self._policy_failed(error)
            return
        self._sensors.forget_before(stamp)
        task_key = self._pending_task = self._task_key
        self._step_sent_at = time.monotonic()
        self._step_client.call_async(
            self._step_request(
                action=request.action,
                magnitude=request.magnitude,
                argument=request.argument,
                teammate_message=request.teammate_message,
            )
        ).add_done_callback(lambda future: self._on_step_done(future, request, pose, task_key))

    def _step_request(self, **fields: object) -> Step.Request:
        """A step of this agent's process for the attempt it works on, with ``fields``."""
        return Step.Request(
            run_id=self._run.run_id,
            agent=self.agent,
            episode_id=self.episode_id,
            attempt=self.attempt,
            agent_process=self._process,
            **fields,
        )

    def _on_step_done(
        self,
        future: Future,
        request: StepRequest,
        pose: Pose,
        task_key: tuple[str, int] | None,
    ) -> None:
        if self._pending_task == task_key:
            self._pending_task = None
        response: Step.Response = future.result()
        if task_key != self._task_key:
            # A new task arrived while this step was under way: its answer is about the old
            # episode, and the new one waits for its first observation.
            self.try_act()
            return
        if not response.accepted:
            self.get_logger().warning(
                f"{request.action} {request.argument or ''} refused: {response.message}"
            )
            if response.done:  # the refusal after the allowed ones ended the episode
                self._expected_ns = None
                return
            try:
                self.refused(request, response.message)
            except Exception as error:
                self._policy_failed(error)
                return
            self.try_act()  # asked again, on the same observation set
            return
        try:
            self.stepped(request, pose)
        except Exception as error:
            self._policy_failed(error)
            return
        if response.done:
            self.get_logger().info(f"episode {self.episode_id} done: {response.message}")
            self._expected_ns = None
            return
        self._expected_ns = time_ns(response.stamp)
        self._waiting_since = time.monotonic()
        self.try_act()

    def _policy_failed(self, error: Exception) -> None:
        """A call into the policy raised ``error``: a fault of the services it depends on
        (``PolicyFaultError``) ends the attempt as an infrastructure failure, rerun; any
        other error is the policy's own, the agent's failure (``AGENT_ERROR``, scored)."""
        if isinstance(error, PolicyFaultError):
            self._report_fault(str(error))
        else:
            self._end_with_error(error)

    def _end_with_error(self, error: Exception) -> None:
        """Say in a last step that the policy raised ``error``, then end the node with it
        once the task manager answered (or after ``_ERROR_ANSWER_WAIT_S``: it may be gone).
        The run stops as for any node that fails: a policy that raised is not trusted with
        the next episode, and the user reads the traceback."""
        described = f"{type(error).__name__}: {error}"
        self.get_logger().error(
            f"episode {self.episode_id}: the policy raised {described}; the episode is the "
            "agent's failure and this node exits with the error"
        )
        self._expected_ns = None

        def exit_with_error(_: object = None) -> None:
            raise error

        self._step_client.call_async(
            self._step_request(agent_error=described[:_AGENT_ERROR_CHARS])
        ).add_done_callback(exit_with_error)
        wall_timer(self, _ERROR_ANSWER_WAIT_S, exit_with_error)

    def _report_fault(self, reason: str) -> None:
        """End this attempt as an infrastructure failure: the task manager reruns it."""
        self.get_logger().error(f"episode {self.episode_id}: {reason}")
        self._expected_ns = None
        self._faults.publish(
            AgentMessage(
                header=Header(stamp=self.get_clock().now().to_msg()),
                run_id=self._run.run_id,
                episode_id=self.episode_id,
                sender=self.agent,
                receiver="task_manager",
                kind=AgentMessage.FREE_TEXT,
                text=reason,
            )
        )

    def _warn_if_starved(self) -> None:
        if self.step_pending:
            unanswered_s = time.monotonic() - self._step_sent_at
            if unanswered_s > self._timeout_s:
                self.get_logger().warning(
                    f"episode {self.episode_id}: no answer from /aerialdojo/step for "
                    f"{unanswered_s:.0f} s"
                )
            return
        waited = time.monotonic() - self._waiting_since
        if self._expected_ns is not None:
            other = self.waiting_for(waited)
            if other:
                if waited > self._timeout_s:
                    self.get_logger().warning(other)
                return
        warning = self._sensors.starvation(self._expected_ns, waited, self._timeout_s)
        if warning:
            self.get_logger().warning(warning)


def spin_agent(make_node: Callable[[], AgentNode], args: list[str] | None = None) -> None:
    """Run one agent node until shutdown: the body of every agent node's ``main``."""
    with node_process(args):
        rclpy.spin(make_node())
