"""Task settings, candidate filters and train/test splits (AerialDojo-200K, sections 3.2-3.3)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

#: Candidates are kept only if the start lies outside the 3 m success region ...
MIN_EUCLIDEAN_M = 3.0
#: ... the reference is at least 5 m and below 100 m long ...
MIN_LENGTH_M = 5.0
MAX_LENGTH_M = 100.0
#: ... and it is not a near-straight line (kappa = L / d_E).
MIN_DETOUR_RATIO = 1.05


@dataclass(frozen=True, slots=True)
class Setting:
    """A task setting: a half-open range of reference lengths and its action budget.

    Attributes:
        name: machine name used in files and episode ids (``"base"``).
        label: the paper's name (``"Base"``).
        min_length_m: inclusive lower bound of the reference length L.
        max_length_m: exclusive upper bound of L.
        action_budget: actions an agent may take, Stop included.
    """

    name: str
    label: str
    min_length_m: float
    max_length_m: float
    action_budget: int

    def contains(self, length_m: float) -> bool:
        """Whether a reference of ``length_m`` metres belongs to this setting."""
        return self.min_length_m <= length_m < self.max_length_m


#: Base and Standard are the paper's (section 4.1). The paper does not state the Long-Horizon
#: budget; both stated budgets allow 3 actions per metre of their longest reference
#: (90 / 30 m, 180 / 60 m), and Long-Horizon keeps that rate: 3 x 100 m = 300.
SETTINGS: tuple[Setting, ...] = (
    Setting("base", "Base", 5.0, 30.0, 90),
    Setting("standard", "Standard", 30.0, 60.0, 180),
    Setting("long_horizon", "Long-Horizon", 60.0, 100.0, 300),
)
SETTINGS_BY_NAME = {setting.name: setting for setting in SETTINGS}


def setting_for_length(length_m: float) -> Setting | None:
    """The setting a reference length falls into, or None outside [5, 100) m."""
    for setting in SETTINGS:
        if setting.contains(length_m):
            return setting
    return None


def filter_problems(length_m: float, euclidean_m: float, *, detour: bool = True) -> list[str]:
    """Why a candidate fails the paper's filters (empty if it is kept).

    Args:
        length_m: reference length L (eq. 2).
        euclidean_m: start-to-anchor distance d_E (eq. 3).
        detour: apply the detour-ratio filter; False where L is not a route's length but
            d_E itself (an unmapped site: no route is known, so no detour either).
    """
    problems = []
    if not euclidean_m > MIN_EUCLIDEAN_M:
        problems.append(f"d_E={euclidean_m:.3f} m is not above {MIN_EUCLIDEAN_M:g} m")
    if not MIN_LENGTH_M <= length_m < MAX_LENGTH_M:
        problems.append(f"L={length_m:.3f} m is outside [{MIN_LENGTH_M:g}, {MAX_LENGTH_M:g}) m")
    if detour and euclidean_m > 0.0 and length_m / euclidean_m < MIN_DETOUR_RATIO:
        problems.append(
            f"kappa={length_m / euclidean_m:.4f} is below {MIN_DETOUR_RATIO:g} "
            "(a near-straight route)"
        )
    return problems


#: Split percentages per scene distribution (AerialDojo-200K, section 3.3): in-distribution scenes
#: 80% train / 20% test; out-of-distribution scenes 20% adaptation / 80% test. Integers keep the
#: rounding below exact.
SPLIT_PERCENTAGES: dict[str, tuple[tuple[str, int], tuple[str, int]]] = {
    "id": (("train", 80), ("test", 20)),
    "ood": (("adaptation", 20), ("test", 80)),
}


def legal_splits(distribution: str) -> tuple[str, str]:
    """The two split names of a scene distribution (``"id"`` or ``"ood"``).

    Raises:
        KeyError: unknown distribution.
    """
    (first, _), (second, _) = SPLIT_PERCENTAGES[distribution]
    return first, second


def assign_splits(settings: Sequence[str], distribution: str, seed: int) -> list[str]:
    """Split one scene's navigation tasks, stratified by setting.

    The scene as a whole gets round(percentage * n / 100) tasks in its first split (so it is within
    half a task of nominal); that count is shared out between settings by largest remainder,
    so every setting is within one task of nominal too. Which tasks of a setting go first is
    drawn from ``random.Random(seed)``.

    Args:
        settings: the setting name of each navigation task of the scene, in task order.
        distribution: ``"id"`` or ``"ood"``.
        seed: seed of the draw.

    Returns:
        The split name of each task, in the order of ``settings``.

    Raises:
        KeyError: unknown distribution.
    """
    (first, percent), (second, _) = SPLIT_PERCENTAGES[distribution]
    members: dict[str, list[int]] = {}
    for index, setting in enumerate(settings):
        members.setdefault(setting, []).append(index)
    quotas = {name: percent * len(indices) // 100 for name, indices in members.items()}
    rounded_total = (2 * percent * len(settings) + 100) // 200
    rng = random.Random(seed)
    # Largest remainder first; equal remainders in a seeded order, so that no setting is
    # always the one left out.
    names = sorted(members)
    rng.shuffle(names)
    by_remainder = sorted(names, key=lambda name: -(percent * len(members[name]) % 100))
    for name in by_remainder[: rounded_total - sum(quotas.values())]:
        quotas[name] += 1
    splits = [second] * len(settings)
    for name in sorted(members):
        for index in rng.sample(members[name], quotas[name]):
            splits[index] = first
    return splits
