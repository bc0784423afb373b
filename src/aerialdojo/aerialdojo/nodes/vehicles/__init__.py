"""Vehicle adapters behind the safety gate (``aerialdojo.robot.vehicles`` registers them)."""
