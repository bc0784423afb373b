"""The shipped transport profiles, the environment that applies them, and the QoS helpers."""

from __future__ import annotations

import os
from pathlib import Path
from xml.etree import ElementTree

import pytest
from rclpy.qos import DurabilityPolicy, ReliabilityPolicy
from rostest import running, specs_for

from aerialdojo.dds import (
    TRANSPORT_PROFILES,
    run_environment,
    transport_environment,
    transport_profile_path,
)
from aerialdojo.errors import ConfigError
from aerialdojo.nodes.frame_publisher import FramePublisher
from aerialdojo.nodes.qos import latched_qos, sensor_qos

NAMESPACE = {"dds": "http://www.eprosima.com"}
# Four views of rgb8 and 32FC1 depth at 640x640 (AerialDojo-200K, section 3.1).
FRAME_SET_BYTES = 4 * 640 * 640 * (3 + 4)


def default_participant(profile: str) -> tuple[ElementTree.Element, ElementTree.Element]:
    """The profile file's root and the participant profile Fast DDS applies by default."""
    root = ElementTree.parse(transport_profile_path(profile)).getroot()
    defaults = [
        participant
        for participant in root.iterfind("dds:profiles/dds:participant", NAMESPACE)
        if participant.get("is_default_profile") == "true"
    ]
    assert len(defaults) == 1
    return root, defaults[0]


def user_transports(profile: str) -> dict[str, ElementTree.Element]:
    """The default participant's transports by type; it must not add Fast DDS's builtin ones."""
    root, participant = default_participant(profile)
    assert participant.findtext("dds:rtps/dds:useBuiltinTransports", namespaces=NAMESPACE) == (
        "false"
    )
    used = {
        element.text
        for element in participant.iterfind(
            "dds:rtps/dds:userTransports/dds:transport_id", NAMESPACE
        )
    }
    descriptors = root.iterfind(
        "dds:profiles/dds:transport_descriptors/dds:transport_descriptor", NAMESPACE
    )
    by_type = {
        str(descriptor.findtext("dds:type", namespaces=NAMESPACE)): descriptor
        for descriptor in descriptors
        if descriptor.findtext("dds:transport_id", namespaces=NAMESPACE) in used
    }
    assert len(by_type) == len(used)
    return by_type


@pytest.mark.parametrize("profile", sorted(TRANSPORT_PROFILES))
def test_profiles_hold_several_frame_sets_in_shared_memory_and_keep_udp(profile: str) -> None:
    transports = user_transports(profile)
    assert set(transports) == {"SHM", "UDPv4"}  # UDP: discovery, tools without the profile
    segment = int(str(transports["SHM"].findtext("dds:segment_size", namespaces=NAMESPACE)))
    assert segment >= 4 * FRAME_SET_BYTES


def test_multi_host_profile_asks_for_large_socket_buffers() -> None:
    udp = user_transports("multi_host")["UDPv4"]
    for field in ("sendBufferSize", "receiveBufferSize"):
        assert int(str(udp.findtext(f"dds:{field}", namespaces=NAMESPACE))) >= FRAME_SET_BYTES


def test_environment_applies_the_profile_and_its_discovery_range() -> None:
    single = transport_environment("single_host", environ={})
    assert single == {
        "RMW_IMPLEMENTATION": "rmw_fastrtps_cpp",
        # Fast DDS 3 (Kilted on) reads the first, Fast DDS 2 (Jazzy, Humble) the second.
        "FASTDDS_DEFAULT_PROFILES_FILE": str(transport_profile_path("single_host")),
        "FASTRTPS_DEFAULT_PROFILES_FILE": str(transport_profile_path("single_host")),
        "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST",
    }
    assert transport_profile_path("single_host").name == "fastdds_shm.xml"
    multi = transport_environment("multi_host", environ={"RMW_IMPLEMENTATION": ""})
    assert multi["ROS_AUTOMATIC_DISCOVERY_RANGE"] == "SUBNET"
    assert multi["FASTDDS_DEFAULT_PROFILES_FILE"].endswith("fastdds_multi_host.xml")
    assert multi["FASTRTPS_DEFAULT_PROFILES_FILE"] == multi["FASTDDS_DEFAULT_PROFILES_FILE"]
    assert multi["RMW_IMPLEMENTATION"] == "rmw_fastrtps_cpp"  # an empty value counts as unset


