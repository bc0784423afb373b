"""Task generation sharded per scene: in this process, or as Ray tasks on local cores or a
cluster, with progress reported from wherever a shard runs.

Shards are independent and deterministic (each scene's candidate order and splits derive
from the suite seed and the scene's name alone), and results come back in job order, so a
suite is the same file whatever the number of workers.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from aerialdojo.errors import ConfigError

JobT = TypeVar("JobT")
ResultT = TypeVar("ResultT")

#: Object store of a local Ray instance: shards return a few MB (tasks and PNG images), so
#: the default (30% of RAM) would only reserve memory other processes need.
LOCAL_OBJECT_STORE_BYTES = 256 * 1024 * 1024
# How long the driver waits for a shard before it passes on queued progress.
_POLL_S = 0.25


@dataclass(frozen=True, kw_only=True)
class ShardProgress:
    """How far one shard (a scene or a town) has got.

    Attributes:
        shard: the scene or town.
        done: work units done (candidate pairs planned, episodes drawn).
        total: work units it will do at most, None if not known.
        kept: tasks or episodes kept so far.
        finished: the shard is complete.
    """

    shard: str
    done: int
    total: int | None
    kept: int
    finished: bool = False


#: Receives progress; shards call it as they go.
ProgressSink = Callable[[ShardProgress], None]
#: A shard: one job, and where to report progress.
ShardFunction = Callable[[JobT, ProgressSink], ResultT]


def _ignore(_: ShardProgress) -> None:
    """A sink for callers that want no progress."""


def run_shards(
    function: ShardFunction[JobT, ResultT],
    jobs: Sequence[JobT],
    *,
    workers: int = 1,
    ray_address: str | None = None,
    progress: ProgressSink | None = None,
) -> list[ResultT]:
    """Run ``function`` on every job and return the results in job order.

    Args:
        function: a module-level function (Ray workers import it by name).
        jobs: picklable jobs, one per shard.
        workers: 1 runs the shards one after another in this process; more starts a local
            Ray instance with that many CPUs and runs one shard per CPU.
        ray_address: run on this Ray cluster instead (``auto``, or ``host:port``), one shard
            per CPU the cluster has; ``workers`` is then ignored.
        progress: receives each shard's progress, in this process.

    Raises:
        ConfigError: ``workers`` is not positive.
    """
    if workers < 1:
        raise ConfigError(f"workers={workers} must be positive")
    sink = progress or _ignore
    if workers == 1 and ray_address is None:
        return [function(job, sink) for job in jobs]
    return _run_on_ray(function, jobs, workers, ray_address, sink)


def _on_ray_worker(function: ShardFunction[JobT, ResultT], job: JobT, queue: Any) -> ResultT:
    """Runs in a Ray worker: the shard, its progress sent through ``queue``."""
    return function(job, queue.put)


def _run_on_ray(
    function: ShardFunction[JobT, ResultT],
    jobs: Sequence[JobT],
    workers: int,
    ray_address: str | None,
    sink: ProgressSink,
) -> list[ResultT]:
    import ray  # noqa: PLC0415  (only sharded runs pay for importing Ray)
    from ray.util.queue import Queue  # noqa: PLC0415

    with ray_session(workers, ray_address):
        queue = Queue()
        remote: Any = ray.remote(num_cpus=1)(_on_ray_worker)
        references = [remote.remote(function, job, queue) for job in jobs]
        pending = list(references)
        while pending:
            _, pending = ray.wait(pending, timeout=_POLL_S)
            while not queue.empty():
                sink(queue.get())
        while not queue.empty():
            sink(queue.get())
        results: list[ResultT] = ray.get(references)
        return results


@contextmanager
def ray_session(workers: int, ray_address: str | None) -> Iterator[None]:
    """Ray for the block: a local instance with ``workers`` CPUs, or the cluster at
    ``ray_address``; one already initialised in this process is used and left running."""
    import ray  # noqa: PLC0415

    started_here = not ray.is_initialized()
    if started_here:
        local = ray_address is None
        ray.init(
            address=ray_address,
            num_cpus=workers if local else None,
            object_store_memory=LOCAL_OBJECT_STORE_BYTES if local else None,
            include_dashboard=False,
            log_to_driver=False,
            logging_level=logging.WARNING,
        )
    try:
        yield
    finally:
        if started_here:
            ray.shutdown()
