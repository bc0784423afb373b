"""Sim vs real (``aerialdojo compare --sim NAME=RUN ... --real NAME=RUN ...``).

For each agent, its simulated run and its robot run of the same suite are matched episode by
episode (by episode id), and every metric is shown side by side with the difference
(real - sim). Over several agents, the agents' metrics in simulation and on the robot are
rank-correlated per metric, as Habitat's sim-to-real study compares agents (Kadian et al.,
"Sim2Real Predictivity: Does Evaluation in Simulation Predict Real-World Performance?",
IEEE RA-L 2020): a simulator is useful for a site when the order of agents it gives holds on
the robot, not when the numbers are equal.

Runs of different suites are refused, with the suites named: each run's ``metrics.json``
records the suite it ran (``run.suites``: name and SHA-256 of the file); for a run that
records none (scored from a trajectory log), the episodes' scene, setting and reference
length are compared instead. Runs scored under different scoring versions are refused too
(their numbers follow different rules: rescore the older bags); different protocol settings
are warned about.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scipy import stats

from aerialdojo.errors import MetricsError
from aerialdojo.metrics.aggregate import mean_or_none
from aerialdojo.metrics.scores import KIND_COUNT, KIND_DISTANCE, KIND_RATE, MetricSpec
from aerialdojo.report.compare import (
    one_benchmark_and_version,
    read_metrics,
    scoring_differences,
)
from aerialdojo.report.markdown import NOT_AVAILABLE, format_value, markdown_table

SIM = "sim"
REAL = "real"
WORLDS = (SIM, REAL)
#: Fewer agents than this give no rank correlation worth reading (two agents: +1 or -1).
MIN_AGENTS = 3
#: The per-episode facts shown beside the metrics (``metrics.json`` episode fields).
FACTS = (
    MetricSpec(key="steps_used", label="Steps", kind=KIND_COUNT, higher_is_better=False),
    MetricSpec(key="executed_length_m", label="Path", kind=KIND_DISTANCE, higher_is_better=False),
    MetricSpec(
        key="final_distance_m", label="Final dist", kind=KIND_DISTANCE, higher_is_better=False
    ),
)
#: What identifies an episode's task where a run records no suite.
_GROUND_TRUTH = ("scene", "setting", "reference_length_m")


@dataclass(frozen=True, kw_only=True)
class EpisodeSideBySide:
    """One episode of one agent in both worlds.

    Attributes:
        episode_id: the episode.
        sim, real: its ``metrics.json`` entry in each world.
    """

    episode_id: str
    sim: Mapping[str, Any]
    real: Mapping[str, Any]

    def value(self, world: str, key: str) -> float | None:
        """A metric value or fact of the episode in ``world``."""
        entry = self.sim if world == SIM else self.real
        raw = entry[key] if key in entry else entry["values"].get(key)
        return None if raw is None else float(raw)

    def delta(self, key: str) -> float | None:
        """real - sim, None where either is N/A."""
        sim, real = self.value(SIM, key), self.value(REAL, key)
        return None if sim is None or real is None else real - sim


@dataclass(frozen=True, kw_only=True)
class AgentComparison:
    """One agent's simulated and robot runs.

    Attributes:
        agent: the name the command line gave it.
        sim_dir, real_dir: the run directories.
        episodes: the episodes both runs scored, by episode id.
        only_sim, only_real: episodes one run scored and the other did not.
    """

    agent: str
    sim_dir: Path
    real_dir: Path
    episodes: tuple[EpisodeSideBySide, ...]
    only_sim: tuple[str, ...]
    only_real: tuple[str, ...]

    def mean(self, world: str, key: str, among: set[str] | None = None) -> float | None:
        """The mean of a metric over the compared episodes (those in ``among`` if given)."""
        return mean_or_none(
            episode.value(world, key)
            for episode in self.episodes
            if among is None or episode.episode_id in among
        )


@dataclass(frozen=True, kw_only=True)
class RankCorrelation:
    """How well the agents' order in simulation predicts their order on the robot, for one
    metric.

    Attributes:
        key: the metric.
        agents: the agents with a value in both worlds (n).
        spearman_rho, spearman_p: Spearman's rank correlation and its p-value.
        kendall_tau, kendall_p: Kendall's tau-b and its p-value.
        pearson_r: Pearson's correlation of the values (Kadian et al.'s SRCC).
        note: why a figure is missing, or what limits it.
    """

    key: str
    agents: int
    spearman_rho: float | None = None
    spearman_p: float | None = None
    kendall_tau: float | None = None
    kendall_p: float | None = None
    pearson_r: float | None = None
    note: str = ""


@dataclass(frozen=True, kw_only=True)
class SimRealComparison:
    """Several agents' simulated and robot runs of one suite.

    Attributes:
        benchmark: the runs' benchmark.
        suites: the suite every run recorded, None where some run records none.
        specs: the metrics every run has, in report order.
        agents: per agent, its runs matched episode by episode.
        ranked_episodes: the episodes every run scored: agents are ranked on these.
        correlations: per metric, the rank correlation of agents between sim and real.
        warnings: what makes the numbers less comparable than they look.
    """

    benchmark: str
    suites: tuple[Mapping[str, str], ...] | None
    specs: tuple[MetricSpec, ...]
    agents: tuple[AgentComparison, ...]
    ranked_episodes: tuple[str, ...]
    correlations: tuple[RankCorrelation, ...]
    warnings: tuple[str, ...]


def _suite_text(suites: Sequence[Mapping[str, str]]) -> str:
    if not suites:
        return "no suite recorded"
    return " + ".join(f"{s['name']} (sha256 {s['sha256'][:12]})" for s in suites)


def _check_suites(
    runs: Mapping[str, Mapping[str, Any]],
) -> tuple[tuple[Mapping[str, str], ...] | None, list[str]]:
    """The suite every run ran, or a refusal naming the runs and their suites; where a run
    records no suite, the episodes' ground truth must agree instead (with a warning)."""
    recorded = {
        label: tuple((s["name"], s["sha256"]) for s in data.get("run", {}).get("suites", ()))
        for label, data in runs.items()
    }
    known = {label: suites for label, suites in recorded.items() if suites}
    distinct = set(known.values())
    if len(distinct) > 1:
        by_suite: dict[tuple[tuple[str, str], ...], list[str]] = {}
        for label, suites in known.items():
            by_suite.setdefault(suites, []).append(label)
        listing = "; ".join(
            f"{_suite_text([{'name': n, 'sha256': h} for n, h in suites])}: {', '.join(labels)}"
            for suites, labels in by_suite.items()
        )
        raise MetricsError(
            f"the runs ran different suites ({listing}): compare runs of one suite (rebuild "
            "and rerun, or score the robot's bag against the suite the simulation ran)"
        )
    notes = []
    unknown = [label for label, suites in recorded.items() if not suites]
    if unknown:
        notes.append(
            f"{', '.join(unknown)} record(s) no suite (scored from a trajectory log, or "
            f"before runs recorded their suite): episodes were matched on their "
            f"{', '.join(_GROUND_TRUTH)} only"
        )
        _check_ground_truth(runs)
    if unknown or not distinct:
        return None, notes
    return tuple({"name": n, "sha256": h} for n, h in next(iter(distinct))), notes