def test_environment_leaves_the_users_choices_alone() -> None:
    chosen = {
        "FASTDDS_DEFAULT_PROFILES_FILE": "/etc/my_fastdds.xml",
        "ROS_AUTOMATIC_DISCOVERY_RANGE": "SUBNET",
    }
    assert transport_environment("single_host", environ=chosen) == {
        "RMW_IMPLEMENTATION": "rmw_fastrtps_cpp",
        # The user's file, also for the Fast DDS version that reads the other variable.
        "FASTRTPS_DEFAULT_PROFILES_FILE": "/etc/my_fastdds.xml",
    }


def test_unknown_profile_is_named() -> None:
    with pytest.raises(ConfigError, match="'shm_only'"):
        transport_environment("shm_only")


def test_qos_helpers() -> None:
    sensor = sensor_qos()
    assert (sensor.reliability, sensor.durability, sensor.depth) == (
        ReliabilityPolicy.RELIABLE,
        DurabilityPolicy.TRANSIENT_LOCAL,
        5,
    )
    viewer = sensor_qos(reliable=False, depth=2)
    assert (viewer.reliability, viewer.durability) == (
        ReliabilityPolicy.BEST_EFFORT,
        DurabilityPolicy.VOLATILE,
    )
    latched = latched_qos()
    assert (latched.durability, latched.depth) == (DurabilityPolicy.TRANSIENT_LOCAL, 1)


@pytest.mark.parametrize("make", [lambda: sensor_qos(depth=0), lambda: FramePublisher(0)])
def test_sizes_below_one_are_refused(make: object) -> None:
    with pytest.raises(ConfigError, match="=0 must be at least 1"):
        make()  # type: ignore[operator]


def test_a_run_keeps_to_this_host_unless_its_config_opts_out() -> None:
    inherited = {"ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}  # as tools/run.sh exports
    assert run_environment("localhost", environ={})["ROS_AUTOMATIC_DISCOVERY_RANGE"] == (
        "LOCALHOST"
    )
    assert "ROS_AUTOMATIC_DISCOVERY_RANGE" not in run_environment("localhost", environ=inherited)
    subnet = run_environment("subnet", environ=inherited)
    assert subnet["ROS_AUTOMATIC_DISCOVERY_RANGE"] == "SUBNET"  # the config's choice wins
    assert subnet["FASTRTPS_DEFAULT_PROFILES_FILE"].endswith("fastdds_multi_host.xml")
    with pytest.raises(ConfigError, match=r"task_manager\.discovery: 'lan' is not one of"):
        run_environment("lan")


@pytest.mark.parametrize(
    ("discovery", "expected"), [("localhost", "LOCALHOST"), ("subnet", "SUBNET")]
)
def test_the_nodes_environment_carries_the_runs_discovery_range(
    tmp_path: Path, discovery: str, expected: str
) -> None:
    specs = specs_for({"task_manager": {"discovery": discovery, "auto_run": False}})
    environ = {k: v for k, v in os.environ.items() if k != "ROS_AUTOMATIC_DISCOVERY_RANGE"}
    environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"  # inherited, as from tools/run.sh
    with running(specs, tmp_path, environ) as (task_manager,):
        started = task_manager.env  # what the process was started with
    assert started["ROS_AUTOMATIC_DISCOVERY_RANGE"] == expected


def test_a_bad_discovery_setting_is_named_before_anything_starts(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"test: task_manager.discovery: 'lan' is not one of"):
        specs_for({"task_manager": {"discovery": "lan"}})
