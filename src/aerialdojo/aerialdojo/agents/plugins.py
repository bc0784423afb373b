"""Policies by name: the shipped ones, the model agent, or any class implementing the
``Policy`` protocol named as ``package.module:ClassName`` (bring your own policy)."""

from __future__ import annotations

import importlib
import inspect
import re
from collections.abc import Callable
from typing import Any

from aerialdojo.agents.observation import Policy
from aerialdojo.errors import ConfigError
from aerialdojo.params import PLUGIN_PATTERN


def is_plugin_name(name: str) -> bool:
    """Whether ``name`` has the form ``package.module:ClassName``."""
    return re.fullmatch(PLUGIN_PATTERN, name) is not None


def load_policy_class(name: str, where: str) -> Callable[..., Any]:
    """Import the class ``package.module:ClassName`` and check that it is a ``Policy``.

    Args:
        name: the ``policy`` parameter.
        where: what to name in errors, e.g. ``"uav_agent.policy"``.

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
            f"{where}: {name} does not implement the Policy protocol "
            f"(aerialdojo.agents.observation.Policy): no {' or '.join(missing)}() method"
        )
    return cls


def make_plugin_policy(name: str, seed: int, where: str) -> Policy:
    """An instance of the plug-in class: called with ``seed=`` when its constructor takes a
    ``seed`` argument, else with no argument.

    Raises:
        ConfigError: as ``load_policy_class``, or a constructor that needs other arguments.
    """
    cls = load_policy_class(name, where)
    try:
        takes_seed = "seed" in inspect.signature(cls).parameters
        policy: Policy = cls(seed=seed) if takes_seed else cls()
    except TypeError as error:
        raise ConfigError(
            f"{where}: {name} cannot be constructed without arguments: {error}"
        ) from error
    return policy


#: The ``uav_agent.policy`` names besides ``package.module:ClassName``.
UAV_POLICIES = ("colour_seeker", "vlm")


def uav_policy(values: dict[str, Any], where: str) -> Policy:
    """The policy a ``uav_agent`` node's parameters name.

    Args:
        values: the node's parameters (``policy``, ``seed``, ``vlm_*``, ...).
        where: the node name, for errors.

    Raises:
        ConfigError: a policy that cannot be built, naming ``<where>.<parameter>``.
    """
    # Imported here: the model agent pulls in the openai SDK, which other policies never need.
    from aerialdojo.agents.colour_seeker import ColourSeekerPolicy  # noqa: PLC0415
    from aerialdojo.agents.vlm.aerialdojo_policy import (  # noqa: PLC0415
        TEMPLATE_FIELDS,
        VlmAerialDojoPolicy,
        parse_fallback,
    )
    from aerialdojo.agents.vlm.config import VlmSettings  # noqa: PLC0415
    from aerialdojo.agents.vlm.prompts import PromptSet, prompt_directory  # noqa: PLC0415

    name, seed = str(values["policy"]), int(values["seed"])
    if name == "colour_seeker":
        return ColourSeekerPolicy(seed=seed)
    if name != "vlm":
        return make_plugin_policy(name, seed, f"{where}.policy")
    settings = VlmSettings.from_parameters(values, where)
    try:
        fallback = parse_fallback(settings.fallback)
    except ConfigError as error:
        raise ConfigError(f"{where}.{error}") from error
    return VlmAerialDojoPolicy(
        session=settings.session("uav"),
        prompts=PromptSet.load(
            prompt_directory(settings.prompt_dir, "aerialdojo"), TEMPLATE_FIELDS
        ),
        views=settings.views,
        image_format=settings.image_format,
        depth_max_m=settings.depth_max_m,
        history=settings.history,
        fallback=fallback,
    )
