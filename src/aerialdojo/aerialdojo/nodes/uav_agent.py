"""UAV agent node: acts on its own sensor topics and the task goal, through the step service.

Subscribes (relative to its namespace, e.g. ``/uav``): ``camera/<view>/image``,
``camera/<view>/depth``, ``camera/<view>/camera_info``, ``odom``, and the latched
``/aerialdojo/task``. Calls ``/aerialdojo/step``. Only standard sensor_msgs/nav_msgs topics
and the task services: the same node runs against a real robot's drivers.

Each step returns the stamp of the observation set it produced; the node waits until every
view of that stamp has arrived, then asks the policy for the next action. The policy is the
``policy`` parameter's: the colour seeker, the oracle, a vision-language model
(``agents.vlm``) or any ``package.module:ClassName`` implementing ``Policy``.
"""

from __future__ import annotations

import rclpy
from aerialdojo_interfaces.msg import TaskSpec
from rclpy.executors import ExternalShutdownException

from aerialdojo.agents.observation import AgentObservation, GoalDescription, Policy, ViewData
from aerialdojo.agents.plugins import policy_identity, uav_policy
from aerialdojo.geometry import Pose
from aerialdojo.image_codec import image_to_array
from aerialdojo.nodes.agent_node import AgentNode
from aerialdojo.nodes.common import param, parameters_of
from aerialdojo.nodes.lifetime import exit_with_launcher
from aerialdojo.protocols.referee import StepRequest


class UavAgent(AgentNode):
    """Runs a policy (by default the ``ColourSeekerPolicy``) on the UAV's observation sets.

    Args:
        policy: acts on each observation set; default: the ``policy`` parameter's.
    """

    def __init__(self, policy: Policy | None = None) -> None:
        super().__init__("uav_agent", default_agent="uav")
        self._policy = policy or uav_policy(parameters_of(self, "uav_agent"), "uav_agent")
        name = param(self, "policy") if policy is None else type(policy).__name__
        self.announce(name, **policy_identity(self._policy))

    def subscribed_views(self) -> list[str]:
        return list(param(self, "views"))

    def begin_episode(self, task: TaskSpec) -> None:
        self._policy.reset(_goal(task))
        self.get_logger().info(f"episode {task.episode_id}: {task.goal.object_name!r}")

    def expected_views(self) -> tuple[str, ...]:
        return tuple(param(self, "views"))

    def decide(self, pose: Pose, views: dict[str, ViewData]) -> StepRequest:
        action = self._policy.act(AgentObservation(views=views, odometry=pose))
        return StepRequest(agent=self.agent, action=action.name, magnitude=action.magnitude)


def _goal(task: TaskSpec) -> GoalDescription:
    goal = task.goal
    return GoalDescription(
        episode_id=task.episode_id,
        object_name=goal.object_name,
        landmark_name=goal.landmark_name,
        direction=goal.direction,
        description=goal.description,
        reference_images=[image_to_array(image).copy() for image in goal.reference_images],
        action_budget=int(task.action_budget),
        success_radius_m=float(task.success_radius_m),
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
