"""The simulation clock a bridge publishes, kept strictly increasing across resets."""

from __future__ import annotations

from aerialdojo.errors import SimulatorFaultError


class BridgeClock:
    """The published simulation clock: the backend's time plus an offset that grows at each
    reset whenever the backend's clock restarted, so /clock and stamps never repeat or go back
    (agents match frames to steps by stamp; bags are ordered by it)."""

    def __init__(self, step_s: float) -> None:
        self._step_s = step_s
        self._offset_s = 0.0
        self._last_s: float | None = None

    def stamp(self, backend_time_s: float, *, reset: bool, after_s: float = 0.0) -> float:
        """The published time of an observation the backend took at ``backend_time_s``.

        Args:
            backend_time_s: the backend's own time of the observation.
            reset: the observation starts an episode (the backend's clock may restart).
            after_s: at a reset, a time the stamp must exceed: a restarted bridge continues
                the run's clock from the last stamp the task manager saw. Zero too, so no
                stamp is ROS's "no time" (tf reads it as "the latest") and a bridge killed
                before its first step is not restarted to repeat that attempt's stamp.
        """
        published = backend_time_s + self._offset_s
        if reset and published <= after_s:
            self._offset_s += after_s + self._step_s - published
            published = after_s + self._step_s
        if self._last_s is not None and published <= self._last_s:
            if not reset:
                raise SimulatorFaultError(
                    f"simulator clock went back from {self._last_s - self._offset_s:.3f} s "
                    f"to {backend_time_s:.3f} s without a reset"
                )
            self._offset_s = self._last_s + self._step_s - backend_time_s
            published = self._last_s + self._step_s
        self._last_s = published
        return published
