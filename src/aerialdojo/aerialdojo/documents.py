"""Every file a user hands aerialdojo, read with bounds, and a run's records written whole.

Configs and their command-line values, suites, site and mapping files, trajectory logs,
metrics files and run records are read here, each kind with its ``Limits``: at most so many
bytes (``/dev/zero`` is refused, not read until memory runs out), nested at most so deep
(Python's own parsers recurse, and so do the checks after them) and, for YAML, at most so
many aliases and so many nodes once aliases are expanded (a 578-byte alias bomb expands to
billions). A refusal is a ``DocumentError`` naming the file and the reason; nothing else
escapes from parsing.

Run records (``run_status.json``, ``metrics.json``) are written atomically: a reader, a
rerun or a full disk never leaves half a file (``write_atomic``).
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from aerialdojo.errors import AerialDojoError

MIB = 2**20


@dataclass(frozen=True)
class Limits:
    """What one kind of document may be.

    Attributes:
        kind: what the document is, in refusals ("run config").
        max_bytes: the largest file read.
        max_depth: the deepest nesting of lists and mappings.
        max_aliases: YAML aliases (``*name``) allowed; 0: none.
        max_nodes: YAML nodes once every alias is expanded.
    """

    kind: str
    max_bytes: int
    max_depth: int = 32
    max_aliases: int = 0
    max_nodes: int = 1_000_000


#: A run config, and each ``NODE.PARAM=VALUE`` value of the command line or launch arguments.
CONFIG = Limits("run config", MIB, max_depth=32, max_aliases=100, max_nodes=100_000)
#: A robot bag's mapping file (``evaluate-bag --map``).
MAPPING = Limits("bag mapping", MIB, max_depth=32, max_aliases=100, max_nodes=100_000)
#: A surveyed site (``site.yaml``): written by hand, no aliases (docs/sites.md).
SITE = Limits("site file", MIB, max_depth=32)
#: A task suite (every benchmark's): 200,000 episodes fit.
SUITE = Limits("task suite", 512 * MIB, max_depth=32)
#: A run's records: ``metrics.json``, ``run_status.json``, ``sharding.json``, an episode
#: record; the JSON carried by a bag's events.
RECORD = Limits("run record", 512 * MIB, max_depth=32)
#: One line of a JSON-lines file (trajectory log, transcript).
LINE = Limits("JSON line", 16 * MIB, max_depth=32)


class DocumentError(AerialDojoError):
    """A document that was refused or could not be parsed.

    Attributes:
        source: the file (or ``command line: node.param``) it came from.
        reason: why, e.g. ``more than 100 YAML aliases``.
    """

    def __init__(self, source: str, reason: str) -> None:
        self.source = source
        self.reason = reason
        super().__init__(f"{source}: {reason}")


def read_bytes(path: Path, limits: Limits, source: str | None = None) -> bytes:
    """The bytes of ``path``, refused beyond ``limits.max_bytes`` without reading further.

    Raises:
        DocumentError: unreadable, a directory, or too large.
    """
    label = source or str(path)
    try:
        with path.open("rb") as stream:
            data = stream.read(limits.max_bytes + 1)
    except IsADirectoryError:
        raise DocumentError(label, f"is a directory, not a {limits.kind}") from None
    except OSError as error:
        raise DocumentError(label, f"cannot read: {error.strerror or error}") from error
    if len(data) > limits.max_bytes:
        raise DocumentError(
            label, f"larger than a {limits.kind} can be ({_size(limits.max_bytes)})"
        )
    return data


def read_text(path: Path, limits: Limits, source: str | None = None) -> str:
    """``read_bytes`` as UTF-8 text.

    Raises:
        DocumentError: as ``read_bytes``, or not UTF-8.
    """
    return decode_text(read_bytes(path, limits, source), source or str(path))


def load_yaml(path: Path, limits: Limits, source: str | None = None) -> Any:
    """The YAML document of ``path`` (safe types only), within ``limits``.

    Raises:
        DocumentError: unreadable, too large, not UTF-8, not YAML, too deep, too many
            aliases or too many nodes once they are expanded.
    """
    label = source or str(path)
    return parse_yaml(read_text(path, limits, label), limits, label)


def parse_yaml(
    text: str, limits: Limits, source: str, loader: type[BoundedLoader] | None = None
) -> Any:
    """The YAML document ``text`` (safe types only), within ``limits``.

    Args:
        text: the document.
        limits: its bounds (``max_bytes`` applies to the UTF-8 text).
        source: what refusals name.
        loader: a ``BoundedLoader`` subclass with other resolvers (site files keep dates
            as text); default ``BoundedLoader``.

    Raises:
        DocumentError: as ``load_yaml``.
    """
    if len(text) > limits.max_bytes:  # characters: a cheap bound before encoding
        raise DocumentError(
            source, f"larger than a {limits.kind} can be ({_size(limits.max_bytes)})"
        )
    reader = None
    try:
        reader = (loader or BoundedLoader)(text, limits)  # checks the characters already
        return reader.get_single_data()
    except _Refused as error:
        raise DocumentError(source, f"{_where(error)}{error.problem}") from None
    except yaml.MarkedYAMLError as error:
        raise DocumentError(source, f"{_where(error)}not YAML: {error.problem or error}") from None
    except (yaml.YAMLError, ValueError, TypeError, RecursionError) as error:
        # ValueError: an integer longer than Python converts; TypeError: an unhashable key.
        raise DocumentError(source, f"not YAML: {error}") from None
    finally:
        if reader is not None:
            reader.dispose()


class BoundedLoader(yaml.SafeLoader):
    """PyYAML's SafeLoader with ``Limits``: it counts depth, aliases and the nodes each
    alias stands for while composing, and stops at the first bound crossed, before anything
    is built (a shared node built once would still expand wherever it is walked)."""

    def __init__(self, text: str, limits: Limits) -> None:
        super().__init__(text)
        self._limits = limits
        self._depth = 0
        self._aliases = 0
        self._expanded: dict[int, int] = {}  # id(node) -> nodes it stands for, expanded

    def compose_node(self, parent: Any, index: Any) -> Any:
        limits = self._limits
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()  # type: ignore[no-untyped-call]
            self._aliases += 1
            if self._aliases > limits.max_aliases:
                self._refuse(
                    f"more than {limits.max_aliases} aliases (*name) in a {limits.kind}"
                    if limits.max_aliases
                    else f"aliases (*name) are not allowed in a {limits.kind}",
                    event,
                )
            anchored = self.anchors.get(event.anchor)
            if anchored is not None and id(anchored) not in self._expanded:
                self._refuse(f"alias *{event.anchor} refers to a node that contains it", event)
            return super().compose_node(parent, index)
        self._depth += 1
        if self._depth > limits.max_depth:
            self._refuse(
                f"nested deeper than a {limits.kind} can be ({limits.max_depth} levels)",
                self.peek_event(),  # type: ignore[no-untyped-call]
            )
        try:
            node = super().compose_node(parent, index)
        finally:
            self._depth -= 1
        children: list[Any] = []
        if isinstance(node, yaml.SequenceNode):
            children = node.value
        elif isinstance(node, yaml.MappingNode):
            children = [part for pair in node.value for part in pair]
        size = 1 + sum(self._expanded.get(id(child), 1) for child in children)
        if size > limits.max_nodes:
            self._refuse(
                f"expands to more than {limits.max_nodes:,} nodes (its aliases repeat what "
                "they refer to)",
                node,
            )
        self._expanded[id(node)] = size
        return node

    def _refuse(self, reason: str, where: Any) -> None:
        raise _Refused(problem=reason, problem_mark=where.start_mark)


class _Refused(yaml.MarkedYAMLError):
    """A bound of ``Limits`` crossed while composing."""


def _where(error: yaml.MarkedYAMLError) -> str:
    mark = error.problem_mark
    return f"line {mark.line + 1} column {mark.column + 1}: " if mark else ""


def load_json(path: Path, limits: Limits, source: str | None = None) -> Any:
    """The JSON document of ``path``, within ``limits``; NaN and infinities are refused
    (JSON has none).

    Raises:
        DocumentError: unreadable, too large, not UTF-8, not JSON, or too deep.
    """
    label = source or str(path)
    return parse_json(read_bytes(path, limits, label), limits, label)


def parse_json(data: bytes | str, limits: Limits, source: str) -> Any:
    """The JSON document ``data``, within ``limits`` (see ``load_json``).

    Raises:
        DocumentError: as ``load_json``.
    """
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if len(raw) > limits.max_bytes:
        raise DocumentError(
            source, f"larger than a {limits.kind} can be ({_size(limits.max_bytes)})"
        )
    depth = json_depth(raw)
    if depth > limits.max_depth:
        raise DocumentError(
            source, f"nested {depth} levels deep; a {limits.kind} has at most {limits.max_depth}"
        )
    text = data if isinstance(data, str) else decode_text(data, source)
    try:
        return json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as error:
        raise DocumentError(
            source, f"line {error.lineno} column {error.colno}: not JSON: {error.msg}"
        ) from None
    except (ValueError, RecursionError) as error:  # a number longer than Python converts
        raise DocumentError(source, f"not JSON: {error}") from None


def _refuse_constant(name: str) -> float:
    raise ValueError(f"{name} is not a JSON number")


#: Bytes of a JSON document scanned at a time by ``json_depth``.
_SCAN_BLOCK = 16 * MIB
_QUOTE, _OPENS, _CLOSES = ord('"'), (ord("["), ord("{")), (ord("]"), ord("}"))


def json_depth(data: bytes) -> int:
    """How deeply the lists and objects of a JSON document nest, found without parsing it
    (Python's parser recurses once per level): brackets outside strings, counted in
    blocks. Exact for valid JSON; invalid JSON is refused by the parser anyway."""
    text = data.replace(b"\\\\", b"").replace(b'\\"', b"")  # escapes hide no quote
    codes = np.frombuffer(text, dtype=np.uint8)
    inside, depth, deepest = 0, 0, 0
    for start in range(0, codes.size, _SCAN_BLOCK):
        part = codes[start : start + _SCAN_BLOCK]
        # Parity of the quotes so far: 1 inside a string (uint8 wraps, parity survives).
        in_string = (np.cumsum(part == _QUOTE, dtype=np.uint8) + inside) & 1
        outside = in_string == 0
        opens = ((part == _OPENS[0]) | (part == _OPENS[1])) & outside
        closes = ((part == _CLOSES[0]) | (part == _CLOSES[1])) & outside
        brackets = np.flatnonzero(opens | closes)
        if brackets.size:
            levels = depth + np.cumsum(np.where(opens[brackets], 1, -1))
            deepest = max(deepest, int(levels.max()))
            depth = int(levels[-1])
        inside = int(in_string[-1])
    return deepest


def decode_text(data: bytes, source: str) -> str:
    """``data`` as UTF-8 text.

    Raises:
        DocumentError: not UTF-8 (the first bad byte named).
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise DocumentError(source, f"not a text file: byte {error.start} is not UTF-8") from None


def _size(count: int) -> str:
    return f"{count / MIB:g} MiB" if count >= MIB else f"{count} bytes"


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` whole or not at all: into a temporary file beside it,
    synced, then renamed over it, so that a crash, a full disk or a reader at the same time
    never sees half a file. The temporary file is removed when writing fails.

    Raises:
        OSError: it could not be written (the old file, if any, is left as it was).
    """
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with temporary.open("w", encoding="utf-8") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise


class SpaceReserve:
    """Disk space held for the records a run must write when its disk fills: a file of
    ``size`` bytes, given back (``release``) just before they are written, so that a bag that
    filled the disk still leaves room for ``run_status.json`` and ``metrics.json``.

    Holding is best effort: a disk already too full to hold the reserve leaves none.
    """

    def __init__(self, path: Path, size: int) -> None:
        self.path = path
        self.size = 0
        self.hold(size)

    def hold(self, size: int) -> None:
        """Hold ``size`` bytes (never fewer than already held)."""
        if size <= self.size:
            return
        try:
            descriptor = os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o644)
            try:
                os.posix_fallocate(descriptor, 0, size)
            finally:
                os.close(descriptor)
        except OSError:
            return
        self.size = size

    def release(self) -> None:
        """Give the space back (idempotent)."""
        with contextlib.suppress(OSError):
            self.path.unlink()
        self.size = 0
