"""Trajectory logs: episodes of any harness as JSON lines, validated, loaded and scored."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema

from aerialdojo.documents import LINE, DocumentError, parse_json
from aerialdojo.errors import MetricsError, TrajectoryLogError
from aerialdojo.metrics.aggregate import CAUSE_INFRASTRUCTURE, ExcludedEpisode
from aerialdojo.metrics.trace import (
    POSITIONS_FROM_ACTIONS,
    POSITIONS_FROM_POSE_TRACK,
    AgosCandidate,
    AgosRecord,
    ConvertedPositions,
    EpisodeTrace,
    convert_many,
)

#: The schema version this code writes; it reads every 1.x.
SCHEMA_VERSION = "1.1"
RECORD_EPISODE = "episode"
RECORD_EXCLUDED = "excluded"
#: The longest line read: an episode of 10,000 positions is about 0.6 MB; a longer line is
#: not a trajectory record (a file read whole by mistake) and is refused unread.
MAX_LINE_BYTES = LINE.max_bytes
#: Problems listed before the rest are only counted, so a wrong file gives a readable error.
MAX_PROBLEMS = 100


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
    if trace.positions_source != POSITIONS_FROM_ACTIONS:
        record["positions_source"] = trace.positions_source
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


def record_to_trace(
    record: dict[str, Any], positions: ConvertedPositions | None = None
) -> EpisodeTrace:
    """Build the trace of a schema-valid episode record.

    Args:
        record: the record.
        positions: its positions, converted with other records' (``records_to_traces``);
            None: converted here.

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
        positions=record["positions"] if positions is None else positions,
        stop_called=record["stop_called"],
        collided=record["collided"],
        collision_step=record["collision_step"],
        steps_used=record["steps_used"],
        action_budget=record["action_budget"],
        target=tuple(record["target"]),
        reference_length_m=record["reference_length_m"],
        termination=record["termination"],
        conditions=record.get("conditions", {}),
        positions_source=record.get("positions_source", POSITIONS_FROM_ACTIONS),
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


def records_to_traces(records: Sequence[dict[str, Any]]) -> list[EpisodeTrace]:
    """``record_to_trace`` of each of many records, their positions converted together
    (``convert_many``).

    Raises:
        MetricsError: as ``record_to_trace``, for the first record that breaks a rule.
    """
    converted = convert_many(
        [record.get("positions") if isinstance(record, dict) else None for record in records]
    )
    if converted is None:
        return [record_to_trace(record) for record in records]
    return list(map(record_to_trace, records, converted))


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


def plausibility_problems(trace: EpisodeTrace) -> list[str]:
    """What a recorded episode could not have done, beyond ``EpisodeTrace``'s own rules.

    - More actions than the budget allows.
    - Where positions follow the actions (every benchmark but the air-ground ones, and not a
      robot's pose track): one position per executed action that is not Stop, after the
      start.
    - AGOS (AGOS-Bench, appendix A.2.3): the UGV stops by a CONFIRM and only so, and a
      valid CONFIRM ends the episode and saw the target in the UGV's six views, so the
      ground observation supports it. A false CONFIRM ends it too where it used the last of
      the confirmation budget (1 by default); with more, a false one closes its candidate and
      the episode may go on and end by the decision budget, so several CONFIRMs, and
      CONFIRMs in an episode that did not stop, are legal.
    """
    problems = []
    where = f"episode {trace.episode_id!r}"
    if trace.steps_used > trace.action_budget:
        problems.append(
            f"{where}: steps_used={trace.steps_used} exceeds action_budget={trace.action_budget}"
        )
    agos = trace.agos
    if agos is None:
        if trace.positions_source == POSITIONS_FROM_POSE_TRACK:
            return problems
        expected = trace.steps_used + 1 - int(trace.stop_called)
        if len(trace.path) != expected:
            problems.append(
                f"{where}: positions: {len(trace.path)} for {trace.steps_used} actions; "
                f"expected {expected} (the start, then one per action but Stop)"
            )
        return problems
    if trace.stop_called and agos.confirmations == 0:
        problems.append(
            f"{where}: stop_called=True with agos.confirmations=0: the UGV stops by CONFIRM, "
            "and only so"
        )
    if agos.confirmation_valid and not trace.stop_called:
        problems.append(
            f"{where}: agos.confirmation_valid with stop_called=False: a valid CONFIRM ends "
            "the episode"
        )
    if agos.confirmation_valid and not agos.ground_observation_support:
        problems.append(
            f"{where}: agos.confirmation_valid without ground_observation_support: a valid "
            "CONFIRM sees the target in the UGV's six views"
        )
    return problems


