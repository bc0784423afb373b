"""The reply parser and validator: one JSON object naming one legal action."""

from __future__ import annotations

import pytest

from aerialdojo.actions import Action
from aerialdojo.agents.vlm.parsing import (
    ILLEGAL_ARGUMENT,
    ILLEGAL_MAGNITUDE,
    LONG_MESSAGE,
    MALFORMED,
    UNKNOWN_ACTION,
    ReplyError,
    parse_aerialdojo_action,
    parse_agos_reply,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"action": "MoveForward", "magnitude": 3}', Action("MoveForward", 3.0)),
        ('Sure.\n```json\n{"action": "TurnLeft", "magnitude": "15"}\n```', Action("TurnLeft", 15)),
        ('{"action": "Stop"}', Action("Stop")),
        ('{"action": "stop", "magnitude": 0, "reason": "it is here"}', Action("Stop")),
        ('{"action": "MoveUp", "magnitude": 2.0}', Action("MoveUp", 2.0)),
    ],
)
def test_legal_replies_give_their_action(text: str, expected: Action) -> None:
    assert parse_aerialdojo_action(text) == expected


@pytest.mark.parametrize(
    ("text", "kind", "says"),
    [
        ("I will move forward.", MALFORMED, "no JSON object"),
        ('{"action": "MoveForward", "magnitude": 3', MALFORMED, "no JSON object"),
        ('{"move": "MoveForward"}', MALFORMED, '"action"'),
        ('{"action": "Stop"} {"action": "MoveLeft", "magnitude": 1}', MALFORMED, "more than one"),
        (
            '{"action": "MoveBackward", "magnitude": 1}',
            UNKNOWN_ACTION,
            "legal actions: MoveForward",
        ),
        ('{"action": "MoveForward", "magnitude": 4}', ILLEGAL_MAGNITUDE, "allowed: 1, 3, 5 m"),
        ('{"action": "MoveUp", "magnitude": 5}', ILLEGAL_MAGNITUDE, "allowed: 1, 2 m"),
        ('{"action": "TurnLeft", "magnitude": 90}', ILLEGAL_MAGNITUDE, "allowed: 15 deg"),
        ('{"action": "MoveForward"}', ILLEGAL_MAGNITUDE, "needs a numeric"),
        ('{"action": "Stop", "magnitude": 3}', ILLEGAL_MAGNITUDE, "takes no magnitude"),
    ],
)
def test_illegal_replies_say_why(text: str, kind: str, says: str) -> None:
    with pytest.raises(ReplyError) as raised:
        parse_aerialdojo_action(text)
    assert raised.value.kind == kind
    assert says in str(raised.value)


def test_agos_replies_need_an_argument_from_the_options() -> None:
    arguments = {
        "MOVE_TO_UAV_WAYPOINT": ["U3_4", "U3_5"],
        "ANNOTATE_CANDIDATE": ["C3"],
        "WAIT": None,
    }
    reply = parse_agos_reply(
        '{"action": "MOVE_TO_UAV_WAYPOINT", "argument": "U3_5", "message": "heading east"}',
        arguments,
    )
    assert (reply.action, reply.argument, reply.message) == (
        "MOVE_TO_UAV_WAYPOINT",
        "U3_5",
        "heading east",
    )
    assert parse_agos_reply('{"action": "WAIT", "argument": "x"}', arguments).argument == ""
    with pytest.raises(ReplyError) as raised:
        parse_agos_reply('{"action": "MOVE_TO_UAV_WAYPOINT", "argument": "U9_9"}', arguments)
    assert raised.value.kind == ILLEGAL_ARGUMENT and "U3_4, U3_5" in str(raised.value)
    with pytest.raises(ReplyError) as raised:
        parse_agos_reply('{"action": "GO_TO_CANDIDATE", "argument": "C001"}', arguments)
    assert raised.value.kind == UNKNOWN_ACTION
    # The referee carries at most 280 characters (AGOS-Bench, A.4.2: "short" messages); a
    # longer one is repaired here rather than refused as a step.
    longest = "x" * 280
    assert parse_agos_reply(f'{{"action": "WAIT", "message": "{longest}"}}', arguments).message
    with pytest.raises(ReplyError) as raised:
        parse_agos_reply(f'{{"action": "WAIT", "message": "{longest}y"}}', arguments)
    assert raised.value.kind == LONG_MESSAGE and "281 characters" in str(raised.value)
