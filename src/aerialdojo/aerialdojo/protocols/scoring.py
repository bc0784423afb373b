"""Scoring a run whose traces name their benchmark: the registry finds its protocol, whose
formulas, radii and aggregation rule score the run (``BenchmarkProtocol.score_run``), and
what a result must carry to be compared with another: the scoring version and a digest of
the protocol settings (``ScoringRecord``)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from aerialdojo.errors import MetricsError
from aerialdojo.metrics.aggregate import ExcludedEpisode, RunMetrics
from aerialdojo.metrics.trace import EpisodeTrace
from aerialdojo.protocols import BenchmarkProtocol, protocol

#: The version of results written before scoring was versioned (no ``scoring`` block).
UNVERSIONED = 1


def run_protocol(traces: Sequence[EpisodeTrace]) -> BenchmarkProtocol:
    """The protocol of the one benchmark a run's traces name.

    Raises:
        MetricsError: no episodes, episodes of several benchmarks, or an unknown benchmark.
    """
    if not traces:
        raise MetricsError("no episodes to score")
    benchmarks = sorted({trace.benchmark for trace in traces})
    if len(benchmarks) > 1:
        raise MetricsError(f"one run must hold one benchmark, got {', '.join(benchmarks)}")
    try:
        return protocol(benchmarks[0])
    except MetricsError as error:
        raise MetricsError(f"episode {traces[0].episode_id!r}: {error}") from error


def score_run(
    traces: Iterable[EpisodeTrace],
    radii: Sequence[float] | None = None,
    excluded: Sequence[ExcludedEpisode] = (),
) -> RunMetrics:
    """Score every episode of a run of any benchmark with its protocol, and aggregate them.

    Args:
        traces: the run's episodes, all of one benchmark, in any order.
        radii: success radii in metres; None for the benchmark's defaults.
        excluded: infrastructure failures, listed in the result and never scored.

    Raises:
        MetricsError: as ``run_protocol`` and ``BenchmarkProtocol.score_run``.
    """
    traces = list(traces)
    return run_protocol(traces).score_run(traces, radii, excluded)


@dataclass(frozen=True, kw_only=True)
class ScoringRecord:
    """Under which rules and settings a run's numbers were computed: two results are
    comparable only where these match (``metrics.json`` ``scoring``, every report).

    Attributes:
        benchmark: the benchmark's name.
        title: its paper's short name.
        version: the protocol's ``scoring_version``.
        settings: the task manager parameters that change the numbers
            (``BenchmarkProtocol.settings_of``), one entry per distinct set the run's record
            names (a run and its rerun name theirs); empty where the record names none (a
            trajectory log, a robot's bag, a run from before settings were recorded).
        conditions: the episodes' conditions that are settings rather than task groups
            (AerialDojo: observation, odometry), name -> the values the episodes hold.
    """

    benchmark: str
    title: str
    version: int
    settings: tuple[Mapping[str, Any], ...]
    conditions: Mapping[str, tuple[str, ...]]

    @property
    def settings_sha256(self) -> str:
        """SHA-256 of the settings and conditions as canonical JSON."""
        text = json.dumps(
            {
                "conditions": {name: list(values) for name, values in self.conditions.items()},
                "settings": [dict(entry) for entry in self.settings],
            },
            sort_keys=True,
            separators=(",", ":"),
            allow_nan=False,
        )
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def to_dict(self) -> dict[str, Any]:
        """The ``scoring`` block of ``metrics.json``."""
        return {
            "benchmark": self.benchmark,
            "version": self.version,
            "settings": [dict(entry) for entry in self.settings],
            "conditions": {name: list(values) for name, values in self.conditions.items()},
            "settings_sha256": self.settings_sha256,
        }

    def text(self) -> str:
        """One line for reports: version, digest and the settings themselves."""
        settings = "; ".join(
            ", ".join(f"{name}={value}" for name, value in sorted(entry.items()))
            for entry in self.settings
        )
        conditions = ", ".join(
            f"{name}={'/'.join(values)}" for name, values in self.conditions.items()
        )
        shown = "; ".join(filter(None, [settings or "settings not recorded", conditions]))
        return (
            f"{self.title} scoring version {self.version}; protocol settings sha256 "
            f"{self.settings_sha256[:12]} ({shown})"
        )


def scoring_record(
    found: BenchmarkProtocol, run: RunMetrics, settings: Sequence[Mapping[str, Any]] = ()
) -> ScoringRecord:
    """The scoring record of ``run``, scored by ``found`` under the recorded ``settings``."""
    conditions: dict[str, set[str]] = {}
    for score in run.episodes:
        for name, value in score.conditions.items():
            if name not in found.group_keys:
                conditions.setdefault(name, set()).add(value)
    return ScoringRecord(
        benchmark=found.name,
        title=found.title,
        version=found.scoring_version,
        settings=tuple(settings),
        conditions={name: tuple(sorted(values)) for name, values in sorted(conditions.items())},
    )


def recorded_version(document: Mapping[str, Any]) -> int:
    """The scoring version a ``metrics.json`` document was written under
    (``UNVERSIONED`` where it has no ``scoring`` block)."""
    scoring = document.get("scoring")
    if isinstance(scoring, Mapping) and isinstance(scoring.get("version"), int):
        return int(scoring["version"])
    return UNVERSIONED


def recorded_settings_sha256(document: Mapping[str, Any]) -> str | None:
    """The protocol settings digest of a ``metrics.json`` document; None where it records
    no settings (written before scoring was versioned, or scored from a record that names
    none: a trajectory log, a robot's own bag)."""
    scoring = document.get("scoring")
    if not isinstance(scoring, Mapping) or not scoring.get("settings"):
        return None
    digest = scoring.get("settings_sha256")
    return digest if isinstance(digest, str) else None
