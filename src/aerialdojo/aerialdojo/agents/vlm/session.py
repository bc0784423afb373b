"""One agent's conversation with its model: a decision is a request, then up to
``repair_turns`` repair requests while the reply names no legal action, then the configured
fallback. Repairs and retries are not decisions (AGOS-Bench, appendix A.2.4: DS counts logical
decisions, not API requests, retries or parser-repair attempts). Every request is written to
the transcript."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

from aerialdojo.agents.vlm.chat import ChatClient, ChatReply, Message
from aerialdojo.agents.vlm.parsing import ReplyError
from aerialdojo.agents.vlm.transcript import TranscriptWriter, stored_messages
from aerialdojo.errors import PolicyFaultError

T = TypeVar("T")


@runtime_checkable
class EpisodeAware(Protocol):
    """A client that needs to know the episode (the replay client)."""

    def start_episode(self, episode_id: str) -> None: ...


@dataclass(frozen=True)
class Outcome(Generic[T]):
    """A decision as made.

    Attributes:
        value: the parsed decision, or the fallback.
        fallback: no reply was legal within the repair turns.
        requests: requests sent (the decision's and its repairs').
        errors: why each refused reply was refused (kind, message).
    """

    value: T
    fallback: bool
    requests: int
    errors: tuple[tuple[str, str], ...]


@dataclass
class ModelSession:
    """Decisions of one agent against one client.

    Args:
        client: the server, or a run's transcripts on replay.
        agent: ``uav`` or ``ugv`` (names the transcript).
        repair_turns: further requests after a reply that names no legal action.
        transcript: where requests and replies are recorded; None: nowhere.
        header: written once at the top of the transcript (model, prices; never the key).
    """

    client: ChatClient
    agent: str
    repair_turns: int = 2
    transcript: TranscriptWriter | None = None
    header: dict[str, Any] = field(default_factory=dict)
    episode_id: str = ""
    attempt: int = -1
    decision: int = 0
    _attempts: dict[str, int] = field(default_factory=dict)
    _started: bool = False

    def start_episode(self, episode_id: str) -> None:
        """A new episode, or a rerun of one (counted as its next attempt)."""
        self.attempt = self._attempts.get(episode_id, -1) + 1
        self._attempts[episode_id] = self.attempt
        self.episode_id, self.decision = episode_id, 0
        if isinstance(self.client, EpisodeAware):
            self.client.start_episode(episode_id)
        self._write({"type": "episode"})

    def decide(
        self,
        messages: Sequence[Message],
        parse: Callable[[str], T],
        repair: Callable[[str], str],
        fallback: T,
        describe: Callable[[T], dict[str, Any]],
    ) -> Outcome[T]:
        """One decision.

        Args:
            messages: the decision's request.
            parse: the reply's decision; raises ReplyError for an illegal one.
            repair: the repair request's text for a refusal message.
            fallback: taken when no reply is legal.
            describe: the decision as JSON, for the transcript.

        Raises:
            PolicyFaultError: the server failed, or a replay diverged (an infrastructure
                failure; recorded with the request).
        """
        self.decision += 1
        conversation = list(messages)
        errors: list[tuple[str, str]] = []
        for turn in range(self.repair_turns + 1):
            try:
                reply = self.client.complete(conversation)
            except PolicyFaultError as error:
                self._exchange(turn, conversation, None, server_error=str(error))
                raise
            try:
                value = parse(reply.text)
            except ReplyError as error:
                errors.append((error.kind, str(error)))
                self._exchange(turn, conversation, reply, error=error)
                conversation += [
                    {"role": "assistant", "content": reply.text},
                    {"role": "user", "content": repair(str(error))},
                ]
                continue
            self._exchange(turn, conversation, reply)
            return self._decided(Outcome(value, False, turn + 1, tuple(errors)), describe)
        return self._decided(
            Outcome(fallback, True, self.repair_turns + 1, tuple(errors)), describe
        )

    def _decided(self, outcome: Outcome[T], describe: Callable[[T], dict[str, Any]]) -> Outcome[T]:
        self._write(
            {
                "type": "decision",
                "decision": self.decision,
                "action": describe(outcome.value),
                "fallback": outcome.fallback,
                "requests": outcome.requests,
                "errors": [kind for kind, _ in outcome.errors],
            }
        )
        return outcome

    def _exchange(
        self,
        turn: int,
        conversation: Sequence[Message],
        reply: ChatReply | None,
        *,
        error: ReplyError | None = None,
        server_error: str = "",
    ) -> None:
        if self.transcript is not None:
            request, digest = self.transcript.exchange_request(conversation)
        else:
            request, digest = stored_messages(conversation, None)
        self._write(
            {
                "type": "exchange",
                "decision": self.decision,
                "turn": turn,
                "kind": "decision" if turn == 0 else "repair",
                "request": request,
                "request_digest": digest,
                "reply": reply.text if reply else "",
                "prompt_tokens": reply.prompt_tokens if reply else 0,
                "completion_tokens": reply.completion_tokens if reply else 0,
                "latency_s": reply.latency_s if reply else 0.0,
                "attempts": reply.attempts if reply else 0,
                "waited_s": reply.waited_s if reply else 0.0,
                "error_kind": error.kind if error else "",
                "error": str(error) if error else "",
                "server_error": server_error,
            }
        )

    def _write(self, record: dict[str, Any]) -> None:
        if self.transcript is None:
            return
        if not self._started:
            self._started = True
            self.transcript.write({"type": "session", "agent": self.agent, **self.header})
        self.transcript.write(
            {**record, "agent": self.agent, "episode_id": self.episode_id, "attempt": self.attempt}
        )
