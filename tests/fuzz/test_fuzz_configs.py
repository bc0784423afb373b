"""Fuzzed run configs and ``NODE.PARAM=VALUE`` overrides, checked as ``aerialdojo eval``
and the launch files check them (``graph.run_specs``): a valid graph or a ``ConfigError``
naming the file or the command line, and nothing written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from fuzz_inputs import files_under, outcome, spliced
from hypothesis import given
from hypothesis import strategies as st

from aerialdojo.graph import parse_overrides, run_specs
from aerialdojo.params import NODE_PARAMETERS
from aerialdojo.run_contract import run_id_problem

REPO = Path(__file__).resolve().parents[2]
SHIPPED = (REPO / "config" / "eval.yaml").read_text()
NODES = sorted(NODE_PARAMETERS)
PARAMS = sorted({spec.name for specs in NODE_PARAMETERS.values() for spec in specs})

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats()
    | st.text(max_size=24)
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=10,
)
parameters = st.dictionaries(st.sampled_from(PARAMS) | st.text(max_size=10), values, max_size=5)
sections = st.fixed_dictionaries({"ros__parameters": parameters}) | values
documents = st.dictionaries(st.sampled_from(NODES) | st.text(max_size=10), sections, max_size=6)


@st.composite
def mutated_shipped(draw: st.DrawFn) -> str:
    """The shipped config with a few spans replaced."""
    text = SHIPPED
    for _ in range(draw(st.integers(1, 4))):
        text = draw(spliced(text, span=40))
    return text


def _aliases(levels: int, width: int) -> str:
    lines = ['a0: &a0 ["lol"]']
    for level in range(1, levels):
        lines.append(f"a{level}: &a{level} [{', '.join([f'*a{level - 1}'] * width)}]")
    return "\n".join(lines) + "\n"


config_texts = (
    documents.map(lambda document: yaml.safe_dump(document, allow_unicode=True))
    | mutated_shipped()
    | st.text(max_size=300)
    | st.builds(_aliases, st.integers(1, 12), st.integers(1, 12))
    | st.integers(1, 5000).map(lambda depth: "a: " + "[" * depth + "]" * depth)
)
words = st.lists(
    st.builds(
        lambda node, name, value: f"{node}.{name}={value}",
        st.sampled_from(NODES),
        st.sampled_from(PARAMS),
        values.map(lambda value: yaml.safe_dump(value, default_flow_style=True).strip())
        | st.text(max_size=20),
    )
    | st.text(max_size=30),
    max_size=4,
)


@given(text=config_texts, overrides=words, raw=st.binary(max_size=64))
def test_a_fuzzed_config_gives_a_graph_or_a_named_error(
    tmp_path: Path, text: str, overrides: list[str], raw: bytes
) -> None:
    path = tmp_path / "config.yaml"
    path.write_bytes(text.encode("utf-8", "surrogatepass") + raw)
    before = files_under(tmp_path)

    def specs() -> Any:
        return run_specs(
            path,
            run_id="fuzz",
            output_dir=str(tmp_path / "runs"),
            overrides=parse_overrides(overrides),
        )

    found = outcome(specs, str(path), "command line")
    if isinstance(found, list):
        assert {spec.name for spec in found} >= {"sim_bridge", "task_manager", "evaluator"}
    assert files_under(tmp_path) == before  # checking a config writes nothing


@given(overrides=words)
def test_fuzzed_overrides_of_the_shipped_config_give_a_graph_or_name_the_command_line(
    tmp_path: Path, overrides: list[str]
) -> None:
    def specs() -> Any:
        return run_specs(
            REPO / "config" / "eval.yaml",
            run_id="fuzz",
            output_dir=str(tmp_path / "runs"),
            overrides=parse_overrides(overrides),
        )

    outcome(specs, "command line")
    assert not any(tmp_path.iterdir())


@given(run_id=st.text(max_size=40) | st.sampled_from(["a/b", "../x", ".", "..", "", "a\\b"]))
def test_a_run_id_is_accepted_only_as_one_new_directory_name(tmp_path: Path, run_id: str) -> None:
    # Issue 29, item 2: a run id is never a path out of, into or above --output.
    problem = run_id_problem(run_id)
    if problem is None:
        run_dir = tmp_path / run_id
        assert run_dir.parent == tmp_path and run_dir.name == run_id
        assert run_id not in (".", "..") and "/" not in run_id and "\\" not in run_id
    else:
        assert problem.strip()
