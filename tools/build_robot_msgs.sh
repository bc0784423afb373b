#!/usr/bin/env bash
# Builds the robot-side message packages no registry serves, for the tests only, into
# .robot-msgs/install (tools/run.sh sources it when present):
#   px4_msgs: only the messages aerialdojo's PX4 adapter and simulated robot use, taken from
#     the vendored px4_msgs sources (shared/vendor/px4_msgs_sources.tar.gz, or
#     $AERIALDOJO_VENDOR_DIR), release $AERIALDOJO_PX4_MSGS (1.18, or 1.16). The sources
#     stay outside the repository: they are copied into .robot-msgs/src at build time.
#   mavros_msgs: the test stand-in in compat/mavros_msgs (State only).
# The whole px4_msgs package (259 messages) takes 15 min on 2 cores; the subset a fraction.
# A second run with unchanged inputs costs about a second. Without the tarball it builds
# mavros_msgs alone and says so (the PX4 tests then skip).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.venv"
out="$root/.robot-msgs"
release="${AERIALDOJO_PX4_MSGS:-1.18}"
say() { printf 'aerialdojo: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }
[[ -x "$venv/bin/python" ]] || die "run tools/bootstrap.sh first"
[[ "$release" == 1.16 || "$release" == 1.18 ]] || die "AERIALDOJO_PX4_MSGS=$release: use 1.16 or 1.18"

# The messages of the PX4 adapter (nodes/vehicles/px4.py) and of the simulated robot's PX4
# contract (nodes/sim_px4.py); nothing in them nests another message.
px4_messages=(OffboardControlMode TrajectorySetpoint VehicleCommand VehicleCommandAck
  VehicleStatus VehicleOdometry BatteryStatus ManualControlSetpoint)

tarball=""
for candidate in ${AERIALDOJO_VENDOR_DIR:+"$AERIALDOJO_VENDOR_DIR/px4_msgs_sources.tar.gz"} \
    "$root"/../shared/vendor/px4_msgs_sources.tar.gz "$root"/../../shared/vendor/px4_msgs_sources.tar.gz \
    "$root"/../../../shared/vendor/px4_msgs_sources.tar.gz; do
  [[ -f "$candidate" ]] && { tarball="$candidate"; break; }
done

key="$release $(cat "$venv/.deps-key" 2>/dev/null) ${px4_messages[*]} \
$([[ -n "$tarball" ]] && sha256sum "$tarball" | cut -c1-16) \
$(cd "$root" && find compat/mavros_msgs tools/build_robot_msgs.sh -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16)"
if [[ "$(cat "$out/install/.build-key" 2>/dev/null)" == "$key" ]]; then
  exit 0
fi
say "building the robot test messages (px4_msgs $release subset, mavros_msgs stand-in)"
rm -rf "$out"
mkdir -p "$out/src"
cp -r "$root/compat/mavros_msgs" "$out/src/"
if [[ -n "$tarball" ]]; then
  tar -xzf "$tarball" -C "$out" "px4_msgs-$release"
  mkdir -p "$out/src/px4_msgs/msg"
  cp "$out/px4_msgs-$release"/{CMakeLists.txt,package.xml,LICENSE} "$out/src/px4_msgs/"
  for message in "${px4_messages[@]}"; do
    cp "$out/px4_msgs-$release/msg/$message.msg" "$out/src/px4_msgs/msg/"
  done
  rm -rf "$out/px4_msgs-$release"
else
  say "no px4_msgs_sources.tar.gz beside the checkout (or in \$AERIALDOJO_VENDOR_DIR): px4_msgs not built"
fi
(
  cd "$out"
  # shellcheck source=/dev/null
  source "$venv/bin/activate"
  if [[ -z "${ROS_DISTRO:-}" ]]; then
    export AMENT_PREFIX_PATH="$venv" CMAKE_PREFIX_PATH="$venv"
  fi
  colcon --log-base log build --base-paths src --event-handlers console_cohesion+ \
    --cmake-args -DPython3_EXECUTABLE="$venv/bin/python" -DBUILD_TESTING=OFF \
    >build.log 2>&1 || { tail -n 40 build.log >&2; die "colcon build failed; log in $out/build.log"; }
)
echo "$key" > "$out/install/.build-key"
