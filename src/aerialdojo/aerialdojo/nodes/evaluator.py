"""Evaluator node: scores every episode as it ends, records the run, writes the report.

Subscribes to ``/aerialdojo/episode_events`` (ground truth, evaluator only) and records it,
the task topic, each agent's odometry and ground-truth pose, the AGOS handoff topics when a
UGV is bridged, and decimated camera images into ``<output_dir>/<run_id>/bag`` (rosbag2,
MCAP). Scores come from the same ``EpisodeAssembler`` and metric functions that
``aerialdojo evaluate-bag`` uses on the bag.
On RUN_FINISHED it writes ``metrics.json``, ``report.md`` and the CSV, then exits.
"""

from __future__ import annotations

import signal
import time
from pathlib import Path

import rclpy
from aerialdojo_interfaces.msg import (
    AgentInfo,
    AgentMessage,
    Candidate,
    EpisodeEvent,
    GeoSemanticMap,
    NodeInfo,
    TaskSpec,
)
from geometry_msgs.msg import PoseStamped
from nav_msgs.msg import Odometry
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import QoSProfile
from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import CompressedImage, Image
from tf2_msgs.msg import TFMessage

from aerialdojo.agents.vlm.transcript import TRANSCRIPTS_DIR
from aerialdojo.bags.recorder import BagRecorder
from aerialdojo.bags.replay import AGENTS_TOPIC, EVENTS_TOPIC
from aerialdojo.bags.typestore import aerialdojo_typestore
from aerialdojo.events import EpisodeAssembler
from aerialdojo.graph import default_run_id
from aerialdojo.image_codec import image_to_array
from aerialdojo.nodes.common import (
    announce_node,
    declare_node_parameters,
    node_process,
    param,
    wall_timer,
)
from aerialdojo.nodes.images import array_to_compressed
from aerialdojo.nodes.qos import (
    AGENTS_QOS,
    EVENTS_QOS,
    GSM_QOS,
    HANDOFF_QOS,
    NODES_QOS,
    SENSOR_QOS,
    STATE_QOS,
    TASK_QOS,
)
from aerialdojo.protocols import trace_builder
from aerialdojo.report.run import BETWEEN_EPISODES, RunResult, score_assembled, write_run
from aerialdojo.runtime import NODES_TOPIC, distribution_mismatch

#: How long a finished run waits for an agent's announcement on /aerialdojo/agents, or a
#: discovered node's on /aerialdojo/nodes, that has not arrived: discovery under load can
#: take longer than a short run, and the report must say who acted and on what (and the bag
#: hold it, so that replayed metrics equal the live ones).
AGENT_INFO_WAIT_S = 10.0


