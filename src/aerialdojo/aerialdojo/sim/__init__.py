"""ROS-free simulator backends behind one interface (``backend.SimulatorBackend``)."""
