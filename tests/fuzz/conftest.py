"""Property-based fuzzing of every input surface (issue 29, "Fuzzing"): service requests,
configs and overrides, suites, trajectory logs (metrics JSONL), mapping files and bags. The
property, for every surface: no crash and no traceback, only aerialdojo's own errors, each
naming its source, and nothing written outside the run.

The hypothesis profile comes from ``AERIALDOJO_FUZZ_PROFILE``:
  ``ci`` (default, ``make test``): 200 cases per test, the same ones every run (derandomized),
      so that CI fails only on a change of the code;
  ``nightly`` (``make fuzz``): 1,000 cases per test, new ones each run; a failure prints the
      ``@reproduce_failure`` blob that replays it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings

TESTS = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(TESTS / "unit" / "core"), str(TESTS / "node")]  # eventstream, rostest

PROFILE_VARIABLE = "AERIALDOJO_FUZZ_PROFILE"
_COMMON: dict[str, Any] = {
    "deadline": None,  # a shared 2-core machine: no per-case time limit
    "database": None,  # no .hypothesis/ in the checkout
    "suppress_health_check": [
        HealthCheck.too_slow,
        HealthCheck.function_scoped_fixture,
        HealthCheck.data_too_large,
        HealthCheck.filter_too_much,
    ],
    "print_blob": True,
}
settings.register_profile("ci", max_examples=200, derandomize=True, **_COMMON)
settings.register_profile("nightly", max_examples=1000, derandomize=False, **_COMMON)
_profile = os.environ.get(PROFILE_VARIABLE, "ci")
if _profile not in ("ci", "nightly"):
    raise SystemExit(f"{PROFILE_VARIABLE}={_profile!r}: use ci or nightly")
settings.load_profile(_profile)
