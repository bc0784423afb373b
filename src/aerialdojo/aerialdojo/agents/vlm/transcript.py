"""Transcripts: every request and reply of a run, one JSON line each, in
``<run>/transcripts/<agent>.jsonl``, with images stored once by content hash under
``<run>/transcripts/images/``. They let a run be replayed without a server
(``ReplayChatClient``) and its usage be accounted (``vlm.usage``). No header, and so no key,
is ever written."""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from aerialdojo.agents.vlm.chat import ChatReply, Message, ModelServerError
from aerialdojo.documents import LINE, DocumentError, parse_json
from aerialdojo.errors import ConfigError, PolicyFaultError

TRANSCRIPTS_DIR = "transcripts"
IMAGES_DIR = "images"
_EXTENSIONS = {"image/png": "png", "image/jpeg": "jpg"}


class ReplayError(PolicyFaultError):
    """A replayed run asked what the recorded run did not (the episodes diverged), or asked
    past its end."""


def _split_data_url(url: str) -> tuple[str, bytes] | None:
    if not url.startswith("data:") or ";base64," not in url:
        return None
    mime, payload = url[5:].split(";base64,", 1)
    try:
        return mime, base64.b64decode(payload, validate=True)
    except binascii.Error:
        return None


def stored_messages(
    messages: Sequence[Message], images_dir: Path | None
) -> tuple[list[Message], str]:
    """``messages`` with every data-URL image replaced by a reference to its file (written
    under ``images_dir`` when given and new), and the SHA-256 of the result: equal requests,
    images included, have equal digests."""
    stored: list[Message] = []
    for message in messages:
        content = message.get("content")
        if not isinstance(content, list):
            stored.append(dict(message))
            continue
        parts = []
        for part in content:
            split = (
                _split_data_url(part["image_url"]["url"])
                if part.get("type") == "image_url"
                else None
            )
            if split is None:
                parts.append(part)
                continue
            mime, data = split
            name = f"{hashlib.sha256(data).hexdigest()}.{_EXTENSIONS.get(mime, 'bin')}"
            if images_dir is not None and not (images_dir / name).exists():
                images_dir.mkdir(parents=True, exist_ok=True)
                temporary = images_dir / f".{name}.part"
                temporary.write_bytes(data)
                temporary.replace(images_dir / name)  # two agents may write the same image
            parts.append({"type": "image_file", "path": f"{IMAGES_DIR}/{name}"})
        stored.append({**message, "content": parts})
    canonical = json.dumps(stored, sort_keys=True, separators=(",", ":"))
    return stored, hashlib.sha256(canonical.encode()).hexdigest()


@dataclass
class TranscriptWriter:
    """Appends one agent's records to ``<directory>/<agent>.jsonl``.

    Args:
        directory: the run's transcripts directory.
        agent: ``uav`` or ``ugv``.
    """

    directory: Path
    agent: str
    _stream: IO[str] | None = field(default=None, init=False, repr=False)

    @property
    def path(self) -> Path:
        return self.directory / f"{self.agent}.jsonl"

    def write(self, record: dict[str, Any]) -> None:
        """Append ``record`` and flush it (a crash loses nothing already decided)."""
        if self._stream is None:
            self.directory.mkdir(parents=True, exist_ok=True)
            self._stream = self.path.open("a", encoding="utf-8")
        self._stream.write(json.dumps(record, sort_keys=True) + "\n")
        self._stream.flush()

    def exchange_request(self, messages: Sequence[Message]) -> tuple[list[Message], str]:
        """The request as stored, images written to files, and its digest."""
        return stored_messages(messages, self.directory / IMAGES_DIR)


def read_records(path: Path) -> Iterator[dict[str, Any]]:
    """The records of one transcript file.

    Raises:
        ConfigError: an unreadable file or a line that is not JSON (naming file and line).
    """
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise ConfigError(f"{path}: cannot read transcript: {error}") from error
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = parse_json(line, LINE, f"{path}:{number}")
        except DocumentError as error:
            raise ConfigError(f"{error}: not a transcript record") from None
        if not isinstance(record, dict):
            raise ConfigError(f"{path}:{number}: not a transcript record (not a JSON object)")
        yield record


def final_attempts(records: Sequence[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Episode id -> the exchange records of its last attempt (the one that was scored, when
    any was: an attempt lost to an infrastructure failure is followed by another)."""
    last: dict[str, int] = {}
    for record in records:
        if record["type"] == "episode":
            last[record["episode_id"]] = int(record["attempt"])
    return {
        episode_id: [
            record
            for record in records
            if record["type"] == "exchange"
            and record["episode_id"] == episode_id
            and int(record["attempt"]) == attempt
        ]
        for episode_id, attempt in last.items()
    }


@dataclass
class ReplayChatClient:
    """Answers from a recorded run's transcript instead of a server: the same replies, with
    the recorded token counts and latencies, so a replay gives the same actions and the same
    ``metrics.json``.

    Args:
        run_dir: the recorded run directory (``runs/<id>``).
        agent: whose transcript to replay.

    Raises:
        ConfigError: the run has no transcript of ``agent``.
    """

    run_dir: Path
    agent: str
    _episodes: dict[str, list[dict[str, Any]]] = field(init=False, repr=False)
    _queue: list[dict[str, Any]] = field(default_factory=list, init=False, repr=False)
    _episode_id: str = field(default="", init=False, repr=False)

    def __post_init__(self) -> None:
        path = self.run_dir / TRANSCRIPTS_DIR / f"{self.agent}.jsonl"
        if not path.is_file():
            raise ConfigError(
                f"{self.run_dir}: no transcript of agent {self.agent!r} to replay ({path})"
            )
        self._episodes = final_attempts(list(read_records(path)))

    def start_episode(self, episode_id: str) -> None:
        """Serve the recorded exchanges of ``episode_id`` from the first."""
        if episode_id not in self._episodes:
            raise ReplayError(f"{self.run_dir}: episode {episode_id} was not recorded")
        self._episode_id = episode_id
        self._queue = list(self._episodes[episode_id])

    def complete(self, messages: Sequence[Message]) -> ChatReply:
        """The recorded reply to the next request, which must equal the recorded request.

        Raises:
            ReplayError: the request differs from the recorded one (the replay diverged), or
                the recorded episode has no further request.
        """
        if not self._queue:
            raise ReplayError(
                f"episode {self._episode_id}: the recorded run made no further request"
            )
        record = self._queue.pop(0)
        _, digest = stored_messages(messages, None)
        if digest != record["request_digest"]:
            raise ReplayError(
                f"episode {self._episode_id} decision {record['decision']} turn "
                f"{record['turn']}: the request differs from the recorded one (the replay "
                "diverged: other observations, prompts or settings)"
            )
        if record.get("server_error"):
            raise ModelServerError(record["server_error"])
        return ChatReply(
            text=record["reply"],
            prompt_tokens=int(record["prompt_tokens"]),
            completion_tokens=int(record["completion_tokens"]),
            latency_s=float(record["latency_s"]),
            attempts=int(record["attempts"]),
            waited_s=float(record["waited_s"]),
        )
