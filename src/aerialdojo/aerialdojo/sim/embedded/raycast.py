"""Embree ray casting (through ``embreex``) spread over the machine's cores."""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from embreex import rtcore_scene
from embreex.mesh_construction import TriangleMesh

# embreex releases the GIL while it traces, so threads give real parallelism.
_WORKERS = max(1, os.cpu_count() or 1)
_POOL = ThreadPoolExecutor(max_workers=_WORKERS, thread_name_prefix="aerialdojo-ray")
# Rays per work item: small enough to balance the cores, large enough to amortise numpy calls.
CHUNK_RAYS = 65536


class RayCaster:
    """One Embree scene over a triangle mesh.

    Args:
        vertices: (V, 3) positions.
        faces: (T, 3) vertex indices; primitive ids returned by ``cast`` index these.
    """

    def __init__(self, vertices: np.ndarray, faces: np.ndarray) -> None:
        self._scene = rtcore_scene.EmbreeScene()
        TriangleMesh(
            self._scene,
            np.ascontiguousarray(vertices, dtype=np.float32),
            np.ascontiguousarray(faces, dtype=np.int32),
        )

    def cast(self, origins: np.ndarray, directions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Trace rays on the calling thread.

        Args:
            origins: (N, 3) float32.
            directions: (N, 3) float32, not necessarily unit length.

        Returns:
            Primitive ids (int32, -1 for a miss) and hit parameters ``t`` (float32, in units of
            each direction's length; meaningless for misses).
        """
        result = self._scene.run(origins, directions, output=1)
        return result["primID"], result["tfar"]

    def cast_parallel(
        self, origins: np.ndarray, directions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """``cast`` split into chunks traced on all cores; same results, same order."""
        primitives = np.empty(len(directions), dtype=np.int32)
        distances = np.empty(len(directions), dtype=np.float32)

        def trace(chunk: slice) -> None:
            primitives[chunk], distances[chunk] = self.cast(origins[chunk], directions[chunk])

        run_chunked(len(directions), trace)
        return primitives, distances


def run_chunked(count: int, work: Callable[[slice], None]) -> None:
    """Call ``work`` on consecutive slices of ``range(count)`` on the shared thread pool."""
    chunks = [slice(start, min(start + CHUNK_RAYS, count)) for start in range(0, count, CHUNK_RAYS)]
    for future in [_POOL.submit(work, chunk) for chunk in chunks]:
        future.result()
