"""Simulator bridge node: owns one backend, publishes its sensors and clock, executes actions.

Per agent ``<a>`` (topics relative to the node, e.g. ``/uav/...``):
  ``<a>/camera/<view>/image`` (rgb8), ``<a>/camera/<view>/depth`` (32FC1, metres),
  ``<a>/camera/<view>/camera_info``, ``<a>/camera/<view>/points`` (PointCloud2 of the depth,
  with ``publish_point_clouds``), ``<a>/odom`` (relative to the episode start),
  ``/sim/ground_truth/<a>/pose`` (map frame; evaluator only), ``/clock``, ``/tf`` (map -> <a>/odom
  -> <a>/base_link with every observation) and ``/tf_static`` (the camera mounts, once;
  ``aerialdojo.tf_tree``).
Services for the task manager: ``/sim/reset`` (SimReset), ``/sim/execute`` (SimExecute);
faults the backend finds outside them go to ``/sim/faults`` (BackendFault).
All views of one observation set carry the same stamp, the simulation time after the action.
A backend that knows that time before rendering and renders in this process
(``SimulatorBackend.next_observation_time_s``: the embedded simulators) gets its action
answered first and the observation rendered on a thread of its own meanwhile, so the answer's
way back to the agent overlaps the render, and each view goes out as soon as it is rendered
(``SimulatorBackend.start_observe``), so an agent given the first view decides while the
others render; a render that fails there is reported on ``/sim/faults`` and ends the episode
as the simulator's failure. Where the backend renders from a snapshot of its state (the
embedded simulators), the next action executes while the last set still renders and its views
queue behind it, so the render threads do not wait between the two.
A reset is answered, and its observation set published, only once the bridge's publishers
have matched every subscriber the task manager sees on them (``SimReset.subscribed_topics``):
a bridge restarted in the middle of a run must not send the rerun's first frames before the
agents' subscriptions have matched it. The answer names the bridge's process, so that the task
manager ends an episode at once when another bridge replaces the one that started it.

A backend whose registry entry names a ROS transport (a robot's: ``nodes.robot_link``) gets
it built on this node; its callbacks then run on a multi-threaded executor beside the
services, and the frames it relays from a robot's camera drivers are published here like
rendered ones. A backend on the wall clock (a robot) has no simulated clock: no ``/clock``
is published, and stamps are the ROS clock's (wall time; ``graph.node_specs`` runs every
node of such a graph without ``use_sim_time``).
"""

from __future__ import annotations

import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Protocol

import rclpy
from aerialdojo_interfaces.msg import BackendFault as BackendFaultMsg
from aerialdojo_interfaces.srv import SimExecute, SimReset
from builtin_interfaces.msg import Time
from geometry_msgs.msg import PoseStamped
from nav_msgs.msg import Odometry
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.executors import MultiThreadedExecutor
from rclpy.node import Node
from rclpy.publisher import Publisher
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import CameraInfo, Image, PointCloud2
from std_msgs.msg import Header
from tf2_msgs.msg import TFMessage

from aerialdojo.actions import Action
from aerialdojo.backends import build_transport, create_backend, runs_on_wall_clock
from aerialdojo.depth_cloud import depth_points
from aerialdojo.errors import AerialDojoError, SafetyInterventionError, SimulatorFaultError
from aerialdojo.geometry import Pose
from aerialdojo.image_codec import image_to_array
from aerialdojo.nodes.common import (
    RunFilter,
    announce_node,
    declare_node_parameters,
    node_process,
    param,
    process_name,
    time_msg,
    time_ns,
)
from aerialdojo.nodes.conversions import (
    camera_info_msg,
    intrinsics_from_msg,
    pose_from_msg,
    pose_msg,
    spawned_object_from_msg,
    stamped_camera_info,
    transform_msg,
)
from aerialdojo.nodes.frame_publisher import FramePublisher
from aerialdojo.nodes.images import array_to_image, points_to_cloud
from aerialdojo.nodes.qos import (
    FAULTS_QOS,
    SENSOR_QOS,
    STATE_QOS,
    TASK_QOS,
    publisher_without_events,
)
from aerialdojo.params import NODE_PARAMETERS
from aerialdojo.sim.backend import (
    BackendFault,
    BackendOptions,
    CameraSpec,
    Observation,
    StartedObservation,
)
from aerialdojo.sim.clock import BridgeClock
from aerialdojo.tf_tree import (
    MAP_FRAME,
    agent_transforms,
    base_frame,
    camera_mount_transforms,
    odom_frame,
    optical_frame,
)

