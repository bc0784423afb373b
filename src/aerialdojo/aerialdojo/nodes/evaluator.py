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
from collections.abc import Callable
from pathlib import Path
from typing import Any

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

try:  # Iron on; Humble has it in rclpy.qos_event (Jazzy keeps that name, with a warning)
    from rclpy.event_handler import SubscriptionEventCallbacks
except ImportError:  # pragma: no cover - Humble
    from rclpy.qos_event import SubscriptionEventCallbacks  # type: ignore[no-redef]

from aerialdojo.agents.vlm.transcript import TRANSCRIPTS_DIR
from aerialdojo.bags.losses import FIRST_OF_SEQUENCE, HEADER_FIRST, StampLedger, cdr_stamp_ns
from aerialdojo.bags.recorder import BagRecorder
from aerialdojo.bags.replay import AGENTS_TOPIC, EVENTS_TOPIC
from aerialdojo.bags.typestore import aerialdojo_typestore
from aerialdojo.documents import SpaceReserve
from aerialdojo.events import EpisodeAssembler
from aerialdojo.graph import default_run_id
from aerialdojo.image_codec import image_to_array
from aerialdojo.nodes.common import (
    RunFilter,
    announce_node,
    declare_node_parameters,
    node_process,
    param,
    time_ns,
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
    message_type_name,
    recording_qos,
)
from aerialdojo.params import recorded_views
from aerialdojo.protocols import protocol, trace_builder
from aerialdojo.report.run import (
    BETWEEN_EPISODES,
    METRICS_JSON,
    SPACE_RESERVE_FILE,
    STATUS_JSON,
    RunResult,
    score_assembled,
    write_run,
)
from aerialdojo.runtime import NODES_TOPIC, RUN_DIR_ENV, distribution_mismatch, run_id_of
from aerialdojo.step_origin import attempt_name

