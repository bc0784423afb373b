"""The real-robot route (docs/robots.md): ROS-free safety core, vehicle models and checks."""
