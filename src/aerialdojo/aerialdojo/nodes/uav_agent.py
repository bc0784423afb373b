"""UAV agent node: acts on its own sensor topics and the task goal, through the step service.

Subscribes (relative to its namespace, e.g. ``/uav``): ``camera/<view>/image``,
``camera/<view>/depth``, ``camera/<view>/camera_info``, ``odom``, and the latched
``/aerialdojo/task``. Calls ``/aerialdojo/step``. Only standard sensor_msgs/nav_msgs topics
and the task services: the same node runs against a real robot's drivers.

Each step returns the stamp of the observation set it produced; the node waits until every
view of that stamp the task names has arrived, then asks the policy for the next action.
The policy is given only what the task allows (``TaskSpec.views``, ``TaskSpec.odometry``;
AerialDojo-200K's protocol: the front view, no odometry), whatever the node subscribes to.
"""

from __future__ import annotations

import rclpy
from aerialdojo_interfaces.msg import GoalSpec, TaskSpec
from rclpy.executors import ExternalShutdownException

from aerialdojo.agents.colour_seeker import ColourSeekerPolicy
from aerialdojo.agents.observation import AgentObservation, GoalDescription, Policy, ViewData
from aerialdojo.agents.oracle import ReferenceReplayPolicy
from aerialdojo.errors import ConfigError
from aerialdojo.geometry import Pose
from aerialdojo.image_codec import image_to_array
from aerialdojo.nodes.agent_node import AgentNode
from aerialdojo.nodes.common import param
from aerialdojo.nodes.lifetime import exit_with_launcher
from aerialdojo.protocols.referee import StepRequest


class UavAgent(AgentNode):
    """Runs a policy (by default the ``ColourSeekerPolicy``) on the UAV's observation sets.

    Args:
        policy: acts on each observation set; default: the ``policy`` parameter's.
    """

    def __init__(self, policy: Policy | None = None) -> None:
        super().__init__("uav_agent", default_agent="uav")
        self._policy = policy or self._configured_policy()
        name = param(self, "policy") if policy is None else type(policy).__name__
        privileged = bool(getattr(self._policy, "privileged", False))
        suite = f"reference actions of {param(self, 'oracle_suite')}" if privileged else ""
        self.announce(name, privileged=privileged, description=suite)
        self._views: tuple[str, ...] = tuple(param(self, "views"))
        self._odometry = False

    def _configured_policy(self) -> Policy:
        if param(self, "policy") == "oracle":
            return ReferenceReplayPolicy(param(self, "oracle_suite"))
        return ColourSeekerPolicy(seed=param(self, "seed"))

    def subscribed_views(self) -> list[str]:
        return list(param(self, "views"))

    def begin_episode(self, task: TaskSpec) -> None:
        """Take the task's goal, and the views and odometry it gives the policy.

        Raises:
            ConfigError: the task names a view this node does not subscribe to (its
                ``views`` parameter); the node cannot observe the episode.
        """
        subscribed = tuple(param(self, "views"))
        self._views = tuple(task.views) or subscribed
        missing = [view for view in self._views if view not in subscribed]
        if missing:
            raise ConfigError(
                f"uav_agent.views {list(subscribed)} lacks {missing}, which the task of "
                f"episode {task.episode_id} gives the agent"
            )
        self._odometry = task.odometry
        self._policy.reset(_goal(task.episode_id, task.goal))
        self.get_logger().info(
            f"episode {task.episode_id}: {task.goal.object_name!r}; views "
            f"{', '.join(self._views)}, odometry {'on' if self._odometry else 'off'}"
        )

    def expected_views(self) -> tuple[str, ...]:
        return self._views

    def decide(self, pose: Pose, views: dict[str, ViewData]) -> StepRequest:
        observation = AgentObservation(views=views, odometry=pose if self._odometry else None)
        action = self._policy.act(observation)
        return StepRequest(agent=self.agent, action=action.name, magnitude=action.magnitude)


def _goal(episode_id: str, goal: GoalSpec) -> GoalDescription:
    return GoalDescription(
        episode_id=episode_id,
        object_name=goal.object_name,
        landmark_name=goal.landmark_name,
        direction=goal.direction,
        description=goal.description,
        reference_images=[image_to_array(image).copy() for image in goal.reference_images],
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
