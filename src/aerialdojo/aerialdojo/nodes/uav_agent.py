"""UAV agent node: acts on its own sensor topics and the task goal, through the step service.

Subscribes (relative to its namespace, e.g. ``/uav``): ``camera/<view>/image``,
``camera/<view>/depth``, ``camera/<view>/camera_info``, ``odom``, and the latched
``/aerialdojo/task``. Calls ``/aerialdojo/step``. Only standard sensor_msgs/nav_msgs topics
and the task services: the same node runs against a real robot's drivers.

Each step returns the stamp of the observation set it produced; the node waits until every
view of that stamp the task names has arrived, then asks the policy for the next action.
The policy is the ``policy`` parameter's: the colour seeker, the oracle, a vision-language
model (``agents.vlm``) or any ``package.module:ClassName`` implementing ``Policy``. It is
given only what the task allows (``TaskSpec.views``, ``TaskSpec.odometry``; AerialDojo-200K's
protocol: the front view, no odometry), whatever the node subscribes to, and is told so in
its goal.
"""

from __future__ import annotations

from aerialdojo_interfaces.msg import TaskSpec

from aerialdojo.agents.observation import AgentObservation, Policy, ViewData, tell_refused
from aerialdojo.agents.plugins import policy_identity, uav_policy
from aerialdojo.errors import ConfigError
from aerialdojo.geometry import Pose
from aerialdojo.nodes.agent_node import AgentNode, spin_agent
from aerialdojo.nodes.common import param, parameters_of
from aerialdojo.nodes.conversions import goal_description
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
        self._views: tuple[str, ...] = tuple(param(self, "views"))
        self._odometry = False

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
        self._policy.reset(goal_description(task, self._views, odometry=self._odometry))
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

    def refused(self, request: StepRequest, reason: str) -> None:
        tell_refused(self._policy, reason)


def main(args: list[str] | None = None) -> None:
    spin_agent(UavAgent, args)


if __name__ == "__main__":
    main()
