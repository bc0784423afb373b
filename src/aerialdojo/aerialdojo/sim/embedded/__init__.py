"""The embedded simulator: procedural scenes, Embree ray-cast rendering, swept-sphere collision."""