#: How often a reset looks whether its publishers have matched the expected subscribers, s.
_MATCH_POLL_S = 0.02


class BridgeTransport(Protocol):
    """What a transport a backend's registry entry names offers the bridge besides what it
    offers the backend: the frames it relays from the drivers of ``agent``'s robot, by view
    (none for views the backend renders)."""

    def relayed_views(self, agent: str) -> dict[str, RelayedFrames]: ...


class RelayedFrames(Protocol):
    """One view's relayed frames (agents' encodings); the bridge stamps them."""

    image: Image
    depth: Image
    camera_info: CameraInfo


@dataclass
class _ViewPublishers:
    image: Publisher
    depth: Publisher
    info: Publisher
    frame_id: str
    points: Publisher | None = None


class SimBridge(Node):
    """Wires a ``SimulatorBackend`` onto topics and services."""

    def __init__(self) -> None:
        super().__init__("sim_bridge")
        declare_node_parameters(self, "sim_bridge")
        self._run = RunFilter(self)
        self._agents: list[str] = list(param(self, "agents"))
        self._point_clouds = bool(param(self, "publish_point_clouds"))
        backend = str(param(self, "backend"))
        #: Services wait on a robot for seconds; the transport's callbacks must run meanwhile.
        self._service_group = MutuallyExclusiveCallbackGroup()
        self._transport: BridgeTransport | None = build_transport(backend, self)  # type: ignore[assignment]
        self._wall_clock = runs_on_wall_clock(backend)
        self._episode_id = ""
        self._faults_pub = publisher_without_events(
            self, BackendFaultMsg, "/sim/faults", FAULTS_QOS
        )
        self._backend = create_backend(
            backend,
            BackendOptions(
                agents=self._agents,
                image_width=param(self, "image_width"),
                image_height=param(self, "image_height"),
                fov_deg=param(self, "fov_deg"),
                seed=param(self, "seed"),
                agent_radius_m=param(self, "agent_radius_m"),
                seconds_per_action=param(self, "seconds_per_action"),
                parameters={
                    spec.name: param(self, spec.name) for spec in NODE_PARAMETERS["sim_bridge"]
                },
                transport=self._transport,
                report_fault=self._report_fault,
            ),
        )
        self._episode_start: dict[str, Pose] = {}
        self._stamps = BridgeClock(step_s=float(param(self, "seconds_per_action")))
        self._frame_publisher = FramePublisher(
            on_failure=lambda error: self.get_logger().error(f"publishing frames failed: {error!r}")
        )
        #: Renders the observation of an action answered before it was rendered; every other
        #: call into the backend waits for it first (``_settle``): backends are not thread-safe.
        #: Only an execute after a set started from a snapshot (``start_observe``) need not.
        self._renderer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="aerialdojo-render")
        self._rendering: Future[None] | None = None
        self._rendering_snapshot = False
        # A robot's world has no simulated clock to publish.
        self._clock_pub = (
            None if self._wall_clock else publisher_without_events(self, Clock, "/clock", STATE_QOS)
        )
        self._views = {agent: self._make_view_publishers(agent) for agent in self._agents}
        #: Each camera's CameraInfo by its spec and optical frame, made once: a frame's is a
        #: stamped copy (``stamped_camera_info``).
        self._calibrations: dict[tuple[CameraSpec, str], CameraInfo] = {}
        self._odom_pubs = {
            agent: publisher_without_events(self, Odometry, f"{agent}/odom", STATE_QOS)
            for agent in self._agents
        }
        self._truth_pubs = {
            agent: publisher_without_events(
                self, PoseStamped, f"/sim/ground_truth/{agent}/pose", STATE_QOS
            )
            for agent in self._agents
        }
        self._tf_pub = publisher_without_events(self, TFMessage, "/tf", STATE_QOS)
        #: What an observation set goes out on, by topic: a reset waits until these have
        #: matched the subscribers the task manager sees.
        self._observation_pubs: dict[str, Publisher] = {
            publisher.topic_name: publisher
            for publisher in (
                self._tf_pub,
                *([self._clock_pub] if self._clock_pub is not None else []),
                *self._odom_pubs.values(),
                *self._truth_pubs.values(),
                *(
                    publisher
                    for views in self._views.values()
                    for view in views.values()
                    for publisher in (view.image, view.depth, view.info, view.points)
                    if publisher is not None
                ),
            )
        }
        # Latched like the task: a tf listener that starts later still gets the mounts.
        tf_static_pub = publisher_without_events(self, TFMessage, "/tf_static", TASK_QOS)
        tf_static_pub.publish(
            TFMessage(
                transforms=[
                    transform_msg(mount, Time())
                    for agent in self._agents
                    for mount in camera_mount_transforms(agent, self._backend.cameras(agent))
                ]
            )
        )
        self.create_service(
            SimReset, "/sim/reset", self._on_reset, callback_group=self._service_group
        )
        self.create_service(
            SimExecute, "/sim/execute", self._on_execute, callback_group=self._service_group
        )
        # Last, once its services are up: a task manager that hears a restarted bridge announce
        # itself sends the rerun's reset at once, and a bridge killed outright still shows
        # its old service in the graph for a while.
        announce_node(self)
        self.get_logger().info(
            f"{param(self, 'backend')} backend ready; agents: {', '.join(self._agents)}; "
            f"{len(self._backend.scenes())} scenes"
        )

    @property
    def needs_threads(self) -> bool:
        """The backend reaches its world through ROS callbacks that must run while a service
        waits (a robot's transport)."""
        return self._transport is not None

    def _report_fault(self, fault: BackendFault) -> None:
        """Tell the task manager the backend failed (or its robot was stopped) outside a
        request: it ends the attempt of the episode of the last reset."""
        self.get_logger().error(f"{fault.agent}: {fault.reason}")
        self._faults_pub.publish(
            BackendFaultMsg(
                header=Header(stamp=self.get_clock().now().to_msg()),
                run_id=self._run.run_id,
                episode_id=self._episode_id,
                agent=fault.agent,
                intervention=fault.intervention,
                reason=fault.reason,
            )
        )

    def _make_view_publishers(self, agent: str) -> dict[str, _ViewPublishers]:
        views = {}
        for spec in self._backend.cameras(agent):
            base = f"{agent}/camera/{spec.name}"
            views[spec.name] = _ViewPublishers(
                image=publisher_without_events(self, Image, f"{base}/image", SENSOR_QOS),
                depth=publisher_without_events(self, Image, f"{base}/depth", SENSOR_QOS),
                info=publisher_without_events(self, CameraInfo, f"{base}/camera_info", SENSOR_QOS),
                frame_id=optical_frame(agent, spec.name),
                points=publisher_without_events(self, PointCloud2, f"{base}/points", SENSOR_QOS)
                if self._point_clouds
                else None,
            )
        return views

    def _on_reset(
        self, request: SimReset.Request, response: SimReset.Response
    ) -> SimReset.Response:
        if self._run.foreign(request.run_id, "a reset request"):
            response.message = self._run.refusal(request.run_id)
            return response
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
        self._settle()
        self._episode_id = request.episode_id
        try:
            objects = [spawned_object_from_msg(msg) for msg in request.objects]
        except ValueError as error:
            response.message = f"objects of the request: {error}"
            return response
        try:
            self._backend.place_objects(request.scene, objects)
            self._backend.reset(request.scene, poses)
            unmatched = self._wait_for_subscribers(
                dict(zip(request.subscribed_topics, request.subscriber_counts, strict=False)),
                request.match_timeout_s,
            )
            if unmatched:
                response.message = f"reset of {request.scene!r} failed: {unmatched}"
                self.get_logger().error(response.message)
                return response
            stamp, observations = self._publish_observations(
                list(poses), reset=True, after_s=time_ns(request.after) / 1e9
            )
        except AerialDojoError as error:
            response.intervention = isinstance(error, SafetyInterventionError)
            response.message = f"reset of {request.scene!r} failed: {error}"
            self.get_logger().error(response.message)
            return response
        response.success = True
        response.stamp = stamp
        response.poses = [pose_msg(observations[agent].pose) for agent in request.agents]
        response.bridge_process = process_name()
        return response

    def _wait_for_subscribers(self, expected: dict[str, int], timeout_s: float) -> str:
        """Wait until each observation publisher has matched at least the subscribers
        ``expected`` names for its topic (topics the bridge does not publish observations on
        are not its to wait for); returns "" then, or, after ``timeout_s``, which fell short.

        DDS matches in its own threads, so the counts move while this service waits."""
        waited = {
            topic: (self._observation_pubs[topic], count)
            for topic, count in expected.items()
            if topic in self._observation_pubs
        }
        deadline = time.monotonic() + timeout_s
        while True:
            short = [
                f"{topic} matched {matched} of the {count} subscribers the task manager sees"
                for topic, (publisher, count) in sorted(waited.items())
                if (matched := publisher.get_subscription_count()) < count
            ]
            if not short:
                return ""
            if time.monotonic() >= deadline:
                return f"after {timeout_s:g} s (SimReset.match_timeout_s), " + "; ".join(short)
            time.sleep(_MATCH_POLL_S)

    def _on_execute(
        self, request: SimExecute.Request, response: SimExecute.Response
    ) -> SimExecute.Response:
        if self._run.foreign(request.run_id, "an execute request"):
            response.message = self._run.refusal(request.run_id)
            return response
        if request.agent not in self._episode_start:
            response.message = f"agent {request.agent!r} has not been placed by /sim/reset"
            return response
        if not self._rendering_snapshot:
            self._settle()
        try:
            outcome = self._backend.execute(
                request.agent, Action(request.action, request.magnitude), request.argument
            )
            time_s = self._backend.next_observation_time_s()
            if time_s is None:
                response.stamp, _ = self._publish_observations([request.agent])
            else:
                response.stamp = self._render_after_answer(request.agent, time_s)
        except SafetyInterventionError as error:
            response.intervention = True
            response.message = str(error)
            self.get_logger().error(response.message)
            return response
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
        response.geofenced = outcome.geofenced
        response.pose = pose_msg(outcome.pose)
        return response

    def _render_after_answer(self, agent: str, time_s: float) -> Time:
        """The stamp of ``agent``'s observation at the backend's ``time_s``, which is rendered
        and queued on the render thread while the answer travels (the agent waits for the
        set by stamp)."""
        stamp = time_msg(self._stamps.stamp(time_s, reset=False))
        try:
            # Its views start rendering now, behind the set still rendering, if any.
            started = self._backend.start_observe(agent)
        except Exception as error:  # the simulator's, as in ``_render_answered``
            self._report_render_fault(agent, error)
            return stamp
        self._rendering_snapshot = started is not None
        self._rendering = self._renderer.submit(
            self._render_answered, agent, time_s, stamp, started
        )
        return stamp

    def _render_answered(
        self, agent: str, time_s: float, stamp: Time, started: StartedObservation | None
    ) -> None:
        """On the render thread: take ``agent``'s observation of an answered action
        (``started``, or rendered here where the backend cannot start one) and queue it under
        the answer's ``stamp``, each view of a started one as soon as it is rendered, the
        state with the first: an agent given the first view decides while the others still
        render. A failure cannot fail the answer any more, and an agent left waiting for the
        set must not be scored silent: it is reported as the simulator's fault, which ends the
        running attempt as an infrastructure failure."""
        queued: set[str] = set()

        def queue_view(view: Observation) -> None:
            _check_time(view, time_s)
            self._queue_observations({agent: view}, stamp, reset=False, with_state=not queued)
            queued.update(view.frames)

        try:
            if started is None:
                observation = self._backend.observe(agent)
            else:
                observation = started.result(queue_view)
            _check_time(observation, time_s)
            rest = {name: frame for name, frame in observation.frames.items() if name not in queued}
            if rest or not queued:
                self._queue_observations(
                    {agent: replace(observation, frames=rest)},
                    stamp,
                    reset=False,
                    with_state=not queued,
                )
        except Exception as error:  # any error here is the simulator's: reported, not raised
            self._report_render_fault(agent, error)

    def _report_render_fault(self, agent: str, error: Exception) -> None:
        """Rendering ``agent``'s answered step failed with ``error``: the simulator's fault."""
        self._report_fault(
            BackendFault(agent=agent, reason=f"rendering the answered step failed: {error!r}")
        )

    def _settle(self) -> None:
        """Wait for the observations still rendering on the render thread, if any."""
        if self._rendering is not None:
            self._rendering.result()
            self._rendering = None
            self._rendering_snapshot = False

    def _publish_observations(
        self, agents: list[str], reset: bool = False, after_s: float = 0.0
    ) -> tuple[Time, dict[str, Observation]]:
        """Render every view of ``agents`` and queue the messages for publishing; returns the
        shared stamp and the observations."""
        observations = {agent: self._backend.observe(agent) for agent in agents}
        sim_time = max(observation.sim_time_s for observation in observations.values())
        stamp = time_msg(self._stamps.stamp(sim_time, reset=reset, after_s=after_s))
        self._queue_observations(observations, stamp, reset)
        return stamp, observations

    def _queue_observations(
        self,
        observations: dict[str, Observation],
        stamp: Time,
        reset: bool,
        *,
        with_state: bool = True,
    ) -> None:
        """Queue the messages of ``observations`` under ``stamp``. Publishing runs on the frame
        publisher's thread, so the service answers without waiting for the images to be
        serialized (agents wait for them by stamp).

        The state (clock, odometry, poses, tf) goes out before the frames, and the frames
        view by view: an agent acts once the views it is given and its odometry of the stamp
        have arrived, so odometry queued behind every view's images held it until the whole
        set had been serialized. Without ``with_state``, only the frames (the later views of a
        set whose state went out with its first view)."""
        state: list[tuple[Publisher, object]] = []
        if with_state and self._clock_pub is not None:
            state.append((self._clock_pub, Clock(clock=stamp)))
        frames: list[tuple[Publisher, object]] = []
        transforms = []
        for agent, observation in observations.items():
            if reset:
                self._episode_start[agent] = observation.pose
            frames += self._frame_messages(agent, observation, stamp)
            if not with_state:
                continue
            state += self._state_messages(agent, observation, stamp)
            transforms += [
                transform_msg(transform, stamp)
                for transform in agent_transforms(
                    agent, observation.pose, self._episode_start[agent]
                )
            ]
        if with_state:
            state.append((self._tf_pub, TFMessage(transforms=transforms)))
        self._frame_publisher.submit([*state, *frames])

    def _frame_messages(
        self, agent: str, observation: Observation, stamp: Time
    ) -> list[tuple[Publisher, object]]:
        messages: list[tuple[Publisher, object]] = []
        for name, frame in observation.frames.items():
            view = self._views[agent][name]
            header = Header(stamp=stamp, frame_id=view.frame_id)
            calibration = self._calibrations.get((frame.spec, view.frame_id))
            if calibration is None:
                calibration = camera_info_msg(frame.spec, view.frame_id)
                self._calibrations[frame.spec, view.frame_id] = calibration
            info = stamped_camera_info(calibration, header)
            messages += [
                (view.image, array_to_image(frame.rgb, "rgb8", header)),
                (view.depth, array_to_image(frame.depth, "32FC1", header)),
                (view.info, info),
            ]
            if view.points is not None:
                points = depth_points(frame.depth, frame.spec.intrinsics())
                messages.append((view.points, points_to_cloud(points, header)))
        if self._transport is not None:
            messages += self._relayed_messages(agent, stamp)
        return messages

    def _state_messages(
        self, agent: str, observation: Observation, stamp: Time
    ) -> list[tuple[Publisher, object]]:
        if self._backend.global_localization:
            odom = Odometry(header=Header(stamp=stamp, frame_id=MAP_FRAME))
            odom.pose.pose = pose_msg(observation.pose)
        else:
            odom = Odometry(header=Header(stamp=stamp, frame_id=odom_frame(agent)))
            odom.pose.pose = pose_msg(observation.pose.relative_to(self._episode_start[agent]))
        odom.child_frame_id = base_frame(agent)
        truth = PoseStamped(
            header=Header(stamp=stamp, frame_id=MAP_FRAME), pose=pose_msg(observation.pose)
        )
        return [(self._odom_pubs[agent], odom), (self._truth_pubs[agent], truth)]

    def _relayed_messages(self, agent: str, stamp: Time) -> list[tuple[Publisher, object]]:
        """The frames the transport relays from ``agent``'s camera drivers, with the set's
        stamp and the bridge's optical frames."""
        assert self._transport is not None
        messages: list[tuple[Publisher, object]] = []
        for name, frames in self._transport.relayed_views(agent).items():
            view = self._views[agent][name]
            header = Header(stamp=stamp, frame_id=view.frame_id)
            for message in (frames.image, frames.depth, frames.camera_info):
                message.header = header
            messages += [
                (view.image, frames.image),
                (view.depth, frames.depth),
                (view.info, frames.camera_info),
            ]
            if view.points is not None:
                points = depth_points(
                    image_to_array(frames.depth), intrinsics_from_msg(frames.camera_info)
                )
                messages.append((view.points, points_to_cloud(points, header)))
        return messages

    def destroy_node(self) -> None:
        # A constructor that failed (a bad parameter) left these unset; its own error is the
        # one to see, not an AttributeError from here. The set still rendering goes out first.
        if hasattr(self, "_renderer"):
            self._renderer.shutdown(wait=True)
        if hasattr(self, "_frame_publisher"):
            self._frame_publisher.close()
        if hasattr(self, "_backend"):
            self._backend.close()
        super().destroy_node()


def _check_time(observation: Observation, time_s: float) -> None:
    """Raise unless ``observation`` is at the simulated ``time_s`` an answer named."""
    if observation.sim_time_s != time_s:
        raise SimulatorFaultError(
            f"the observation is at {observation.sim_time_s:.3f} s of simulated time, "
            f"but the answer named {time_s:.3f} s"
        )


def main(args: list[str] | None = None) -> None:
    with node_process(args):
        node = SimBridge()
        try:
            if node.needs_threads:
                executor = MultiThreadedExecutor(num_threads=4)
                executor.add_node(node)
                executor.spin()
            else:
                rclpy.spin(node)
        finally:
            # Stops the frame-publishing thread and closes the backend; without it the
            # process left its DDS participant undestroyed, and with it a 64 MB
            # shared-memory segment in /dev/shm after every run.
            node.destroy_node()


if __name__ == "__main__":
    main()
