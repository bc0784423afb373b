"""Connection attempts, faults that name the server, version warnings."""

from __future__ import annotations

import logging

import pytest

from aerialdojo.errors import ConfigError, SimulatorFaultError
from aerialdojo.sim.remote.connection import (
    CallPolicy,
    Endpoint,
    check_version,
    connect_with_retries,
    fault,
)

ENDPOINT = Endpoint("AirSim", "10.1.2.3", 41451)
QUICK = CallPolicy(timeout_s=1.0, attempts=3, backoff_s=0.001)


def test_a_connection_that_comes_up_on_the_second_try_is_used() -> None:
    tries: list[int] = []

    def connect() -> str:
        tries.append(1)
        if len(tries) < 2:
            raise ConnectionRefusedError("refused")
        return "connected"

    assert connect_with_retries(connect, ENDPOINT, QUICK, (OSError,)) == "connected"
    assert len(tries) == 2


def test_every_try_failing_is_a_fault_naming_host_port_and_the_error() -> None:
    tries: list[int] = []

    def connect() -> str:
        tries.append(1)
        raise ConnectionRefusedError("refused")

    with pytest.raises(
        SimulatorFaultError,
        match=r"cannot connect to AirSim at 10\.1\.2\.3:41451 after 3 tries: "
        r"ConnectionRefusedError: refused",
    ):
        connect_with_retries(connect, ENDPOINT, QUICK, (OSError,))
    assert len(tries) == 3


def test_errors_that_are_not_transient_are_not_retried() -> None:
    def connect() -> str:
        raise ValueError("bad answer")

    with pytest.raises(ValueError, match="bad answer"):
        connect_with_retries(connect, ENDPOINT, QUICK, (OSError,))


def test_a_failed_call_names_the_server_and_what_it_was_doing() -> None:
    error = fault(ENDPOINT, "fetching images", TimeoutError("Request timed out"))
    assert str(error) == (
        "AirSim at 10.1.2.3:41451 failed while fetching images: TimeoutError: Request timed out"
    )


def test_versions_warn_on_a_different_release(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        assert check_version("airsim client", "1.8.3", "1.8.1") is None
        warning = check_version("airsim client", "1.9.0", "1.8.1")
        assert check_version("CARLA server", "0.9.15", "0.9.16", significant_parts=3)
    assert (
        warning
        == "airsim client version 1.9.0 differs from the tested 1.8.1; expect protocol differences"
    )
    assert caplog.records[0].getMessage() == warning


def test_a_call_policy_refuses_what_cannot_be_waited_for() -> None:
    with pytest.raises(ConfigError, match=r"server_timeout_s=0\.0 must be positive"):
        CallPolicy(timeout_s=0.0, attempts=1, backoff_s=0.1)
    with pytest.raises(ConfigError, match=r"server_attempts=0 must be at least 1"):
        CallPolicy(timeout_s=1.0, attempts=0, backoff_s=0.1)