class Evaluator(Node):
    """Live metrics and the run's bag."""

    def __init__(self) -> None:
        super().__init__("evaluator")
        declare_node_parameters(self, "evaluator")
        announce_node(self)
        run_id = param(self, "run_id") or default_run_id()
        self.run_dir = Path(param(self, "output_dir")) / run_id
        self.run_dir.mkdir(parents=True, exist_ok=True)
        # Empty: the benchmark's own radii (the protocol's, known once an episode is scored).
        self._radii = [float(r) for r in param(self, "success_radii_m")] or None
        self._assembler = EpisodeAssembler(trace_builder)
        self.result: RunResult | None = None
        self._recorder = (
            BagRecorder(self.run_dir / "bag", aerialdojo_typestore())
            if param(self, "record_bag")
            else None
        )
        self._decimation = int(param(self, "image_decimation"))
        self._compression = str(param(self, "image_compression"))
        self._image_counts: dict[str, int] = {}
        self.bag_bytes: dict[str, int] = {}

        self._record(TaskSpec, "/aerialdojo/task", TASK_QOS)
        self._record(AgentInfo, AGENTS_TOPIC, AGENTS_QOS)
        self._record(NodeInfo, NODES_TOPIC, NODES_QOS)
        self._distribution_warning = ""
        # The frames tree, so that a replay (rviz, Foxglove) places the cameras and agents.
        self._record(TFMessage, "/tf", STATE_QOS)
        self._record(TFMessage, "/tf_static", TASK_QOS)
        for agent in param(self, "agents"):
            self._record(Odometry, f"/{agent}/odom", STATE_QOS)
            self._record(PoseStamped, f"/sim/ground_truth/{agent}/pose", STATE_QOS)
            if self._decimation:
                for view in param(self, "record_image_views"):
                    self._record_images(f"/{agent}/camera/{view}/image")
            if param(self, "record_gsm") and self._decimation:
                self._record_decimated(GeoSemanticMap, f"/{agent}/gsm/layers", GSM_QOS)
        if "ugv" in param(self, "agents"):
            # AGOS handoff (AGOS-Bench): what the agents told each other, for replay and review.
            self._record(Candidate, "/agos/candidates", HANDOFF_QOS)
            self._record(AgentMessage, "/agos/messages", HANDOFF_QOS)
        # Last: the task manager starts the run once this subscription exists, so every
        # recording subscription above is in place by then.
        self._record(EpisodeEvent, EVENTS_TOPIC, EVENTS_QOS)
        self.get_logger().info(f"recording run into {self.run_dir}")

    def _record(self, msg_type: type, topic: str, qos: QoSProfile) -> None:
        if self._recorder is not None:
            self._recorder.add_topic(topic, _type_name(msg_type))

        def on_message(cdr: bytes) -> None:
            self._write(topic, cdr)
            if topic == EVENTS_TOPIC:
                self._on_event(deserialize_message(cdr, EpisodeEvent))
            elif topic == AGENTS_TOPIC:
                self._assembler.add_agent_info(deserialize_message(cdr, AgentInfo))
            elif topic == NODES_TOPIC:
                self._on_node_info(deserialize_message(cdr, NodeInfo))

        self.create_subscription(msg_type, topic, on_message, qos, raw=True)

    def _on_node_info(self, info: NodeInfo) -> None:
        self._assembler.add_node_info(info)
        warning = distribution_mismatch(self._assembler.nodes.values())
        if warning and warning != self._distribution_warning:
            self.get_logger().warning(warning)
        self._distribution_warning = warning

    def _record_decimated(self, msg_type: type, topic: str, qos: QoSProfile) -> None:
        """Every ``image_decimation``-th message of ``topic``, as published."""
        if self._recorder is None:
            return
        self._recorder.add_topic(topic, _type_name(msg_type))

        def on_message(cdr: bytes) -> None:
            count = self._image_counts.get(topic, 0)
            self._image_counts[topic] = count + 1
            if count % self._decimation == 0:
                self._write(topic, cdr)

        self.create_subscription(msg_type, topic, on_message, qos, raw=True)

    def _record_images(self, topic: str) -> None:
        """Every ``image_decimation``-th image of ``topic``, raw or compressed."""
        if self._recorder is None:
            return
        compressed = self._compression != "none"
        written_topic = f"{topic}/compressed" if compressed else topic
        written_type = CompressedImage if compressed else Image
        self._recorder.add_topic(written_topic, _type_name(written_type))

        def on_image(cdr: bytes) -> None:
            count = self._image_counts.get(topic, 0)
            self._image_counts[topic] = count + 1
            if count % self._decimation:
                return
            if compressed:
                image = deserialize_message(cdr, Image)
                cdr = serialize_message(
                    array_to_compressed(
                        image_to_array(image), image.encoding, image.header, codec=self._compression
                    )
                )
            self._write(written_topic, cdr)

        self.create_subscription(Image, topic, on_image, SENSOR_QOS, raw=True)

    def _write(self, topic: str, cdr: bytes) -> None:
        if self._recorder is None:
            return
        self._recorder.write(topic, self.get_clock().now().nanoseconds, cdr)
        episode = self._assembler.open_episode or BETWEEN_EPISODES
        self.bag_bytes[episode] = self.bag_bytes.get(episode, 0) + len(cdr)

    def _on_event(self, event: EpisodeEvent) -> None:
        trace = self._assembler.add(event)
        if self._recorder is not None and event.kind != EpisodeEvent.STEP:
            # The selection, a start, an end: make it survive a crash of this process, so a
            # salvaged bag still says which episodes were running and which never started.
            self._recorder.checkpoint()
        if trace is not None:
            self.get_logger().info(
                f"[{event.episode_index + 1}/{event.episode_count}] {trace.episode_id}: "
                f"{trace.termination} after {trace.steps_used} actions"
            )
        elif event.kind == EpisodeEvent.INFRA_FAILURE:
            self.get_logger().warning(
                f"{event.episode_id} attempt {event.attempt}: infrastructure failure "
                f"({event.message}); not scored"
            )
        if self._assembler.finished:
            self._finish_once_announced()

    def _finish_once_announced(self) -> None:
        """Finish now, or once every recorded agent has said who acts for it and every node
        of ``_announcing_nodes`` has said what it runs on (at most ``AGENT_INFO_WAIT_S``; an
        agent node of one's own may announce nothing)."""
        deadline = time.monotonic() + AGENT_INFO_WAIT_S

        def missing() -> list[str]:
            agents = [a for a in param(self, "agents") if a not in self._assembler.agents]
            nodes = sorted(self._announcing_nodes() - set(self._assembler.nodes))
            return agents + nodes

        def check() -> None:
            if missing() and time.monotonic() < deadline:
                return
            if missing():
                self.get_logger().warning(f"no announcement from {missing()}")
            timer.cancel()
            self.finish()

        timer = wall_timer(self, 0.1, check)
        check()

    def _announcing_nodes(self) -> set[str]:
        """Fully qualified names of the nodes that announce themselves and are discovered:
        the writers of /aerialdojo/nodes, and the agents and the task manager (writers of
        /aerialdojo/agents and the events), whose announcement may be discovered later
        than their other topics."""
        return {
            f"{info.node_namespace.rstrip('/')}/{info.node_name}"
            for topic in (NODES_TOPIC, AGENTS_TOPIC, EVENTS_TOPIC)
            for info in self.get_publishers_info_by_topic(topic)
        }

    @property
    def done(self) -> bool:
        """The report of a finished run is written and the node should exit."""
        return self.result is not None and bool(param(self, "exit_when_finished"))

    def finish(self) -> None:
        """Close the bag and write the report; on an interrupted run, of what ended."""
        if self.result is not None:
            return
        if self._recorder is not None:
            self._recorder.close()
        self.result = score_assembled(self._assembler, self._radii)
        suite = str(param(self, "suite"))
        write_run(
            self.run_dir,
            self.result,
            bag_bytes=self.bag_bytes if self._recorder else None,
            transcripts_dir=self.run_dir / TRANSCRIPTS_DIR,
            suite=Path(suite) if suite else None,
            record_suite=False,
        )
        self.get_logger().info(f"report written to {self.run_dir}\n{self.result.summary_table}")


def _type_name(msg_type: type) -> str:
    module = msg_type.__module__.split(".")[0]
    return f"{module}/msg/{msg_type.__name__}"


def main(args: list[str] | None = None) -> None:
    with node_process(args):
        node = Evaluator()
        # One executor for the node's life: rclpy.spin_once(node) adds the node to the
        # global executor and removes it again on every call, for every message recorded.
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        try:
            while rclpy.ok() and not node.done:
                executor.spin_once(timeout_sec=0.5)
        finally:
            # Whatever ended the process, the bag is closed readable and what was scored is
            # reported. A terminal's Ctrl-C reaches the whole process group and ros2 launch
            # forwards a second SIGINT (then SIGTERM): none may cut the bag's close() short.
            for stop in (signal.SIGINT, signal.SIGTERM):
                signal.signal(stop, signal.SIG_IGN)
            node.finish()


if __name__ == "__main__":
    main()
