"""Whether a step belongs to the attempt under way (issue 29): a step decided for an earlier
attempt (or another episode) is stale, one that names no episode is a hand-written client's
and the running attempt's; a second process of one agent during an attempt replaced the
first."""

from __future__ import annotations

from aerialdojo.step_origin import AgentProcesses, restarted_agent_message, stale_refusal


def test_a_step_of_the_running_attempt_or_of_a_client_started_by_hand_is_not_stale() -> None:
    assert stale_refusal("Mall_0-base-0000-sem", 1, "Mall_0-base-0000-sem", 1) == ""
    # ros2 service call ... "{agent: uav, action: Stop}": no episode named.
    assert stale_refusal("", 0, "Mall_0-base-0000-sem", 3) == ""


def test_a_step_of_an_earlier_attempt_or_another_episode_is_stale_and_says_which() -> None:
    assert stale_refusal("E", 0, "E", 1) == (
        "stale: decided for attempt 1 of episode E; attempt 2 is running"
    )
    assert stale_refusal("D", 2, "E", 0) == (
        "stale: decided for attempt 3 of episode D; attempt 1 of episode E is running"
    )


def test_the_process_announced_at_the_start_acts_until_another_replaces_it() -> None:
    processes = AgentProcesses.at_start({"uav": "host:10", "ugv": "host:11"}, ["uav"])
    assert processes.replaced("uav", "host:10") == ""
    assert processes.replaced("uav", "") == ""  # a client started by hand names none
    assert processes.replaced("uav", "host:12") == "host:10"
    # Not in the attempt when it started (announced late): the first heard of acts.
    assert processes.replaced("ugv", "host:13") == ""
    assert processes.replaced("ugv", "host:11") == "host:13"


def test_a_restarted_agent_is_named_with_the_process_that_ended() -> None:
    assert restarted_agent_message("uav", "host:10") == (
        "the uav agent was restarted during the episode (its process host:10 ended); "
        "this attempt is not scored"
    )
