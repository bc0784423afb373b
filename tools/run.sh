#!/usr/bin/env bash
# Runs a command inside the workspace environment: the venv, the built install/ overlay and
# the shipped DDS transport profile. Usage: tools/run.sh <command> [args...]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.venv"
[[ -f "$root/install/setup.bash" ]] || { echo "aerialdojo: workspace not built; run tools/bootstrap.sh" >&2; exit 1; }
# shellcheck source=/dev/null
source "$venv/bin/activate"
if [[ -z "${ROS_DISTRO:-}" ]]; then
  export AMENT_PREFIX_PATH="$venv${AMENT_PREFIX_PATH:+:$AMENT_PREFIX_PATH}"
fi
# colcon's setup scripts read unset variables; relax nounset while sourcing them.
set +u
# shellcheck source=/dev/null
source "$root/install/setup.bash"
# The robot test messages (px4_msgs subset, mavros_msgs stand-in), once built by
# tools/build_robot_msgs.sh (make test does).
if [[ -f "$root/.robot-msgs/install/setup.bash" ]]; then
  # shellcheck source=/dev/null
  source "$root/.robot-msgs/install/setup.bash"
fi
set -u
# The shipped single-host transport profile unless the user chose otherwise
# (config/transport/README.md; aerialdojo.transport.transport_environment sets the same).
export RMW_IMPLEMENTATION="${RMW_IMPLEMENTATION:-rmw_fastrtps_cpp}"
# Fast DDS 3 (Kilted) reads FASTDDS_..., Fast DDS 2 (Humble, Jazzy) FASTRTPS_...: both are set.
profile="${FASTDDS_DEFAULT_PROFILES_FILE:-${FASTRTPS_DEFAULT_PROFILES_FILE:-$root/config/transport/fastdds_shm.xml}}"
export FASTDDS_DEFAULT_PROFILES_FILE="${FASTDDS_DEFAULT_PROFILES_FILE:-$profile}"
export FASTRTPS_DEFAULT_PROFILES_FILE="${FASTRTPS_DEFAULT_PROFILES_FILE:-$profile}"
export ROS_AUTOMATIC_DISCOVERY_RANGE="${ROS_AUTOMATIC_DISCOVERY_RANGE:-LOCALHOST}"
# The `aerialdojo` command (colcon installs console scripts under lib/<package>).
export PATH="$root/install/aerialdojo/lib/aerialdojo:$PATH"
# Where backend venvs live (aerialdojo.graph.node_interpreter).
export AERIALDOJO_ROOT="$root"
exec "$@"
