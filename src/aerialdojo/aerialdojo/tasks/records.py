"""Reading a benchmark's suite file record by record, ROS-free: field checks whose problems
name file, episode and field, and the lookup and filter every suite type offers."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar

from aerialdojo.documents import SUITE, DocumentError, parse_json, read_bytes
from aerialdojo.errors import ConfigError, TaskFileError

#: The largest suite file read: parsed JSON takes about 15 times its size in memory, and
#: AerialDojo-200K's full test set (about 200,000 episodes) stays well under it.
MAX_SUITE_BYTES = 512 * 2**20


class FieldReader:
    """Reads fields of one JSON object, collecting a problem per bad field.

    Args:
        raw: the object as parsed (anything else is itself a problem).
        where: how problems name it, e.g. ``"suite.json: episode AgosTown_1-easy-0001"``.
        problems: where problems are appended.
    """

    def __init__(self, raw: Any, where: str, problems: list[str]) -> None:
        self.raw = raw if isinstance(raw, dict) else {}
        self.where = where
        self.problems = problems
        if not isinstance(raw, dict):
            problems.append(f"{where}: expected an object, got {type(raw).__name__}")

    def get(self, name: str, check: Callable[[Any], bool], expected: str) -> Any:
        """The field ``name`` if ``check`` accepts it; else None and a problem saying what
        was ``expected``."""
        value = self.raw.get(name)
        if value is None or not check(value):
            self.problems.append(f"{self.where}: {name}: expected {expected}, got {value!r}")
            return None
        return value


def is_number(value: Any) -> bool:
    """A finite int or float (not a bool)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def numbers(count: int) -> Callable[[Any], bool]:
    """A check for a list of ``count`` finite numbers."""
    return lambda value: (
        isinstance(value, list) and len(value) == count and all(map(is_number, value))
    )


def is_text(value: Any) -> bool:
    """A string that is not blank."""
    return isinstance(value, str) and bool(value.strip())


def texts(value: Any) -> bool:
    """A list of strings that are not blank."""
    return isinstance(value, list) and all(map(is_text, value))


class _Identified(Protocol):
    @property
    def episode_id(self) -> str: ...


EpisodeT = TypeVar("EpisodeT", bound=_Identified)


def find_episode(suite: str, episodes: Iterable[EpisodeT], episode_id: str) -> EpisodeT:
    """The episode called ``episode_id``.

    Raises:
        KeyError: no such episode; ``args[0]`` names it and the suite.
    """
    for episode in episodes:
        if episode.episode_id == episode_id:
            return episode
    raise KeyError(f"suite {suite}: no episode {episode_id!r}")


def select_episodes(
    episodes: Sequence[EpisodeT],
    default_selection: Sequence[str],
    text: str,
    keys: Sequence[str],
) -> list[str]:
    """Ids of the episodes a filter selects: ``""`` the default selection, ``"all"``
    everything, else ``key=value[|value],...`` over the episode attributes ``keys``.

    Raises:
        ConfigError: a malformed clause or an unknown key.
    """
    text = text.strip()
    if not text:
        return list(default_selection)
    if text == "all":
        return [episode.episode_id for episode in episodes]
    chosen = list(episodes)
    for clause in text.split(","):
        key, equals, value = clause.strip().partition("=")
        if not equals or key.strip() not in keys:
            raise ConfigError(
                f"filter {text!r}: clause {clause!r} is not key=value with key one of "
                f"{', '.join(keys)}"
            )
        wanted = {v.strip() for v in value.split("|")}
        chosen = [e for e in chosen if getattr(e, key.strip()) in wanted]
    return [episode.episode_id for episode in chosen]


def check_suite_file(path: Path, source: str | None = None) -> None:
    """Check a suite file before anything reads it whole: at most ``MAX_SUITE_BYTES`` of
    UTF-8 text.

    Args:
        path: the file.
        source: how problems name the file (default: ``path``).

    Raises:
        TaskFileError: it cannot be read, or is too large or not text.
    """
    label = source or str(path)
    try:
        size = path.stat().st_size
        with path.open("rb") as stream:
            head = stream.read(4096)
    except OSError as error:
        raise TaskFileError(label, [f"{label}: cannot read: {error.strerror or error}"]) from error
    if size > MAX_SUITE_BYTES:
        raise TaskFileError(
            label,
            [f"{label}: {size / 2**20:.0f} MiB is larger than a suite file can be "
             f"({MAX_SUITE_BYTES // 2**20} MiB); split the suite"],
        )  # fmt: skip
    text = head.decode("utf-8", errors="replace")
    if "\ufffd" in text[:-4] or "\x00" in text:
        raise TaskFileError(label, [f"{label}: not a text file (not UTF-8 JSON)"])


def suite_identity(path: Path, name: str | None = None) -> dict[str, str]:
    """What a run records about the suite it ran: its name and the SHA-256 of its file, so
    that runs of different suites (a suite rebuilt after a re-survey, say) are told apart.

    Args:
        path: the suite file (any benchmark's).
        name: the suite's name if already known (else read from the file).

    Raises:
        TaskFileError: the file cannot be read, or holds no name.
    """
    try:
        data = read_bytes(path, SUITE)
        if name is None:
            name = str(parse_json(data, SUITE, str(path))["name"])
    except (DocumentError, KeyError, TypeError) as error:
        raise TaskFileError(str(path), [f"{path}: no suite name to record: {error}"]) from error
    return {"name": name, "sha256": hashlib.sha256(data).hexdigest()}
