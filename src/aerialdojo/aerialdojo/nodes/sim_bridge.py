"""Simulator bridge node: owns one backend, publishes its sensors and clock, executes actions.

Per agent ``<a>`` (topics relative to the node, e.g. ``/uav/...``):
  ``<a>/camera/<view>/image`` (rgb8), ``<a>/camera/<view>/depth`` (32FC1, metres),
  ``<a>/camera/<view>/camera_info``, ``<a>/odom`` (relative to the episode start),
  ``/sim/ground_truth/<a>/pose`` (map frame; evaluator only), and ``/clock``.
Services for the task manager: ``/sim/reset`` (SimReset), ``/sim/execute`` (SimExecute).
All views of one observation set carry the same stamp, the simulation time after the action.
"""

from __future__ import annotations

from dataclasses import dataclass

import rclpy
from aerialdojo_interfaces.srv import SimExecute, SimReset
from builtin_interfaces.msg import Time
from geometry_msgs.msg import PoseStamped
from nav_msgs.msg import Odometry
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node
from rclpy.publisher import Publisher
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import CameraInfo, Image
from std_msgs.msg import Header

from aerialdojo.actions import Action
from aerialdojo.errors import AerialDojoError, SimulatorFaultError
from aerialdojo.geometry import Pose
from aerialdojo.nodes.common import SENSOR_QOS, STATE_QOS, declare_node_parameters, param, time_msg
from aerialdojo.nodes.conversions import camera_info_msg, pose_from_msg, pose_msg
from aerialdojo.sim.backend import Observation, aerialdojo_uav_rig
from aerialdojo.sim.clock import BridgeClock
from aerialdojo.sim.factory import create_backend
from aerialdojo.transport import array_to_image


@dataclass
class _ViewPublishers:
    image: Publisher
    depth: Publisher
    info: Publisher
    info_msg: CameraInfo


class SimBridge(Node):
    """Wires a ``SimulatorBackend`` onto topics and services."""

    def __init__(self) -> None:
        super().__init__("sim_bridge")
        declare_node_parameters(self, "sim_bridge")
        self._agents: list[str] = list(param(self, "agents"))
        rig = aerialdojo_uav_rig(
            param(self, "image_width"), param(self, "image_height"), param(self, "fov_deg")
        )
        self._backend = create_backend(
            param(self, "backend"),
            seed=param(self, "seed"),
            agent_radius_m=param(self, "agent_radius_m"),
            rigs=dict.fromkeys(self._agents, rig),
            seconds_per_action=param(self, "seconds_per_action"),
        )
        self._episode_start: dict[str, Pose] = {}
        self._clock = BridgeClock(step_s=float(param(self, "seconds_per_action")))
        self._clock_pub = self.create_publisher(Clock, "/clock", STATE_QOS)
        self._views = {agent: self._make_view_publishers(agent) for agent in self._agents}
        self._odom_pubs = {
            agent: self.create_publisher(Odometry, f"{agent}/odom", STATE_QOS)
            for agent in self._agents
        }
        self._truth_pubs = {
            agent: self.create_publisher(PoseStamped, f"/sim/ground_truth/{agent}/pose", STATE_QOS)
            for agent in self._agents
        }
        self.create_service(SimReset, "/sim/reset", self._on_reset)
        self.create_service(SimExecute, "/sim/execute", self._on_execute)
        self.get_logger().info(
            f"{param(self, 'backend')} backend ready; agents: {', '.join(self._agents)}; "
            f"{len(self._backend.scenes())} scenes"
        )

    def _make_view_publishers(self, agent: str) -> dict[str, _ViewPublishers]:
        views = {}
        for spec in self._backend.cameras(agent):
            base = f"{agent}/camera/{spec.name}"
            views[spec.name] = _ViewPublishers(
                image=self.create_publisher(Image, f"{base}/image", SENSOR_QOS),
                depth=self.create_publisher(Image, f"{base}/depth", SENSOR_QOS),
                info=self.create_publisher(CameraInfo, f"{base}/camera_info", SENSOR_QOS),
                info_msg=camera_info_msg(spec, _optical_frame(agent, spec.name)),
            )
        return views

    def _on_reset(
        self, request: SimReset.Request, response: SimReset.Response
    ) -> SimReset.Response:
        if len(request.agents) != len(request.poses):
            response.message = (
                f"{len(request.agents)} agents but {len(request.poses)} poses in the request"
            )
            return response
        unknown = sorted(set(request.agents) - set(self._agents))
        if unknown:
            response.message = f"agents {unknown} are not bridged; bridged: {self._agents}"
            return response
        poses = {
            agent: pose_from_msg(msg)
            for agent, msg in zip(request.agents, request.poses, strict=True)
        }
        try:
            self._backend.reset(request.scene, poses)
            stamp = self._publish_observations(list(poses), reset=True)
        except AerialDojoError as error:
            response.message = f"reset of {request.scene!r} failed: {error}"
            self.get_logger().error(response.message)
            return response
        response.success = True
        response.stamp = stamp
        return response

    def _on_execute(
        self, request: SimExecute.Request, response: SimExecute.Response
    ) -> SimExecute.Response:
        if request.agent not in self._episode_start:
            response.message = f"agent {request.agent!r} has not been placed by /sim/reset"
            return response
        try:
            outcome = self._backend.execute(
                request.agent, Action(request.action, request.magnitude), request.argument
            )
            response.stamp = self._publish_observations([request.agent])
        except SimulatorFaultError as error:
            response.message = f"simulator fault: {error}"
            self.get_logger().error(response.message)
            return response
        except AerialDojoError as error:
            response.message = str(error)
            return response
        response.success = True
        response.collided = outcome.collided
        response.collision_object = outcome.collision_object
        response.pose = pose_msg(outcome.pose)
        return response

    def _publish_observations(self, agents: list[str], reset: bool = False) -> Time:
        """Render and publish every view of ``agents``; returns the shared stamp."""
        observations = {agent: self._backend.observe(agent) for agent in agents}
        sim_time = max(observation.sim_time_s for observation in observations.values())
        stamp = time_msg(self._clock.stamp(sim_time, reset=reset))
        self._clock_pub.publish(Clock(clock=stamp))
        for agent, observation in observations.items():
            if reset:
                self._episode_start[agent] = observation.pose
            self._publish_agent(agent, observation, stamp)
        return stamp

    def _publish_agent(self, agent: str, observation: Observation, stamp: Time) -> None:
        for name, frame in observation.frames.items():
            view = self._views[agent][name]
            header = Header(stamp=stamp, frame_id=view.info_msg.header.frame_id)
            view.image.publish(array_to_image(frame.rgb, "rgb8", header))
            view.depth.publish(array_to_image(frame.depth, "32FC1", header))
            view.info_msg.header.stamp = stamp
            view.info.publish(view.info_msg)
        odom = Odometry(
            header=Header(stamp=stamp, frame_id=f"{agent}/odom"),
            child_frame_id=f"{agent}/base_link",
        )
        odom.pose.pose = pose_msg(observation.pose.relative_to(self._episode_start[agent]))
        self._odom_pubs[agent].publish(odom)
        self._truth_pubs[agent].publish(
            PoseStamped(header=Header(stamp=stamp, frame_id="map"), pose=pose_msg(observation.pose))
        )

    def destroy_node(self) -> None:
        self._backend.close()
        super().destroy_node()


def _optical_frame(agent: str, view: str) -> str:
    return f"{agent}/{view}_optical_frame"


def main(args: list[str] | None = None) -> None:
    try:
        with rclpy.init(args=args):
            node = SimBridge()
            rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass


if __name__ == "__main__":
    main()
