"""What the benchmark launch files share: ``eval.launch.py``'s graph with the benchmark's
config as the default. Imported only by launch files, where ``launch`` exists."""

from __future__ import annotations

from pathlib import Path
from typing import Any

#: Forwarded unchanged to eval.launch.py, which builds the nodes from the config
#: (``NODE.PARAM:=VALUE`` overrides reach it as launch configurations without forwarding).
FORWARDED = {
    "episodes": "Run at most this many of the selected episodes (empty: all)",
    "output_dir": "Directory that receives <run_id>/ (empty: the config's)",
    "run_id": "Name of the run directory (empty: a UTC timestamp)",
}


#: The robot configs: ``config/robot_<vehicle>.yaml`` (robot.launch.py's ``vehicle``).
ROBOT_CONFIG_PREFIX = "robot_"


def robot_configs(config_dir: Path) -> dict[str, Path]:
    """Each robot config of ``config_dir`` by its vehicle name."""
    return {
        path.stem.removeprefix(ROBOT_CONFIG_PREFIX): path
        for path in sorted(config_dir.glob(f"{ROBOT_CONFIG_PREFIX}*.yaml"))
    }


def evaluation_with_config(launch_dir: Path, config: Path, benchmark: str) -> Any:
    """The ``LaunchDescription`` including ``launch_dir/eval.launch.py`` with ``config`` as
    the default of its ``config`` argument; ``benchmark`` names it in the description."""
    from launch import LaunchDescription  # noqa: PLC0415
    from launch.actions import DeclareLaunchArgument, IncludeLaunchDescription  # noqa: PLC0415
    from launch.launch_description_sources import (  # noqa: PLC0415
        PythonLaunchDescriptionSource,
    )
    from launch.substitutions import LaunchConfiguration  # noqa: PLC0415

    return LaunchDescription(
        [
            DeclareLaunchArgument(
                "config",
                default_value=str(config),
                description=f"{benchmark} run config: one ros__parameters section per node",
            ),
            *(
                DeclareLaunchArgument(name, default_value="", description=description)
                for name, description in FORWARDED.items()
            ),
            IncludeLaunchDescription(
                PythonLaunchDescriptionSource(str(launch_dir / "eval.launch.py")),
                launch_arguments={
                    name: LaunchConfiguration(name) for name in ("config", *FORWARDED)
                }.items(),
            ),
        ]
    )
