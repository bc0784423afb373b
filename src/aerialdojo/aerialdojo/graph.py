"""The evaluation node graph described by one config file: which nodes, where, with what.

``launch/eval.launch.py`` and ``aerialdojo eval`` both build their processes from
``node_specs``, so a ROS 2 user and a pip-only user run the same nodes with the same
parameters (a test holds them to it).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from aerialdojo.agents.vlm.transcript import TRANSCRIPTS_DIR
from aerialdojo.backends import (
    backend_venv,
    camera_views,
    runs_on_wall_clock,
    settings_problems,
)
from aerialdojo.documents import CONFIG, DocumentError, load_yaml, parse_yaml, write_atomic
from aerialdojo.errors import ConfigError
from aerialdojo.params import (
    NODE_PARAMETERS,
    ParamValue,
    recorded_views,
    validate_parameters,
    view_entry,
)
from aerialdojo.protocols.settings import aerialdojo_observation
from aerialdojo.run_contract import RUN_CONFIG

if TYPE_CHECKING:
    from aerialdojo.protocols import SuiteLike

PACKAGE = "aerialdojo"

#: Namespace of each node: agent stacks live under their agent's name (``/uav``), so the
#: same agent node subscribes to ``camera/front/image`` on a robot or in simulation.
NAMESPACES = {
    "sim_bridge": "",
    "task_manager": "",
    "evaluator": "",
    "uav_agent": "uav",
    "citynav_agent": "uav",
    "agos_uav_agent": "uav",
    "ugv_agent": "ugv",
    # The robot route (docs/robots.md): the simulated robot speaks its drivers' absolute
    # topics (/mavros/..., /fmu/..., /camera/...) as a real one does; the gate sits in the
    # agent's namespace, the operator's console beside the task manager.
    "sim_robot": "",
    "safety_gate": "uav",
    "operator_console": "",
}

#: Start order: the bridge and the task manager serve, the evaluator records, agents act.
START_ORDER = (
    "sim_robot",
    "safety_gate",
    "sim_bridge",
    "task_manager",
    "evaluator",
    "uav_agent",
    "citynav_agent",
    "agos_uav_agent",
    "ugv_agent",
    "operator_console",
)

#: The agent nodes that can run a model agent: their transcripts go into the run directory.
AGENT_NODES = ("uav_agent", "agos_uav_agent", "ugv_agent")

#: The nodes that act for an agent (they call ``/aerialdojo/step``), each in the namespace
#: its agent names (``NAMESPACES``).
ACTING_NODES = ("uav_agent", "citynav_agent", "agos_uav_agent", "ugv_agent")

#: The node that publishes the simulator's (or robot's) sensors.
BRIDGE_NODE = "sim_bridge"

#: The node that records and scores the run: a run starts only once it listens.
EVALUATOR_NODE = "evaluator"

#: The bridge owns the clock; every other node runs on simulation time, unless the bridge's
#: backend runs on the wall clock (a robot: ``backends.runs_on_wall_clock``).
CLOCK_OWNER = BRIDGE_NODE

#: Nodes that simulate a robot inside the graph: a graph with one needs no robot outside it.
SIMULATED_ROBOT_NODES = ("sim_robot",)

#: Nodes that read the task manager's suite (a site's geofence), set from it by
#: ``node_specs`` unless their config names another.
SUITE_READERS = ("evaluator", "sim_bridge", "safety_gate")

#: Topics of the ROS machinery and the high-rate clock, which a viewer of the run leaves out.
UNWATCHED_TOPICS = ("/rosout", "/parameter_events", "/clock")


@dataclass(frozen=True, kw_only=True)
class NodeSpec:
    """One process of the graph."""

    executable: str
    name: str
    namespace: str
    parameters: dict[str, ParamValue]

    @property
    def package(self) -> str:
        return PACKAGE


def load_config(
    path: Path,
    overrides: Mapping[str, Mapping[str, Any]] | None = None,
    source: str = "command line",
) -> dict[str, dict[str, ParamValue]]:
    """Read and validate a run config (nav2 style: node name -> ``ros__parameters``).

    Args:
        path: the config file.
        overrides: node -> parameter values replacing the file's (``section.key=value``
            on the command line or as launch arguments), validated like the file.
        source: what to name in problems of the overrides.

    Returns:
        node name -> validated parameters, in the file's order.

    Raises:
        ConfigError: unreadable or malformed file, unknown node or parameter, bad value;
            every problem of the file and the overrides at once, each naming where it
            came from and the ``node.parameter`` field.
    """
    config, problems = _load(path, overrides, source)
    if problems:
        raise ConfigError(*problems)
    return config


def _load(
    path: Path, overrides: Mapping[str, Mapping[str, Any]] | None, source: str
) -> tuple[dict[str, dict[str, ParamValue]], list[str]]:
    """``load_config`` without raising: the nodes whose parameters are valid, and every
    problem found (unreadable files raise: nothing else can be checked)."""
    try:
        document = load_yaml(path, CONFIG)
    except DocumentError as error:
        raise ConfigError(str(error)) from None
    if not isinstance(document, dict) or not document:
        raise ConfigError(f"{path}: expected a mapping of node names to ros__parameters")
    sections: dict[str, Mapping[str, Any]] = {}
    problems: list[str] = []
    for node, section in document.items():
        if node not in NODE_PARAMETERS:
            problems.append(f"{path}: unknown node {node!r}; known: {', '.join(NODE_PARAMETERS)}")
        elif not isinstance(section, dict) or not isinstance(
            section.get("ros__parameters", {}), dict
        ):
            problems.append(f"{path}: {node} must be a mapping with a ros__parameters mapping")
        elif unexpected := set(section) - {"ros__parameters"}:
            problems.append(
                f"{path}: {node}.{sorted(unexpected)[0]}: expected only ros__parameters"
            )
        else:
            sections[node] = section.get("ros__parameters") or {}
    problems += [
        f"{path}: the graph needs a {required} section"
        for required in ("sim_bridge", "task_manager", "evaluator")
        if required not in document
    ]
    config = _validated(sections, str(path), problems)
    for node, values in (overrides or {}).items():
        if node not in sections:
            problems.append(f"{source}: {node}: the config {path} has no {node} node")
            continue
        try:
            checked = validate_parameters(node, values, source)
        except ConfigError as error:
            problems.extend(error.problems)
            config.pop(node, None)
            continue
        if node in config:
            config[node].update(checked)
    if "sim_bridge" in config:
        where = f"{path} with the {source} overrides" if overrides else str(path)
        problems += _name_problems(config, where)
    return config, problems


def _validated(
    sections: Mapping[str, Mapping[str, Any]], source: str, problems: list[str]
) -> dict[str, dict[str, ParamValue]]:
    """Every node's parameters validated, each problem appended to ``problems``."""
    config: dict[str, dict[str, ParamValue]] = {}
    for node, values in sections.items():
        try:
            config[node] = validate_parameters(node, values, source)
        except ConfigError as error:
            problems.extend(error.problems)
    return config


