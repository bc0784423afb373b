"""The CityNav protocol: aerial vision-and-language navigation over real cities (section 3).

Scoring only for now (``metrics.citynav``: NE, SR, OSR and SPL within a 20 m sphere of the
goal, episode means as the paper reports them); trajectory logs and bags of CityNav runs
are scored with it. Its episodes cannot be run by the task manager yet.
"""

from __future__ import annotations

from aerialdojo.events import PoseTraceBuilder
from aerialdojo.metrics import citynav as metrics
from aerialdojo.metrics.aggregate import RULE_EPISODE_POOLED
from aerialdojo.protocols import BenchmarkProtocol, register

PROTOCOL = register(
    BenchmarkProtocol(
        name="citynav",
        title="CityNav",
        default_radii=metrics.DEFAULT_RADII,
        aggregation_rule=RULE_EPISODE_POOLED,
        metric_specs=metrics.metric_specs,
        score_episode=metrics.score_episode,
        trace_builder=PoseTraceBuilder,
    )
)
