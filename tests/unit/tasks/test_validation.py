"""Bad suite files: every problem is listed with file, episode id and field."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from aerialdojo.errors import TaskFileError
from aerialdojo.tasks.suite import load_suite, validate_suite


def _copy(suite_path: Path, tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    shutil.copytree(suite_path.parent, tmp_path / "suite")
    path = tmp_path / "suite" / "suite.json"
    return path, json.loads(path.read_text())


def _by_id(document: dict[str, Any], episode_id: str) -> dict[str, Any]:
    return next(e for e in document["episodes"] if e["episode_id"] == episode_id)


def _problem(problems: list[str], path: Path, episode_id: str, field: str, words: str) -> None:
    prefix = f"{path}: {episode_id}: {field}: "
    matching = [p for p in problems if p.startswith(prefix) and words in p]
    assert matching, f"no problem {prefix}...{words}... in:\n" + "\n".join(problems)


def test_every_fault_is_listed(yard_suite_path: Path, tmp_path: Path) -> None:
    path, document = _copy(yard_suite_path, tmp_path)
    episodes = document["episodes"]
    ids = [e["episode_id"] for e in episodes]
    sem = [i for i in ids if i.endswith("-sem")]

    # 1. the setting does not match L
    _by_id(document, sem[0])["setting"] = "standard"
    # 2. a budget that is not the setting's
    _by_id(document, sem[1])["action_budget"] = 91
    # 3. a direction that is no compass direction (schema)
    _by_id(document, sem[2])["goal"]["direction"] = "NNE"
    # 4. twins that disagree beyond the representation
    _by_id(document, sem[3].replace("-sem", "-img"))["goal"]["object_name"] = "blue crate"
    # 5. a reference image that is not there
    missing = _by_id(document, sem[4].replace("-sem", "-img"))
    (path.parent / missing["goal"]["reference_image"]).unlink()
    # 6. an illegal action magnitude
    _by_id(document, sem[5])["reference"]["actions"][0][1] = 2.5
    # 7. a stored length that the poses do not give
    _by_id(document, sem[6])["reference"]["length_m"] += 0.5
    # 8. a split the distribution does not have
    ood = next(
        e for e in episodes if e["distribution"] == "ood" and e["episode_id"].endswith("-sem")
    )
    ood["split"] = "train"
    # 9. a missing required field (schema)
    del _by_id(document, sem[7])["start"]["yaw_deg"]
    # 10. a default selection naming no episode
    document["default_selection"].append("Yard_9-base-0000-sem")
    # 11. a duplicated episode
    episodes.append(dict(episodes[0]))
    path.write_text(json.dumps(document))

    problems = validate_suite(path)
    _problem(problems, path, sem[0], "setting", "'standard' but L=")
    _problem(problems, path, sem[1], "action_budget", "91 but base has 90")
    _problem(problems, path, sem[2], "goal.direction", '"NNE" is not one of')
    _problem(
        problems,
        path,
        sem[3].replace("-sem", "-img"),
        "goal.object_name",
        f"differs from its twin {sem[3]}",
    )
    _problem(problems, path, missing["episode_id"], "goal.reference_image", "does not exist")
    _problem(problems, path, sem[5], "reference.actions[0]", "does not take magnitude 2.5")
    _problem(problems, path, sem[6], "reference.length_m", "recomputing it from the file gives")
    _problem(problems, path, ood["episode_id"], "split", "'train' is not a split of ood scenes")
    _problem(problems, path, sem[7], "start", '"yaw_deg" is a required property')
    _problem(
        problems,
        path,
        "(suite)",
        "default_selection[6]",
        "'Yard_9-base-0000-sem' is not an episode",
    )
    _problem(problems, path, episodes[0]["episode_id"], "episode_id", "more than one episode")

    with pytest.raises(TaskFileError) as raised:
        load_suite(path)
    assert raised.value.problems == problems
    assert str(path) in str(raised.value)


def test_an_episode_outside_the_seeds_filters_is_reported(
    yard_suite_path: Path, tmp_path: Path
) -> None:
    path, document = _copy(yard_suite_path, tmp_path)
    episode = document["episodes"][0]
    # A near-straight route: kappa below 1.05 (and so also not the stored statistics).
    episode["reference"]["detour_ratio"] = 1.01
    path.write_text(json.dumps(document))
    problems = validate_suite(path)
    _problem(
        problems,
        path,
        episode["episode_id"],
        "reference.detour_ratio",
        "recomputing it from the file gives",
    )


def test_a_twin_without_its_partner_is_reported(yard_suite_path: Path, tmp_path: Path) -> None:
    path, document = _copy(yard_suite_path, tmp_path)
    dropped = document["episodes"].pop(1)
    document["default_selection"] = [
        i for i in document["default_selection"] if i != dropped["episode_id"]
    ]
    path.write_text(json.dumps(document))
    partner = dropped["episode_id"][:-3] + (
        "sem" if dropped["episode_id"].endswith("img") else "img"
    )
    _problem(
        validate_suite(path),
        path,
        partner,
        "episode_id",
        f"twin {dropped['episode_id']} is missing",
    )


def test_a_reference_that_stops_short_of_the_anchor_is_reported(
    yard_suite_path: Path, tmp_path: Path
) -> None:
    path, document = _copy(yard_suite_path, tmp_path)
    for episode in document["episodes"][:2]:  # both twins alike: only this fault
        reference = episode["reference"]
        reference["actions"].pop()
        reference["poses_xyz_m_yaw_deg"].pop()
    path.write_text(json.dumps(document))
    problems = validate_suite(path)
    _problem(
        problems,
        path,
        document["episodes"][0]["episode_id"],
        "reference.poses_xyz_m_yaw_deg",
        "from the target anchor",
    )


def test_unreadable_and_non_json_files(tmp_path: Path) -> None:
    missing = tmp_path / "absent.json"
    assert validate_suite(missing)[0].startswith(f"{missing}: cannot read")
    broken = tmp_path / "broken.json"
    broken.write_text('{"name": "x",\n  "episodes": [}\n')
    (problem,) = validate_suite(broken)
    assert problem.startswith(f"{broken}: line 2 column")
    with pytest.raises(TaskFileError):
        load_suite(broken)


def test_a_document_of_the_wrong_shape_lists_schema_problems(tmp_path: Path) -> None:
    path = tmp_path / "suite.json"
    path.write_text(json.dumps({"schema_version": "3.0", "name": "x", "episodes": {}}))
    problems = validate_suite(path)
    assert any("schema_version" in p and "does not match" in p for p in problems)
    assert any('"generation" is a required property' in p for p in problems)
    assert any(p.startswith(f"{path}: (suite): episodes: ") for p in problems)


def test_the_reference_length_is_what_its_actions_translate(
    yard_suite_path: Path, tmp_path: Path
) -> None:
    # Rounded poses once gave L 0.1 mm short of the executed length, so that an agent that
    # replayed the reference scored SPL 0.999995; L is now the actions' translation, exactly.
    path, document = _copy(yard_suite_path, tmp_path)
    episode = document["episodes"][0]
    reference = episode["reference"]
    moved = sum(m for name, m in reference["actions"] if name.startswith("Move"))
    assert reference["length_m"] == moved
    reference["length_m"] = round(moved - 1e-4, 4)
    path.write_text(json.dumps(document))
    problems = validate_suite(path)
    _problem(
        problems,
        path,
        episode["episode_id"],
        "reference.length_m",
        f"the reference actions translate {moved:g} m",
    )


def test_a_description_that_states_a_distance_is_refused(
    yard_suite_path: Path, tmp_path: Path
) -> None:
    # AerialDojo-200K, section 3.2: the goal names a landmark and a coarse direction; the
    # description tells the instance by its look, never by a range (issue 25).
    path, document = _copy(yard_suite_path, tmp_path)
    episode = document["episodes"][0]
    twin = _by_id(
        document,
        episode["episode_id"][:-3] + ("img" if episode["episode_id"].endswith("sem") else "sem"),
    )
    for entry in (episode, twin):
        entry["goal"]["description"] += ", about 20 m north of the tower"
    path.write_text(json.dumps(document))
    _problem(
        validate_suite(path),
        path,
        episode["episode_id"],
        "goal.description",
        "states a distance ('20 m'): the goal gives a landmark and a coarse direction",
    )
