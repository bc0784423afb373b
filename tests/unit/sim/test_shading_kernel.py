"""The shading kernel's window grid against numpy's float32 arithmetic, value by value: the
images' bytes depend on both deciding glass identically (``shading_kernel``)."""

from __future__ import annotations

import numpy as np

from aerialdojo.sim.embedded.shading_kernel import _is_glass, _remainder


def _float32_samples() -> np.ndarray:
    rng = np.random.default_rng(7)
    spread = rng.uniform(-500.0, 500.0, 4000).astype(np.float32)
    # Exact multiples of the storey and bay and their neighbours: where the remainder is 0
    # or the divisor itself, and where numpy adds the divisor to a negative remainder.
    multiples = (np.arange(-40, 41, dtype=np.float32)[:, None] * np.float32([3.2, 2.6])).ravel()
    neighbours = np.concatenate(
        [np.nextafter(multiples, np.float32(np.inf)), np.nextafter(multiples, -np.inf)]
    ).astype(np.float32)
    tiny = np.float32([0.0, -0.0, 1e-30, -1e-30, 1e-7, -1e-7])
    return np.concatenate([spread, multiples, neighbours, tiny])


def test_remainder_is_numpys_float32_mod() -> None:
    values = _float32_samples()
    for divisor in (np.float32(3.2), np.float32(2.6)):
        expected = np.mod(values, divisor)
        got = np.array([_remainder(value, divisor) for value in values], dtype=np.float32)
        assert got.tobytes() == expected.tobytes()


def test_glass_is_numpys_decision() -> None:
    rng = np.random.default_rng(11)
    points = np.concatenate(
        [_float32_samples()[:, None].repeat(3, axis=1), rng.uniform(-300, 300, (4000, 3))]
    ).astype(np.float32)
    rng.shuffle(points[:, 1])
    normals = rng.normal(size=(len(points), 3)).astype(np.float32)
    # The renderer's grid before the kernel drew it, in numpy's float32.
    across = np.where(np.abs(normals[:, 0]) > np.abs(normals[:, 1]), points[:, 1], points[:, 0])
    floor_phase = np.mod(points[:, 2], 3.2) / 3.2
    bay_phase = np.mod(across, 2.6) / 2.6
    expected = (floor_phase > 0.3) & (floor_phase < 0.8) & (bay_phase > 0.2) & (bay_phase < 0.8)
    got = [
        _is_glass(point[0], point[1], point[2], normal[0], normal[1])
        for point, normal in zip(points, normals, strict=True)
    ]
    assert got == expected.tolist()
    assert 0.1 < expected.mean() < 0.5
