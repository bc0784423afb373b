"""The chat client against a real HTTP server on 127.0.0.1 speaking chat completions."""

from __future__ import annotations

import socket

import pytest
from fakes.chat_server import ChatServer, Reply, Script

from aerialdojo.agents.vlm.client import ModelServerError, OpenAIChatClient, ServerSettings
from aerialdojo.errors import ConfigError

MESSAGES = [{"role": "system", "content": "sys"}, {"role": "user", "content": "go"}]


def _client(server: ChatServer, waits: list[float], **settings: object) -> OpenAIChatClient:
    options = {"timeout_s": 5.0, "max_retries": 3, "backoff_s": 0.01, **settings}
    return OpenAIChatClient(
        ServerSettings(base_url=server.base_url, model="test-vlm", **options),  # type: ignore[arg-type]
        environ={},
        sleep=waits.append,
    )


def test_a_reply_carries_its_text_and_token_counts() -> None:
    with ChatServer(Script.sequence([Reply(text='{"action": "Stop"}')])) as server:
        reply = _client(server, []).complete(MESSAGES)
    assert reply.text == '{"action": "Stop"}'
    assert reply.prompt_tokens > 0 and reply.completion_tokens > 0 and reply.attempts == 1
    assert server.received[0].body["model"] == "test-vlm"


def test_429_waits_as_long_as_retry_after_says_then_succeeds() -> None:
    script = Script.sequence([Reply(status=429, retry_after=2.5), Reply(text="ok")])
    waits: list[float] = []
    with ChatServer(script) as server:
        reply = _client(server, waits).complete(MESSAGES)
    assert waits == [2.5]
    assert (reply.text, reply.attempts, reply.waited_s) == ("ok", 2, 2.5)


def test_5xx_backs_off_exponentially_and_gives_up_after_the_retries() -> None:
    waits: list[float] = []
    with ChatServer(Script.sequence([], then=Reply(status=503))) as server:
        with pytest.raises(ModelServerError, match="failed 4 attempt"):
            _client(server, waits).complete(MESSAGES)
        assert len(server.received) == 4
    assert waits == pytest.approx([0.01, 0.02, 0.04])


def test_a_hanging_server_times_out_and_is_retried() -> None:
    script = Script.sequence([Reply(text="late", delay_s=2.0), Reply(text="ok")])
    with ChatServer(script) as server:
        reply = _client(server, [], timeout_s=0.5).complete(MESSAGES)
    assert (reply.text, reply.attempts) == ("ok", 2)


def test_a_server_that_is_down_is_an_infrastructure_failure() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again: nothing listens there
    settings = ServerSettings(
        base_url=f"http://127.0.0.1:{port}/v1", model="m", max_retries=1, backoff_s=0.0
    )
    with pytest.raises(ModelServerError, match="unreachable"):
        OpenAIChatClient(settings, environ={}, sleep=lambda _: None).complete(MESSAGES)


def test_a_wrong_model_or_key_is_not_retried() -> None:
    with ChatServer(Script.sequence([]), api_key="sk-right") as server:
        with pytest.raises(ModelServerError, match="HTTP 401"):
            _client(server, []).complete(MESSAGES)
        settings = ServerSettings(base_url=server.base_url, model="other", api_key_env="KEY")
        client = OpenAIChatClient(settings, environ={"KEY": "sk-right"})
        with pytest.raises(ModelServerError, match="The model `other` does not exist"):
            client.complete(MESSAGES)
        assert len(server.received) == 0
        good = ServerSettings(base_url=server.base_url, model="test-vlm", api_key_env="KEY")
        assert OpenAIChatClient(good, environ={"KEY": "sk-right"}).complete(MESSAGES).text
    assert server.received[0].headers["authorization"] == "Bearer sk-right"


def test_settings_refuse_a_key_given_as_the_variable_name() -> None:
    settings = ServerSettings(
        base_url="http://127.0.0.1:8000/v1", model="m", api_key_env="sk-abc.def"
    )
    with pytest.raises(ConfigError, match=r"uav_agent\.vlm_api_key_env"):
        settings.check("uav_agent")
    with pytest.raises(ConfigError, match=r"uav_agent\.vlm_model"):
        ServerSettings(base_url="http://127.0.0.1:8000/v1", model="").check("uav_agent")
