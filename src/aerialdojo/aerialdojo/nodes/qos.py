"""The QoS of every topic the nodes use, chosen on purpose and written out once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from rclpy.node import Node
from rclpy.publisher import Publisher
from rclpy.qos import (
    DurabilityPolicy,
    HistoryPolicy,
    QoSCompatibility,
    QoSProfile,
    ReliabilityPolicy,
    qos_check_compatible,
)
from rclpy.subscription import Subscription

try:  # Iron on; Humble has them in rclpy.qos_event (Jazzy keeps that name, with a warning)
    from rclpy.event_handler import PublisherEventCallbacks, SubscriptionEventCallbacks
except ImportError:  # pragma: no cover - Humble
    from rclpy.qos_event import PublisherEventCallbacks, SubscriptionEventCallbacks

from aerialdojo.errors import ConfigError

_NO_EVENT_HANDLERS = PublisherEventCallbacks(use_default_callbacks=False)
_NO_SUBSCRIPTION_EVENT_HANDLERS = SubscriptionEventCallbacks(use_default_callbacks=False)
#: The node name rmw gives an endpoint whose node it has not yet heard of.
_UNKNOWN_NODE = "_NODE_NAME_UNKNOWN_"


def publisher_without_events(node: Node, msg_type: type, topic: str, qos: QoSProfile) -> Publisher:
    """A publisher of ``node`` with no event handlers, for a node on the step path.

    rclpy gives each publisher two by default (warnings of a subscriber with an incompatible
    QoS or type), and each is a waitable that a single-threaded executor adds to, and looks
    up in, the wait set it rebuilds on every wake-up (40 in the bridge for one agent's four
    views). The subscriber's node still warns of both by default.
    """
    return node.create_publisher(msg_type, topic, qos, event_callbacks=_NO_EVENT_HANDLERS)


def subscription_without_events(
    node: Node, msg_type: type, topic: str, callback: Callable[[Any], None], qos: QoSProfile
) -> Subscription:
    """A subscription of ``node`` with no event handlers, for an agent's topics.

    rclpy's two default handlers (a publisher with an incompatible QoS or type) are waitables
    the agent's executor rebuilds into its wait set at each of the six or seven wake-ups of
    a step; with its publishers' handlers they took about 1 ms of CPU a step in place
    (docs/performance.md, changes 66-67). The same mismatches are found once instead, when
    the publishers are there (``unreachable_publishers``).
    """
    return node.create_subscription(
        msg_type, topic, callback, qos, event_callbacks=_NO_SUBSCRIPTION_EVENT_HANDLERS
    )


def message_type_name(msg_type: type) -> str:
    """The name the graph and bags give a message class: ``package/msg/Name``."""
    return f"{msg_type.__module__.split('.')[0]}/msg/{msg_type.__name__}"


def unreachable_publishers(node: Node, subscription: Subscription) -> list[str]:
    """Why each publisher now on ``subscription``'s topic cannot reach it: a QoS policy the
    two do not agree on (a best-effort camera driver and a reliable subscription), or
    another message type; one line per such publisher, naming the topic and the publisher's
    node. What rclpy's default subscription event handlers would warn of."""
    expected_type = message_type_name(cast(type, subscription.msg_type))
    problems = []
    for endpoint in node.get_publishers_info_by_topic(subscription.topic_name):
        publisher = (
            f"{endpoint.node_namespace.rstrip('/')}/{endpoint.node_name}"
            # Nodes are announced apart from their endpoints, and can be seen later.
            if endpoint.node_name != _UNKNOWN_NODE
            else "(its node not yet discovered)"
        )
        if endpoint.topic_type != expected_type:
            problems.append(
                f"{subscription.topic_name}: publisher {publisher} sends {endpoint.topic_type}, "
                f"this node takes {expected_type}"
            )
            continue
        compatibility, reason = qos_check_compatible(endpoint.qos_profile, subscription.qos_profile)
        if compatibility == QoSCompatibility.ERROR:
            problems.append(
                f"{subscription.topic_name}: publisher {publisher} has a QoS this subscription "
                f"cannot match, so none of its messages arrive: {reason}"
            )
    return problems


