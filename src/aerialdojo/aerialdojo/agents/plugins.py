"""The policy registry: which policy family each agent node runs (``NODE_POLICIES``), and
its policies by name: the shipped ones, the model agents, or any class implementing the
node's protocol (``Policy`` for ``uav_agent`` and ``citynav_agent``,
``agos.policies.AgosPolicy`` for the AGOS nodes) named as ``package.module:ClassName`` (bring
your own policy).

It sits with the other registries, above the policies and benchmarks it builds
(``docs/architecture.md``, "Layers"); it imports a policy's module only when that policy is
chosen, so a node loads only what it runs (the model agents pull in the openai SDK).
"""

from __future__ import annotations

import functools
import importlib
import inspect
import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from aerialdojo.agents.observation import Policy
from aerialdojo.errors import ConfigError

if TYPE_CHECKING:
    from aerialdojo.agos.policies import AgosPolicy

#: A bring-your-own policy class, ``package.module:ClassName`` (the parameter table checks
#: the agent nodes' ``policy`` against it).
PLUGIN_PATTERN = r"[A-Za-z_][\w.]*:[A-Za-z_]\w*"


def is_plugin_name(name: str) -> bool:
    """Whether ``name`` has the form ``package.module:ClassName``."""
    return re.fullmatch(PLUGIN_PATTERN, name) is not None


#: The protocol each kind of agent node runs, as errors name it.
POLICY_PROTOCOL = "aerialdojo.agents.observation.Policy"
AGOS_POLICY_PROTOCOL = "aerialdojo.agos.policies.AgosPolicy"


def load_policy_class(name: str, where: str, protocol: str = POLICY_PROTOCOL) -> Callable[..., Any]:
    """Import the class ``package.module:ClassName`` and check that it has the policy
    protocol's ``reset`` and ``act``.

    Args:
        name: the ``policy`` parameter.
        where: what to name in errors, e.g. ``"uav_agent.policy"``.
        protocol: the protocol the node runs, for errors.

    Raises:
        ConfigError: malformed name, module or class missing, or no ``reset``/``act``.
    """
    if not is_plugin_name(name):
        raise ConfigError(f"{where}: {name!r} is not of the form package.module:ClassName")
    module_name, _, class_name = name.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise ConfigError(f"{where}: cannot import module {module_name!r}: {error}") from error
    cls = getattr(module, class_name, None)
    if not inspect.isclass(cls):
        raise ConfigError(f"{where}: module {module_name!r} has no class {class_name!r}")
    missing = [method for method in ("reset", "act") if not callable(getattr(cls, method, None))]
    if missing:
        raise ConfigError(
            f"{where}: {name} does not implement the policy protocol {protocol}: "
            f"no {' or '.join(missing)}() method"
        )
    return cls


def make_plugin_policy(name: str, seed: int, where: str, protocol: str = POLICY_PROTOCOL) -> Any:
    """An instance of the plug-in class: called with ``seed=`` when its constructor takes a
    ``seed`` argument, else with no argument.

    Raises:
        ConfigError: as ``load_policy_class``, or a constructor that needs other arguments.
    """
    cls = load_policy_class(name, where, protocol)
    try:
        takes_seed = "seed" in inspect.signature(cls).parameters
        policy = cls(seed=seed) if takes_seed else cls()
    except TypeError as error:
        raise ConfigError(
            f"{where}: {name} cannot be constructed without arguments: {error}"
        ) from error
    return policy


#: The AGOS agent nodes and the agent each acts for.
AGOS_NODES = {"agos_uav_agent": "uav", "ugv_agent": "ugv"}


def uav_policy(values: Mapping[str, Any], where: str) -> Policy:
    """The policy a ``uav_agent`` node's parameters name.

    Args:
        values: the node's parameters (``policy``, ``seed``, ``oracle_suite``, ``vlm_*``, ...).
        where: the node name, for errors.

    Raises:
        ConfigError: a policy that cannot be built, naming ``<where>.<parameter>``.
    """
    name = str(values["policy"])
    if name == "colour_seeker":
        from aerialdojo.agents.colour_seeker import ColourSeekerPolicy  # noqa: PLC0415

        return ColourSeekerPolicy(seed=int(values["seed"]))
    if name == "vlm":
        # Imported here: the model agent pulls in the openai SDK, which other policies never
        # need.
        from aerialdojo.agents.vlm.aerialdojo_policy import vlm_aerialdojo_policy  # noqa: PLC0415

        return vlm_aerialdojo_policy(values, where)
    return _replay_or_plugin(values, where)