#: Agents with nodes in this harness: a name outside these would never act or be recorded.
AGENTS = tuple(sorted(set(NAMESPACES.values()) - {""}))
#: The agent whose camera views each node's view list names.
_VIEW_LISTS = {("uav_agent", "views"): "uav"}


def _name_problems(config: Mapping[str, Mapping[str, ParamValue]], source: str) -> list[str]:
    """Agent and view names must be ones the graph publishes: a misspelt view would leave an
    agent waiting for frames that never come."""

    def value(node: str, name: str) -> Any:
        return config.get(node, {}).get(name, _default(node, name))

    bridged = [str(agent) for agent in value("sim_bridge", "agents")]
    problems = [
        f"{source}: {node}.{name}: {agent!r} is not an agent aerialdojo runs ({', '.join(AGENTS)})"
        for node, name in (("sim_bridge", "agents"), ("evaluator", "agents"))
        for agent in value(node, name)
        if agent not in AGENTS
    ]
    if problems:
        return problems
    backend = str(value("sim_bridge", "backend"))
    # The bridge's settings as the bridge will read them: every default, the suite the task
    # manager runs (node_specs gives it the same), the config's own values.
    bridge = {
        **{spec.name: spec.default for spec in NODE_PARAMETERS["sim_bridge"]},
        "suite": value("task_manager", "suite"),
        **config["sim_bridge"],
    }
    problems += [f"{source}: {problem}" for problem in settings_problems(backend, bridge)]
    try:
        views = camera_views(backend, bridged)
    except ConfigError as error:
        return [*problems, f"{source}: sim_bridge.agents: {error}"]
    if views is None:
        return problems
    for (node, name), agent in _VIEW_LISTS.items():
        if node not in config:
            continue
        known = sorted(views.get(agent, []))
        problems += [
            f"{source}: {node}.{name}: {view!r} is not a view of the "
            f"{agent} on the {backend} backend ({', '.join(known)})"
            for view in value(node, name)
            if view not in known
        ]
    if "evaluator" in config:
        problems += [
            f"{source}: {problem}"
            for problem in _recorded_view_problems(
                value("evaluator", "record_image_views"), _recorded_agents(config), views, backend
            )
        ]
    return problems


