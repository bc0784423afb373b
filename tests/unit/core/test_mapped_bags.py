"""A robot's own bags (standard types, its own topic names, SQLite3 or MCAP) scored through a
mapping file against the shipped task file, to metrics worked out by hand."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from robot_bags import boolean, odometry, pose_stamped, string, tf_message, write_robot_bag

from aerialdojo.bags.mapped import score_mapped_bags
from aerialdojo.bags.mapping import load_mapping
from aerialdojo.cli import _task_file_records, main
from aerialdojo.errors import BagError, ConfigError
from aerialdojo.report.run import score_assembled

RECORDS = _task_file_records(Path("aerialdojo_mini"))
#: Two episodes of the shipped suite (start x, y, z, yaw; target x, y, z).
NEAR, FAR = "Community_0-base-0001-sem", "Community_0-base-0000-sem"
ODOM = "/mavros/local_position/odom"


def _start(episode_id: str) -> tuple[np.ndarray, float]:
    x, y, z, yaw = RECORDS[episode_id]["start"]
    return np.array([x, y, z]), yaw


def _target(episode_id: str) -> np.ndarray:
    return np.array(RECORDS[episode_id]["target"])


def _mapping(tmp_path: Path, content: dict[str, Any]) -> Path:
    path = tmp_path / "robot.yaml"
    path.write_text(yaml.safe_dump(content))
    return path


def _to_odom(map_points: np.ndarray, episode_id: str, origin: np.ndarray, heading: float):
    """Where a continuous odometry frame (origin, heading at the episode's start) puts
    map-frame points: the inverse of anchoring them at the task's start."""
    start, yaw = _start(episode_id)
    turn = heading - yaw
    rotation = np.array(
        [[math.cos(turn), -math.sin(turn), 0.0], [math.sin(turn), math.cos(turn), 0.0], [0, 0, 1]]
    )
    return (map_points - start) @ rotation.T + origin


def _odometry_bag(tmp_path: Path, storage: str) -> Path:
    """Two flights with continuous odometry (power-on origin, heading 0.3 rad):
    NEAR flies straight at the target, lands 2 m short and signals landing;
    FAR flies 4 m towards its target, bumps into something, drifts 3 m more."""
    messages: list[tuple[float, str, str, Any]] = []
    heading = 0.3
    # Before the first start: the robot idles at its power-on pose (not scored).
    for t in np.arange(0.0, 2.0, 0.5):
        messages.append((t, ODOM, "nav_msgs/msg/Odometry", odometry(t, (0.0, 0.0, 0.0), heading)))
    # NEAR, 2 s .. 12 s: straight line from start to 2 m short of the target.
    start, _ = _start(NEAR)
    direction = _target(NEAR) - start
    length = float(np.linalg.norm(direction))
    fractions = np.linspace(0.0, (length - 2.0) / length, 11)
    origin = np.array([0.0, 0.0, 0.0])
    points = _to_odom(start + np.outer(fractions, direction), NEAR, origin, heading)
    messages.append((2.0, "/mission/state", "std_msgs/msg/String", string(f"start {NEAR}")))
    for index, point in enumerate(points):
        t = 2.0 + index
        messages.append((t, ODOM, "nav_msgs/msg/Odometry", odometry(t, tuple(point), heading)))
    messages.append((12.5, "/mavros/extended_state/landed", "std_msgs/msg/Bool", boolean(True)))
    messages.append((13.0, "/mission/state", "std_msgs/msg/String", string("stop")))
    # Carried back by hand: odometry keeps counting from where NEAR ended.
    carried = points[-1] + np.array([5.0, 5.0, 0.0])
    messages.append((14.0, ODOM, "nav_msgs/msg/Odometry", odometry(14.0, tuple(carried), heading)))
    # FAR, 15 s .. 22 s: 4 m towards the target in 4 s, a bump at 19 s, 3 m more.
    start, _ = _start(FAR)
    unit = (_target(FAR) - start) / np.linalg.norm(_target(FAR) - start)
    messages.append((15.0, "/mission/state", "std_msgs/msg/String", string(f"start {FAR}")))
    points = _to_odom(start + np.outer(np.arange(8.0), unit), FAR, carried, heading)
    for index, point in enumerate(points):
        t = 15.0 + index
        messages.append((t, ODOM, "nav_msgs/msg/Odometry", odometry(t, tuple(point), heading)))
    for t in (15.5, 17.5):
        messages.append((t, "/bumper", "std_msgs/msg/Bool", boolean(False)))
    messages.append((19.0, "/bumper", "std_msgs/msg/Bool", boolean(True)))
    messages.append((23.0, "/mission/state", "std_msgs/msg/String", string("stop")))
    return write_robot_bag(tmp_path / f"flight_{storage}", messages, storage=storage)


ODOMETRY_MAPPING = {
    "pose": {"topic": ODOM, "frame": "anchored"},
    "collision": {"topic": "/bumper"},
    "stop": {"topic": "/mavros/extended_state/landed"},
    "episodes": {"topic": "/mission/state"},
}


@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
def test_odometry_flights_are_cut_by_the_mission_topic_and_scored(
    tmp_path: Path, storage: str
) -> None:
    bag = _odometry_bag(tmp_path, storage)
    mapping = load_mapping(_mapping(tmp_path, ODOMETRY_MAPPING))
    replayed = score_mapped_bags([bag], mapping, RECORDS)
    assert replayed.messages == (4 + 11 + 1 + 8) + 1 + 3 + 4  # odometry, landing, bumps, mission
    result = score_assembled(replayed.assembler, [3.0], replayed.warnings)
    scores = {score.episode_id: score for score in result.metrics.episodes}

    near = scores[NEAR]
    length = float(np.linalg.norm(_target(NEAR) - _start(NEAR)[0]))
    assert near.termination == "stopped" and near.steps_used == 1
    assert near.executed_length_m == pytest.approx(length - 2.0)
    assert near.final_distance_m == pytest.approx(2.0)
    assert near.values["sr_3m"] == 1.0 and near.values["cr"] == 0.0

    far = scores[FAR]  # the bump at 19 s ends it: the 3 m after it are not the agent's path
    assert far.termination == "collided"
    assert far.executed_length_m == pytest.approx(4.0)
    assert far.final_distance_m == pytest.approx(
        float(np.linalg.norm(_target(FAR) - _start(FAR)[0])) - 4.0
    )
    assert far.values["sr_3m"] == 0.0 and far.values["cr"] == 1.0
    assert result.finished and "mapped by" in result.warnings[0]


def test_mocap_poses_in_the_map_frame_cut_by_time_ranges(tmp_path: Path) -> None:
    # A motion-capture PoseStamped in the map frame, SQLite3 storage: NEAR flies 3 m east
    # and 4 m north, then hovers 3 s (a Stop held still); FAR keeps moving to the end of
    # its range (no Stop: it ran out of time).
    topic = "/vrpn_client_node/drone/pose"
    start, _ = _start(NEAR)
    path = [
        start,
        start + np.array((3, 0, 0)),
        start + np.array((3, 4, 0)),
        start + np.array((3, 4, 0)),
        start + np.array((3, 4, 0)),
        start + np.array((3, 4, 0.01)),
    ]
    messages = [
        (10.0 + i, topic, "geometry_msgs/msg/PoseStamped", pose_stamped(10.0 + i, tuple(p)))
        for i, p in enumerate(path)
    ]
    start_far, _ = _start(FAR)
    messages += [
        (
            20.0 + i,
            topic,
            "geometry_msgs/msg/PoseStamped",
            pose_stamped(20.0 + i, tuple(start_far + np.array((i, 0, 0)))),
        )
        for i in range(6)
    ]
    bag = write_robot_bag(tmp_path / "mocap", messages, storage="sqlite3")
    mapping = load_mapping(
        _mapping(
            tmp_path,
            {
                "pose": {"topic": topic, "frame": "map"},
                "stop": {"speed_below_mps": 0.1, "for_s": 2.0},
                "episodes": {
                    "ranges": [
                        {"episode_id": NEAR, "start_s": 0.0, "end_s": 5.0},  # bag starts at 10 s
                        {"episode_id": FAR, "start_s": 10.0, "end_s": 15.0},
                    ]
                },
            },
        )
    )
    replayed = score_mapped_bags([bag], mapping, RECORDS)
    scores = {s.episode_id: s for s in score_assembled(replayed.assembler, [3.0]).metrics.episodes}
    assert scores[NEAR].termination == "stopped"
    assert scores[NEAR].executed_length_m == pytest.approx(7.01)
    final = start + np.array((3, 4, 0.01))
    assert scores[NEAR].final_distance_m == pytest.approx(
        float(np.linalg.norm(final - _target(NEAR)))
    )
    assert scores[FAR].termination == "budget_exhausted"  # ended without a Stop
    assert scores[FAR].executed_length_m == pytest.approx(5.0)


def _tf_bag(path: Path, episode_start: np.ndarray, moves: int) -> Path:
    """``/tf`` only: a static ``world -> odom`` (odom at the start, turned 90 deg) and a moving
    ``odom -> base_link`` 1 m forward per second; one action and a stop on the robot's own
    topics."""
    messages = [
        (
            0.0,
            "/tf_static",
            "tf2_msgs/msg/TFMessage",
            tf_message(0.0, "world", "odom", tuple(episode_start), math.pi / 2),
        )
    ]
    for i in range(moves + 1):
        messages.append(
            (
                1.0 + i,
                "/tf",
                "tf2_msgs/msg/TFMessage",
                tf_message(1.0 + i, "odom", "base_link", (float(i), 0.0, 0.0), 0.0),
            )
        )
        if i:
            messages.append((1.0 + i - 0.1, "/drone/action", "std_msgs/msg/String", string("fwd")))
    messages.append((moves + 1.5, "/drone/stop", "std_msgs/msg/Bool", boolean(True)))
    return write_robot_bag(path, messages)


def test_tf_only_bags_one_episode_each_with_counted_actions(tmp_path: Path) -> None:
    near = _tf_bag(tmp_path / "near", _start(NEAR)[0], 5)
    far = _tf_bag(tmp_path / "far", _start(FAR)[0], 2)
    content = {
        "pose": {"tf": {"parent": "world", "child": "base_link"}, "frame": "map"},
        "stop": {"topic": "/drone/stop"},
        "actions": {"topic": "/drone/action"},
        "episodes": {"per_bag": [NEAR, FAR]},
    }
    mapping = load_mapping(_mapping(tmp_path, content))
    replayed = score_mapped_bags([near, far], mapping, RECORDS)
    scores = {s.episode_id: s for s in score_assembled(replayed.assembler, [3.0]).metrics.episodes}
    # odom is turned 90 deg: base_link's x is the map's y.
    final = _start(NEAR)[0] + np.array((0.0, 5.0, 0.0))
    assert scores[NEAR].executed_length_m == pytest.approx(5.0)
    assert scores[NEAR].final_distance_m == pytest.approx(
        float(np.linalg.norm(final - _target(NEAR)))
    )
    # per_bag episodes span the pose samples; the stop came after the last one.
    assert scores[NEAR].termination == "budget_exhausted"
    assert scores[NEAR].steps_used == 5 and scores[FAR].steps_used == 2


def test_the_action_budget_ends_an_episode(tmp_path: Path) -> None:
    records = {NEAR: RECORDS[NEAR] | {"action_budget": 3}}
    bag = _tf_bag(tmp_path / "bag", _start(NEAR)[0], 5)
    mapping = load_mapping(
        _mapping(
            tmp_path,
            {
                "pose": {"tf": {"parent": "world", "child": "base_link"}, "frame": "map"},
                "actions": {"topic": "/drone/action"},
                "episodes": {"per_bag": [NEAR]},
            },
        )
    )
    replayed = score_mapped_bags([bag], mapping, records)
    (trace,) = replayed.assembler.traces
    # The third action (at 3.9 s) exhausts the budget; poses up to it: 0, 1, 2 m.
    assert trace.termination == "budget_exhausted" and trace.steps_used == 3
    assert trace.path[-1][1] == pytest.approx(_start(NEAR)[0][1] + 2.0)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"pose": {"topic": "/odom", "frame": "anchored"}},
            "no /odom topic \\(robot.yaml pose.topic\\); the bag has /bumper, ",
        ),
        (
            {"collision": {"topic": "/contact"}},
            "no /contact topic \\(robot.yaml collision.topic\\)",
        ),
        ({"stop": {"topic": "/land"}}, "no /land topic \\(robot.yaml stop.topic\\)"),
        ({"actions": {"topic": "/cmd"}}, "no /cmd topic \\(robot.yaml actions.topic\\)"),
        ({"episodes": {"topic": "/state"}}, "no /state topic \\(robot.yaml episodes.topic\\)"),
        ({"pose": {"topic": "/mission/state"}}, "is std_msgs/msg/String, which holds no pose"),
        (
            {"collision": {"topic": "/bumper", "below": 0.5}},
            "collision.below: the topic is std_msgs/msg/Bool, which carries no number",
        ),
        (
            {"pose": {"tf": {"parent": "map", "child": "base_link"}}},
            "no /tf topic \\(robot.yaml pose.tf\\)",
        ),
    ],
)
def test_each_missing_topic_is_named_with_its_field(
    tmp_path: Path, change: dict[str, Any], message: str
) -> None:
    bag = _odometry_bag(tmp_path, "mcap")
    mapping = load_mapping(_mapping(tmp_path, ODOMETRY_MAPPING | change))
    with pytest.raises((BagError, ConfigError), match=message):
        score_mapped_bags([bag], mapping, RECORDS)


