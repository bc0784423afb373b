"""A model agent's settings from its node's ``vlm_*`` parameters, and the session they make:
the live server, or a recorded run's transcripts on replay."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aerialdojo.agents.vlm.chat import ChatClient
from aerialdojo.agents.vlm.client import OpenAIChatClient, ServerSettings
from aerialdojo.agents.vlm.images import IMAGE_FORMATS
from aerialdojo.agents.vlm.session import ModelSession
from aerialdojo.agents.vlm.transcript import ReplayChatClient, TranscriptWriter
from aerialdojo.errors import ConfigError


@dataclass(frozen=True, kw_only=True)
class VlmSettings:
    """Everything a model agent is configured with.

    Attributes:
        server: the model server.
        prompt_dir: an edited template directory; empty: the shipped templates.
        repair_turns: requests after a reply naming no legal action, per decision.
        fallback: the decision taken when none is legal (an action name, and for AerialDojo
            a magnitude, e.g. ``TurnLeft 15``).
        history: previous decisions shown in the prompt.
        image_format: ``png`` or ``jpeg`` for RGB.
        depth_max_m: far limit of the rendered depth.
        price_input_per_mtok: price of a million input tokens (cost in the report).
        price_output_per_mtok: price of a million output tokens.
        transcript_dir: where the transcripts go (the run's ``transcripts``); empty: nowhere.
        replay_run: a recorded run directory to replay instead of asking a server.
    """

    server: ServerSettings
    prompt_dir: str = ""
    repair_turns: int = 2
    fallback: str = "Stop"
    history: int = 8
    image_format: str = "png"
    depth_max_m: float = 50.0
    price_input_per_mtok: float = 0.0
    price_output_per_mtok: float = 0.0
    transcript_dir: str = ""
    replay_run: str = ""

    @classmethod
    def from_parameters(cls, values: Mapping[str, Any], where: str) -> VlmSettings:
        """Read the ``vlm_*``, ``transcript_dir`` and ``replay_transcripts`` parameters.

        Args:
            values: parameter name -> value (a node's declared parameters).
            where: the node name, for errors.

        Raises:
            ConfigError: settings no request could use, naming ``<where>.<parameter>``.
        """
        server = ServerSettings(
            base_url=str(values["vlm_base_url"]),
            model=str(values["vlm_model"]),
            api_key_env=str(values["vlm_api_key_env"]),
            timeout_s=float(values["vlm_timeout_s"]),
            max_retries=int(values["vlm_max_retries"]),
            backoff_s=float(values["vlm_backoff_s"]),
            max_concurrency=int(values["vlm_max_concurrency"]),
            temperature=float(values["vlm_temperature"]),
            max_tokens=int(values["vlm_max_tokens"]),
        )
        settings = cls(
            server=server,
            prompt_dir=str(values["vlm_prompt_dir"]),
            repair_turns=int(values["vlm_repair_turns"]),
            fallback=str(values["vlm_fallback"]),
            history=int(values["vlm_history"]),
            image_format=str(values["vlm_image_format"]),
            depth_max_m=float(values["vlm_depth_max_m"]),
            price_input_per_mtok=float(values["vlm_price_input_per_mtok"]),
            price_output_per_mtok=float(values["vlm_price_output_per_mtok"]),
            transcript_dir=str(values["transcript_dir"]),
            replay_run=str(values["replay_transcripts"]),
        )
        if not settings.replay_run:
            server.check(where)
        if settings.image_format not in IMAGE_FORMATS:
            raise ConfigError(
                f"{where}.vlm_image_format: {settings.image_format!r} is not one of "
                f"{', '.join(IMAGE_FORMATS)}"
            )
        return settings

    @property
    def description(self) -> str:
        """The model and its server, as the agent node announces them (never the key)."""
        return f"model {self.server.model} at {self.server.base_url}"

    def session(self, agent: str) -> ModelSession:
        """The agent's model session: live, or replaying ``replay_run``.

        Raises:
            ConfigError: the run to replay has no transcript of ``agent``.
        """
        client: ChatClient = (
            ReplayChatClient(Path(self.replay_run), agent)
            if self.replay_run
            else OpenAIChatClient(self.server)
        )
        transcript = (
            TranscriptWriter(Path(self.transcript_dir), agent) if self.transcript_dir else None
        )
        header = {
            "base_url": self.server.base_url,
            "model": self.server.model,
            "price_input_per_mtok": self.price_input_per_mtok,
            "price_output_per_mtok": self.price_output_per_mtok,
            "replay_of": self.replay_run,
        }
        return ModelSession(client, agent, self.repair_turns, transcript, header)
