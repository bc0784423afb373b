"""Run configs: validated before any process starts, errors name file and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from aerialdojo.errors import ConfigError
from aerialdojo.graph import apply_overrides, load_config, node_specs
from aerialdojo.params import NODE_PARAMETERS, recorded_views


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "run.yaml"
    path.write_text(text)
    return path


MINIMAL = """
sim_bridge: {ros__parameters: {image_width: 64}}
task_manager: {ros__parameters: {suite: aerialdojo_mini}}
evaluator: {ros__parameters: {}}
uav_agent: {ros__parameters: {seed: 3}}
"""


def test_shipped_config_is_valid(repo: Path) -> None:
    config = load_config(repo / "config" / "eval.yaml")
    assert set(config) == {"sim_bridge", "task_manager", "uav_agent", "evaluator"}


def test_node_specs_put_agents_in_their_namespace_and_on_sim_time(tmp_path: Path) -> None:
    specs = {spec.name: spec for spec in node_specs(load_config(_write(tmp_path, MINIMAL)))}
    assert list(specs) == ["sim_bridge", "task_manager", "evaluator", "uav_agent"]
    assert specs["uav_agent"].namespace == "uav"
    assert specs["uav_agent"].parameters["seed"] == 3
    assert specs["uav_agent"].parameters["use_sim_time"] is True
    assert specs["uav_agent"].parameters["policy"] == "colour_seeker"  # defaults explicit
    assert "episodes" not in specs["task_manager"].parameters  # empty list: node default
    assert specs["sim_bridge"].parameters["use_sim_time"] is False
    assert specs["sim_bridge"].parameters["image_width"] == 64


@pytest.mark.parametrize(
    ("task_manager", "uav_agent", "views"),
    [
        ("{}", "{}", ["front"]),  # the protocol's setting: the front view
        ("{observation: four_views}", "{}", ["front", "left", "right", "down"]),
        ("{}", "{views: [front, down]}", ["front", "down"]),  # the config's own choice wins
    ],
)
def test_the_uav_agent_subscribes_to_the_views_the_task_gives_it(
    tmp_path: Path, task_manager: str, uav_agent: str, views: list[str]
) -> None:
    text = (
        "sim_bridge: {ros__parameters: {}}\n"
        f"task_manager: {{ros__parameters: {task_manager}}}\n"
        "evaluator: {ros__parameters: {}}\n"
        f"uav_agent: {{ros__parameters: {uav_agent}}}\n"
    )
    specs = {spec.name: spec for spec in node_specs(load_config(_write(tmp_path, text)))}
    assert specs["uav_agent"].parameters["views"] == views


def test_overrides_are_validated_like_the_file(tmp_path: Path) -> None:
    config = load_config(_write(tmp_path, MINIMAL))
    merged = apply_overrides(config, {"task_manager": {"max_episodes": 3}})
    assert merged["task_manager"]["max_episodes"] == 3
    with pytest.raises(ConfigError, match=r"command line: task_manager.max_episodes: -1"):
        apply_overrides(config, {"task_manager": {"max_episodes": -1}})


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("sim_bridge: [1, 2\n", "line 2 column 1: not YAML"),
        ("- a list\n", "expected a mapping of node names"),
        (MINIMAL + "planner: {ros__parameters: {}}\n", "unknown node 'planner'"),
        (
            MINIMAL.replace("image_width: 64", "image_widht: 64"),
            r"sim_bridge.image_widht is not a parameter of sim_bridge",
        ),
        (MINIMAL.replace("image_width: 64", "image_width: '64'"), r"image_width: expected int"),
        (MINIMAL.replace("image_width: 64", "image_width: 0"), r"image_width: 0 is below"),
        (MINIMAL.replace("image_width: 64", "backend: unreal"), r"'unreal' is not one of"),
        (MINIMAL.replace("seed: 3", "use_sim_time: false"), r"use_sim_time is set by aerialdojo"),
        (
            MINIMAL.replace("{ros__parameters: {}}", "{ros__parameters: {record_image_views: []}}"),
            r"evaluator.record_image_views: an empty list",
        ),
        (
            MINIMAL.replace(
                "{ros__parameters: {}}", "{ros__parameters: {success_radii_m: [0.0, 5.0]}}"
            ),
            r"evaluator.success_radii_m: 0.0 must be greater than 0",
        ),
        (MINIMAL.replace("image_width: 64", "fov_deg: .nan"), r"fov_deg: nan is not a finite"),
        (
            MINIMAL.replace("image_width: 64", "seconds_per_action: .inf"),
            r"seconds_per_action: inf is not a finite",
        ),
        (
            MINIMAL.replace(
                "{ros__parameters: {}}", "{ros__parameters: {success_radii_m: [3, x]}}"
            ),
            r"evaluator.success_radii_m\[1\]: expected float",
        ),
        # Issue 15, row 7: values that passed validation and killed a node later.
        (
            MINIMAL.replace("image_width: 64", "seed: 100000000000000000000"),
            r"sim_bridge.seed: 100000000000000000000 does not fit the 64-bit integer",
        ),
        (
            MINIMAL.replace("suite: aerialdojo_mini", "sim_timeout_s: .inf"),
            r"task_manager.sim_timeout_s: inf is not a finite",
        ),
        (
            MINIMAL.replace("image_width: 64", "agents: [uav, drone]"),
            r"sim_bridge.agents: 'drone' is not an agent aerialdojo runs \(uav, ugv\)",
        ),
        (
            MINIMAL.replace("seed: 3", "views: [front, back]"),
            r"uav_agent.views: 'back' is not a view of the uav on the embedded backend "
            r"\(down, front, left, right\)",
        ),
        (
            MINIMAL.replace(
                "{ros__parameters: {}}", "{ros__parameters: {record_image_views: [rear]}}"
            ),
            r"evaluator.record_image_views: 'rear' is not a view",
        ),
        (MINIMAL.replace("evaluator: {ros__parameters: {}}", ""), "needs a evaluator section"),
        (
            MINIMAL.replace("suite: aerialdojo_mini", "mode: baseline, ablation: no_rgpp"),
            r"task_manager.ablation: ablation 'no_rgpp' removes AGOS-Agent tools; the baseline",
        ),
        (MINIMAL.replace("suite: aerialdojo_mini", "observation: all"), r"'all' is not one of"),
        (MINIMAL.replace("{ros__parameters: {}}", "{params: {}}"), "expected only ros__parameters"),
    ],
)
def test_malformed_configs_name_file_and_field(tmp_path: Path, text: str, fragment: str) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(ConfigError, match=fragment) as error:
        load_config(path)
    assert str(path) in str(error.value)


def test_a_binary_config_file_is_refused_with_its_name(tmp_path: Path) -> None:
    # Issue 15, row 8: a raw UnicodeDecodeError traceback.
    path = tmp_path / "run.yaml"
    path.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(ConfigError, match=r"run.yaml: not a text file"):
        load_config(path)


def test_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"missing.yaml: cannot read: No such file or directory"):
        load_config(tmp_path / "missing.yaml")


def test_every_parameter_is_documented_and_its_default_valid() -> None:
    for node, specs in NODE_PARAMETERS.items():
        for spec in specs:
            assert spec.description, f"{node}.{spec.name} has no description"
            if spec.default != []:
                assert spec.check(spec.default, f"{node}.{spec.name}") == spec.default


def test_a_repeated_or_unknown_episode_id_is_refused_before_start() -> None:
    # Issue 15, row 1: a duplicate id in task_manager.episodes hung the run.
    from aerialdojo.graph import selected_episodes
    from aerialdojo.protocols import load_suite
    from aerialdojo.tasks.suite import resolve_suite

    _, suite = load_suite(resolve_suite("aerialdojo_mini"))
    first, second = suite.select()[:2]
    assert selected_episodes(suite, {"episodes": [second, first]}) == [second, first]
    assert selected_episodes(suite, {"max_episodes": 1}) == [first]
    with pytest.raises(ConfigError, match=f"task_manager.episodes: {first} listed twice"):
        selected_episodes(suite, {"episodes": [first, second, first]})
    with pytest.raises(ConfigError, match=r"task_manager.episodes: suite .*: no episode 'nope'"):
        selected_episodes(suite, {"episodes": ["nope"]})


@pytest.mark.parametrize(
    ("views", "fragment"),
    [
        (
            "[down, front]",
            r"'front' is not a view of the uav on the agos backend \(down\); "
            r"name one agent's view as agent/view",
        ),
        ("[uav/down, ugv/down]", r"'down' is not a view of the ugv on the agos backend"),
        ("[uav/down, dog/front]", r"'dog/front' names the dog, which evaluator.agents does not"),
    ],
)
def test_recorded_views_are_views_their_agents_publish(
    repo: Path, tmp_path: Path, views: str, fragment: str
) -> None:
    """A recorded topic no bridge publishes would hold the recording's start back and be
    counted lost at every step: refused before anything starts."""
    text = (repo / "config" / "agos.yaml").read_text()
    assert "record_image_views: [uav/down, ugv/front]" in text
    path = _write(tmp_path, text.replace("[uav/down, ugv/front]", views))
    with pytest.raises(ConfigError, match=fragment):
        load_config(path)


def test_agent_view_entries_name_one_agents_view() -> None:
    assert recorded_views(["down", "ugv/ring_back"], ["uav", "ugv"]) == [
        ("uav", "down"),
        ("ugv", "down"),
        ("ugv", "ring_back"),
    ]
    assert recorded_views(["front", "uav/front"], ["uav"]) == [("uav", "front")]
