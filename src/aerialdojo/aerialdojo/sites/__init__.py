"""Surveyed sites: the site file (frame, geofence, starts, targets, free-space map), its
collision world, and the AerialDojo-format suite built from it; ROS-free (docs/sites.md)."""
