#!/usr/bin/env bash
# Sets the workspace up from nothing but python3, cmake and a C/C++ compiler:
# .venv with the pinned dependencies (ROS 2 Jazzy wheels from PyPI, unless a ROS 2
# installation is sourced), the wheels' CMake exports repaired inside the venv, and the
# colcon workspace built into install/. Every step is skipped when its inputs are unchanged,
# so a second run costs about a second.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.venv"
say() { printf 'aerialdojo: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

require() {  # require <command> <what to install>
  command -v "$1" >/dev/null 2>&1 || die "'$1' not found; install $2 (Debian/Ubuntu: sudo apt install $2)"
}
require cmake cmake
require cc build-essential
require c++ build-essential
require make build-essential

# PYTHON names the interpreter; unset, the existing venv's (so `PYTHON=python3.10 make eval`
# then `make test` stays on 3.10), else python3. A pyenv shim of a version that this shell
# has not selected (python3.10 beside a global 3.12) fails to run; then the newest installed
# pyenv version providing that command is taken.
runnable() { "$1" -c '' >/dev/null 2>&1; }
python="${PYTHON:-}"
if [[ -z "$python" && -x "$venv/bin/python" ]]; then
  python="$("$venv/bin/python" -c 'import sys; print(sys._base_executable)' 2>/dev/null || true)"
fi
python="${python:-python3}"
if ! runnable "$python" && [[ "$python" != */* ]] && command -v pyenv >/dev/null 2>&1; then
  from_pyenv="$(ls -d "$(pyenv root)"/versions/*/bin/"$python" 2>/dev/null | sort -V | tail -n 1 || true)"
  if [[ -n "$from_pyenv" ]] && runnable "$from_pyenv"; then python="$from_pyenv"; fi
fi
# The README's range; make check-pythons resolves the pins on each.
runnable "$python" || die "'$python' not found or does not run; install python3 (3.10-3.13), or set PYTHON=/path/to/python3.X"
"$python" -c 'import sys; sys.exit(not ((3, 10) <= sys.version_info[:2] <= (3, 13)))' \
  || die "$("$python" --version 2>&1) is not supported; use Python 3.10-3.13 (set PYTHON=/path/to/python3.X)"
"$python" -c 'import ensurepip, venv' 2>/dev/null \
  || die "the venv module is missing; install python3-venv"

# A sourced ROS 2 installation is used as it is; otherwise the PyPI wheels are installed.
wheels_distro=jazzy  # requirements/ros-$wheels_distro.txt
if [[ -n "${ROS_DISTRO:-}" ]] && "$python" -c 'import rclpy' 2>/dev/null; then
  ros_route="system-$ROS_DISTRO"
else
  ros_route="wheels"
fi

# The venv is recreated only when the interpreter, the ROS route or the wheels' distribution
# changes (one distribution's wheels are never installed over another's); a changed
# requirements file is installed into the existing venv.
venv_key="$ros_route $("$python" --version 2>&1)"
[[ "$ros_route" == wheels ]] && venv_key="wheels-$wheels_distro $("$python" --version 2>&1)"
if [[ ! -x "$venv/bin/python" || "$(cat "$venv/.venv-key" 2>/dev/null)" != "$venv_key" ]]; then
  say "creating .venv ($ros_route route)"
  rm -rf "$venv"
  if [[ "$ros_route" == wheels ]]; then
    "$python" -m venv "$venv"
  else
    "$python" -m venv --system-site-packages "$venv"
  fi
  echo "$venv_key" > "$venv/.venv-key"
fi

requirement_files=("$root/requirements/python.txt" "$root/requirements/dev.txt")
if [[ "$ros_route" == wheels ]]; then
  requirement_files+=("$root/requirements/ros-$wheels_distro.txt")
elif [[ "$("$python" -c 'import numpy; print(numpy.__version__)' 2>/dev/null)" == 1.* ]]; then
  # The distribution's message packages are built against its numpy 1.x (requirements/numpy1.txt).
  grep -v '^numpy==' "$root/requirements/python.txt" > "$venv/python-numpy1.txt"
  requirement_files=("$venv/python-numpy1.txt" "$root/requirements/numpy1.txt" "$root/requirements/dev.txt")
fi
deps_key="$venv_key $(cat "${requirement_files[@]}" | sha256sum | cut -c1-16)"
if [[ "$(cat "$venv/.deps-key" 2>/dev/null)" != "$deps_key" ]]; then
  say "installing the pinned dependencies"
  requirements=()
  for file in "${requirement_files[@]}"; do requirements+=(-r "$file"); done
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${requirements[@]}" \
    || die "pip install failed (see above); nothing was built"
  if [[ "$ros_route" == wheels ]]; then
    _ROS_WHEELS_BOOTSTRAP_COMPLETE=1 "$venv/bin/python" "$root/tools/repair_ros_wheel_cmake.py"
  fi
  echo "$deps_key" > "$venv/.deps-key"
fi

# Rebuild only when a package source, launch file or config file changed.
build_key="$deps_key $(cd "$root" && find src compat launch config colcon.meta -type f ! -name '*.pyc' -print0 \
  | sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16)"
if [[ "$(cat "$root/install/.build-key" 2>/dev/null)" != "$build_key" ]]; then
  say "building the colcon workspace"
  (
    cd "$root"
    mkdir -p log
    # shellcheck source=/dev/null
    source "$venv/bin/activate"
    if [[ "$ros_route" == wheels ]]; then
      export AMENT_PREFIX_PATH="$venv" CMAKE_PREFIX_PATH="$venv"
    fi
    # The wheels lack tf2_msgs: build the stand-in (compat/README.md) only then.
    base_paths=(src)
    "$venv/bin/python" -c 'import tf2_msgs.msg' 2>/dev/null || base_paths+=(compat/tf2_msgs)
    colcon --log-base log build --base-paths "${base_paths[@]}" --metas colcon.meta \
      --event-handlers console_cohesion+ \
      --cmake-args -DPython3_EXECUTABLE="$venv/bin/python" -DBUILD_TESTING=OFF >log/colcon-build.txt 2>&1 \
      || { tail -n 40 log/colcon-build.txt >&2; die "colcon build failed; full log in log/colcon-build.txt"; }
  )
  echo "$build_key" > "$root/install/.build-key"
fi

# Byte-compiled here, where setuptools skipped it if PYTHONDONTWRITEBYTECODE is set (as in
# many containers): each node process would otherwise compile what it imports at every
# start, about 0.1 CPU-s. Up to date, this checks the files and writes nothing.
"$venv/bin/python" -m compileall -q "$root/install" >/dev/null \
  || die "byte-compiling install/ failed; run: $venv/bin/python -m compileall $root/install"
