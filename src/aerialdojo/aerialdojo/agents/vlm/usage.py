"""Model usage per episode and run, from a run's transcripts: decisions, requests, retries,
replies refused (by kind), repairs, fallbacks, tokens in and out, latency per decision and
cost from the configured prices. Counted over each scored episode's final attempt, so that a
replay of the run accounts exactly the same."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from aerialdojo.agents.vlm.parsing import REPLY_ERROR_KINDS
from aerialdojo.agents.vlm.transcript import final_attempts, read_records

_COUNTS = (
    "decisions",
    "requests",
    "retries",
    "refused_replies",
    "repairs",
    "fallbacks",
    "prompt_tokens",
    "completion_tokens",
)


def _tally(exchanges: Sequence[dict[str, Any]], prices: tuple[float, float]) -> dict[str, Any]:
    per_decision: dict[int, float] = {}
    counts = dict.fromkeys(_COUNTS, 0)
    refused = dict.fromkeys(REPLY_ERROR_KINDS, 0)
    decided: dict[int, int] = {}
    for record in exchanges:
        decision = int(record["decision"])
        per_decision[decision] = per_decision.get(decision, 0.0) + float(record["latency_s"])
        counts["requests"] += int(record["attempts"])
        counts["retries"] += max(int(record["attempts"]) - 1, 0)
        counts["repairs"] += record["kind"] == "repair"
        counts["prompt_tokens"] += int(record["prompt_tokens"])
        counts["completion_tokens"] += int(record["completion_tokens"])
        if record["error_kind"]:
            counts["refused_replies"] += 1
            refused[record["error_kind"]] += 1
        decided[decision] = decided.get(decision, 0) + (not record["error_kind"])
    counts["decisions"] = len(per_decision)
    # A decision whose every reply was refused (and not cut by a server fault) fell back.
    counts["fallbacks"] = sum(
        1
        for decision, legal in decided.items()
        if not legal and not any(r["server_error"] for r in exchanges if r["decision"] == decision)
    )
    latencies = list(per_decision.values())
    cost = (counts["prompt_tokens"] * prices[0] + counts["completion_tokens"] * prices[1]) / 1e6
    return {
        **counts,
        "refused_by_kind": refused,
        "latency_s_per_decision_mean": round(sum(latencies) / len(latencies), 6)
        if latencies
        else None,
        "latency_s_per_decision_max": round(max(latencies), 6) if latencies else None,
        "latency_s_total": round(sum(latencies), 6),
        "cost": round(cost, 6),
    }


def _sum(parts: Iterable[dict[str, Any]]) -> dict[str, Any]:
    parts = list(parts)
    total: dict[str, Any] = {key: sum(part[key] for part in parts) for key in _COUNTS}
    total["refused_by_kind"] = {
        kind: sum(part["refused_by_kind"][kind] for part in parts) for kind in REPLY_ERROR_KINDS
    }
    latency = sum(part["latency_s_total"] for part in parts)
    maxima = [part["latency_s_per_decision_max"] for part in parts if part["decisions"]]
    total["latency_s_total"] = round(latency, 6)
    total["latency_s_per_decision_mean"] = (
        round(latency / total["decisions"], 6) if total["decisions"] else None
    )
    total["latency_s_per_decision_max"] = max(maxima) if maxima else None
    total["cost"] = round(sum(part["cost"] for part in parts), 6)
    return total


def model_usage(transcripts_dir: Path, episode_ids: Sequence[str]) -> dict[str, Any] | None:
    """Usage of the scored episodes ``episode_ids``, per episode (and agent) and in total;
    None when the run has no transcript (no model agent).

    Raises:
        ConfigError: an unreadable transcript.
    """
    files = sorted(transcripts_dir.glob("*.jsonl")) if transcripts_dir.is_dir() else []
    if not files:
        return None
    episodes: dict[str, dict[str, Any]] = {episode_id: {} for episode_id in episode_ids}
    models = {}
    for path in files:
        records = list(read_records(path))
        header = next((r for r in records if r["type"] == "session"), {})
        agent = path.stem
        models[agent] = header.get("model", "")
        prices = (
            float(header.get("price_input_per_mtok", 0.0)),
            float(header.get("price_output_per_mtok", 0.0)),
        )
        attempts = final_attempts(records)
        for episode_id in episode_ids:
            if episode_id in attempts:
                episodes[episode_id][agent] = _tally(attempts[episode_id], prices)
    per_episode = {
        episode_id: {"agents": agents, "total": _sum(agents.values())}
        for episode_id, agents in episodes.items()
        if agents
    }
    return {
        "models": models,
        "episodes": per_episode,
        "total": _sum(entry["total"] for entry in per_episode.values()),
    }


def usage_section(usage: dict[str, Any]) -> str:
    """The report's "Model usage" section (Markdown)."""
    header = (
        "| Episode | Decisions | Requests | Retries | Refused replies | Repairs | Fallbacks | "
        "Tokens in | Tokens out | Latency/decision mean (s) | max (s) | Cost |\n"
        + "| --- " * 12
        + "|\n"
    )

    def row(name: str, entry: dict[str, Any]) -> str:
        mean, peak = entry["latency_s_per_decision_mean"], entry["latency_s_per_decision_max"]
        cells = [
            name,
            *(str(entry[key]) for key in _COUNTS[:6]),
            str(entry["prompt_tokens"]),
            str(entry["completion_tokens"]),
            "N/A" if mean is None else f"{mean:.3f}",
            "N/A" if peak is None else f"{peak:.3f}",
            f"{entry['cost']:.4f}",
        ]
        return "| " + " | ".join(cells) + " |\n"

    rows = "".join(row(eid, entry["total"]) for eid, entry in usage["episodes"].items())
    refused = usage["total"]["refused_by_kind"]
    models = ", ".join(f"{agent}: {model}" for agent, model in usage["models"].items())
    return (
        "## Model usage\n\n"
        f"Models: {models}. Requests include retries and repair turns; decisions do not "
        "(AGOS-Bench, appendix A.2.4). Refused replies by kind: "
        + ", ".join(f"{kind} {count}" for kind, count in refused.items())
        + ". Cost from the configured prices per million tokens.\n\n"
        + header
        + rows
        + row("**Total**", usage["total"])
    )