def _recorded_agents(config: Mapping[str, Mapping[str, ParamValue]]) -> list[str]:
    """The agents the evaluator records: its own list, else the bridge's, so that the two
    need not be kept equal."""
    agents: Any = config["evaluator"].get(
        "agents", config["sim_bridge"].get("agents", _default("evaluator", "agents"))
    )
    return [str(agent) for agent in agents]


def _recorded_view_problems(
    entries: Sequence[str], agents: Sequence[str], views: Mapping[str, list[str]], backend: str
) -> list[str]:
    """Each recorded view must be one its agents publish: a topic no bridge publishes would
    hold the recording's start back and be counted lost at every step."""
    problems = []
    for entry in entries:
        owner, view = view_entry(entry)
        if owner and owner not in agents:
            problems.append(
                f"evaluator.record_image_views: {entry!r} names the {owner}, which "
                f"evaluator.agents does not record ({', '.join(agents)})"
            )
            continue
        for agent in [owner] if owner else agents:
            if view not in views.get(agent, []):
                hint = "" if owner else "; name one agent's view as agent/view"
                problems.append(
                    f"evaluator.record_image_views: {view!r} is not a view of the {agent} on "
                    f"the {backend} backend ({', '.join(sorted(views.get(agent, [])))}){hint}"
                )
    return problems


def apply_overrides(
    config: Mapping[str, Mapping[str, ParamValue]],
    overrides: Mapping[str, Mapping[str, Any]],
    source: str = "command line",
) -> dict[str, dict[str, ParamValue]]:
    """Return ``config`` with per-node parameter overrides applied and validated."""
    merged = {node: dict(values) for node, values in config.items()}
    for node, values in overrides.items():
        if node not in merged:
            raise ConfigError(f"{source}: the config has no {node} node to override")
        merged[node].update(validate_parameters(node, values, source))
    return merged


