"""The simulator backend registry: each backend registers once what the stack needs of it.

A ``BackendEntry`` names the backend's class, the venv its client lives in, a check of its
settings that needs no client, and its scene source (what draws a scene for maps and
overviews). The bridge builds its backend through ``create_backend``, config checks ask
``camera_views``, the runner asks ``backend_venv`` and reports ask ``load_scene``: none of
them compares backend names. Entries hold dotted references, not classes, so that looking a
backend up imports nothing: the embedded simulator pulls in Embree, and each remote client
lives only in its own venv.

A new backend is one module with a ``sim.backend.SimulatorBackend`` subclass (implementing
``from_options``) plus one ``register`` call: in this package, an entry in
``BUILTIN_BACKENDS``; elsewhere, an entry point in the ``aerialdojo.backends`` group whose
object is a ``BackendEntry``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any, cast

from aerialdojo.errors import ConfigError, UnknownSceneError
from aerialdojo.sim.backend import BackendOptions, SimulatorBackend

if TYPE_CHECKING:
    from aerialdojo.sim.embedded.world import EmbeddedScene

#: Entry-point group through which other packages register backends.
ENTRY_POINT_GROUP = "aerialdojo.backends"


@dataclass(frozen=True, kw_only=True)
class BackendEntry:
    """One simulator backend, as the registry knows it.

    Attributes:
        name: the bridge's ``backend`` parameter value.
        backend: ``"module:Class"`` of its ``SimulatorBackend`` subclass.
        description: one line for ``aerialdojo params`` and error messages.
        venv: the venv (relative to the repository) its client lives in, where it cannot
            share the main venv; None: the main venv. Its class imports only there.
        check_parameters: ``"module:callable"`` that validates the bridge's parameters
            without the client (raises ``ConfigError``), so a bad setting is reported even
            where the client is missing; None: nothing to check first.
        scenes: ``"module:callable"`` loading one of its scenes by name for maps and
            overviews (raises ``UnknownSceneError``); None: its scenes cannot be drawn here.
        transport: ``"module:callable"`` in ``aerialdojo.nodes`` building, from the bridge's
            node, the ROS half the backend reaches its world through (handed to it as
            ``BackendOptions.transport``); None: the backend needs no ROS.
        wall_clock: the backend's world runs in real time (a robot): no simulated clock is
            published and every node of the graph runs on wall time.
        client_module: the module of the client that talks to its simulator server, which
            ``aerialdojo doctor`` checks; None: no server to check.
    """

    name: str
    backend: str
    description: str
    venv: str | None = None
    check_parameters: str | None = None
    scenes: str | None = None
    transport: str | None = None
    wall_clock: bool = False
    client_module: str | None = None


#: The backends shipped with aerialdojo.
BUILTIN_BACKENDS = (
    BackendEntry(
        name="embedded",
        backend="aerialdojo.sim.embedded.backend:EmbeddedBackend",
        description="procedural AerialDojo scenes rendered with Embree (no GPU)",
        scenes="aerialdojo.sim.embedded.scenes:load_scene",
    ),
    BackendEntry(
        name="agos",
        backend="aerialdojo.agos.backend:AgosBackend",
        description="AGOS-Bench towns and actions on the embedded simulator",
        scenes="aerialdojo.agos.town:town_scene",
    ),
    BackendEntry(
        name="citynav",
        backend="aerialdojo.citynav.backend:CityNavBackend",
        description="CityNav's embedded cities: nadir camera, GNSS odometry",
        scenes="aerialdojo.citynav.city:city_scene",
    ),
    BackendEntry(
        name="pointcloud",
        backend="aerialdojo.sim.pointcloud:PointCloudBackend",
        description="coloured point clouds such as SensatUrban's",
    ),
    BackendEntry(
        name="projectairsim",
        backend="aerialdojo.sim.projectairsim:ProjectAirSimBackend",
        description="a ProjectAirSim server",
        venv=".venv-projectairsim",
        check_parameters="aerialdojo.sim.remote.settings:ProjectAirSimSettings.from_parameters",
        client_module="projectairsim",
    ),
    BackendEntry(
        name="carla_air",
        backend="aerialdojo.sim.carla_air:CarlaAirBackend",
        description="a CARLA-Air server (CARLA for the world and the UGV, AirSim for the UAV)",
        venv=".venv-carla-air",
        check_parameters="aerialdojo.sim.remote.settings:CarlaAirSettings.from_parameters",
        client_module="airsim",
    ),
    BackendEntry(
        name="robot",
        backend="aerialdojo.robot.backend:RobotBackend",
        description="robots (or the simulated robot) through one safety gate per agent, "
        "observations relayed from their drivers (docs/robots.md)",
        check_parameters="aerialdojo.robot.settings:RobotSettings.from_parameters",
        transport="aerialdojo.nodes.robot_link:RosVehicleTransport",
        wall_clock=True,
    ),
)

_REGISTRY: dict[str, BackendEntry] = {}
_entry_points_loaded = False


def register(entry: BackendEntry) -> None:
    """Make ``entry`` known by its name.

    Raises:
        ConfigError: another backend already has that name.
    """
    known = _REGISTRY.get(entry.name)
    if known is not None and known != entry:
        raise ConfigError(f"simulator backend {entry.name!r} is registered twice")
    _REGISTRY[entry.name] = entry


def _load_entry_points() -> None:
    global _entry_points_loaded  # noqa: PLW0603 - loaded once per process
    if _entry_points_loaded:
        return
    _entry_points_loaded = True
    for point in entry_points(group=ENTRY_POINT_GROUP):
        entry = point.load()
        if not isinstance(entry, BackendEntry):
            raise ConfigError(
                f"entry point {point.name!r} of {ENTRY_POINT_GROUP} is not a BackendEntry"
            )
        register(entry)


def backend_names() -> tuple[str, ...]:
    """Every registered backend's name, built-in ones first."""
    _load_entry_points()
    return tuple(_REGISTRY)