def _check_ground_truth(runs: Mapping[str, Mapping[str, Any]]) -> None:
    """Refuse runs whose episodes of one id differ in scene, setting or reference length."""
    seen: dict[str, tuple[str, Mapping[str, Any]]] = {}
    for label, data in runs.items():
        for episode in data["episodes"]:
            first = seen.setdefault(episode["episode_id"], (label, episode))
            for field in _GROUND_TRUTH:
                if episode[field] != first[1][field]:
                    raise MetricsError(
                        f"the runs ran different suites: episode {episode['episode_id']} has "
                        f"{field} {first[1][field]!r} in {first[0]} but {episode[field]!r} in "
                        f"{label}"
                    )


def _shared_specs(
    runs: Mapping[str, Mapping[str, Any]],
) -> tuple[tuple[MetricSpec, ...], list[str]]:
    first = next(iter(runs.values()))
    everywhere = set.intersection(*({m["key"] for m in data["metrics"]} for data in runs.values()))
    specs = tuple(
        MetricSpec(
            key=m["key"],
            label=m["label"],
            kind=m["kind"],
            higher_is_better=m["higher_is_better"],
            conditional=m.get("conditional", False),
        )
        for m in first["metrics"]
        if m["key"] in everywhere
    )
    radii = {tuple(data["radii_m"]) for data in runs.values()}
    notes = []
    if len(radii) > 1:
        notes.append(
            "the runs were scored at different success radii "
            f"({', '.join(sorted(str(list(r)) for r in radii))}): only metrics at radii every "
            "run shares are compared"
        )
    return specs, notes


