# The two commands of the README. Both set the workspace up first (tools/bootstrap.sh).
#   make eval   evaluation on the embedded simulator; report under runs/<id>/
#   make test   the whole test suite, real-simulator bridges against fake servers included
# EVAL_ARGS / TEST_ARGS pass extra options, e.g. make eval EVAL_ARGS="--episodes 5".
SHELL := /bin/bash
EVAL_CONFIG ?= config/eval.yaml
EVAL_ARGS ?=
TEST_ARGS ?=

.PHONY: eval test lint bootstrap backends robot-msgs browser check-pythons clean

bootstrap:
	@tools/bootstrap.sh

# The real-simulator clients' own venvs: the tests run their bridges against fake servers.
backends: bootstrap
	@tools/bootstrap_backend.sh projectairsim carla-air

# The robot-side messages no registry serves (a px4_msgs subset, a mavros_msgs stand-in),
# for the robot route's tests (docs/robots.md, "Simulated robot").
robot-msgs: bootstrap
	@tools/build_robot_msgs.sh

# Headless Chromium for the test that opens report.html (it skips without one).
browser:
	@tools/install_browser.sh

eval: bootstrap
	@tools/run.sh aerialdojo eval --config $(EVAL_CONFIG) $(EVAL_ARGS)

test: backends robot-msgs
	@tools/run.sh python -m pytest tests --durations=15 $(TEST_ARGS)

# The pins resolve on every Python the README names (pip dry runs against PyPI).
check-pythons: bootstrap
	@tools/run.sh python tools/check_pythons.py

lint: bootstrap
	@tools/run.sh ruff check src tests benchmarks tools launch
	@tools/run.sh ruff format --check src tests benchmarks tools launch
	@tools/run.sh mypy
	@tools/run.sh codespell src tests benchmarks tools launch config README.md

clean:
	rm -rf build install log .venv .venv-projectairsim .venv-carla-air .robot-msgs
