"""Task generation on the embedded simulator: reference views, recordings, replayed suites."""

from __future__ import annotations

import filecmp
from pathlib import Path

import numpy as np
import pytest
from rosbags.highlevel import AnyReader
from rosbags.typesys import Stores, get_typestore
from task_worlds import replay

from aerialdojo.sim.backend import aerialdojo_uav_rig
from aerialdojo.sim.embedded.backend import EmbeddedBackend
from aerialdojo.sim.embedded.renderer import render_views
from aerialdojo.sim.embedded.scenes import EmbeddedScene, load_scene
from aerialdojo.tasks.embedded import generate_suite, reference_view, reference_viewpoint
from aerialdojo.tasks.recording import image_topic, record_reference
from aerialdojo.tasks.suite import load_suite, validate_suite

SCENE = "Park_1"


@pytest.fixture(scope="module")
def park() -> EmbeddedScene:
    return load_scene(SCENE, 0)


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("generated")
    return generate_suite(
        [SCENE], out, name="park", seed=3, per_scene=3, max_candidates=40, image_size=48
    )


def test_reference_view_shows_its_target_more_than_any_other_object(park: EmbeddedScene) -> None:
    for target in park.annotations.objects:
        pose, spec = reference_viewpoint(target, 64)
        frame = render_views(park, pose, [spec], with_ground_truth_ids=True)[spec.name]
        assert frame.instance_ids is not None
        ids, counts = np.unique(frame.instance_ids[frame.instance_ids > 0], return_counts=True)
        share = dict(zip(ids.tolist(), (counts / frame.instance_ids.size).tolist(), strict=True))
        # Open frames (swing sets) leave much background; still nothing else dominates.
        assert share.get(target.instance_id, 0.0) >= 0.02, target.object_id
        assert max(share, key=share.__getitem__) == target.instance_id, target.object_id
        image = reference_view(park, target, 64)
        assert image.shape == (64, 64, 3) and image.dtype == np.uint8
        np.testing.assert_array_equal(image, frame.rgb)


def test_generated_suite_validates_and_replays_in_the_simulator(generated: Path) -> None:
    assert validate_suite(generated) == []
    suite = load_suite(generated)
    assert len(suite.episodes) == 6
    assert suite.generation.reference_image is not None
    assert suite.generation.reference_image.width == 48
    replay(
        suite,
        EmbeddedBackend(
            rigs={"uav": aerialdojo_uav_rig(8, 8)},
            seed=0,
            agent_radius_m=suite.generation.collision_radius_m,
        ),
    )


def test_generation_is_the_same_whatever_the_number_of_ray_workers(tmp_path: Path) -> None:
    scenes = [SCENE, "Desert_1"]
    suites = [
        generate_suite(scenes, tmp_path / f"w{workers}", name="two", seed=3, per_scene=2,
                       max_candidates=20, image_size=32, workers=workers)
        for workers in (1, 2)
    ]  # fmt: skip
    assert suites[0].read_text() == suites[1].read_text()
    assert {e.scene for e in load_suite(suites[0]).episodes} == set(scenes)
    for scene in scenes:
        comparison = filecmp.dircmp(*(path.parent / "images" / scene for path in suites))
        assert comparison.left_only == comparison.right_only == comparison.diff_files == []


def test_recording_holds_every_view_at_every_reference_pose(
    park: EmbeddedScene, generated: Path, tmp_path: Path
) -> None:
    episode = load_suite(generated).episodes[0]
    rig = aerialdojo_uav_rig(24, 16)
    bag = record_reference(
        episode,
        lambda pose: render_views(park, pose, rig, with_ground_truth_ids=False),
        tmp_path / "bag",
    )
    assert (bag / "metadata.yaml").is_file()
    assert list(bag.glob("*.mcap"))
    poses = episode.reference.poses
    last = poses[-1]
    expected_last = render_views(park, last, rig, with_ground_truth_ids=False)
    with AnyReader([bag], default_typestore=get_typestore(Stores.ROS2_JAZZY)) as reader:
        topics = {connection.topic for connection in reader.connections}
        assert topics == {
            image_topic("uav", spec.name, kind) for spec in rig for kind in ("image", "depth")
        }
        counts: dict[str, int] = {}
        for connection, timestamp, raw in reader.messages():
            message = reader.deserialize(raw, connection.msgtype)
            step = counts.get(connection.topic, 0)
            counts[connection.topic] = step + 1
            assert timestamp == step * 1_000_000_000
            assert (message.header.stamp.sec, message.header.stamp.nanosec) == (step, 0)
            assert (message.height, message.width) == (16, 24)
            view, kind = connection.topic.split("/")[3:5]
            assert message.header.frame_id == f"{view}_optical_frame"
            if step == len(poses) - 1:
                if kind == "image":
                    assert message.encoding == "rgb8"
                    pixels = message.data.reshape(16, 24, 3)
                    np.testing.assert_array_equal(pixels, expected_last[view].rgb)
                else:
                    assert message.encoding == "32FC1"
                    depth = message.data.view(np.float32).reshape(16, 24)
                    np.testing.assert_array_equal(depth, expected_last[view].depth)
        assert set(counts.values()) == {len(poses)}
