"""The embedded simulator: procedural scenes, Embree ray-cast rendering, swept-sphere collision."""

from aerialdojo.sim.embedded.backend import EmbeddedBackend

__all__ = ["EmbeddedBackend"]