def backend_entry(name: str) -> BackendEntry:
    """The backend called ``name``.

    Raises:
        ConfigError: no backend of that name.
    """
    _load_entry_points()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ConfigError(
            f"unknown simulator backend {name!r}; known: {', '.join(_REGISTRY)}"
        ) from None


def _resolve(reference: str) -> Any:
    """The object a ``"module:attribute.path"`` reference names (importing the module)."""
    module_name, _, path = reference.partition(":")
    target: Any = importlib.import_module(module_name)
    for attribute in path.split("."):
        target = getattr(target, attribute)
    return target


def _backend_class(entry: BackendEntry) -> type[SimulatorBackend]:
    try:
        return cast("type[SimulatorBackend]", _resolve(entry.backend))
    except ModuleNotFoundError as error:
        if entry.venv is None:
            raise
        raise ConfigError(
            f"backend {entry.name!r} needs the {error.name!r} client, which lives in "
            f"{entry.venv}: create it with tools/bootstrap_backend.sh "
            f"{entry.venv.removeprefix('.venv-')} and run the bridge with "
            f"{entry.venv}/bin/python"
        ) from error


def backend_venv(name: str) -> str | None:
    """The venv backend ``name``'s client lives in; None: the main venv.

    Raises:
        ConfigError: no backend of that name.
    """
    return backend_entry(name).venv


def camera_views(name: str, agents: Sequence[str]) -> dict[str, list[str]] | None:
    """The view names of each agent's camera rig on backend ``name``, for checking a config
    before anything starts; None for backends whose classes load only in their own venvs
    (their bridge checks at start).

    Raises:
        ConfigError: an unknown backend, or an agent the backend has no rig for.
    """
    entry = backend_entry(name)
    if entry.venv is not None:
        return None
    rigs = _backend_class(entry).camera_rigs(agents, 1, 1, 90.0)
    return {agent: [camera.name for camera in rig] for agent, rig in rigs.items()}


def settings_problems(name: str, parameters: Mapping[str, Any]) -> list[str]:
    """What is wrong with the bridge's ``parameters`` for backend ``name``, checked without
    its client (its registry entry's ``check_parameters``): empty when nothing is.

    Raises:
        ConfigError: no backend of that name.
    """
    entry = backend_entry(name)
    if entry.check_parameters is None:
        return []
    try:
        cast("Callable[[Mapping[str, Any]], object]", _resolve(entry.check_parameters))(parameters)
    except ConfigError as error:
        return list(error.problems)
    return []


def create_backend(name: str, options: BackendOptions) -> SimulatorBackend:
    """Build the backend called ``name`` with its own camera rig for each of the options'
    agents.

    Raises:
        ConfigError: no backend of that name, bad settings, an agent the backend has no rig
            for, or a client that is not importable (the bridge runs in the wrong venv).
    """
    entry = backend_entry(name)
    if entry.check_parameters is not None:
        # Settings first: a bad parameter is reported even where the client is missing.
        cast("Callable[[Mapping[str, Any]], object]", _resolve(entry.check_parameters))(
            options.parameters
        )
    return _backend_class(entry).from_options(options)


def build_transport(name: str, host: object) -> object | None:
    """The ROS half backend ``name`` reaches its world through, built on ``host`` (the
    bridge's node), for ``BackendOptions.transport``; None for a backend that needs none.

    Raises:
        ConfigError: no backend of that name.
    """
    entry = backend_entry(name)
    if entry.transport is None:
        return None
    return cast("Callable[[object], object]", _resolve(entry.transport))(host)


def runs_on_wall_clock(name: str) -> bool:
    """Whether backend ``name``'s world runs in real time (a robot): the graph then has no
    simulated clock.

    Raises:
        ConfigError: no backend of that name.
    """
    return backend_entry(name).wall_clock


def load_scene(scene: str) -> EmbeddedScene | None:
    """The scene called ``scene`` from the first backend whose scene source knows it, for
    maps and overviews; None where no registered source knows it (a GPU simulator's world,
    a real site)."""
    for entry in (_REGISTRY[name] for name in backend_names()):
        if entry.scenes is None:
            continue
        try:
            return cast("EmbeddedScene", _resolve(entry.scenes)(scene))
        except UnknownSceneError:
            continue
    return None


for _entry in BUILTIN_BACKENDS:
    register(_entry)