#: How long the evaluator waits for a publisher of each per-step topic before it subscribes
#: to the episode events (and so lets the run start).
PUBLISHERS_WAIT_S = 30.0
#: Disk space held back for the run's records (``documents.SpaceReserve``): a base, and
#: per selected episode what its entries in run_status.json and metrics.json take.
RESERVE_BASE_BYTES = 2 * 2**20
RESERVE_PER_EPISODE_BYTES = 4096

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
        self._run = RunFilter(self)
        run_id = param(self, "run_id") or default_run_id()
        self.run_dir = Path(param(self, "output_dir")) / run_id
        self.run_dir.mkdir(parents=True, exist_ok=True)
        # Room for the run's records when the bag fills the disk (grown once the run names
        # its selection).
        self._reserve = SpaceReserve(self.run_dir / SPACE_RESERVE_FILE, RESERVE_BASE_BYTES)
        # Empty: the benchmark's own radii (the protocol's, known once an episode is scored).
        self._radii = [float(r) for r in param(self, "success_radii_m")] or None
        self._assembler = EpisodeAssembler(trace_builder)
        self.result: RunResult | None = None
        #: Why the run could not be recorded or reported (the node then exits with status 1).
        self.failure = ""
        self._recorder = (
            BagRecorder(self.run_dir / "bag", aerialdojo_typestore())
            if param(self, "record_bag")
            else None
        )
        #: Messages DDS reported lost before this node took them, by topic (topics outside
        #: the ledger's; the ledger counts the per-step topics' losses itself).
        self.lost: dict[str, int] = {}
        #: The topics each observation set publishes once (agent, or None for all; where
        #: the stamp lies), and which stamps the events named and each topic delivered.
        self._per_step: dict[str, tuple[str | None, int]] = {"/tf": (None, FIRST_OF_SEQUENCE)}
        self._ledger = StampLedger()
        #: Each running attempt's last step, by (episode id, attempt); what ended, ended.
        self._last_step: dict[tuple[str, int], int] = {}
        self._ended: set[tuple[str, int]] = set()
        self._started: dict[str, EpisodeEvent] = {}  # the latest STARTED, by episode id
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
        #: The camera view each recorded image topic carries.
        self._image_views: dict[str, str] = {}
        agents = param(self, "agents")
        views = recorded_views(param(self, "record_image_views"), agents)
        for agent in agents:
            for topic in (f"/{agent}/odom", f"/sim/ground_truth/{agent}/pose"):
                self._per_step[topic] = (agent, HEADER_FIRST)
            self._record(Odometry, f"/{agent}/odom", STATE_QOS)
            self._record(PoseStamped, f"/sim/ground_truth/{agent}/pose", STATE_QOS)
            if self._decimation:
                for view in [view for owner, view in views if owner == agent]:
                    topic = f"/{agent}/camera/{view}/image"
                    self._per_step[topic] = (agent, HEADER_FIRST)
                    self._image_views[topic] = view
                    self._record_images(topic)
            if param(self, "record_gsm") and self._decimation:
                self._record_decimated(GeoSemanticMap, f"/{agent}/gsm/layers", GSM_QOS)
        if "ugv" in param(self, "agents"):
            # AGOS handoff (AGOS-Bench): what the agents told each other, for replay and review.
            self._record(Candidate, "/agos/candidates", HANDOFF_QOS)
            self._record(AgentMessage, "/agos/messages", HANDOFF_QOS)
        # Last: the task manager starts the run once the events have a subscriber, so every
        # recording subscription above must have found its publishers by then; a set
        # published before would be lost to the bag (37 of 182 in a run on a busy machine).
        self._match_deadline = time.monotonic() + PUBLISHERS_WAIT_S
        self._await_publishers = wall_timer(self, 0.1, self._record_events_once_matched)
        self._record_events_once_matched()
        self.get_logger().info(f"recording run into {self.run_dir}")

    def _record_events_once_matched(self) -> None:
        """Subscribe to the episode events (which starts the run) once every per-step topic
        has a publisher, or after ``PUBLISHERS_WAIT_S`` (a robot's driver that publishes
        nothing yet), saying which had none."""
        if self._await_publishers.is_canceled():
            return
        waiting = sorted(topic for topic in self._per_step if self.count_publishers(topic) == 0)
        if waiting and time.monotonic() < self._match_deadline:
            return
        if waiting:
            self.get_logger().warning(
                f"no publisher of {', '.join(waiting)} within {PUBLISHERS_WAIT_S:g} s; "
                "recording begins without them"
            )
        self._await_publishers.cancel()
        self._record(EpisodeEvent, EVENTS_TOPIC, EVENTS_QOS)

    def _record(self, msg_type: type, topic: str, qos: QoSProfile) -> None:
        if self._recorder is not None:
            self._recorder.add_topic(topic, message_type_name(msg_type))

        run_of = _RUN_NAMED.get(topic)

        def on_message(cdr: bytes) -> None:
            if self.failure:
                return  # nothing more is recorded or scored once the recording failed
            if topic == EVENTS_TOPIC:
                self._on_event_message(cdr)
                return
            message: Any = None
            if run_of is not None:
                message = deserialize_message(cdr, msg_type)
                if self._run.foreign(run_of(message), f"a message on {topic}"):
                    return
            self._write(topic, cdr)
            if topic in self._per_step:
                self._ledger.deliver(topic, cdr_stamp_ns(cdr, self._per_step[topic][1]))
            if topic == AGENTS_TOPIC:
                self._assembler.add_agent_info(message)
            elif topic == NODES_TOPIC:
                self._on_node_info(message)

        self._subscribe(msg_type, topic, on_message, qos)

    def _subscribe(
        self, msg_type: type, topic: str, callback: Callable[[bytes], None], qos: QoSProfile
    ) -> None:
        """A recording subscription that counts what DDS reports lost on its way (a writer's
        history overrun while this node was stalled): the run's notes say so per topic, and
        a lost episode event makes the attempt under way unscorable."""

        def on_lost(info: Any) -> None:
            self.get_logger().warning(
                f"{topic}: {info.total_count_change} message(s) lost before recording"
            )
            if topic not in self._per_step:
                self.lost[topic] = self.lost.get(topic, 0) + int(info.total_count_change)
            if topic == EVENTS_TOPIC and self._open_attempt is not None:
                self._record_lost_events(
                    self._open_attempt, f"{info.total_count_change} episode event(s)"
                )

        self.create_subscription(
            msg_type,
            topic,
            callback,
            recording_qos(qos),
            raw=True,
            event_callbacks=SubscriptionEventCallbacks(message_lost=on_lost),
        )

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
        self._recorder.add_topic(topic, message_type_name(msg_type))

        def on_message(cdr: bytes) -> None:
            count = self._image_counts.get(topic, 0)
            self._image_counts[topic] = count + 1
            if count % self._decimation == 0 and not self.failure:
                self._write(topic, cdr)

        self._subscribe(msg_type, topic, on_message, qos)

    def _record_images(self, topic: str) -> None:
        """Every ``image_decimation``-th image of ``topic``, raw or compressed."""
        if self._recorder is None:
            return
        compressed = self._compression != "none"
        written_topic = f"{topic}/compressed" if compressed else topic
        written_type = CompressedImage if compressed else Image
        self._recorder.add_topic(written_topic, message_type_name(written_type))

        def on_image(cdr: bytes) -> None:
            self._ledger.deliver(topic, cdr_stamp_ns(cdr))
            count = self._image_counts.get(topic, 0)
            self._image_counts[topic] = count + 1
            if count % self._decimation or self.failure:
                return
            if compressed:
                image = deserialize_message(cdr, Image)
                cdr = serialize_message(
                    array_to_compressed(
                        image_to_array(image), image.encoding, image.header, codec=self._compression
                    )
                )
            self._write(written_topic, cdr)

        self._subscribe(Image, topic, on_image, SENSOR_QOS)

    def _write(self, topic: str, cdr: bytes) -> None:
        if self._recorder is None:
            return
        try:
            self._recorder.write(topic, self.get_clock().now().nanoseconds, cdr)
        except OSError as error:
            self._recording_failed(error)
            return
        episode = self._assembler.open_episode or BETWEEN_EPISODES
        self.bag_bytes[episode] = self.bag_bytes.get(episode, 0) + len(cdr)

    def _recording_failed(self, error: OSError) -> None:
        """The bag cannot be written (its disk is full): stop recording, leave the attempt
        under way unscored (its events are not all in the bag), and end the run with its
        report now, in the space held back for it."""
        if self.failure:
            return
        self.failure = (
            f"the bag {self.run_dir / 'bag'} could not be written: "
            f"{error.strerror or error}; recording stopped"
        )
        self.get_logger().error(self.failure)
        assert self._recorder is not None
        self._recorder.abandon()
        self._assembler.gap(f"not recorded: {error.strerror or error} while recording the bag")
        self.finish()

    @property
    def _open_attempt(self) -> EpisodeEvent | None:
        """The STARTED event of the attempt under way, if any."""
        return self._started.get(self._assembler.open_episode or "")

    def _on_event_message(self, cdr: bytes) -> None:
        """Record and score an episode event; first, where events before it were lost (a
        step skipped, an attempt whose start never came), record that its attempt is not
        scored, as an ``INFRA_FAILURE`` in the bag, so the bag scores as the run did.
        Another run's events (a second run in this domain) are neither recorded nor scored."""
        event = deserialize_message(cdr, EpisodeEvent)
        if self._run.foreign(event.run_id, "an episode event"):
            return
        key = (event.episode_id, event.attempt)
        if event.kind == EpisodeEvent.STARTED:
            self._started[event.episode_id] = event
            self._last_step[key] = event.step
        elif event.kind in _STEPPED and key not in self._ended:
            last = self._last_step.get(key)
            if last is None:
                self._record_lost_events(event, "its STARTED event")
            elif event.step > last + 1:
                self._record_lost_events(event, f"the events of steps {last + 1}-{event.step - 1}")
            else:
                self._last_step[key] = event.step
        if self.failure:
            return
        self._write(EVENTS_TOPIC, cdr)
        self._on_event(event)
        if event.kind in _TERMINAL or event.kind == EpisodeEvent.INFRA_FAILURE:
            self._ended.add(key)
            self._last_step.pop(key, None)

    def _record_lost_events(self, event: EpisodeEvent, what: str) -> None:
        """The attempt of ``event`` lost ``what`` before the evaluator recorded them: it is
        not scored, and the bag says so before its next event."""
        key = (event.episode_id, event.attempt)
        self._ended.add(key)
        self._last_step.pop(key, None)
        marker = EpisodeEvent(
            header=event.header,
            run_id=event.run_id,
            episode_id=event.episode_id,
            attempt=event.attempt,
            episode_index=event.episode_index,
            episode_count=event.episode_count,
            kind=EpisodeEvent.INFRA_FAILURE,
            step=event.step,
            pose=event.pose,
            message=f"not recorded whole: {what} never reached the evaluator (it stalled or "
            "fell behind)",
        )
        self.get_logger().warning(
            f"{event.episode_id} {attempt_name(event.attempt)}: {marker.message}"
        )
        self.lost[EVENTS_TOPIC] = self.lost.get(EVENTS_TOPIC, 0) + 1
        self._write(EVENTS_TOPIC, serialize_message(marker))
        self._on_event(marker)

    def _on_event(self, event: EpisodeEvent) -> None:
        if self._recorder is not None and event.kind != EpisodeEvent.STEP:
            # The selection, a start, an end: make it survive a crash of this process, so a
            # salvaged bag still says which episodes were running and which never started;
            # scored only once it is on disk, so the bag scores as the run did.
            try:
                self._recorder.checkpoint()
            except OSError as error:
                self._recording_failed(error)
                return
        if event.kind == EpisodeEvent.RUN_STARTED:
            self._reserve.hold(RESERVE_BASE_BYTES + RESERVE_PER_EPISODE_BYTES * event.episode_count)
        trace = self._assembler.add(event)
        if event.kind == EpisodeEvent.STARTED or event.kind in _STEPPED:
            self._ledger.owe(self._observed_topics(event), time_ns(event.header.stamp))
        if trace is not None:
            self.get_logger().info(
                f"[{event.episode_index + 1}/{event.episode_count}] {trace.episode_id}: "
                f"{trace.termination} after {trace.steps_used} actions"
            )
        elif event.kind == EpisodeEvent.INFRA_FAILURE:
            self._ledger.abandon_pending()
            self.get_logger().warning(
                f"{event.episode_id} {attempt_name(event.attempt)}: infrastructure failure "
                f"({event.message}); not scored"
            )
        if self._assembler.finished:
            self._finish_once_announced()

    def _observed_topics(self, event: EpisodeEvent) -> list[str]:
        """The per-step topics that owe the recorder a message of ``event``'s stamp: those
        of the agents it placed (a reset: all of them) or moved, and of their image topics
        the views the benchmark observes after its action (an AGOS UGV sees its ring, not
        its front view, right after STOP_OBSERVE)."""
        reset = event.kind == EpisodeEvent.STARTED
        benchmark = self._assembler.benchmark
        observes = protocol(benchmark).observes_view if benchmark else None
        action = "" if reset else event.action
        return [
            topic
            for topic, (agent, _) in self._per_step.items()
            if (agent is None or reset or agent == event.agent)
            and (
                observes is None
                or topic not in self._image_views
                or observes(self._image_views[topic], action)
            )
        ]

    def _finish_once_announced(self) -> None:
        """Finish now, or once every recorded agent has said who acts for it and every node
        of ``_announcing_nodes`` has said what it runs on (at most ``AGENT_INFO_WAIT_S``; an
        agent node of one's own may announce nothing)."""
        deadline = time.monotonic() + AGENT_INFO_WAIT_S

        def missing() -> list[str]:
            agents = [a for a in param(self, "agents") if a not in self._assembler.agents]
            nodes = sorted(self._announcing_nodes() - set(self._assembler.nodes))
            # The last observation sets may still be on their way (the bridge publishes them
            # on a thread of its own): they are not lost before this wait ends.
            frames = ["the last observation sets"] if self._ledger.outstanding() else []
            return agents + nodes + frames

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
        """The report of a finished run is written and the node should exit (at once when
        the recording failed)."""
        return self.result is not None and (
            bool(self.failure) or bool(param(self, "exit_when_finished"))
        )

    def finish(self) -> None:
        """Close the bag and write the report; on an interrupted run, of what ended."""
        if self.result is not None:
            return
        digests = None
        if self._recorder is not None and not self.failure:
            try:
                self._recorder.close()
                digests = self._recorder.digests
            except OSError as error:
                self._recording_failed(error)  # finishes the run itself
                return
        self._reserve.release()
        self.result = score_assembled(self._assembler, self._radii, self._recording_notes())
        suite = str(param(self, "suite"))
        try:
            write_run(
                self.run_dir,
                self.result,
                bag_bytes=self.bag_bytes if self._recorder else None,
                transcripts_dir=self.run_dir / TRANSCRIPTS_DIR,
                suite=Path(suite) if suite else None,
                bag_digests=digests,
                record_suite=False,
            )
        except OSError as error:
            written = [
                name for name in (STATUS_JSON, METRICS_JSON) if (self.run_dir / name).exists()
            ]
            self.failure = f"the report could not be written whole: {error.strerror or error}" + (
                f" ({', '.join(written)} written)" if written else ""
            )
            self.get_logger().error(self.failure)
            return
        self.get_logger().info(f"report written to {self.run_dir}\n{self.result.summary_table}")

    def _recording_notes(self) -> list[str]:
        """What the run's notes must say of the recording: messages lost per topic, and a
        recording that failed."""
        # A run cut short may have named a last set whose messages were never sent.
        owed = [stamp for stamps in self._ledger.owed.values() for stamp in stamps]
        through = None if self._assembler.finished or not owed else max(owed) - 1
        lost = self.lost | self._ledger.lost(through_ns=through)
        notes = [
            f"the recorder lost {count} message(s) of {topic}: they never reached the "
            "evaluator (it stalled or fell behind), so the bag lacks them"
            for topic, count in sorted(lost.items())
        ]
        return [self.failure, *notes] if self.failure else notes


#: Events of an action the referee took (each step's observation set, the ending), and the
#: kinds that end an attempt by the rules.
_TERMINAL = (EpisodeEvent.STOPPED, EpisodeEvent.COLLIDED, EpisodeEvent.BUDGET_EXHAUSTED)
_STEPPED = (EpisodeEvent.STEP, *_TERMINAL)
#: The recorded topics whose messages name their run, and where: another run's are neither
#: recorded nor reported (its agents would be listed as this run's, its oracle included).
_RUN_NAMED: dict[str, Callable[[Any], str]] = {
    "/aerialdojo/task": lambda task: task.run_id,
    AGENTS_TOPIC: lambda info: info.run_id,
    NODES_TOPIC: lambda info: run_id_of({RUN_DIR_ENV: info.run_dir}),
    "/agos/messages": lambda message: message.run_id,
}


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
        if node.failure:
            raise SystemExit(f"evaluator: {node.failure}")


if __name__ == "__main__":
    main()
