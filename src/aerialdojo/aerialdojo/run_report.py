"""From assembled episode events to a scored, written run: shared by the evaluator node
(live) and ``aerialdojo evaluate-bag`` (replay), so both produce the same ``metrics.json``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from aerialdojo.agents.vlm.usage import model_usage, usage_section
from aerialdojo.agos.report import ablation_table
from aerialdojo.events import EpisodeAssembler
from aerialdojo.metrics.aggregate import ExcludedEpisode, RunMetrics
from aerialdojo.metrics.plots import write_plots
from aerialdojo.metrics.report import REPORT_MD, summary_table, write_report
from aerialdojo.metrics.scoring import score_run
from aerialdojo.metrics.trace import EpisodeTrace

NOTES_FILE = "run_notes.md"
#: Where bag bytes recorded outside any episode are counted.
BETWEEN_EPISODES = "(between episodes)"


@dataclass(frozen=True)
class RunResult:
    """A run as scored.

    Attributes:
        metrics: the aggregated metrics; None when no episode finished.
        finished: the run announced its end (RUN_FINISHED).
        cut_short: the episode that started but never ended (run interrupted, bag cut).
        excluded: episodes lost to infrastructure failures on every attempt.
        traces: the scored episodes' traces (for the success-radius sweep plot).
        source_notes: what reading the run's record revealed (e.g. a bag never closed).
    """

    metrics: RunMetrics | None
    finished: bool
    cut_short: str | None
    excluded: tuple[ExcludedEpisode, ...]
    traces: tuple[EpisodeTrace, ...]
    source_notes: tuple[str, ...] = ()

    @property
    def warnings(self) -> list[str]:
        """What a reader of the numbers must know about how the run ended."""
        notes = list(self.source_notes)
        if not self.finished:
            notes.append("the run did not finish: only episodes that ended are scored")
        if self.cut_short:
            notes.append(f"episode {self.cut_short} was cut short and is not scored")
        if self.metrics is None:
            notes.append("no episode finished; there is nothing to score")
        return notes

    @property
    def summary_table(self) -> str:
        """The Markdown summary table, or the reason there is none."""
        table = summary_table(self.metrics) if self.metrics else "(no scored episodes)"
        return "\n".join([table, *(f"WARNING: {note}" for note in self.warnings)])


def score_assembled(
    assembler: EpisodeAssembler, radii: Sequence[float] | None, notes: Sequence[str] = ()
) -> RunResult:
    """Score every finished episode of ``assembler``.

    Args:
        assembler: events of one run, folded.
        radii: success radii in metres; None for the benchmark's defaults.
        notes: warnings about the record the events came from, passed on to the report.
    """
    last_failure = {f.episode_id: f for f in assembler.infra_failures}
    excluded = tuple(
        ExcludedEpisode(
            episode_id=episode_id,
            attempt=last_failure[episode_id].attempt + 1,
            reason=last_failure[episode_id].reason,
        )
        for episode_id in assembler.excluded_episodes()
    )
    metrics = score_run(assembler.traces, radii, excluded) if assembler.traces else None
    return RunResult(
        metrics=metrics,
        finished=assembler.finished,
        cut_short=assembler.open_episode,
        excluded=excluded,
        traces=tuple(assembler.traces),
        source_notes=tuple(notes),
    )


def write_run(
    run_dir: Path,
    result: RunResult,
    bag_bytes: Mapping[str, int] | None = None,
    transcripts_dir: Path | None = None,
) -> None:
    """Write ``metrics.json``, ``report.md``, ``episodes.csv`` and the plots (when anything
    was scored) and the run notes into ``run_dir``.

    Args:
        run_dir: created if missing.
        result: the scored run.
        bag_bytes: serialized bytes the bag holds per episode id (``BETWEEN_EPISODES`` for the
            rest), listed in the report; None when no bag was recorded.
        transcripts_dir: the run's model transcripts, whose usage (tokens, latency, cost,
            repairs, fallbacks) goes into ``metrics.json`` and the report; None or empty: no
            model agent ran.
    """
    run_dir.mkdir(parents=True, exist_ok=True)
    if result.metrics is not None:
        plots = write_plots(result.metrics, run_dir, result.traces)
        usage = (
            model_usage(transcripts_dir, [trace.episode_id for trace in result.traces])
            if transcripts_dir is not None
            else None
        )
        write_report(result.metrics, run_dir, plots, {"model_usage": usage} if usage else None)
        if usage:
            with (run_dir / REPORT_MD).open("a", encoding="utf-8") as report:
                report.write("\n" + usage_section(usage))
        if result.metrics.benchmark == "agos":
            with (run_dir / REPORT_MD).open("a", encoding="utf-8") as report:
                report.write("\n" + _agos_section(result.metrics))
        if bag_bytes:
            with (run_dir / REPORT_MD).open("a", encoding="utf-8") as report:
                report.write("\n" + _bag_section(bag_bytes))
    notes = result.warnings or ["the run finished and every started episode was scored"]
    (run_dir / NOTES_FILE).write_text("".join(f"- {note}\n" for note in notes), encoding="utf-8")


def _agos_section(metrics: RunMetrics) -> str:
    """The run laid out like AGOS-Bench, Table 4 (difficulties, then the total)."""
    return (
        "## AGOS by difficulty (AGOS-Bench, Table 4 layout)\n\n"
        + ablation_table({"this run": metrics.to_dict()})
        + "\nCompare conditions: `python -m aerialdojo.agos.report full=RUN_DIR "
        "no_e2a=RUN_DIR ...`\n"
    )


def _bag_section(bag_bytes: Mapping[str, int]) -> str:
    rows = "".join(
        f"| {episode} | {size / 1e6:.2f} |\n" for episode, size in sorted(bag_bytes.items())
    )
    total = sum(bag_bytes.values()) / 1e6
    return (
        "## Recording\n\n"
        f"The bag (`bag/`) holds {total:.2f} MB of messages.\n\n"
        "| Episode | Bag size (MB) |\n| --- | --- |\n" + rows
    )
