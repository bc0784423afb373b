"""Publishing batches of messages on a thread of its own, off the service's control path."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterable
from typing import Any

from rclpy.publisher import Publisher

from aerialdojo.errors import ConfigError, TransportError


class FramePublisher:
    """Publishes batches of messages on a thread of its own, in the order they were submitted.

    A frame set of four 640x640 RGB-D views takes 10-20 ms of CPU to serialize and hand to DDS,
    and rclpy holds the GIL during each ``publish`` call. Submitting the set here lets
    the bridge answer the ``step`` request first; the worker then publishes image by image, so
    other callbacks interleave between images instead of waiting for the whole set. At most
    ``max_pending`` batches wait; ``submit`` blocks beyond that rather than drop an observation
    an agent is waiting for. The caller hands the messages over and must not change them after.

    Use as a context manager, or call ``close``; a publish that failed is raised as
    ``TransportError`` from the next ``submit``, ``flush`` or ``close``.
    """

    def __init__(
        self,
        max_pending: int = 2,
        name: str = "aerialdojo-frame-publisher",
        on_failure: Callable[[BaseException], None] | None = None,
    ) -> None:
        """Start the worker thread.

        Args:
            max_pending: batches that may wait before ``submit`` blocks.
            name: the worker thread's name (shown by debuggers and ``py-spy``).
            on_failure: called on the worker thread when a publish fails, so the owner can
                log it at once rather than at the next ``submit``.

        Raises:
            ConfigError: ``max_pending`` is below 1.
        """
        if max_pending < 1:
            raise ConfigError(f"FramePublisher max_pending={max_pending} must be at least 1")
        self._batches: queue.Queue[list[tuple[Publisher[Any], Any]] | None] = queue.Queue(
            max_pending
        )
        self._failure: BaseException | None = None
        self._on_failure = on_failure
        self._closed = False
        self._worker = threading.Thread(target=self._publish_batches, name=name, daemon=True)
        self._worker.start()

    def submit(self, batch: Iterable[tuple[Publisher[Any], Any]]) -> None:
        """Queue one batch of (publisher, message) pairs, e.g. every view of one step.

        Raises:
            TransportError: the publisher is closed, or an earlier publish failed.
        """
        self._raise_failure()
        if self._closed:
            raise TransportError("FramePublisher is closed; no more batches are accepted")
        self._batches.put(list(batch))

    def flush(self) -> None:
        """Wait until every submitted batch has been published.

        Raises:
            TransportError: a publish failed.
        """
        self._batches.join()
        self._raise_failure()

    def close(self) -> None:
        """Publish what is queued, then stop the worker.

        Raises:
            TransportError: a publish failed.
        """
        if not self._closed:
            self._closed = True
            self._batches.put(None)
            self._worker.join()
        self._raise_failure()

    def __enter__(self) -> FramePublisher:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _publish_batches(self) -> None:
        while True:
            batch = self._batches.get()
            try:
                if batch is None:
                    return
                if self._failure is None:
                    for publisher, message in batch:
                        publisher.publish(message)
            except Exception as error:  # handed to the caller's thread
                self._failure = error
                if self._on_failure is not None:
                    self._on_failure(error)
            finally:
                self._batches.task_done()

    def _raise_failure(self) -> None:
        if self._failure is not None:
            raise TransportError(f"publishing a queued frame failed: {self._failure!r}") from (
                self._failure
            )