def _pair(agent: str, sim_dir: Path, real_dir: Path, sim: Any, real: Any) -> AgentComparison:
    by_id = {episode["episode_id"]: episode for episode in real["episodes"]}
    sim_ids = [episode["episode_id"] for episode in sim["episodes"]]
    return AgentComparison(
        agent=agent,
        sim_dir=sim_dir,
        real_dir=real_dir,
        episodes=tuple(
            EpisodeSideBySide(episode_id=e["episode_id"], sim=e, real=by_id[e["episode_id"]])
            for e in sorted(sim["episodes"], key=lambda e: e["episode_id"])
            if e["episode_id"] in by_id
        ),
        only_sim=tuple(sorted(set(sim_ids) - set(by_id))),
        only_real=tuple(sorted(set(by_id) - set(sim_ids))),
    )


def _sample(ids: Sequence[str]) -> str:
    return ", ".join(ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")


def _finite(value: Any) -> float | None:
    number = float(value)
    return number if math.isfinite(number) else None


def _correlation(key: str, sim: list[float], real: list[float]) -> RankCorrelation:
    n = len(sim)
    if n < MIN_AGENTS:
        return RankCorrelation(
            key=key,
            agents=n,
            note=f"n = {n} < {MIN_AGENTS}: fewer than three agents give no rank correlation "
            "worth reading (two are always +1 or -1)",
        )
    if len(set(sim)) == 1 or len(set(real)) == 1:
        world = "simulation" if len(set(sim)) == 1 else "on the robot"
        return RankCorrelation(
            key=key, agents=n, note=f"every agent scores the same {world}: no order to compare"
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy's small-sample notes; n is reported
        rho, rho_p = stats.spearmanr(sim, real)
        tau, tau_p = stats.kendalltau(sim, real)
        pearson, _ = stats.pearsonr(sim, real)
    return RankCorrelation(
        key=key,
        agents=n,
        spearman_rho=_finite(rho),
        spearman_p=_finite(rho_p),
        kendall_tau=_finite(tau),
        kendall_p=_finite(tau_p),
        pearson_r=_finite(pearson),
        note="few agents: read the p-values" if n < 10 else "",
    )


def compare_sim_real(sim: Mapping[str, Path], real: Mapping[str, Path]) -> SimRealComparison:
    """Match each agent's simulated run with its robot run and compare them.

    Args:
        sim: agent name -> run directory of its simulated run.
        real: agent name -> run directory of its robot run (the same names).

    Raises:
        MetricsError: no runs; an agent with a run in one world only; a missing or
            malformed ``metrics.json``; runs of different benchmarks, different suites
            (named, with their suites) or different scoring versions.
    """
    if not sim:
        raise MetricsError("no runs to compare: give --sim NAME=RUN_DIR and --real NAME=RUN_DIR")
    if set(sim) != set(real):
        missing = sorted(set(sim) ^ set(real))
        raise MetricsError(
            f"agent(s) {', '.join(missing)} have a run in one world only: every agent needs a "
            "sim run and a real run (--sim NAME=RUN_DIR --real NAME=RUN_DIR, same names)"
        )
    runs = {
        f"{world} {agent}": read_metrics(directory)
        for world, dirs in ((SIM, sim), (REAL, real))
        for agent, directory in dirs.items()
    }
    benchmark = one_benchmark_and_version(runs)
    suites, notes = _check_suites(runs)
    notes += scoring_differences(runs)
    specs, radius_notes = _shared_specs(runs)
    notes += radius_notes
    agents = tuple(
        _pair(agent, sim[agent], real[agent], runs[f"{SIM} {agent}"], runs[f"{REAL} {agent}"])
        for agent in sim
    )
    for pair in agents:
        for world, only in ((SIM, pair.only_sim), (REAL, pair.only_real)):
            if only:
                notes.append(
                    f"{pair.agent}: {len(only)} episode(s) only in {world}: {_sample(only)}"
                )
    ranked = set.intersection(*({e.episode_id for e in pair.episodes} for pair in agents))
    if len(agents) > 1 and any(len(pair.episodes) != len(ranked) for pair in agents):
        notes.append(
            f"agents are ranked on the {len(ranked)} episode(s) every run scored, not on all "
            "the episodes each pair shares"
        )
    correlations = []
    for spec in specs:
        values = [
            (pair.mean(SIM, spec.key, ranked), pair.mean(REAL, spec.key, ranked)) for pair in agents
        ]
        defined = [(s, r) for s, r in values if s is not None and r is not None]
        correlations.append(
            _correlation(spec.key, [s for s, _ in defined], [r for _, r in defined])
        )
    return SimRealComparison(
        benchmark=benchmark,
        suites=suites,
        specs=specs,
        agents=agents,
        ranked_episodes=tuple(sorted(ranked)),
        correlations=tuple(correlations),
        warnings=tuple(notes),
    )


def _signed(spec: MetricSpec, value: float | None) -> str:
    if value is None:
        return NOT_AVAILABLE
    scale = 100.0 if spec.kind == KIND_RATE else 1.0
    return f"{scale * value:+.2f}"


def _number(value: float | None, digits: int = 3) -> str:
    return NOT_AVAILABLE if value is None or math.isnan(value) else f"{value:.{digits}f}"


def _title(spec: MetricSpec) -> str:
    return spec.label if spec.kind == KIND_COUNT else f"{spec.label} ({spec.unit})"


def _cell(spec: MetricSpec, value: float | None, *, signed: bool = False) -> str:
    if spec.kind == KIND_COUNT and value is not None:
        return f"{value:+.0f}" if signed else f"{value:.0f}"
    return _signed(spec, value) if signed else format_value(spec, value)


def _episode_table(pair: AgentComparison, specs: Sequence[MetricSpec]) -> str:
    columns = [*FACTS, *specs]
    header = ["Episode", "World", "Ended", *(_title(spec) for spec in columns)]
    rows = []
    for episode in pair.episodes:
        for world in WORLDS:
            entry = episode.sim if world == SIM else episode.real
            rows.append(
                [episode.episode_id, world, str(entry["termination"])]
                + [_cell(spec, episode.value(world, spec.key)) for spec in columns]
            )
        rows.append(
            [episode.episode_id, "real - sim", ""]
            + [_cell(spec, episode.delta(spec.key), signed=True) for spec in columns]
        )
    return markdown_table(header, rows)


def _summary_table(comparison: SimRealComparison) -> str:
    ranked = set(comparison.ranked_episodes)
    rows = []
    for pair in comparison.agents:
        for spec in comparison.specs:
            sim, real = pair.mean(SIM, spec.key, ranked), pair.mean(REAL, spec.key, ranked)
            delta = None if sim is None or real is None else real - sim
            rows.append(
                [
                    pair.agent,
                    f"{spec.label} ({spec.unit})",
                    format_value(spec, sim),
                    format_value(spec, real),
                    _signed(spec, delta),
                ]
            )
    return markdown_table(["Agent", "Metric", "Sim", "Real", "Real - Sim"], rows)


def _correlation_table(comparison: SimRealComparison) -> str:
    labels = {spec.key: spec.label for spec in comparison.specs}

    def with_p(value: float | None, p: float | None) -> str:
        return NOT_AVAILABLE if value is None else f"{value:+.3f} (p {_number(p)})"

    return markdown_table(
        ["Metric", "Agents (n)", "Spearman rho", "Kendall tau", "Pearson r (SRCC)", "Note"],
        (
            [
                labels[c.key],
                str(c.agents),
                with_p(c.spearman_rho, c.spearman_p),
                with_p(c.kendall_tau, c.kendall_p),
                NOT_AVAILABLE if c.pearson_r is None else f"{c.pearson_r:+.3f}",
                c.note,
            ]
            for c in comparison.correlations
        ),
    )


def sim_real_markdown(comparison: SimRealComparison) -> str:
    """The comparison as Markdown: what ``aerialdojo compare --sim ... --real ...`` prints
    and writes to ``sim_real.md``."""
    parts = [
        "# Sim vs real",
        f"Benchmark: {comparison.benchmark}; suite: "
        + (_suite_text(comparison.suites) if comparison.suites else "not recorded by every run"),
        markdown_table(
            ["Agent", "Sim run", "Real run", "Episodes in both"],
            (
                [p.agent, str(p.sim_dir), str(p.real_dir), str(len(p.episodes))]
                for p in comparison.agents
            ),
        ),
    ]
    if comparison.warnings:
        parts.append("## Warnings\n\n" + "\n".join(f"- {note}" for note in comparison.warnings))
    parts.append(
        "## Rank correlation of agents, sim vs real\n\n"
        f"Each agent's mean over the {len(comparison.ranked_episodes)} episode(s) every run "
        "scored, in simulation against on the robot (Kadian et al., RA-L 2020, "
        '"Sim2Real Predictivity"; their SRCC is Pearson\'s r).\n\n' + _correlation_table(comparison)
    )
    parts.append("## Per agent\n\n" + _summary_table(comparison))
    for pair in comparison.agents:
        parts.append(
            f"## Per episode: {pair.agent}\n\nRates in %, distances in m; the third row of "
            "each episode is real - sim.\n\n" + _episode_table(pair, comparison.specs)
        )
    return "\n\n".join(parts) + "\n"


def sim_real_json(comparison: SimRealComparison) -> dict[str, Any]:
    """The comparison as plain JSON (``sim_real.json``): rates as fractions, like
    ``metrics.json``."""
    ranked = set(comparison.ranked_episodes)
    keys = [spec.key for spec in (*FACTS, *comparison.specs)]

    def side(episode: EpisodeSideBySide, world: str) -> dict[str, Any]:
        entry = episode.sim if world == SIM else episode.real
        return {"termination": entry["termination"], **{k: episode.value(world, k) for k in keys}}

    return {
        "format": "aerialdojo-sim-real/1",
        "benchmark": comparison.benchmark,
        "suites": [dict(s) for s in comparison.suites] if comparison.suites else None,
        "metrics": [
            {
                "key": s.key,
                "label": s.label,
                "kind": s.kind,
                "unit": s.unit,
                "higher_is_better": s.higher_is_better,
            }
            for s in comparison.specs
        ],
        "agents": [
            {
                "agent": pair.agent,
                "sim": str(pair.sim_dir),
                "real": str(pair.real_dir),
                "only_sim": list(pair.only_sim),
                "only_real": list(pair.only_real),
                "mean": {
                    spec.key: {w: pair.mean(w, spec.key, ranked) for w in WORLDS}
                    for spec in comparison.specs
                },
                "episodes": [
                    {
                        "episode_id": episode.episode_id,
                        SIM: side(episode, SIM),
                        REAL: side(episode, REAL),
                        "delta": {key: episode.delta(key) for key in keys},
                    }
                    for episode in pair.episodes
                ],
            }
            for pair in comparison.agents
        ],
        "ranking": {
            "episodes": list(comparison.ranked_episodes),
            "correlations": [vars(c) for c in comparison.correlations],
        },
        "warnings": list(comparison.warnings),
    }
