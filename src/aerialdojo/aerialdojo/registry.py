"""A registry of named entries that other packages extend through an entry-point group:
what the vehicle adapters (``robot.vehicles``) are found by. Entries name their code by
dotted reference (``"module:attribute"``), so a lookup imports nothing it does not need."""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points
from typing import Any, Generic, Protocol, TypeVar

from aerialdojo.errors import ConfigError


class Named(Protocol):
    """What an entry needs: a name."""

    @property
    def name(self) -> str: ...


EntryT = TypeVar("EntryT", bound=Named)


class NamedRegistry(Generic[EntryT]):
    """Entries by name: the built-in ones first, then those of the entry-point group (loaded
    on the first lookup).

    Args:
        kind: what an entry is, for messages (e.g. ``"vehicle adapter"``).
        entry_type: the entries' class (an entry point's object must be one).
        group: the entry-point group other packages register through.
    """

    def __init__(self, kind: str, entry_type: type[EntryT], group: str) -> None:
        self._kind = kind
        self._entry_type = entry_type
        self._group = group
        self._entries: dict[str, EntryT] = {}
        self._entry_points_loaded = False

    def register(self, entry: EntryT) -> None:
        """Make ``entry`` known by its name.

        Raises:
            ConfigError: another entry already has that name.
        """
        known = self._entries.get(entry.name)
        if known is not None and known != entry:
            raise ConfigError(f"{self._kind} {entry.name!r} is registered twice")
        self._entries[entry.name] = entry

    def names(self) -> tuple[str, ...]:
        """Every registered name, built-in ones first."""
        self._load_entry_points()
        return tuple(self._entries)

    def entry(self, name: str) -> EntryT:
        """The entry called ``name``.

        Raises:
            ConfigError: none of that name.
        """
        self._load_entry_points()
        try:
            return self._entries[name]
        except KeyError:
            raise ConfigError(
                f"unknown {self._kind} {name!r}; known: {', '.join(self._entries)}"
            ) from None

    def _load_entry_points(self) -> None:
        if self._entry_points_loaded:
            return
        self._entry_points_loaded = True
        for point in entry_points(group=self._group):
            entry = point.load()
            if not isinstance(entry, self._entry_type):
                raise ConfigError(
                    f"entry point {point.name!r} of {self._group} is not a "
                    f"{self._entry_type.__name__}"
                )
            self.register(entry)


def resolve(reference: str) -> Any:
    """The object a ``"module:attribute.path"`` reference names (importing the module)."""
    module_name, _, path = reference.partition(":")
    target: Any = importlib.import_module(module_name)
    for attribute in path.split("."):
        target = getattr(target, attribute)
    return target
