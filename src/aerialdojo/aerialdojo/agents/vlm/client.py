"""Chat-completions client of an OpenAI-compatible server (vLLM, SGLang, llama.cpp, Ollama or
a hosted model) through the official ``openai`` SDK.

The SDK's own retries are switched off: this client retries itself so that every attempt is
counted, Retry-After is honoured exactly, and a server that stays down ends in one
``ModelServerError`` (an infrastructure failure of the episode, never the agent's).
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import openai

from aerialdojo.agents.vlm.chat import ChatReply, Message, ModelServerError
from aerialdojo.errors import ConfigError

#: Sent when the key variable is unset: local servers started without ``--api-key`` accept
#: any key, and the SDK refuses to send none.
NO_KEY = "EMPTY"


@dataclass(frozen=True, kw_only=True)
class ServerSettings:
    """How to reach one model server.

    Attributes:
        base_url: e.g. ``http://127.0.0.1:8000/v1``.
        model: the model name the server serves.
        api_key_env: NAME of the environment variable holding the key (the key itself is
            never a parameter, so it reaches no parameter file, log or report).
        timeout_s: longest wait for one reply.
        max_retries: further attempts after a failed one (429, 5xx, timeout, refused).
        backoff_s: first wait between attempts without Retry-After; doubled each time.
        max_backoff_s: longest wait between attempts, Retry-After included.
        max_concurrency: requests in flight at once to this server from this process.
        temperature: sampling temperature.
        max_tokens: longest reply, tokens.
    """

    base_url: str
    model: str
    api_key_env: str = "OPENAI_API_KEY"
    timeout_s: float = 60.0
    max_retries: int = 3
    backoff_s: float = 1.0
    max_backoff_s: float = 30.0
    max_concurrency: int = 1
    temperature: float = 0.0
    max_tokens: int = 512

    def check(self, where: str) -> None:
        """Raise ConfigError (naming ``where``) for settings no request could use."""
        if not self.base_url.startswith(("http://", "https://")):
            raise ConfigError(f"{where}.vlm_base_url: {self.base_url!r} is not an http(s) URL")
        if not self.model:
            raise ConfigError(f"{where}.vlm_model: empty; name the model the server serves")
        if not self.api_key_env.replace("_", "").isalnum():
            raise ConfigError(
                f"{where}.vlm_api_key_env: {self.api_key_env!r} is not an environment variable "
                "name (give the variable's NAME, never the key)"
            )


_LIMITS: dict[str, threading.BoundedSemaphore] = {}
_LIMITS_LOCK = threading.Lock()


def _server_limit(base_url: str, slots: int) -> threading.BoundedSemaphore:
    """The one semaphore of a server in this process (several policies may share it)."""
    with _LIMITS_LOCK:
        return _LIMITS.setdefault(base_url.rstrip("/"), threading.BoundedSemaphore(slots))


@dataclass
class OpenAIChatClient:
    """Chat completions over HTTP with the ``openai`` SDK.

    Args:
        settings: the server.
        environ: where the key variable is read (default ``os.environ``).
        sleep: waits between attempts (tests pass a recorder).
    """

    settings: ServerSettings
    environ: Mapping[str, str] | None = None
    sleep: Callable[[float], None] = time.sleep
    _sdk: openai.OpenAI = field(init=False, repr=False)

    def __post_init__(self) -> None:
        environ = os.environ if self.environ is None else self.environ
        self._sdk = openai.OpenAI(
            base_url=self.settings.base_url,
            api_key=environ.get(self.settings.api_key_env) or NO_KEY,
            timeout=self.settings.timeout_s,
            max_retries=0,
        )
        self._limit = _server_limit(self.settings.base_url, self.settings.max_concurrency)

    def complete(self, messages: Sequence[Message]) -> ChatReply:
        """Send ``messages``; retry 429, 5xx, timeouts and refused connections with backoff
        (Retry-After when the server gives one).

        Raises:
            ModelServerError: every attempt failed, or the server refused the request itself
                (400, 401, 403, 404: a wrong URL, model, key or request that no retry fixes).
        """
        settings = self.settings
        waited, failures = 0.0, []
        for attempt in range(settings.max_retries + 1):
            started = time.monotonic()
            try:
                with self._limit:
                    started = time.monotonic()
                    completion = self._sdk.chat.completions.create(
                        model=settings.model,
                        messages=list(messages),  # type: ignore[arg-type]
                        temperature=settings.temperature,
                        max_tokens=settings.max_tokens,
                    )
            except openai.APIStatusError as error:
                failures.append(f"HTTP {error.status_code}: {_error_text(error)}")
                if not _retryable(error.status_code):
                    raise ModelServerError(
                        f"{settings.base_url} refused the request: {failures[-1]}"
                    ) from error
                asked = _retry_after(error.response.headers)
                delay = self._backoff(attempt) if asked is None else asked
            except (openai.APITimeoutError, openai.APIConnectionError) as error:
                kind = "no reply" if isinstance(error, openai.APITimeoutError) else "unreachable"
                failures.append(f"{kind} ({type(error).__name__})")
                delay = self._backoff(attempt)
            else:
                return _reply(completion, time.monotonic() - started, attempt + 1, waited)
            if attempt == settings.max_retries:
                break
            delay = min(delay, settings.max_backoff_s)
            self.sleep(delay)
            waited += delay
        raise ModelServerError(
            f"model server {settings.base_url} failed {len(failures)} attempt(s): "
            + "; ".join(failures)
        )

    def _backoff(self, attempt: int) -> float:
        return self.settings.backoff_s * 2.0**attempt


def _retryable(status: int) -> bool:
    # The statuses the SDK itself retries (openai/_base_client.py, _should_retry).
    return status in (408, 409, 429) or status >= 500


def _retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds the server asked to wait (``retry-after-ms`` or ``retry-after`` in seconds)."""
    for header, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(header)
        if value is None:
            continue
        try:
            seconds = float(value) / divisor
        except ValueError:
            continue
        if math.isfinite(seconds) and seconds >= 0:
            return seconds
    return None


def _error_text(error: openai.APIStatusError) -> str:
    body = error.body
    if isinstance(body, dict):
        detail = body.get("message") or body.get("error") or body
        return str(detail)[:300]
    return str(error.message)[:300]


def _reply(completion: Any, latency_s: float, attempts: int, waited_s: float) -> ChatReply:
    choices = getattr(completion, "choices", None) or []
    text = choices[0].message.content if choices else None
    usage = getattr(completion, "usage", None)
    return ChatReply(
        text=text or "",
        prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
        completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
        latency_s=latency_s,
        attempts=attempts,
        waited_s=waited_s,
    )
