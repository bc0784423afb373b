"""The deterministic parser and validator of model replies: one JSON object naming one legal
action (AerialDojo-200K, appendix A, "single-action JSON response"; AGOS-Bench, section
"AGOS-Agent", Validate(Parse(a))). A reply that fails gets repair turns, then the fallback."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from aerialdojo.actions import AERIALDOJO_ACTIONS, Action, ActionType
from aerialdojo.agos.vocabulary import MESSAGE_MAX_CHARS
from aerialdojo.errors import AerialDojoError

MALFORMED = "malformed"
UNKNOWN_ACTION = "unknown_action"
ILLEGAL_MAGNITUDE = "illegal_magnitude"
ILLEGAL_ARGUMENT = "illegal_argument"
LONG_MESSAGE = "long_message"
#: Every reason a reply is refused, as counted in reports.
REPLY_ERROR_KINDS = (MALFORMED, UNKNOWN_ACTION, ILLEGAL_MAGNITUDE, ILLEGAL_ARGUMENT, LONG_MESSAGE)

_FENCE = re.compile(r"```(?:json)?", re.IGNORECASE)


class ReplyError(AerialDojoError):
    """A reply that names no single legal action.

    Attributes:
        kind: one of ``REPLY_ERROR_KINDS``.
    """

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def reply_object(text: str) -> dict[str, Any]:
    """The one JSON object of a reply; prose or a code fence around it is tolerated.

    Raises:
        ReplyError: no JSON object, or more than one action object.
    """
    cleaned = _FENCE.sub("", text)
    decoder = json.JSONDecoder()
    found: list[dict[str, Any]] = []
    position = cleaned.find("{")
    while position != -1:
        try:
            value, end = decoder.raw_decode(cleaned, position)
        except json.JSONDecodeError:
            position = cleaned.find("{", position + 1)
            continue
        if isinstance(value, dict):
            found.append(value)
        position = cleaned.find("{", end)
    if not found:
        raise ReplyError(MALFORMED, "the reply holds no JSON object")
    if sum("action" in value for value in found) > 1:
        raise ReplyError(MALFORMED, "the reply holds more than one action; give exactly one")
    return next((value for value in found if "action" in value), found[0])


def _action_name(value: dict[str, Any], legal: Sequence[str]) -> str:
    name = value.get("action")
    if not isinstance(name, str) or not name.strip():
        raise ReplyError(MALFORMED, 'the JSON object has no "action" string')
    name = name.strip()
    if name in legal:
        return name
    folded = {candidate.lower(): candidate for candidate in legal}
    if name.lower() in folded:
        return folded[name.lower()]
    raise ReplyError(UNKNOWN_ACTION, f"unknown action {name!r}; legal actions: {', '.join(legal)}")


def parse_aerialdojo_action(
    text: str, action_set: Sequence[ActionType] = AERIALDOJO_ACTIONS
) -> Action:
    """The action of a reply such as ``{"action": "MoveForward", "magnitude": 3}``.

    Raises:
        ReplyError: malformed, an unknown action, or a magnitude the action does not take.
    """
    value = reply_object(text)
    kinds = {kind.name: kind for kind in action_set}
    kind = kinds[_action_name(value, list(kinds))]
    raw = value.get("magnitude")
    if not kind.magnitudes:
        if raw not in (None, 0, 0.0, "", "0"):
            raise ReplyError(ILLEGAL_MAGNITUDE, f"{kind.name} takes no magnitude, got {raw!r}")
        return Action(kind.name)
    allowed = ", ".join(f"{m:g}" for m in kind.magnitudes)
    try:
        magnitude = float(raw)  # type: ignore[arg-type]  # None and junk raise, below
    except (TypeError, ValueError):
        raise ReplyError(
            ILLEGAL_MAGNITUDE,
            f'{kind.name} needs a numeric "magnitude" of {allowed} {kind.unit}, got {raw!r}',
        ) from None
    for legal in kind.magnitudes:
        if math.isclose(magnitude, legal):
            return Action(kind.name, legal)
    raise ReplyError(
        ILLEGAL_MAGNITUDE,
        f"{kind.name} does not take magnitude {magnitude:g} {kind.unit}; allowed: {allowed} "
        f"{kind.unit}",
    )


@dataclass(frozen=True)
class AgosReply:
    """A parsed AGOS reply: the decision and an optional message to the teammate."""

    action: str
    argument: str = ""
    message: str = ""


def parse_agos_reply(text: str, arguments: Mapping[str, Sequence[str] | None]) -> AgosReply:
    """The decision of a reply such as ``{"action": "GO_TO_CANDIDATE", "argument": "C001"}``.

    Args:
        text: the reply.
        arguments: each legal action -> its legal arguments (None: it takes none).

    Raises:
        ReplyError: malformed, an action not legal now, an argument not among the options,
            or a message longer than the referee carries (``MESSAGE_MAX_CHARS``).
    """
    value = reply_object(text)
    action = _action_name(value, list(arguments))
    options = arguments[action]
    raw = value.get("argument")
    argument = "" if raw is None else str(raw).strip()
    message = value.get("message")
    message = message.strip() if isinstance(message, str) else ""
    if len(message) > MESSAGE_MAX_CHARS:
        raise ReplyError(
            LONG_MESSAGE,
            f"the message is {len(message)} characters; at most {MESSAGE_MAX_CHARS}",
        )
    if options is None:
        return AgosReply(action, "", message)  # an argument given to WAIT is harmless
    folded = {option.lower(): option for option in options}
    argument = folded.get(argument.lower(), argument)
    if argument not in options:
        listed = ", ".join(options) or "none now"
        raise ReplyError(
            ILLEGAL_ARGUMENT,
            f"{action} needs an argument from the options ({listed}), got {argument or 'none'}",
        )
    return AgosReply(action, argument, message)
