"""Whether this machine's Embree settles ties between coincident faces as the machines that
recorded the reference renders and suites did.

The embedded scenes have coincident faces: a flat roof slab's bottom lies exactly on its
building box's top (``sim/embedded/builder.py``), and other pieces overlap where two colours
meet. A ray crossing such a pair meets both faces at one distance, and which of the two
Embree reports depends on the machine (its BVH, built for the CPU's instruction set), not on
the code or on Python. The pixel digests in ``test_renderer.py``, the shipped suites (their
anchors go through the inside test's upward ray) and the site checks' inside test were all
recorded on machines where the roof's face wins in Harbor_1's warehouse. On a machine where
the other face wins (one of this project's development VMs: AMD EPYC, AVX2) those tests
cannot hold until the scenes lose their coincident faces (docs/tasks.md, "The shipped
suite"), and they skip there naming this, instead of failing for a reason no change of the
code made.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from aerialdojo.sim.embedded.scenes import load_scene

#: obj_024's first anchor candidate in Harbor_1: 0.92 m inside the warehouse's wall box,
#: touching nothing; the inside test's upward ray leaves it through the coincident faces.
_PROBE_SCENE, _PROBE_POINT = "Harbor_1", (57.1111, 82.0817, 5.0227)


@cache
def ties_as_recorded() -> bool:
    """Whether the probe point is free here, as on the machines the references came from."""
    world = load_scene(_PROBE_SCENE, 0, agent_radius_m=0.25).collision
    return world.sphere_is_free(np.array(_PROBE_POINT), 0.01)


def skip_unless_ties_as_recorded(what: str) -> None:
    """Skip the calling test, naming ``what`` depends on the tie, where Embree breaks it the
    other way."""
    if not ties_as_recorded():
        pytest.skip(
            f"{what} depends on which of two coincident faces Embree reports, and this "
            "machine's Embree reports the other one than the machines the references were "
            "recorded on (tests/embree_ties.py)"
        )
