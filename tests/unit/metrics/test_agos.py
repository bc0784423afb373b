"""AGOS metrics worked by hand from AGOS-Bench, appendix A.2 and A.5 (target at (100, 50, 0.75))."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from aerialdojo.errors import MetricsError
from aerialdojo.metrics import agos
from aerialdojo.metrics.trace import AgosCandidate, AgosRecord, EpisodeTrace
from aerialdojo.protocols import agos as agos_protocol
from aerialdojo.protocols import protocol
from aerialdojo.protocols.scoring import score_run
from aerialdojo.report.markdown import render_report_md

TARGET = (100.0, 50.0, 0.75)
FAR = AgosCandidate(
    candidate_id="c1",
    polygon_xy=((200, 200), (210, 200), (210, 210), (200, 210)),
    center=(205.0, 205.0, 0.0),
)
ON_TARGET = AgosCandidate(
    candidate_id="c2",
    polygon_xy=((90, 40), (110, 40), (110, 60), (90, 60)),
    center=(100.0, 50.0, 0.0),
)


def _record(**overrides: Any) -> AgosRecord:
    fields: dict[str, Any] = {
        "uav_decisions": 12,
        "ugv_decisions": 8,
        "uav_budget": 40,
        "oracle_visible_uav_step": 10,
        "candidates": (FAR, ON_TARGET),
        "confirmations": 1,
        "confirmation_valid": True,
        "ground_observation_support": True,
    }
    fields.update(overrides)
    return AgosRecord(**fields)


@pytest.fixture
def make_agos(make_trace: Callable[..., EpisodeTrace]) -> Callable[..., EpisodeTrace]:
    """A confirmed AGOS episode: the UGV drives (0,50,0) -> (60,50,0) -> (80,50,0), L = 90 m."""

    def build(record: AgosRecord | None = None, **overrides: Any) -> EpisodeTrace:
        fields: dict[str, Any] = {
            "benchmark": "agos",
            "scene": "Town03",
            "family": "town03",
            "setting": "easy",
            "positions": ((0.0, 50.0, 0.0), (60.0, 50.0, 0.0), (80.0, 50.0, 0.0)),
            "steps_used": 20,
            "action_budget": 80,
            "target": TARGET,
            "reference_length_m": 90.0,
            "agos": record or _record(),
        }
        fields.update(overrides)
        return make_trace(**fields)

    return build


def test_confirmed_episode_scores_every_metric(make_agos: Callable[..., EpisodeTrace]) -> None:
    values = agos.score_episode(make_agos()).values
    assert values["sr"] == 1.0
    assert values["osr"] == 1.0
    assert values["spl"] == 1.0  # l = 80 m < L = 90 m
    assert values["ne_m"] == pytest.approx(math.hypot(20.0, 0.75))
    assert values["ase"] == 31.0 / 40.0  # (T - tau + 1) / T = (40 - 10 + 1) / 40
    # Rank 1 is 180.3 m away: 1 * 50 / 230.3 = 0.217; rank 2 contains the target centre:
    # 1 / log2(3) * 50 / 50 = 0.631, the maximum.
    assert values["acg"] == pytest.approx(1.0 / math.log2(3.0))
    assert values["gva"] == 1.0
    assert (values["ds"], values["ds_uav"], values["ds_ugv"]) == (20.0, 12.0, 8.0)
    assert values["cerr_m"] == 0.75  # the best candidate centre lies 0.75 m below the target


def test_acg_rank_discount_prefers_an_early_candidate() -> None:
    # The same on-target candidate scores 1 at rank 1 and 1 / log2(4) = 0.5 at rank 3.
    assert agos.aerial_candidate_guidance(_record(candidates=(ON_TARGET,)), TARGET) == 1.0
    late = _record(candidates=(FAR, FAR, ON_TARGET))
    assert agos.aerial_candidate_guidance(late, TARGET) == 0.5
    # A candidate 50 m beside the target at rank 1: R / (R + 50) = 0.5.
    beside = AgosCandidate(
        candidate_id="b",
        polygon_xy=((150, 40), (160, 40), (160, 60), (150, 60)),
        center=(155.0, 50.0, 0.0),
    )
    assert agos.aerial_candidate_guidance(_record(candidates=(beside,)), TARGET) == 0.5
    assert agos.aerial_candidate_guidance(_record(candidates=()), TARGET) == 0.0


@pytest.mark.parametrize(("tau", "expected"), [(None, 0.0), (1, 1.0), (40, 1.0 / 40.0)])
def test_ase_ends(tau: int | None, expected: float) -> None:
    assert agos.aerial_search_efficiency(_record(oracle_visible_uav_step=tau)) == expected


def _gva_episode(
    make_agos: Callable[..., EpisodeTrace],
    episode_id: str,
    *,
    observed: bool,
    confirmations: int,
    valid: bool,
) -> EpisodeTrace:
    return make_agos(
        episode_id=episode_id,
        record=_record(
            ground_observation_support=observed,
            confirmations=confirmations,
            confirmation_valid=valid,
        ),
        stop_called=confirmations > 0,
        termination="stopped" if confirmations > 0 else "budget_exhausted",
    )


def test_gva_inclusion_mask_and_support(make_agos: Callable[..., EpisodeTrace]) -> None:
    traces = [
        _gva_episode(make_agos, "valid", observed=True, confirmations=1, valid=True),
        _gva_episode(make_agos, "seen_unconfirmed", observed=True, confirmations=0, valid=False),
        _gva_episode(make_agos, "false_confirm", observed=False, confirmations=1, valid=False),
        _gva_episode(make_agos, "never_reached", observed=False, confirmations=0, valid=False),
    ]
    run = score_run(traces)
    # V = (1, 1, 1, 0): GVA = 1 / 3 with GVA-Support 3; SR counts all four episodes.
    assert run.overall.values["gva"] == pytest.approx(1.0 / 3.0)
    assert run.overall.support["gva"] == 3
    assert run.overall.values["sr"] == 0.25
    # NE only over the two episodes that ended with a CONFIRM.
    assert run.overall.support["ne_m"] == 2
    assert run.radii == ()


def test_gva_without_support_is_not_available(make_agos: Callable[..., EpisodeTrace]) -> None:
    run = score_run(
        [_gva_episode(make_agos, "never_reached", observed=False, confirmations=0, valid=False)]
    )
    assert (run.overall.values["gva"], run.overall.support["gva"]) == (None, 0)
    assert run.overall.values["ne_m"] is None
    summary = render_report_md(run, protocol("agos")).split("## Episodes")[0]
    assert "| GVA (%) | GVA-Support |" in summary
    assert "| N/A | 0 |" in summary


def test_no_candidates_leave_cerr_without_support(make_agos: Callable[..., EpisodeTrace]) -> None:
    values = agos.score_episode(make_agos(record=_record(candidates=()))).values
    assert (values["cerr_m"], values["acg"]) == (None, 0.0)


def test_invalid_confirmation_fails_sr_and_spl(make_agos: Callable[..., EpisodeTrace]) -> None:
    values = agos.score_episode(make_agos(record=_record(confirmation_valid=False))).values
    assert (values["sr"], values["spl"], values["gva"]) == (0.0, 0.0, 0.0)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"oracle_visible_uav_step": 0}, r"oracle_visible_uav_step=0 must lie in \[1, 40\]"),
        ({"oracle_visible_uav_step": 41}, "oracle_visible_uav_step=41"),
        ({"confirmations": 0, "confirmation_valid": True}, "confirmations=0"),
        ({"uav_decisions": -1}, "uav_decisions=-1"),
    ],
)
def test_inconsistent_records_are_refused(
    make_agos: Callable[..., EpisodeTrace], overrides: dict[str, Any], message: str
) -> None:
    with pytest.raises(MetricsError, match=message):
        make_agos(record=_record(**overrides))


def test_record_required_for_agos_only(make_trace: Callable[..., EpisodeTrace]) -> None:
    # The protocol checks it where the trace is scored: metrics know no benchmark.
    with pytest.raises(MetricsError, match="agos record"):
        score_run([make_trace(benchmark="agos")])
    with pytest.raises(MetricsError, match="agos record"):
        score_run([make_trace(agos=_record())])
    with pytest.raises(MetricsError, match="vertices"):
        AgosCandidate(candidate_id="x", polygon_xy=((0, 0), (1, 1)), center=(0.0, 0.0, 0.0))


def test_acg_is_undefined_for_the_baseline(make_agos: Callable[..., EpisodeTrace]) -> None:
    # AGOS-Bench: "Baselines are omitted because they do not construct the structured
    # candidate regions required to define ACG".
    baseline = _record(candidates=(), candidate_workflow=False)
    run = score_run(
        [
            make_agos(baseline, episode_id="b1", conditions={"mode": "baseline"}),
            make_agos(_record(candidates=()), episode_id="a1", conditions={"mode": "agent"}),
        ]
    )
    by_id = {score.episode_id: score.values for score in run.episodes}
    assert by_id["b1"]["acg"] is None and by_id["a1"]["acg"] == 0.0
    assert run.overall.support["acg"] == 1
    assert run.by_condition["mode"]["baseline"].values["acg"] is None
    with pytest.raises(MetricsError, match="candidates without the candidate workflow"):
        _record(candidate_workflow=False).check("b2")


def test_the_report_gives_every_rate_in_percent_in_every_table(
    make_agos: Callable[..., EpisodeTrace],
) -> None:
    # Issue 16, item 8: SPL 75.00 % in the summary, 0.750 in the Table 4 layout below it.
    run = score_run(
        [
            _gva_episode(make_agos, "valid", observed=True, confirmations=1, valid=True),
            _gva_episode(make_agos, "false_confirm", observed=False, confirmations=1, valid=False),
        ]
    )
    report = render_report_md(run, protocol("agos"), sections=protocol("agos").report_sections(run))
    table4 = report.split("Table 4 layout)")[1]
    for key in ("spl", "ase", "acg"):
        value = run.overall.values[key]
        assert value is not None and 0.0 < value < 1.0, key
        assert f"{100.0 * value:.1f}%" in table4, key
        assert f"{value:.3f}" not in report, key


def test_table3_overall_is_the_macro_average_over_difficulties(
    make_agos: Callable[..., EpisodeTrace],
) -> None:
    # One confirmed Easy episode and three Hard ones that never confirm: pooled over the four
    # episodes SR is 25 %, but the paper's Overall weighs each difficulty once (Table 3 and
    # "Effect of the agentic protocol": Qwen3.7-Plus's 7.6 % is (14.3 + 4.3 + 4.3) / 3).
    hard = [
        _gva_episode(make_agos, f"hard{index}", observed=False, confirmations=0, valid=False)
        for index in range(3)
    ]
    easy = make_agos(episode_id="easy")
    run = score_run([easy, *(replace(trace, setting="hard") for trace in hard)]).to_dict()
    assert run["overall"]["values"]["sr"] == 0.25
    assert agos_protocol.macro_over_difficulties(run, "sr") == 0.5
    # NE is defined for the Easy episode only (no CONFIRM on Hard): its mean over the
    # difficulties where it is defined.
    assert agos_protocol.macro_over_difficulties(run, "ne_m") == pytest.approx(
        math.hypot(20.0, 0.75)
    )
    row = agos_protocol.table3({"run": run}).splitlines()[2].split(" | ")
    overall_sr = row[2 + 3 * len(agos_protocol.TABLE3_COLUMNS)]
    assert overall_sr == "50.0%"
    assert row[2 + len(agos_protocol.TABLE3_COLUMNS)] == "N/A"  # no Mid episode: Mid SR