#: The ``citynav_agent`` policies that act on the geographic semantic map the node builds
#: (``citynav.policies``), not through the ``Policy`` protocol.
CITYNAV_MAP_POLICIES = ("gsm", "colour")


def citynav_policy(values: Mapping[str, Any], where: str) -> Policy | None:
    """The ``Policy`` a ``citynav_agent`` node's parameters name (the oracle or a plug-in,
    given the nadir view and the map-frame pose); None for ``CITYNAV_MAP_POLICIES``.

    Raises:
        ConfigError: a plug-in that cannot be built, naming ``<where>.policy``.
    """
    if values["policy"] in CITYNAV_MAP_POLICIES:
        return None
    return _replay_or_plugin(values, where)


def _replay_or_plugin(values: Mapping[str, Any], where: str) -> Policy:
    """The oracle (``policy: oracle``) or the ``package.module:ClassName`` plug-in."""
    name = str(values["policy"])
    if name == "oracle":
        return reference_replay(str(values["oracle_suite"]))
    plugin: Policy = make_plugin_policy(name, int(values["seed"]), f"{where}.policy")
    return plugin


def reference_replay(suite: str) -> Policy:
    """The oracle, replaying the reference actions of ``suite`` (a shipped name or a path)
    of any benchmark whose episodes carry them.

    Raises:
        ConfigError: no such suite, or a suite without reference actions.
        TaskFileError: the suite is invalid.
    """
    from aerialdojo.agents.oracle import ReferenceReplayPolicy  # noqa: PLC0415
    from aerialdojo.protocols import load_suite  # noqa: PLC0415 - loads the benchmarks
    from aerialdojo.tasks.suite import resolve_suite  # noqa: PLC0415

    return ReferenceReplayPolicy(load_suite(resolve_suite(suite))[1], suite)


def agos_policy(agent: str, values: Mapping[str, Any], where: str) -> AgosPolicy:
    """The policy an AGOS agent node's parameters name.

    Args:
        agent: ``uav`` or ``ugv``.
        values: the node's parameters (``policy``, ``seed``, ``vlm_*``, ...).
        where: the node name, for errors.

    Raises:
        ConfigError: a policy that cannot be built, naming ``<where>.<parameter>``.
    """
    from aerialdojo.agos.policies import ColourShapeUav, ColourShapeUgv  # noqa: PLC0415

    name, seed = str(values["policy"]), int(values["seed"])
    if name == "colour_shape":
        return ColourShapeUav(seed=seed) if agent == "uav" else ColourShapeUgv(seed=seed)
    if name != "vlm":
        plugin: AgosPolicy = make_plugin_policy(name, seed, f"{where}.policy", AGOS_POLICY_PROTOCOL)
        return plugin
    from aerialdojo.agents.vlm.agos_policy import vlm_agos_policy  # noqa: PLC0415

    return vlm_agos_policy(agent, values, where)


#: The policy family each agent node runs, by node name: how it builds its policy from its
#: parameters and its name for errors (None: a node that acts on its own map, CityNav's
#: ``CITYNAV_MAP_POLICIES``).
NODE_POLICIES: dict[str, Callable[[Mapping[str, Any], str], Policy | AgosPolicy | None]] = {
    "uav_agent": uav_policy,
    "citynav_agent": citynav_policy,
    **{node: functools.partial(agos_policy, agent) for node, agent in AGOS_NODES.items()},
}
#: Every agent node that builds its policy here.
POLICY_NODES = tuple(NODE_POLICIES)


def agent_policy(node: str, values: Mapping[str, Any], where: str) -> Policy | AgosPolicy | None:
    """The policy of the agent node ``node`` (one of ``POLICY_NODES``), built from its
    parameters: how ``aerialdojo eval`` checks a config's policies before anything starts.

    Raises:
        ConfigError: a node that runs no policy here, or as ``uav_policy``,
            ``citynav_policy`` and ``agos_policy``.
    """
    build = NODE_POLICIES.get(node)
    if build is None:
        raise ConfigError(f"{where}: {node} runs no policy; agent nodes: {', '.join(POLICY_NODES)}")
    return build(values, where)


def policy_identity(policy: object) -> dict[str, Any]:
    """What an agent node announces about its policy besides its name
    (``AgentNode.announce``): whether it reads ground truth and its own description (e.g. the
    model and server of a model agent; never a key)."""
    return {
        "privileged": bool(getattr(policy, "privileged", False)),
        "description": str(getattr(policy, "description", "")),
    }
