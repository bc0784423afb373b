"""What a recorder missed of the per-step topics (issue 29, item 7): the events name each
observation set's stamp; a stamp a topic never delivered is a lost message."""

from __future__ import annotations

from eventstream import TYPESTORE

from aerialdojo.bags.losses import FIRST_OF_SEQUENCE, StampLedger, cdr_stamp_ns

_types = TYPESTORE.types


def _header(sec: int, nanosec: int) -> object:
    stamp = _types["builtin_interfaces/msg/Time"](sec=sec, nanosec=nanosec)
    return _types["std_msgs/msg/Header"](stamp=stamp, frame_id="map")


def test_stamps_are_read_from_the_cdr_of_a_pose_and_of_a_transform_list() -> None:
    pose = _types["geometry_msgs/msg/PoseStamped"](
        header=_header(12, 500),
        pose=_types["geometry_msgs/msg/Pose"](
            position=_types["geometry_msgs/msg/Point"](1.0, 2.0, 3.0),
            orientation=_types["geometry_msgs/msg/Quaternion"](0.0, 0.0, 0.0, 1.0),
        ),
    )
    cdr = TYPESTORE.serialize_cdr(pose, "geometry_msgs/msg/PoseStamped")
    assert cdr_stamp_ns(cdr) == 12_000_000_500
    transform = _types["geometry_msgs/msg/TransformStamped"](
        header=_header(7, 1),
        child_frame_id="base_link",
        transform=_types["geometry_msgs/msg/Transform"](
            translation=_types["geometry_msgs/msg/Vector3"](0.0, 0.0, 0.0),
            rotation=_types["geometry_msgs/msg/Quaternion"](0.0, 0.0, 0.0, 1.0),
        ),
    )
    tf = _types["tf2_msgs/msg/TFMessage"](transforms=[transform])
    cdr = TYPESTORE.serialize_cdr(tf, "tf2_msgs/msg/TFMessage")
    assert cdr_stamp_ns(cdr, FIRST_OF_SEQUENCE) == 7_000_000_001
    empty = TYPESTORE.serialize_cdr(
        _types["tf2_msgs/msg/TFMessage"](transforms=[]), "tf2_msgs/msg/TFMessage"
    )
    assert cdr_stamp_ns(empty, FIRST_OF_SEQUENCE) is None


def test_the_ledger_counts_what_each_topic_never_delivered() -> None:
    ledger = StampLedger()
    for stamp in (1, 2, 3, 4):
        ledger.owe(["/uav/odom", "/tf"], stamp)
    for stamp in (1, 2, 3, 4):
        ledger.deliver("/tf", stamp)
    ledger.deliver("/uav/odom", 1)
    assert ledger.outstanding()
    assert ledger.lost() == {"/uav/odom": 3}
    # A run cut short: the last set may never have been sent.
    assert ledger.lost(through_ns=3) == {"/uav/odom": 2}
    for stamp in (2, 3, 4):
        ledger.deliver("/uav/odom", stamp)
    assert not ledger.outstanding() and ledger.lost() == {}


def test_a_stamp_missing_before_a_delivered_one_is_lost_not_awaited() -> None:
    # A recorder that stalled past the writers' history: later frames came, these never
    # will. The run must not wait for what cannot come.
    ledger = StampLedger()
    for stamp in (1, 2, 3, 4):
        ledger.owe(["/uav/odom"], stamp)
    for stamp in (1, 4):
        ledger.deliver("/uav/odom", stamp)
    assert not ledger.outstanding()
    assert ledger.lost() == {"/uav/odom": 2}
    ledger.owe(["/uav/odom"], 5)
    assert ledger.outstanding()


def test_an_infrastructure_failure_abandons_the_stamps_its_bridge_never_sent() -> None:
    # A bridge killed mid-episode: its last sets never reached any topic. Its restart's
    # frames come after the failure, and the recorder lost nothing.
    ledger = StampLedger()
    for stamp in (1, 2, 3):
        ledger.owe(["/uav/odom", "/tf"], stamp)
    for stamp in (1, 3):
        ledger.deliver("/tf", stamp)
    ledger.deliver("/uav/odom", 1)
    ledger.abandon_pending()
    assert not ledger.outstanding()
    # /tf's stamp 2 went missing before its stamp 3 arrived: the recorder's loss, still told.
    assert ledger.lost() == {"/tf": 1}
    ledger.owe(["/uav/odom", "/tf"], 4)
    ledger.deliver("/tf", 4)
    assert ledger.outstanding() and ledger.lost() == {"/tf": 1, "/uav/odom": 1}
