"""The domains a sharded run holds for its local workers (``scale.run.HeldDomains``): held
against every other run on the host for the whole run, handed from graph to graph with the
look for other runs done once, and let go when in doubt, including when another run's task
manager (a real one) announces itself in a held domain between two graphs."""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

import pytest
from rostest import running, specs_for

from aerialdojo.errors import DomainTakenError
from aerialdojo.runner import PRIVATE_DOMAINS, held_domain
from aerialdojo.scale.run import HeldDomains, plan_jobs
from aerialdojo.scale.worker import GraphJob, JobOutcome

pytestmark = pytest.mark.ros


def _taken(domain: int | None) -> bool:
    """Whether another run on this host would be refused ``domain`` (the host's real locks:
    a held domain is also listened in, and must be clear of other users' runs)."""
    assert domain is not None
    try:
        with held_domain(str(domain)):
            return False
    except DomainTakenError:
        return True


def _scored(job: GraphJob) -> JobOutcome:
    return JobOutcome(graph=job.graph, scored=job.episode_ids, excluded=())


def test_held_domains_are_looked_at_by_their_first_graph_and_let_go_when_in_doubt(
    tmp_path: Path,
) -> None:
    jobs = plan_jobs(tmp_path, [f"e{i}" for i in range(8)], workers=8, timeout_s=60.0)
    with contextlib.ExitStack() as run:
        domains = HeldDomains(run, 2, tmp_path)
        first, second = domains.assign(jobs[0]), domains.assign(jobs[1])
        assert {first.domain, second.domain} <= set(PRIVATE_DOMAINS)
        assert first.domain != second.domain
        assert not first.domain_checked and not second.domain_checked
        assert domains.assign(jobs[2]) == jobs[2]  # none free: that graph claims its own
        assert _taken(first.domain) and _taken(second.domain)  # held against other runs
        # A graph scored in its domain: the next graph there need not look again.
        domains.release(first, _scored(first))
        third = domains.assign(jobs[3])
        assert (third.domain, third.domain_checked) == (first.domain, True)
        # Another run heard by a graph, or nothing scored (its task manager may have been
        # refused): let go, and the graphs after claim and look on their own.
        domains.release(third, JobOutcome.lost(third, "another run", domain_shared=True))
        domains.release(second, JobOutcome(graph=second.graph, scored=(), excluded=()))
        assert domains.assign(jobs[4]) == jobs[4]
        assert not _taken(first.domain) and not _taken(second.domain)
        # A dead worker's graph may still be stopping in its domain: let go as well.
        one = HeldDomains(run, 1, tmp_path)
        fourth = one.assign(jobs[5])
        one.release(fourth, None)
        assert one.assign(jobs[6]) == jobs[6]
        assert not _taken(fourth.domain)
        # Held until the run ends.
        fifth = HeldDomains(run, 1, tmp_path).assign(jobs[7])
        assert _taken(fifth.domain)
    assert not _taken(fifth.domain)
    # Workers on other hosts: nothing held, every graph claims its own.
    with contextlib.ExitStack() as run:
        assert HeldDomains(run, 0, tmp_path).assign(jobs[7]) == jobs[7]


def test_a_held_domain_where_another_run_announces_itself_between_two_graphs_is_let_go(
    tmp_path: Path,
) -> None:
    jobs = plan_jobs(tmp_path, ["e0", "e1"], workers=2, timeout_s=60.0)
    with contextlib.ExitStack() as run:
        domains = HeldDomains(run, 1, tmp_path / "run")
        first = domains.assign(jobs[0])
        domains.release(first, _scored(first))
        # Another run's task manager starts in the domain while no graph of this run is in
        # it (a run on another host with the same domain id: the lock does not reach it).
        other = {**os.environ, "ROS_DOMAIN_ID": str(first.domain)}
        specs = specs_for({"task_manager": {"auto_run": False}})
        with running(specs, tmp_path / "other", other):
            deadline = time.monotonic() + 60.0
            while (placed := domains.assign(jobs[1])).domain is not None:
                assert time.monotonic() < deadline, "the other run's task manager was not heard"
                domains.release(placed, _scored(placed))  # not heard yet: back, as it was
                time.sleep(0.1)
        assert placed == jobs[1]  # its graph claims a domain of its own, and looks
        assert not _taken(first.domain)  # let go