@pytest.mark.parametrize(
    ("tf", "message"),
    [
        (
            {"parent": "world", "child": "base_footprint"},
            "frame 'base_footprint' \\(robot.yaml pose.tf.child\\) is on neither /tf nor "
            "/tf_static; frames: base_link, odom, world",
        ),
        (
            {"parent": "map", "child": "base_link"},
            "frame 'map' \\(robot.yaml pose.tf.parent\\) is on neither",
        ),
        (
            {"parent": "base_link", "child": "odom"},
            "no chain of transforms from 'base_link' down to 'odom'",
        ),
    ],
)
def test_each_missing_frame_is_named(tmp_path: Path, tf: dict[str, str], message: str) -> None:
    bag = _tf_bag(tmp_path / "bag", _start(NEAR)[0], 2)
    mapping = load_mapping(
        _mapping(tmp_path, {"pose": {"tf": tf}, "episodes": {"per_bag": [NEAR]}})
    )
    with pytest.raises(BagError, match=message):
        score_mapped_bags([bag], mapping, RECORDS)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ({"episodes": {"per_bag": ["a"]}}, "robot.yaml: pose: required"),
        (
            {"pose": {"topic": "odom"}, "episodes": {"per_bag": ["a"]}},
            "pose.topic: a topic name starts with '/'",
        ),
        (
            {"pose": {"topic": "/o", "frame": "world"}, "episodes": {"per_bag": ["a"]}},
            "pose.frame: must be one of map, start, anchored",
        ),
        (
            {"pose": {"topic": "/o"}, "episodes": {"per_bag": ["a"], "ranges": []}},
            "episodes: give exactly one of topic",
        ),
        (
            {
                "pose": {"topic": "/o"},
                "episodes": {"ranges": [{"episode_id": "a", "start_s": 5, "end_s": 2}]},
            },
            "episodes.ranges\\[0\\].end_s: 2 must be after start_s 5",
        ),
        (
            {
                "pose": {"topic": "/o"},
                "stop": {"speed_below_mps": 0.1},
                "episodes": {"per_bag": ["a"]},
            },
            "stop: give topic, or speed_below_mps and for_s",
        ),
        (
            {"pose": {"topic": "/o"}, "episodes": {"per_bag": ["a"]}, "collisions": {}},
            "collisions: unknown field",
        ),
    ],
)
def test_mapping_mistakes_name_file_and_field(
    tmp_path: Path, content: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        load_mapping(_mapping(tmp_path, content))


def test_episodes_the_task_file_lacks_are_refused(tmp_path: Path) -> None:
    bag = _tf_bag(tmp_path / "bag", _start(NEAR)[0], 2)
    mapping = load_mapping(
        _mapping(
            tmp_path,
            {
                "pose": {"tf": {"parent": "world", "child": "base_link"}},
                "episodes": {"per_bag": ["no-such-episode"]},
            },
        )
    )
    with pytest.raises(ConfigError, match="episode 'no-such-episode' is not in the task file"):
        score_mapped_bags([bag], mapping, RECORDS)


def test_evaluate_bag_scores_a_robot_bag_from_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    bag = _odometry_bag(tmp_path, "mcap")
    mapping = _mapping(tmp_path, ODOMETRY_MAPPING)
    out = tmp_path / "scored"
    argv = ["evaluate-bag", str(bag), "--task", "aerialdojo_mini", "--map", str(mapping)]
    assert main([*argv, "--out", str(out), "--radius", "3"]) == 0
    data = json.loads((out / "metrics.json").read_text())
    assert sorted(e["episode_id"] for e in data["episodes"]) == sorted([NEAR, FAR])
    assert data["task_weighted"]["values"]["sr_3m"] == 0.5
    assert data["task_weighted"]["values"]["cr"] == 0.5
    assert main(["evaluate-bag", str(bag), "--map", str(mapping)]) == 2
    assert "--map needs --task" in capsys.readouterr().err


def test_compare_a_simulated_run_with_the_robots_bag_of_the_same_tasks(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    from eventstream import event

    from aerialdojo.events import EpisodeAssembler, EventKind
    from aerialdojo.protocols import trace_builder
    from aerialdojo.report.run import write_run

    # The simulated run: NEAR flown to 1 m from its target; FAR stopped at its start.
    simulated = EpisodeAssembler(trace_builder)
    for episode_id, end in (
        (NEAR, _target(NEAR) + np.array((1.0, 0.0, 0.0))),
        (FAR, _start(FAR)[0]),
    ):
        truth = json.dumps(RECORDS[episode_id])
        start = tuple(_start(episode_id)[0])
        simulated.add(event(EventKind.STARTED, episode_id, position=start, episode_json=truth))
        moved = {"position": tuple(end), "action": "MoveForward"}
        simulated.add(event(EventKind.STEP, episode_id, step=1, **moved))
        simulated.add(
            event(EventKind.STOPPED, episode_id, step=2, position=tuple(end), action="Stop")
        )
    write_run(tmp_path / "sim", score_assembled(simulated, [3.0]))
    bag = _odometry_bag(tmp_path, "mcap")
    mapping = _mapping(tmp_path, ODOMETRY_MAPPING)
    real = ["evaluate-bag", str(bag), "--task", "aerialdojo_mini", "--map", str(mapping)]
    assert main([*real, "--out", str(tmp_path / "real"), "--radius", "3"]) == 0
    capsys.readouterr()

    out = tmp_path / "sim_vs_real"
    compare = ["compare", str(tmp_path / "sim"), str(tmp_path / "real"), "--out", str(out)]
    assert main([*compare, "--task", "aerialdojo_mini"]) == 0
    printed = capsys.readouterr().out
    near_length = float(np.linalg.norm(_target(NEAR) - _start(NEAR)[0]))
    sim_near = float(np.linalg.norm(_target(NEAR) + np.array((1.0, 0.0, 0.0)) - _start(NEAR)[0]))
    row = next(line for line in printed.splitlines() if line.startswith(f"| {NEAR} |"))
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert float(cells[1]) == pytest.approx(sim_near, abs=0.01)  # path, sim
    assert float(cells[2]) == pytest.approx(near_length - 2.0, abs=0.01)  # path, robot
    assert float(cells[4]) == pytest.approx(1.0, abs=0.01)  # final distance, sim
    assert float(cells[5]) == pytest.approx(2.0, abs=0.01)  # final distance, robot
    assert cells[7:] == ["yes", "yes", "stopped / stopped"]
    far = next(line for line in printed.splitlines() if line.startswith(f"| {FAR} |"))
    assert far.endswith("| no | no | stopped / collided |")
    assert "overlay of 2 episode(s)" in printed
    from PIL import Image

    with Image.open(out / "overlay.png") as overlay:
        assert overlay.width > 800  # two panels side by side
    assert "![overlay](overlay.png)" in (out / "compare.md").read_text()


def test_an_air_ground_suite_is_refused_as_ground_truth(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    # AGOS-Bench scores the referee's facts (candidates, CONFIRM verdicts), not a pose.
    bag = _tf_bag(tmp_path / "bag", _start(NEAR)[0], 2)
    mapping = _mapping(
        tmp_path,
        {
            "pose": {"tf": {"parent": "world", "child": "base_link"}},
            "episodes": {"per_bag": [NEAR]},
        },
    )
    assert main(["evaluate-bag", str(bag), "--task", "agos_mini", "--map", str(mapping)]) == 2
    assert "AGOS-Bench episodes cannot be scored from a task file" in capsys.readouterr().err
