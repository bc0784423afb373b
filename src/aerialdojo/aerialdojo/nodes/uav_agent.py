"""UAV agent node: acts on its own sensor topics and the task goal, through the step service.

Subscribes (relative to its namespace, e.g. ``/uav``): ``camera/<view>/image``,
``camera/<view>/depth``, ``camera/<view>/camera_info``, ``odom``, and the latched
``/aerialdojo/task``. Calls ``/aerialdojo/step``. Only standard sensor_msgs/nav_msgs topics
and the task services: the same node runs against a real robot's drivers.

Each step returns the stamp of the observation set it produced; the node waits until every
view of that stamp has arrived, then asks the policy for the next action.
"""

from __future__ import annotations

import time
from collections import defaultdict

import rclpy
from aerialdojo_interfaces.msg import GoalSpec, TaskSpec
from aerialdojo_interfaces.srv import Step
from nav_msgs.msg import Odometry
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node
from rclpy.task import Future
from sensor_msgs.msg import CameraInfo, Image

from aerialdojo.agents.colour_seeker import ColourSeekerPolicy
from aerialdojo.agents.observation import AgentObservation, GoalDescription, Policy, ViewData
from aerialdojo.nodes.common import (
    SENSOR_QOS,
    STATE_QOS,
    TASK_QOS,
    declare_node_parameters,
    param,
    time_ns,
)
from aerialdojo.nodes.conversions import intrinsics_from_msg, pose_from_msg
from aerialdojo.transport import image_to_array

_KINDS = ("image", "depth", "camera_info")


class UavAgent(Node):
    """Runs a policy (by default the ``ColourSeekerPolicy``) on the UAV's observation sets."""

    def __init__(self, policy: Policy | None = None) -> None:
        """Args:
        policy: acts on each observation set; default: the ``policy`` parameter's.
        """
        super().__init__("uav_agent")
        declare_node_parameters(self, "uav_agent")
        self._agent = self.get_namespace().strip("/") or "uav"
        self._views: list[str] = list(param(self, "views"))
        self._policy = policy or ColourSeekerPolicy(seed=param(self, "seed"))
        self._timeout_s = float(param(self, "observation_timeout_s"))
        self._episode_id = ""
        self._expected_ns: int | None = None
        self._waiting_since = time.monotonic()
        self._step_pending = False
        # stamp (ns) -> (view, kind) -> message; odometry by stamp.
        self._frames: dict[int, dict[tuple[str, str], object]] = defaultdict(dict)
        self._odometry: dict[int, Odometry] = {}

        for view in self._views:
            for kind, msg_type in zip(_KINDS, (Image, Image, CameraInfo), strict=True):
                self.create_subscription(
                    msg_type,
                    f"camera/{view}/{kind}",
                    lambda msg, key=(view, kind): self._on_frame(key, msg),
                    SENSOR_QOS,
                )
        self.create_subscription(Odometry, "odom", self._on_odometry, STATE_QOS)
        self.create_subscription(TaskSpec, "/aerialdojo/task", self._on_task, TASK_QOS)
        self._step_client = self.create_client(Step, "/aerialdojo/step")
        self.create_timer(5.0, self._warn_if_starved)

    def _on_task(self, task: TaskSpec) -> None:
        if self._agent not in task.agents or task.episode_id == self._episode_id:
            return
        self._episode_id = task.episode_id
        self._policy.reset(_goal(task.goal))
        self._expected_ns = time_ns(task.header.stamp)
        self._waiting_since = time.monotonic()
        self.get_logger().info(f"episode {task.episode_id}: {task.goal.object_name!r}")
        self._try_act()

    def _on_frame(self, key: tuple[str, str], msg: Image | CameraInfo) -> None:
        self._frames[time_ns(msg.header.stamp)][key] = msg
        self._try_act()

    def _on_odometry(self, msg: Odometry) -> None:
        self._odometry[time_ns(msg.header.stamp)] = msg
        self._try_act()

    def _try_act(self) -> None:
        stamp = self._expected_ns
        if stamp is None or self._step_pending:
            return
        frames = self._frames.get(stamp, {})
        if len(frames) < len(self._views) * len(_KINDS) or stamp not in self._odometry:
            return
        observation = AgentObservation(
            views={
                view: ViewData(
                    rgb=image_to_array(frames[(view, "image")]),
                    depth=image_to_array(frames[(view, "depth")]),
                    intrinsics=intrinsics_from_msg(frames[(view, "camera_info")]),
                )
                for view in self._views
            },
            odometry=pose_from_msg(self._odometry[stamp].pose.pose),
        )
        self._forget_before(stamp)
        action = self._policy.act(observation)
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

    def _forget_before(self, stamp: int) -> None:
        for old in [s for s in self._frames if s <= stamp]:
            del self._frames[old]
        for old in [s for s in self._odometry if s <= stamp]:
            del self._odometry[old]

    def _warn_if_starved(self) -> None:
        if self._expected_ns is None or self._step_pending:
            return
        waited = time.monotonic() - self._waiting_since
        if waited > self._timeout_s:
            have = sorted(self._frames.get(self._expected_ns, {}))
            self.get_logger().warning(
                f"no complete observation set for stamp {self._expected_ns} ns after "
                f"{waited:.0f} s; have {have}"
            )


def _goal(goal: GoalSpec) -> GoalDescription:
    return GoalDescription(
        object_name=goal.object_name,
        landmark_name=goal.landmark_name,
        direction=goal.direction,
        description=goal.description,
        reference_images=[image_to_array(image).copy() for image in goal.reference_images],
    )


def main(args: list[str] | None = None) -> None:
    try:
        with rclpy.init(args=args):
            rclpy.spin(UavAgent())
    except (KeyboardInterrupt, ExternalShutdownException):
        pass


if __name__ == "__main__":
    main()