def _lines(path: Path) -> Iterable[tuple[int, str | None]]:
    """(line number, text) of every line, read one at a time; None for a line too long to be
    a record (its text is skipped unread).

    Raises:
        OSError, UnicodeDecodeError: the file cannot be read as UTF-8 text.
    """
    with path.open("rb") as stream:
        number = 0
        while True:
            raw = stream.readline(MAX_LINE_BYTES + 1)
            if not raw:
                return
            number += 1
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                while raw and not raw.endswith(b"\n"):
                    raw = stream.readline(MAX_LINE_BYTES)
                yield number, None
                continue
            yield number, raw.decode("utf-8")


def load_trajectory_log(path: Path) -> TrajectoryLog:
    """Read and validate every line of a trajectory log, one line at a time.

    Blank lines are skipped. Each line is checked against the schema, then against the
    consistency rules of ``EpisodeTrace`` and ``plausibility_problems``; episode ids must be
    unique and no episode both scored and excluded. Every problem of every line is
    collected before raising (the first ``MAX_PROBLEMS`` listed, the rest counted).

    Args:
        path: the ``.jsonl`` file.

    Raises:
        TrajectoryLogError: one or more bad lines, each listed as ``file:line: field:
            problem``; or the file cannot be read.
    """
    reading = _LogReading(path)
    try:
        for number, line in _lines(path):
            if line is None:
                reading.problems.append(
                    f"{path}:{number}: (line): longer than {MAX_LINE_BYTES} bytes"
                )
            elif line.strip():
                reading.take(number, line)
    except (OSError, UnicodeDecodeError) as error:
        raise TrajectoryLogError(str(path), [f"{path}: cannot read: {error}"]) from error
    problems = reading.problems
    scored, excluded = reading.first_line_of, reading.excluded_line_of
    for episode_id in sorted(set(scored) & set(excluded)):
        problems.append(
            f"{path}:{excluded[episode_id]}: episode_id: {episode_id!r} is scored on "
            f"line {scored[episode_id]} and excluded here"
        )
    if problems:
        if len(problems) > MAX_PROBLEMS:
            more = len(problems) - MAX_PROBLEMS
            problems = [*problems[:MAX_PROBLEMS], f"{path}: ... and {more} more problems"]
        raise TrajectoryLogError(str(path), problems)
    return TrajectoryLog(traces=tuple(reading.traces), excluded=tuple(reading.excluded))


@dataclass
class _LogReading:
    """What the lines of a log read so far hold."""

    path: Path
    problems: list[str] = field(default_factory=list)
    traces: list[EpisodeTrace] = field(default_factory=list)
    excluded: list[ExcludedEpisode] = field(default_factory=list)
    first_line_of: dict[str, int] = field(default_factory=dict)
    excluded_line_of: dict[str, int] = field(default_factory=dict)

    def take(self, number: int, line: str) -> None:
        """Validate one line and keep its record, or its problems."""
        problems, first_line_of = self.problems, self.first_line_of
        where = f"{self.path}:{number}"
        try:
            document = parse_json(line.rstrip("\r\n"), LINE, where)
        except DocumentError as error:
            problems.append(f"{where}: (line): {error.reason}")
            return
        schema_problems = _schema_problems(document)
        if schema_problems:
            problems += [f"{where}: {problem}" for problem in schema_problems]
            return
        if document.get("record", RECORD_EPISODE) == RECORD_EXCLUDED:
            self.excluded.append(
                ExcludedEpisode(
                    episode_id=document["episode_id"],
                    attempt=document["attempt"],
                    reason=document["reason"],
                    cause=document.get("cause", CAUSE_INFRASTRUCTURE),
                )
            )
            self.excluded_line_of.setdefault(document["episode_id"], number)
            return
        episode_id = document["episode_id"]
        if episode_id in first_line_of:
            problems.append(
                f"{where}: episode_id: {episode_id!r} repeats line {first_line_of[episode_id]}"
            )
            return
        first_line_of[episode_id] = number
        try:
            trace = record_to_trace(document)
        except MetricsError as error:
            problems.append(f"{where}: {error}")
            return
        implausible = plausibility_problems(trace)
        problems += [f"{where}: {problem}" for problem in implausible]
        if not implausible:
            self.traces.append(trace)