def node_specs(config: Mapping[str, Mapping[str, ParamValue]]) -> list[NodeSpec]:
    """The processes of the graph, in start order, with their full parameter sets."""
    specs = []
    backend = str(config["sim_bridge"].get("backend", _default("sim_bridge", "backend")))
    wall_clock = runs_on_wall_clock(backend)
    for node in START_ORDER:
        if node not in config:
            continue
        declared = {spec.name: spec.default for spec in NODE_PARAMETERS[node]}
        if node == "evaluator":
            declared["agents"] = _recorded_agents(config)
        if node in AGENT_NODES:
            # Model transcripts belong to the run, beside its bag and report.
            evaluator = config["evaluator"]
            run_id = str(evaluator.get("run_id", _default("evaluator", "run_id")))
            output_dir = str(evaluator.get("output_dir", _default("evaluator", "output_dir")))
            declared["transcript_dir"] = (
                str(Path(output_dir) / run_id / TRANSCRIPTS_DIR) if run_id else ""
            )
        if node in SUITE_READERS:
            # The report's maps draw the reference paths of the suite the task manager runs;
            # a robot's bridge and gate keep inside its site's geofence.
            declared["suite"] = config["task_manager"].get(
                "suite", _default("task_manager", "suite")
            )
        if node == "operator_console":
            # The console shows the robots the bridge drives, where their odometry says.
            for name, source in (("agents", "agents"), ("odometry_topic", "robot_odometry_topic")):
                declared[name] = config["sim_bridge"].get(source, _default("sim_bridge", source))
        if node == "uav_agent" and "sim_bridge" in config:
            # The prompt states the collision radius the bridge simulates, not a constant.
            declared["collision_radius_m"] = config["sim_bridge"].get(
                "agent_radius_m", _default("sim_bridge", "agent_radius_m")
            )
        if node == "uav_agent" and "task_manager" in config:
            # Only the views the task gives the policy (task_manager.observation; the rest
            # never reach it): each other view's image, depth and camera info would cross DDS
            # and be deserialized in the agent every step for nothing.
            # (task_manager.observation defaults to the paper's view, as this does.)
            views, _ = aerialdojo_observation(config["task_manager"])
            declared["views"] = list(views)
        if node in ("uav_agent", "citynav_agent"):
            # The oracle replays the suite the task manager serves unless told another.
            declared["oracle_suite"] = config["task_manager"].get(
                "suite", _default("task_manager", "suite")
            )
        # Every parameter explicit, so both entry points pass the same complete set; empty
        # lists are left to the node's default because rcl cannot carry them.
        parameters = {
            name: value for name, value in {**declared, **config[node]}.items() if value != []
        }
        # A robot's world has no simulated clock: every node runs on the wall clock then.
        parameters["use_sim_time"] = not wall_clock and node != CLOCK_OWNER
        specs.append(
            NodeSpec(executable=node, name=node, namespace=NAMESPACES[node], parameters=parameters)
        )
    return specs


def drives_robots(specs: Sequence[NodeSpec]) -> bool:
    """Whether the graph's bridge drives robots (its backend runs on the wall clock)."""
    bridge = next((spec for spec in specs if spec.name == BRIDGE_NODE), None)
    return bridge is not None and runs_on_wall_clock(str(bridge.parameters.get("backend", "")))


def needs_robot_domain(specs: Sequence[NodeSpec]) -> bool:
    """Whether the graph drives robots outside it (no simulated robot among its nodes): it
    must join the DDS domain the robots' drivers use, never a private one."""
    names = {spec.name for spec in specs}
    return drives_robots(specs) and not names & set(SIMULATED_ROBOT_NODES)


#: The operator's console of a robot run (``aerialdojo console``).
CONSOLE_NODE = "operator_console"


def console_spec(
    config_path: Path, overrides: Mapping[str, Mapping[str, Any]] | None = None
) -> NodeSpec:
    """The operator's console of the run ``config_path`` describes, with the parameters the
    graph would give it (its section of the config, where there is one).

    Raises:
        ConfigError: a bad config file or override.
    """
    config = load_config(config_path)
    config.setdefault(CONSOLE_NODE, {})
    config = apply_overrides(config, overrides or {}, "command line")
    return next(spec for spec in node_specs(config) if spec.name == CONSOLE_NODE)


def selected_episodes(suite: SuiteLike, task_manager: Mapping[str, ParamValue]) -> list[str]:
    """The episode ids a task manager with these parameters runs, in order.

    Args:
        suite: the task manager's suite.
        task_manager: its parameters (``episodes``, ``filter``, ``max_episodes``; missing
            ones take their defaults).

    Raises:
        ConfigError: an unknown or repeated id in ``episodes`` (a repeat would run an
            episode twice in one run), or a bad filter.
    """

    def value(name: str) -> Any:
        return task_manager.get(name, _default("task_manager", name))

    explicit = [str(episode_id) for episode_id in value("episodes")]
    if explicit:
        repeated = sorted({e for e in explicit if explicit.count(e) > 1})
        if repeated:
            raise ConfigError(f"task_manager.episodes: {', '.join(repeated)} listed twice")
        for episode_id in explicit:
            try:
                suite.episode(episode_id)
            except KeyError as error:
                raise ConfigError(f"task_manager.episodes: {error.args[0]}") from None
        selection = explicit
    else:
        try:
            selection = suite.select(str(value("filter")))
        except ConfigError as error:
            # The suites' messages start "filter '<text>': ..."; name the field instead.
            raise ConfigError(f"task_manager.{error}") from None
    limit = int(value("max_episodes"))
    return selection[:limit] if limit else selection