def sensor_qos(*, reliable: bool = True, depth: int = 5) -> QoSProfile:
    """QoS for camera images, depth and camera_info.

    Publishers keep the reliable default: a reliable writer serves reliable and best-effort
    readers alike, so an agent that must see the frames of each step subscribes reliably while a
    viewer subscribes with ``reliable=False`` and never slows the stream down. Best-effort
    delivery of full frames needs the shipped transport profile (``transport_environment``).

    The reliable profile is also transient local. Discovery is not symmetric: a subscription
    can count its publisher as matched while the publisher has not matched it yet, and a frame
    published in that window never reaches a volatile reader (148 of 500 fresh matches with
    both cores busy, ``benchmarks/late_match.py``). A transient-local writer hands the frames
    it keeps anyway to a reader that matches late. Viewers stay volatile: they want the live stream.

    Args:
        reliable: RELIABLE and transient local (publishers, agents, the recorder) or
            BEST_EFFORT and volatile (viewers).
        depth: frames kept per topic, by the writer for repairs and late readers and by the
            reader until taken; five (a third of a second at 15 Hz) ride out a subscriber
            stalled by a busy CPU, where two lost frame sets even to reliable subscribers.

    Raises:
        ConfigError: ``depth`` is below 1.
    """
    if reliable:
        return latched_qos(depth)
    return keep_last(depth, ReliabilityPolicy.BEST_EFFORT, DurabilityPolicy.VOLATILE)


def latched_qos(depth: int = 1) -> QoSProfile:
    """QoS for data a subscriber that matches late must still get (task, poses, frames):
    reliable, transient local, the last ``depth`` messages.

    Raises:
        ConfigError: ``depth`` is below 1.
    """
    return keep_last(depth, ReliabilityPolicy.RELIABLE, DurabilityPolicy.TRANSIENT_LOCAL)


def keep_last(
    depth: int, reliability: ReliabilityPolicy, durability: DurabilityPolicy
) -> QoSProfile:
    """Keep the last ``depth`` messages with this reliability and durability.

    Raises:
        ConfigError: ``depth`` is below 1.
    """
    if depth < 1:
        raise ConfigError(f"QoS depth={depth} must be at least 1")
    return QoSProfile(
        history=HistoryPolicy.KEEP_LAST,
        depth=depth,
        reliability=reliability,
        durability=durability,
    )


#: Task spec: latched so an agent that starts late still gets the current task.
TASK_QOS = latched_qos()

#: Episode events: every one counts for the metrics, so reliable, and kept for a late
#: subscriber (a restarted evaluator, ``ros2 bag record``) as far as the depth allows.
EVENTS_QOS = latched_qos(depth=1000)

#: Poses, odometry and the clock of a stepped simulation: one message per step, none to lose,
#: and kept for a subscriber that matches after the step (see ``sensor_qos``).
STATE_QOS = latched_qos(depth=10)

#: AGOS handoff (``/agos/candidates``, ``/agos/messages``): every candidate and message
#: matters to the other agent, and one that starts late must still see the episode's history.
HANDOFF_QOS = latched_qos(depth=100)

#: Camera streams: reliable and transient local, because an agent waits for the frames its
#: step produced.
SENSOR_QOS = sensor_qos(reliable=True)

#: An agent's geographic semantic map (CityNav): the latest map is what a viewer that opens
#: late wants, and one map per step is all an agent publishes.
GSM_QOS = latched_qos(depth=1)

#: Who acts for each agent (``/aerialdojo/agents``): one latched message per agent node. A
#: reader's depth holds the messages of all its writers together, so it is room for several.
AGENTS_QOS = latched_qos(depth=10)

#: What each node runs on (``/aerialdojo/nodes``): one latched message per node; room for
#: every node of a graph, robot-side ones included, in one reader.
NODES_QOS = latched_qos(depth=32)

#: The task manager's services (``/aerialdojo/step`` and the others): every request is
#: answered. The default service QoS keeps the last ten requests, so of 200 concurrent step
#: calls 189 were dropped without an answer or a log line; these queue them all. A client
#: that sends many requests at once needs it as well: its own KEEP_LAST writer may drop
#: requests not yet acknowledged.
SERVICE_QOS = QoSProfile(
    history=HistoryPolicy.KEEP_ALL,
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.VOLATILE,
)

#: Agent faults (``/aerialdojo/agent_faults``: a policy's model server died or hangs):
#: reliable, and volatile, so that a fault of one attempt can never reach a task manager
#: that matches later as the fault of a rerun.
FAULTS_QOS = keep_last(10, ReliabilityPolicy.RELIABLE, DurabilityPolicy.VOLATILE)


def recording_qos(profile: QoSProfile) -> QoSProfile:
    """``profile`` as the recorder subscribes with it: the same reliability and durability,
    every message kept until taken (KEEP_ALL). A recorder that falls behind (a long report,
    a busy CPU) then buffers rather than letting its own queue drop messages unseen: a
    KEEP_LAST reader drops them without a word (439 of 600 in a 5 s stall, none reported).
    What a writer drops while the recorder is stalled outright is reported to it as lost
    (the evaluator counts those)."""
    return QoSProfile(
        history=HistoryPolicy.KEEP_ALL,
        reliability=profile.reliability,
        durability=profile.durability,
    )
