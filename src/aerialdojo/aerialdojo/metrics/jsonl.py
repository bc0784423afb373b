"""Trajectory logs: episodes of any harness as JSON lines, validated, loaded and scored."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema

from aerialdojo.errors import MetricsError, TrajectoryLogError
from aerialdojo.metrics.aggregate import ExcludedEpisode, RunMetrics
from aerialdojo.metrics.scoring import score_run
from aerialdojo.metrics.trace import AgosCandidate, AgosRecord, EpisodeTrace

#: The schema version this code writes; it reads every 1.x.
SCHEMA_VERSION = "1.0"
RECORD_EPISODE = "episode"
RECORD_EXCLUDED = "excluded"


@dataclass(frozen=True, kw_only=True)
class TrajectoryLog:
    """The content of a trajectory log.

    Attributes:
        traces: the episodes, in file order.
        excluded: attempts lost to infrastructure failures, in file order.
    """

    traces: tuple[EpisodeTrace, ...]
    excluded: tuple[ExcludedEpisode, ...]


@functools.cache
def _validator() -> jsonschema.protocols.Validator:
    schema = trajectory_log_schema()
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    validator: jsonschema.protocols.Validator = validator_class(schema)
    return validator


def trajectory_log_schema() -> dict[str, Any]:
    """The JSON Schema of one log line (``aerialdojo/schemas/trajectory_log.schema.json``)."""
    text = resources.files("aerialdojo").joinpath("schemas/trajectory_log.schema.json")
    schema: dict[str, Any] = json.loads(text.read_text(encoding="utf-8"))
    return schema


def trace_to_record(trace: EpisodeTrace) -> dict[str, Any]:
    """The log line of ``trace`` as a JSON-ready dict (``record_to_trace`` inverts it)."""
    record: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "record": RECORD_EPISODE,
        "episode_id": trace.episode_id,
        "benchmark": trace.benchmark,
        "scene": trace.scene,
        "family": trace.family,
        "setting": trace.setting,
        "split": trace.split,
        "positions": [list(position) for position in trace.path],
        "stop_called": trace.stop_called,
        "collided": trace.collided,
        "collision_step": trace.collision_step,
        "steps_used": trace.steps_used,
        "action_budget": trace.action_budget,
        "target": list(trace.target),
        "reference_length_m": trace.reference_length_m,
        "termination": trace.termination,
    }
    if trace.conditions:
        record["conditions"] = dict(trace.conditions)
    if trace.agos is not None:
        agos = trace.agos
        record["agos"] = {
            "uav_decisions": agos.uav_decisions,
            "ugv_decisions": agos.ugv_decisions,
            "uav_budget": agos.uav_budget,
            "oracle_visible_uav_step": agos.oracle_visible_uav_step,
            "candidates": [
                {
                    "candidate_id": candidate.candidate_id,
                    "polygon_xy": [list(vertex) for vertex in candidate.polygon_xy],
                    "center": list(candidate.center),
                }
                for candidate in agos.candidates
            ],
            "confirmations": agos.confirmations,
            "confirmation_valid": agos.confirmation_valid,
            "ground_observation_support": agos.ground_observation_support,
            "candidate_workflow": agos.candidate_workflow,
        }
    return record


def record_to_trace(record: dict[str, Any]) -> EpisodeTrace:
    """Build the trace of a schema-valid episode record.

    Raises:
        MetricsError: the record breaks a consistency rule of ``EpisodeTrace``.
    """
    agos = record.get("agos")
    return EpisodeTrace(
        episode_id=record["episode_id"],
        benchmark=record["benchmark"],
        scene=record["scene"],
        family=record["family"],
        setting=record["setting"],
        split=record["split"],
        positions=record["positions"],
        stop_called=record["stop_called"],
        collided=record["collided"],
        collision_step=record["collision_step"],
        steps_used=record["steps_used"],
        action_budget=record["action_budget"],
        target=tuple(record["target"]),
        reference_length_m=record["reference_length_m"],
        termination=record["termination"],
        conditions=record.get("conditions", {}),
        agos=None
        if agos is None
        else AgosRecord(
            uav_decisions=agos["uav_decisions"],
            ugv_decisions=agos["ugv_decisions"],
            uav_budget=agos["uav_budget"],
            oracle_visible_uav_step=agos["oracle_visible_uav_step"],
            candidates=tuple(
                AgosCandidate(
                    candidate_id=candidate["candidate_id"],
                    polygon_xy=tuple(tuple(vertex) for vertex in candidate["polygon_xy"]),
                    center=tuple(candidate["center"]),
                )
                for candidate in agos["candidates"]
            ),
            confirmations=agos["confirmations"],
            confirmation_valid=agos["confirmation_valid"],
            ground_observation_support=agos["ground_observation_support"],
            candidate_workflow=agos.get("candidate_workflow", True),
        ),
    )


def write_trajectory_log(
    path: Path, traces: Iterable[EpisodeTrace], excluded: Iterable[ExcludedEpisode] = ()
) -> None:
    """Write episodes, then excluded attempts, one JSON object per line."""
    lines = [json.dumps(trace_to_record(trace), allow_nan=False) for trace in traces]
    lines += [
        json.dumps({"schema_version": SCHEMA_VERSION, "record": RECORD_EXCLUDED, **e.to_dict()})
        for e in excluded
    ]
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")


def _field_name(location: Iterable[str | int]) -> str:
    name = ""
    for part in location:
        name += f"[{part}]" if isinstance(part, int) else f".{part}" if name else part
    return name or "(record)"


def _schema_problems(document: Any) -> list[str]:
    """``field: problem`` for every schema violation of one line, in a stable order."""
    problems: dict[str, None] = {}  # ordered set: "required" errors repeat per property
    errors = sorted(
        _validator().iter_errors(document), key=lambda e: [str(part) for part in e.absolute_path]
    )
    for error in errors:
        location = list(error.absolute_path)
        if error.validator == "required" and isinstance(error.instance, dict):
            missing = [name for name in error.validator_value if name not in error.instance]
            for name in missing:
                problems[f"{_field_name([*location, name])}: required field is missing"] = None
        else:
            problems[f"{_field_name(location)}: {error.message}"] = None
    return list(problems)


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON number")


def load_trajectory_log(path: Path) -> TrajectoryLog:
    """Read and validate every line of a trajectory log.

    Blank lines are skipped. Each line is checked against the schema and then against the
    consistency rules of ``EpisodeTrace``; episode ids must be unique. Every problem of
    every line is collected before raising.

    Args:
        path: the ``.jsonl`` file.

    Raises:
        TrajectoryLogError: one or more bad lines, each listed as ``file:line: field:
            problem``; or the file cannot be read.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise TrajectoryLogError(str(path), [f"{path}: cannot read: {error}"]) from error
    problems: list[str] = []
    traces: list[EpisodeTrace] = []
    excluded: list[ExcludedEpisode] = []
    first_line_of: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            document = json.loads(line, parse_constant=_reject_constant)
        except ValueError as error:  # JSONDecodeError is a ValueError
            problems.append(f"{where}: (line): not valid JSON: {error}")
            continue
        schema_problems = _schema_problems(document)
        if schema_problems:
            problems += [f"{where}: {problem}" for problem in schema_problems]
            continue
        if document.get("record", RECORD_EPISODE) == RECORD_EXCLUDED:
            excluded.append(
                ExcludedEpisode(
                    episode_id=document["episode_id"],
                    attempt=document["attempt"],
                    reason=document["reason"],
                )
            )
            continue
        episode_id = document["episode_id"]
        if episode_id in first_line_of:
            problems.append(
                f"{where}: episode_id: {episode_id!r} repeats line {first_line_of[episode_id]}"
            )
            continue
        first_line_of[episode_id] = number
        try:
            traces.append(record_to_trace(document))
        except MetricsError as error:
            problems.append(f"{where}: {error}")
    if problems:
        raise TrajectoryLogError(str(path), problems)
    return TrajectoryLog(traces=tuple(traces), excluded=tuple(excluded))


def score_jsonl(path: Path, radii: Sequence[float] | None = None) -> RunMetrics:
    """Score a trajectory log with the evaluator's code (``scoring.score_run``).

    Args:
        path: the ``.jsonl`` file.
        radii: success radii in metres; None for the benchmark's defaults.

    Raises:
        TrajectoryLogError: bad lines (all of them listed).
        MetricsError: no episode in the file, mixed benchmarks or a bad radius.
    """
    log = load_trajectory_log(path)
    if not log.traces:
        raise MetricsError(f"{path}: no episode records to score")
    return score_run(log.traces, radii, log.excluded)
