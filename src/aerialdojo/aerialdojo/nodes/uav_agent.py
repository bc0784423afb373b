"""UAV agent node: acts on its own sensor topics and the task goal, through the step service.

Subscribes (relative to its namespace, e.g. ``/uav``): ``camera/<view>/image``,
``camera/<view>/depth``, ``camera/<view>/camera_info``, ``odom``, and the latched
``/aerialdojo/task``. Calls ``/aerialdojo/step``. Only standard sensor_msgs/nav_msgs topics
and the task services: the same node runs against a real robot's drivers.

Each step returns the stamp of the observation set it produced; the node waits until every
view of that stamp has arrived, then asks the policy for the next action. A policy whose model
server fails (``ModelServerError``) makes the attempt an infrastructure failure: the node says
so on ``/aerialdojo/agent_faults`` and the task manager reruns the episode.
"""

from __future__ import annotations

import time

import rclpy
from aerialdojo_interfaces.msg import AgentMessage, TaskSpec
from aerialdojo_interfaces.srv import Step
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node
from rclpy.task import Future
from std_msgs.msg import Header

from aerialdojo.agents.observation import AgentObservation, GoalDescription, Policy
from aerialdojo.agents.plugins import uav_policy
from aerialdojo.agents.vlm.chat import ModelServerError
from aerialdojo.agents.vlm.transcript import ReplayError
from aerialdojo.nodes.common import (
    AGENT_FAULTS_TOPIC,
    FAULTS_QOS,
    TASK_QOS,
    declare_node_parameters,
    param,
    parameters_of,
    time_ns,
    wall_timer,
)
from aerialdojo.nodes.sensor_sync import ObservationSync
from aerialdojo.runner import exit_with_launcher
from aerialdojo.transport import image_to_array


class UavAgent(Node):
    """Runs a policy (the ``policy`` parameter's: the colour seeker, a vision-language model,
    or a plug-in class) on the UAV's observation sets."""

    def __init__(self, policy: Policy | None = None) -> None:
        """Args:
        policy: acts on each observation set; default: the ``policy`` parameter's.
        """
        super().__init__("uav_agent")
        declare_node_parameters(self, "uav_agent")
        self._agent = self.get_namespace().strip("/") or "uav"
        self._views: list[str] = list(param(self, "views"))
        self._policy = policy or uav_policy(parameters_of(self, "uav_agent"), "uav_agent")
        self._timeout_s = float(param(self, "observation_timeout_s"))
        self._episode_id = ""
        self._task_stamp = -1
        self._expected_ns: int | None = None
        self._waiting_since = time.monotonic()
        self._step_pending = False
        self._sensors = ObservationSync(self, self._views, self._try_act)
        self._step_client = self.create_client(Step, "/aerialdojo/step")
        self._faults = self.create_publisher(AgentMessage, AGENT_FAULTS_TOPIC, FAULTS_QOS)
        self._subscribe_to_tasks = wall_timer(self, 0.1, self._subscribe_when_sensors_match)
        wall_timer(self, 5.0, self._warn_if_starved)

    def _subscribe_when_sensors_match(self) -> None:
        # Only a node that will receive the first observation set may take a task: the task
        # manager starts an episode once the task topic has a subscriber.
        if self._sensors.publishers_matched:
            self._subscribe_to_tasks.cancel()
            self.create_subscription(TaskSpec, "/aerialdojo/task", self._on_task, TASK_QOS)

    def _on_task(self, task: TaskSpec) -> None:
        # A rerun of an episode has the same id and a new stamp; the latched task may arrive
        # twice with the same stamp.
        stamp = time_ns(task.header.stamp)
        if self._agent not in task.agents or (task.episode_id, stamp) == (
            self._episode_id,
            self._task_stamp,
        ):
            return
        self._episode_id, self._task_stamp = task.episode_id, stamp
        self._policy.reset(_goal(task))
        self._expected_ns = stamp
        self._waiting_since = time.monotonic()
        self.get_logger().info(f"episode {task.episode_id}: {task.goal.object_name!r}")
        self._try_act()

    def _try_act(self) -> None:
        stamp = self._expected_ns
        if stamp is None or self._step_pending:
            return
        observed = self._sensors.observation(stamp, self._views)
        if observed is None:
            return
        odometry, views = observed
        self._sensors.forget_before(stamp)
        try:
            action = self._policy.act(AgentObservation(views=views, odometry=odometry))
        except (ModelServerError, ReplayError) as error:
            self._report_fault(str(error))
            return
        self._step_pending = True
        request = Step.Request(agent=self._agent, action=action.name, magnitude=action.magnitude)
        self._step_client.call_async(request).add_done_callback(self._on_step_done)

    def _on_step_done(self, future: Future) -> None:
        self._step_pending = False
        response: Step.Response = future.result()
        if not response.accepted:
            self.get_logger().error(f"step refused: {response.message}")
            self._expected_ns = None
            return
        if response.done:
            self.get_logger().info(f"episode {self._episode_id} done: {response.message}")
            self._expected_ns = None
            return
        self._expected_ns = time_ns(response.stamp)
        self._waiting_since = time.monotonic()
        self._try_act()

    def _report_fault(self, reason: str) -> None:
        """End this attempt as an infrastructure failure (the task manager reruns it)."""
        self.get_logger().error(f"episode {self._episode_id}: {reason}")
        self._expected_ns = None
        self._faults.publish(
            AgentMessage(
                header=Header(stamp=self.get_clock().now().to_msg()),
                episode_id=self._episode_id,
                sender=self._agent,
                receiver="task_manager",
                kind=AgentMessage.FREE_TEXT,
                text=reason,
            )
        )

    def _warn_if_starved(self) -> None:
        if self._step_pending:
            return
        waited = time.monotonic() - self._waiting_since
        warning = self._sensors.starvation(self._expected_ns, waited, self._timeout_s)
        if warning:
            self.get_logger().warning(warning)


def _goal(task: TaskSpec) -> GoalDescription:
    goal = task.goal
    return GoalDescription(
        object_name=goal.object_name,
        landmark_name=goal.landmark_name,
        direction=goal.direction,
        description=goal.description,
        reference_images=[image_to_array(image).copy() for image in goal.reference_images],
        action_budget=int(task.action_budget),
        success_radius_m=float(task.success_radius_m),
        episode_id=task.episode_id,
    )


def main(args: list[str] | None = None) -> None:
    exit_with_launcher()
    try:
        with rclpy.init(args=args):
            rclpy.spin(UavAgent())
    except (KeyboardInterrupt, ExternalShutdownException):
        pass


if __name__ == "__main__":
    main()