def _default(node: str, name: str) -> ParamValue:
    return next(spec.default for spec in NODE_PARAMETERS[node] if spec.name == name)


def default_config() -> Path:
    """The shipped ``config/eval.yaml`` (AerialDojo on the embedded simulator): the checkout's
    when this package runs from one, else the installed package's share directory."""
    checkout = Path(__file__).resolve().parents[3]
    if (checkout / "src" / PACKAGE / PACKAGE).is_dir():
        return checkout / "config" / "eval.yaml"
    from ament_index_python.packages import get_package_share_directory  # noqa: PLC0415

    return Path(get_package_share_directory(PACKAGE)) / "config" / "eval.yaml"


#: ``section.key=value``: a node's parameter set on the command line or as a launch argument.
_OVERRIDE = re.compile(r"(?P<node>[a-z_]+)\.(?P<name>[a-z0-9_]+)=(?P<value>.*)", re.DOTALL)


def is_override(text: str) -> bool:
    """Whether a command-line word has the ``section.key=value`` form."""
    return _OVERRIDE.fullmatch(text) is not None


def parse_overrides(
    texts: Sequence[str], source: str = "command line", problems: list[str] | None = None
) -> dict[str, dict[str, Any]]:
    """Parameter overrides from ``section.key=value`` words (hydra style).

    A value is read as YAML, as in the config file: ``policy=oracle`` is a string,
    ``success_radii_m=[3,5]`` a list, ``odometry=true`` a boolean.

    Args:
        texts: the words.
        source: what to name in problems.
        problems: where to append problems instead of raising them (the words that parse
            are returned either way).

    Returns:
        node -> parameter -> value, for ``load_config``/``run_specs`` to validate.

    Raises:
        ConfigError: a word not of that form or a value that is not YAML (all of them),
            unless ``problems`` collects them.
    """
    overrides: dict[str, dict[str, Any]] = {}
    found: list[str] = []
    for text in texts:
        match = _OVERRIDE.fullmatch(text)
        if match is None:
            found.append(f"{source}: {text!r} is not section.key=value (e.g. uav_agent.seed=3)")
            continue
        where = f"{source}: {match['node']}.{match['name']}"
        try:
            value = parse_yaml(match["value"], CONFIG, where) if match["value"] else ""
        except DocumentError as error:
            found.append(str(error))
            continue
        overrides.setdefault(match["node"], {})[match["name"]] = value
    if problems is not None:
        problems += found
    elif found:
        raise ConfigError(*found)
    return overrides


def default_run_id() -> str:
    """A run directory name from the current UTC time, e.g. ``20261129-221500``."""
    return datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")


def discovery_of(specs: Sequence[NodeSpec]) -> str:
    """Where the nodes of ``specs`` find each other (``task_manager.discovery``; the default
    for part of a graph without its task manager)."""
    chosen = [spec.parameters.get("discovery") for spec in specs if spec.name == "task_manager"]
    return str(chosen[0] if chosen and chosen[0] else _default("task_manager", "discovery"))


def run_dir_of(specs: Sequence[NodeSpec]) -> Path:
    """The directory the evaluator of ``specs`` writes the run into."""
    evaluator = next(spec for spec in specs if spec.name == "evaluator").parameters
    return Path(str(evaluator["output_dir"])) / str(evaluator["run_id"])


def claim_run_dir(run_dir: Path, *, named: str | None) -> str:
    """Create the run directory, atomically, so that no run writes into another's (its logs,
    parameter files and config.yaml would be overwritten, its bag refused only after every
    node started). A run id the user chose (``named``: how, e.g. ``--run-id r1``) must be
    free; a default (timestamp) one taken by a run started in the same second gets ``-2``,
    ``-3``... Returns the run id claimed.

    Raises:
        ConfigError: the chosen run directory exists, or cannot be created.
    """
    base, number = run_dir.name, 1
    while True:
        run_id = base if number == 1 else f"{base}-{number}"
        try:
            (run_dir.parent / run_id).mkdir(parents=True)
        except FileExistsError:
            if named:
                raise ConfigError(
                    f"{named}: the run directory {run_dir} exists already; choose another "
                    "run id, or leave it out for a fresh one"
                ) from None
            number += 1
            continue
        except OSError as error:
            raise ConfigError(
                f"evaluator.output_dir: cannot create the run directory {run_dir}: "
                f"{error.strerror or error}"
            ) from error
        return run_id


