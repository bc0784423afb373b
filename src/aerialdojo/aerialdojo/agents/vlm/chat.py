"""What a model agent exchanges with a chat server, independent of the HTTP client: messages,
replies, the client protocol and the server's failure."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from aerialdojo.errors import PolicyFaultError

Message = dict[str, Any]


class ModelServerError(PolicyFaultError):
    """The model server failed every attempt (down, hanging, overloaded, refusing): an
    infrastructure failure of the episode, rerun, never scored against the agent."""


@dataclass(frozen=True, kw_only=True)
class ChatReply:
    """One answered request.

    Attributes:
        text: the assistant message's content.
        prompt_tokens: input tokens the server counted (0 if it did not say).
        completion_tokens: output tokens.
        latency_s: wall time of the answered attempt.
        attempts: requests sent, the answered one included.
        waited_s: time spent between attempts (backoff and Retry-After).
    """

    text: str
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    attempts: int = 1
    waited_s: float = 0.0


class ChatClient(Protocol):
    """Anything that answers a chat: the live server, or a run's transcripts on replay."""

    def complete(self, messages: Sequence[Message]) -> ChatReply:
        """The assistant's reply to ``messages``.

        Raises:
            ModelServerError: no usable reply (an infrastructure failure).
        """
