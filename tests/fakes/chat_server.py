"""A fake OpenAI-compatible chat-completions server on 127.0.0.1 with scripted replies: a real
HTTP server (stdlib ``http.server``) that the unmodified ``openai`` SDK talks to as it would to
vLLM, SGLang, llama.cpp or Ollama.

What it does as vLLM's OpenAI-compatible server does (``vllm/entrypoints/openai/api_server.py``,
``serving_engine.py``, ``protocol.py``):
- ``POST /v1/chat/completions`` answers a ``chat.completion`` object (id, object, created,
  model, choices[0].message {role, content}, finish_reason, usage {prompt_tokens,
  completion_tokens, total_tokens});
- a ``model`` it does not serve gets 404 ``{"error": {"message": "The model `x` does not
  exist.", "type": "NotFoundError", "param": "model", "code": 404}}`` (``_check_model``);
- started with an API key, a request without ``Authorization: Bearer <key>`` gets 401
  ``{"error": "Unauthorized"}`` (api_server.py, the ``--api-key`` middleware);
- a body that is not JSON, or lacks ``model`` or ``messages``, gets 400 (request validation);
- an ``image_url`` that is not a decodable base64 data URL gets 400, as vLLM's media loader
  refuses it (``vllm/multimodal/utils.py``, ``load_from_url``: data URLs are decoded and
  opened as images) - URLs on the network are refused here (no network in tests);
- ``GET /v1/models`` lists the served model.
Faults are scripted per reply: an HTTP status with ``Retry-After`` (429, 503), a reply that
arrives after ``delay_s`` (a hang, as an overloaded server), a dropped connection. Token
counts are a deterministic estimate (characters / 4, 256 per image), not a tokenizer's.

Run in-process (``ChatServer``), or as a process to kill mid-run:
``python tests/fakes/chat_server.py --port P --model M --script script.json``.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import io
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from PIL import Image

IMAGE_TOKENS = 256


@dataclass(frozen=True)
class Reply:
    """One scripted answer.

    Attributes:
        text: the assistant's content (a 200 reply).
        status: an HTTP error status instead (429, 500, 503, ...).
        retry_after: the Retry-After header (seconds) of an error reply.
        delay_s: wait this long before answering (a hanging server).
        drop: close the connection without any answer.
    """

    text: str = ""
    status: int = 200
    retry_after: float | None = None
    delay_s: float = 0.0
    drop: bool = False

    @classmethod
    def from_json(cls, value: dict[str, Any] | str) -> Reply:
        return cls(text=value) if isinstance(value, str) else cls(**value)


@dataclass
class Route:
    """Replies for the requests whose system prompt contains ``match``, in order; ``then``
    once they are used up."""

    match: str
    replies: list[Reply]
    then: Reply


Responder = Callable[[dict[str, Any]], Reply]


@dataclass
class Script:
    """Scripted replies by route (the first route whose ``match`` the system prompt holds)."""

    routes: list[Route]
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def sequence(cls, replies: list[Reply], then: Reply | None = None) -> Script:
        """One list of replies for every request."""
        return cls([Route("", list(replies), then or Reply(text='{"action": "Stop"}'))])

    @classmethod
    def from_json(cls, document: dict[str, Any]) -> Script:
        return cls(
            [
                Route(
                    route.get("match", ""),
                    [Reply.from_json(r) for r in route.get("replies", [])],
                    Reply.from_json(route.get("then", '{"action": "Stop"}')),
                )
                for route in document["routes"]
            ]
        )

    def __call__(self, body: dict[str, Any]) -> Reply:
        system = " ".join(
            str(m.get("content", "")) for m in body["messages"] if m.get("role") == "system"
        )
        with self._lock:
            for route in self.routes:
                if route.match in system:
                    return route.replies.pop(0) if route.replies else route.then
        return Reply(status=500)


@dataclass
class Received:
    """A request as the server saw it (for tests)."""

    body: dict[str, Any]
    headers: dict[str, str]
    handling_s: float = 0.0


class ChatServer:
    """The server, serving on a thread.

    Args:
        responder: the reply to each valid request.
        model: the one model name served.
        api_key: required as a bearer token when given.
        port: 0 for any free port.
    """

    def __init__(
        self, responder: Responder, model: str = "test-vlm", api_key: str = "", port: int = 0
    ) -> None:
        self.responder = responder
        self.model = model
        self.api_key = api_key
        self.received: list[Received] = []
        server = self
        self._http = _QuietServer(("127.0.0.1", port), _handler_class(server))
        self._http.daemon_threads = True
        self._thread = threading.Thread(target=self._http.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return int(self._http.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> ChatServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._http.shutdown()
        self._http.server_close()

    def __enter__(self) -> ChatServer:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that gave up on a hanging reply closed its socket: expected, not news.
        pass


def _error(message: str, kind: str, status: int, param: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": param, "code": status}}


def _check_images(messages: list[Any]) -> str:
    """Why an image part is refused, or ""."""
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            continue
        for part in content:
            if part.get("type") != "image_url":
                continue
            url = str(part.get("image_url", {}).get("url", ""))
            if not url.startswith("data:image/") or ";base64," not in url:
                return f"only base64 image data URLs are served here, got {url[:40]!r}"
            try:
                data = base64.b64decode(url.split(";base64,", 1)[1], validate=True)
                Image.open(io.BytesIO(data)).load()
            except (binascii.Error, OSError, ValueError) as error:
                return f"cannot decode image: {error}"
    return ""


def _estimate_tokens(messages: list[Any]) -> int:
    tokens = 0
    for message in messages:
        content = message.get("content")
        parts = content if isinstance(content, list) else [{"type": "text", "text": content}]
        for part in parts:
            if part.get("type") == "image_url":
                tokens += IMAGE_TOKENS
            else:
                tokens += len(str(part.get("text") or "")) // 4 + 1
    return tokens


def _handler_class(server: ChatServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # TCP_NODELAY, as the real servers' sockets: asyncio sets it on every TCP transport
        # (CPython Lib/asyncio/selector_events.py, _SelectorSocketTransport.__init__; uvicorn
        # serves vLLM and SGLang on it), Go's net package by default (Ollama). With Nagle's
        # algorithm on, the reply's body, written after its headers, waited for the client's
        # delayed ACK: about 40 ms a request on Linux, which no real server makes it pay.
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: Any) -> None:
            pass  # quiet: tests read server.received instead

        def _send(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def _authorized(self) -> bool:
            if not server.api_key:
                return True
            if self.headers.get("Authorization") == f"Bearer {server.api_key}":
                return True
            self._send(HTTPStatus.UNAUTHORIZED, {"error": "Unauthorized"})
            return False

        def do_GET(self) -> None:
            if not self._authorized():
                return
            if self.path.rstrip("/") == "/v1/models":
                self._send(
                    200, {"object": "list", "data": [{"id": server.model, "object": "model"}]}
                )
            else:
                self._send(404, {"detail": "Not Found"})

        def do_POST(self) -> None:
            started = time.monotonic()
            raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            if not self._authorized():
                return
            if self.path.rstrip("/") != "/v1/chat/completions":
                self._send(404, {"detail": "Not Found"})
                return
            try:
                body = json.loads(raw)
            except json.JSONDecodeError as error:
                self._send(400, _error(f"invalid JSON body: {error}", "BadRequestError", 400))
                return
            if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
                self._send(400, _error("messages: field required", "BadRequestError", 400))
                return
            if body.get("model") != server.model:
                message = f"The model `{body.get('model')}` does not exist."
                self._send(404, _error(message, "NotFoundError", 404, "model"))
                return
            refused = _check_images(body["messages"])
            if refused:
                self._send(400, _error(refused, "BadRequestError", 400))
                return
            received = Received(body, {k.lower(): v for k, v in self.headers.items()})
            server.received.append(received)
            reply = server.responder(body)
            if reply.delay_s:
                time.sleep(reply.delay_s)
            received.handling_s = time.monotonic() - started
            if reply.drop:
                self.close_connection = True
                self.connection.shutdown(2)
                return
            if reply.status != 200:
                headers = (
                    {"Retry-After": f"{reply.retry_after:g}"}
                    if reply.retry_after is not None
                    else {}
                )
                kind = "RateLimitError" if reply.status == 429 else "InternalServerError"
                self._send(reply.status, _error("scripted fault", kind, reply.status), headers)
                return
            prompt_tokens = _estimate_tokens(body["messages"])
            completion_tokens = len(reply.text) // 4 + 1
            self._send(
                200,
                {
                    "id": f"chatcmpl-{len(server.received)}",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": server.model,
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": reply.text},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {
                        "prompt_tokens": prompt_tokens,
                        "completion_tokens": completion_tokens,
                        "total_tokens": prompt_tokens + completion_tokens,
                    },
                },
            )

    return Handler


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--model", default="test-vlm")
    parser.add_argument("--api-key", default="")
    parser.add_argument("--script", type=Path, required=True, help='{"routes": [...]} JSON')
    args = parser.parse_args()
    script = Script.from_json(json.loads(args.script.read_text()))
    server = ChatServer(script, args.model, args.api_key, args.port)
    print(f"serving {server.base_url}", flush=True)
    server._http.serve_forever()


if __name__ == "__main__":
    main()
