"""Bring your own policy: ``policy: package.module:ClassName``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from aerialdojo.agents.plugins import POLICY_NODES, agent_policy, uav_policy
from aerialdojo.errors import ConfigError
from aerialdojo.params import NODE_PARAMETERS, validate_parameters

PLUGIN = """
from aerialdojo.actions import Action


class Spinner:
    def __init__(self, seed=0):
        self.seed = seed

    def reset(self, goal):
        self.goal = goal

    def act(self, observation):
        return Action("TurnLeft", 15.0)


class NotAPolicy:
    pass


class Waiter:  # an AGOS policy: the same shape, AGOS's task and decision types

    def reset(self, task):
        self.role = task.agent

    def act(self, observation):
        from aerialdojo.agos.policies import Decision

        return Decision("WAIT", message=f"waiting at {observation.pose.x:.0f}")
"""


@pytest.fixture
def plugin_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    (tmp_path / "my_team_policies.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "my_team_policies"
    sys.modules.pop("my_team_policies", None)


def _values(policy: str) -> dict[str, object]:
    values: dict[str, object] = {spec.name: spec.default for spec in NODE_PARAMETERS["uav_agent"]}
    return {**values, "policy": policy, "seed": 7}


def test_a_class_implementing_the_protocol_is_loaded_with_the_seed(plugin_module: str) -> None:
    policy = uav_policy(_values(f"{plugin_module}:Spinner"), "uav_agent")
    assert type(policy).__name__ == "Spinner" and policy.seed == 7  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("my_team_policies:Missing", "has no class 'Missing'"),
        (
            "my_team_policies:NotAPolicy",
            "does not implement the policy protocol aerialdojo.agents.observation.Policy",
        ),
        ("no_such_package.policies:Agent", "cannot import module 'no_such_package.policies'"),
    ],
)
def test_a_bad_plugin_is_a_config_error(plugin_module: str, name: str, says: str) -> None:
    with pytest.raises(ConfigError, match=r"uav_agent\.policy") as raised:
        uav_policy(_values(name), "uav_agent")
    assert says in str(raised.value)


def test_the_config_accepts_plugin_names_and_refuses_others() -> None:
    assert validate_parameters("uav_agent", {"policy": "pkg.mod:Cls"}, "eval.yaml")
    with pytest.raises(ConfigError, match=r"or package\.module:ClassName"):
        validate_parameters("uav_agent", {"policy": "pkg.mod.Cls"}, "eval.yaml")


def test_the_agos_nodes_take_plugins_of_the_agos_protocol(plugin_module: str) -> None:
    values = {spec.name: spec.default for spec in NODE_PARAMETERS["ugv_agent"]}
    policy = agent_policy("ugv_agent", {**values, "policy": f"{plugin_module}:Waiter"}, "ugv")
    assert type(policy).__name__ == "Waiter"
    assert validate_parameters("agos_uav_agent", {"policy": "pkg.mod:Cls"}, "agos.yaml")
    with pytest.raises(ConfigError, match=r"the policy protocol aerialdojo\.agos\.policies"):
        agent_policy(
            "agos_uav_agent", {**values, "policy": f"{plugin_module}:NotAPolicy"}, "agos_uav"
        )


def test_the_citynav_node_takes_plugins_beside_its_map_policies(plugin_module: str) -> None:
    values = {spec.name: spec.default for spec in NODE_PARAMETERS["citynav_agent"]}
    plugin = agent_policy("citynav_agent", {**values, "policy": f"{plugin_module}:Spinner"}, "c")
    assert type(plugin).__name__ == "Spinner"
    # The GSM and colour policies act on the map the node builds, not through Policy.
    assert agent_policy("citynav_agent", {**values, "policy": "gsm"}, "c") is None
    replay = {**values, "policy": "oracle", "oracle_suite": "citynav_mini"}
    oracle = agent_policy("citynav_agent", replay, "c")
    assert getattr(oracle, "privileged", False)
    assert validate_parameters("citynav_agent", {"policy": "pkg.mod:Cls"}, "citynav.yaml")
    with pytest.raises(ConfigError, match=r"citynav_agent\.policy"):
        agent_policy("citynav_agent", {**values, "policy": "nowhere.mod:X"}, "citynav_agent")


def test_the_registry_says_which_policy_family_each_agent_node_runs() -> None:
    # A table, not a comparison of node names: every agent node with a policy parameter is
    # in it, and a node that runs no policy is refused by name.
    with_policy = {
        node for node, specs in NODE_PARAMETERS.items() if "policy" in {s.name for s in specs}
    }
    assert set(POLICY_NODES) == with_policy
    with pytest.raises(ConfigError, match="evaluator runs no policy; agent nodes: uav_agent"):
        agent_policy("evaluator", {}, "evaluator")