def run_specs(
    config_path: Path,
    *,
    run_id: str,
    output_dir: str | None = None,
    episodes: int | None = None,
    episode_ids: Sequence[str] = (),
    replay_transcripts: str | None = None,
    source: str = "command line",
    overrides: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[NodeSpec]:
    """The node specs of one run: the config file plus the options every entry point offers.

    Args:
        config_path: the run config.
        run_id: name of the run directory under the evaluator's ``output_dir``.
        output_dir: replaces the config's evaluator ``output_dir`` when given.
        episodes: caps the task manager's selection (``max_episodes``) when given.
        episode_ids: run exactly these episodes when given (e.g. a rerun of failures).
        replay_transcripts: a recorded run directory whose model replies the agents replay.
        source: what to name in errors about the options.
        overrides: node -> parameter values replacing the file's (``parse_overrides``).

    Raises:
        ConfigError: a bad config file or option.
    """
    options: dict[str, dict[str, Any]] = {"evaluator": {"run_id": run_id}}
    if output_dir:
        options["evaluator"]["output_dir"] = output_dir
    config, problems = _load(config_path, overrides, source)
    if episodes is not None and episodes < 1:
        # max_episodes 0 means every selected episode: a run asked for 0 would run them all.
        problems.append(f"{source}: episodes {episodes}: must be at least 1")
    elif episodes is not None:
        options.setdefault("task_manager", {})["max_episodes"] = episodes
    if episode_ids:
        options.setdefault("task_manager", {})["episodes"] = list(episode_ids)
    if replay_transcripts:
        agents = [node for node in AGENT_NODES if node in config]
        if not agents:
            problems.append(f"{config_path}: --replay-transcripts needs an agent node")
        for node in agents:
            options[node] = {"replay_transcripts": replay_transcripts}
    try:
        merged = apply_overrides(
            config, {node: values for node, values in options.items() if node in config}, source
        )
    except ConfigError as error:
        problems += error.problems
        merged = config
    if "task_manager" in merged:
        # The suite and the selection (filter, episode ids) are checked with the rest, so
        # one pass names every mistake, even when other nodes have some too.
        problems += selection_problems(merged, str(config_path))
    if problems:
        raise ConfigError(*problems)
    return node_specs(merged)


def selection_problems(config: Mapping[str, Mapping[str, ParamValue]], source: str) -> list[str]:
    """Load the suite and select its episodes as the task manager will, so that a bad suite,
    a bad filter, an unknown or repeated episode id, or an episode needing an agent the bridge
    does not publish is named here, with file and field, rather than in a node's log.

    Args:
        config: validated parameters by node (``task_manager`` at least; without a valid
            ``sim_bridge`` the agents it publishes are not checked).
        source: the config file, named in every problem.
    """
    from aerialdojo.errors import AerialDojoError  # noqa: PLC0415
    from aerialdojo.protocols import load_suite  # noqa: PLC0415
    from aerialdojo.tasks.suite import resolve_suite  # noqa: PLC0415

    task_manager = config["task_manager"]
    suite_name = str(task_manager.get("suite", _default("task_manager", "suite")))
    try:
        _, suite = load_suite(resolve_suite(suite_name))
    except AerialDojoError as error:
        return [f"{source}: task_manager.suite: {error}"]
    try:
        selection = selected_episodes(suite, task_manager)
    except ConfigError as error:
        return [f"{source}: {problem}" for problem in error.problems]
    if "sim_bridge" not in config:
        return []
    bridged = set(config["sim_bridge"].get("agents", _default("sim_bridge", "agents")))  # type: ignore[arg-type]
    problems = []
    for episode_id in selection:
        missing = sorted(set(suite.episode(episode_id).agents) - bridged)
        if missing:
            problems.append(
                f"{source}: sim_bridge.agents: episode {episode_id} needs {', '.join(missing)}, "
                f"which the bridge does not publish"
            )
    return problems


def config_of(specs: Sequence[NodeSpec]) -> dict[str, dict[str, dict[str, ParamValue]]]:
    """The run config that ``node_specs`` turns back into ``specs`` (saved with every run so
    that it can be repeated or its failures rerun)."""
    return {
        spec.name: {
            "ros__parameters": {
                name: value for name, value in spec.parameters.items() if name != "use_sim_time"
            }
        }
        for spec in specs
    }


#: Actions per episode the bag estimate assumes: AerialDojo-200K's budget (most end sooner).
ESTIMATED_ACTIONS_PER_EPISODE = 90
#: Bytes per action besides images: the events, odometry, ground-truth poses and /tf.
_STATE_BYTES_PER_ACTION = 4096
#: How much smaller a recorded image gets (rendered scenes, measured roughly: PNG about a
#: third of the raw size, JPEG about a tenth).
_COMPRESSION_RATIO = {"none": 1.0, "png": 3.0, "jpeg": 10.0}


def estimated_bag_bytes(specs: Sequence[NodeSpec], episodes: int) -> int:
    """About how large the bag of ``episodes`` episodes of this graph gets: the recorded
    views' images at the bridge's size, decimation and compression, plus the state every
    action records, at ``ESTIMATED_ACTIONS_PER_EPISODE`` actions an episode."""
    parameters = {spec.name: spec.parameters for spec in specs}

    def value(node: str, name: str) -> Any:
        return parameters.get(node, {}).get(name, _default(node, name))

    decimation = int(value("evaluator", "image_decimation"))
    image_bytes = 0.0
    if decimation and value("evaluator", "record_bag"):
        views = recorded_views(
            value("evaluator", "record_image_views"), value("evaluator", "agents")
        )
        pixels = int(value(BRIDGE_NODE, "image_width")) * int(value(BRIDGE_NODE, "image_height"))
        ratio = _COMPRESSION_RATIO[str(value("evaluator", "image_compression"))]
        image_bytes = len(views) / decimation * pixels * 3 / ratio
    per_action = image_bytes + _STATE_BYTES_PER_ACTION
    return int(episodes * ESTIMATED_ACTIONS_PER_EPISODE * per_action)


def write_run_config(run_dir: Path, specs: Sequence[NodeSpec], origin: str) -> None:
    """Save the run's config (``RUN_CONFIG``) in its directory, whichever entry point started
    it, so that ``aerialdojo rerun`` can repeat it: every parameter as the nodes run, headed
    by ``origin`` (the command and its overrides).

    Raises:
        ConfigError: the file cannot be written (the output directory names the field).
    """
    header = f"# {origin}; every parameter as the nodes ran\n" if origin else ""
    try:
        write_atomic(
            run_dir / RUN_CONFIG, header + yaml.safe_dump(config_of(specs), sort_keys=False)
        )
    except OSError as error:
        raise ConfigError(
            f"evaluator.output_dir: cannot write {run_dir / RUN_CONFIG}: {error.strerror or error}"
        ) from error


def node_interpreter(spec: NodeSpec, root: Path | None = None) -> Path | None:
    """The Python a node must run on when it is not this venv's: a bridge on a real
    simulator's backend runs in that backend's own venv (its client's dependencies clash
    with the main venv's, docs/simulators.md).

    Args:
        spec: the node.
        root: the repository holding the backend venvs; default ``$AERIALDOJO_ROOT`` (set by
            tools/run.sh) or the working directory.

    Raises:
        ConfigError: the backend's venv does not exist.
    """
    backend = spec.parameters.get("backend") if spec.name == CLOCK_OWNER else None
    venv = backend_venv(str(backend)) if backend is not None else None
    if venv is None:
        return None
    base = root or Path(os.environ.get("AERIALDOJO_ROOT", Path.cwd()))
    python = base / venv / "bin" / "python"
    if not python.exists():
        raise ConfigError(
            f"sim_bridge.backend {backend!r} runs in {base / venv}, which does not exist; "
            f"create it with tools/bootstrap_backend.sh {venv.removeprefix('.venv-')}"
        )
    return python
