#!/usr/bin/env bash
# Creates the isolated venv of a real-simulator backend, one per backend, because the two
# clients cannot share one: projectairsim needs msgpack 1.x, airsim needs msgpack 0.5.
#   tools/bootstrap_backend.sh projectairsim    -> .venv-projectairsim
#   tools/bootstrap_backend.sh carla-air        -> .venv-carla-air
# The venv holds only the client and its pinned dependencies (requirements/backend-<name>.txt,
# installed with --no-deps: the file is the complete resolved set). rclpy, the ROS messages and
# aerialdojo's own dependencies come from the main .venv, placed after the backend's packages
# by tools/backend_venv_site.py. Run the bridge with that interpreter:
#   tools/run.sh .venv-projectairsim/bin/python -m aerialdojo.nodes.sim_bridge --ros-args ...
# PROJECTAIRSIM_CLIENT=<pip requirement> installs the ProjectAirSim client from the public
# server's own source instead of PyPI's projectairsim 1.1.0, e.g.
#   PROJECTAIRSIM_CLIENT='git+https://github.com/iamaisim/ProjectAirSim@06dff61#subdirectory=client/python/projectairsim'
# or the path of an sdist or a checkout of that directory. The backend speaks the public
# server's topic protocol with either (docs/simulators.md); the dependencies stay this
# project's pins (the source's open3d is not needed).
# CARLA_AIR_CARLA_MODULE=<CARLA-Air's env_setup/carla_python_module.tar.gz> installs the carla
# module built with a CARLA-Air server instead of PyPI's (whose version mismatch LibCarla
# only warns about). That module is built for CARLA-Air's Python (3.10) and imports only in
# a venv of that Python.
# A second run with unchanged inputs does nothing.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
say() { printf 'aerialdojo: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

declare -A client_module=([projectairsim]=projectairsim [carla-air]="airsim, carla, msgpack._unpacker")
# Source distributions whose shipped Cython output predates Python 3.11 (their C extension
# would silently not build, leaving pure-Python msgpack: 9 s instead of 0.1 s for one
# 256x256 set of AirSim float depth images): rebuilt from their .pyx files.
declare -A recythonize=([projectairsim]="" [carla-air]="msgpack-python")
# Source distributions whose setup.py imports other pinned packages: built after the rest.
declare -A build_last=([projectairsim]="" [carla-air]="airsim")

[[ $# -ge 1 ]] || die "usage: tools/bootstrap_backend.sh projectairsim|carla-air [...]"
main_python="$root/.venv/bin/python"
carla_module="${CARLA_AIR_CARLA_MODULE:-}"
pas_client="${PROJECTAIRSIM_CLIENT:-}"
[[ -x "$main_python" ]] || die "the main .venv is missing; run tools/bootstrap.sh first"
if ! "$main_python" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  # requirements/backend-*.txt are complete sets resolved for 3.11-3.13 (numpy 2.4 and more).
  say "the simulator-client venvs are pinned for Python 3.11-3.13; on $("$main_python" --version 2>&1) they are not created, and their tests skip"
  exit 0
fi

for backend in "$@"; do
  [[ -n "${client_module[$backend]+x}" ]] \
    || die "unknown backend '$backend'; known: ${!client_module[*]}"
  venv="$root/.venv-$backend"
  requirements="$root/requirements/backend-$backend.txt"
  own_carla=""
  if [[ "$backend" == carla-air && -n "$carla_module" ]]; then
    [[ -f "$carla_module" ]] || die "CARLA_AIR_CARLA_MODULE=$carla_module: no such file"
    own_carla="$(sha256sum "$carla_module" | cut -c1-16)"
  fi
  own_client=""
  if [[ "$backend" == projectairsim && -n "$pas_client" ]]; then
    own_client="$pas_client"
    [[ -e "$pas_client" ]] && own_client="$pas_client $( (sha256sum "$pas_client" 2>/dev/null || tar -C "$pas_client" -cf - . | sha256sum) | cut -c1-16)"
  fi
  key="$("$main_python" --version 2>&1) $(cat "$requirements" "$root/tools/backend_venv_site.py" "${BASH_SOURCE[0]}" | sha256sum | cut -c1-16) $own_carla $own_client"
  if [[ -x "$venv/bin/python" && "$(cat "$venv/.backend-key" 2>/dev/null)" == "$key" ]]; then
    continue
  fi
  say "creating .venv-$backend"
  rm -rf "$venv"
  # From the main venv's interpreter, so both venvs run the same Python version.
  "$main_python" -m venv "$venv"
  pip=("$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps)
  # --no-build-isolation builds sdists against these, not against a fresh download.
  "${pip[@]}" setuptools==80.9.0 wheel==0.48.0 Cython==0.29.37 \
    || die "pip could not install the build tools"
  late="${recythonize[$backend]} ${build_last[$backend]} ${own_carla:+carla} ${own_client:+projectairsim}"
  late_pattern="$(echo $late | tr ' ' '|')"
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  grep -v -E "^(${late_pattern:-\$^})==" "$requirements" > "$work/first.txt"
  "${pip[@]}" --no-build-isolation -r "$work/first.txt" || die "pip install -r $requirements failed"
  for package in ${recythonize[$backend]}; do
    pin="$(grep -E "^${package}==" "$requirements")"
    "$venv/bin/python" -m pip download --quiet --disable-pip-version-check --no-deps \
      --no-binary :all: -d "$work" "$pin" || die "pip could not download $pin"
    tar -xzf "$work/${package}-${pin#*==}.tar.gz" -C "$work"
    find "$work/${package}-${pin#*==}" -name '*.pyx' | while read -r pyx; do rm -f "${pyx%.pyx}.cpp" "${pyx%.pyx}.c"; done
    "${pip[@]}" --no-build-isolation "$work/${package}-${pin#*==}" || die "could not build $pin"
  done
  for package in ${build_last[$backend]}; do
    "${pip[@]}" --no-build-isolation "$(grep -E "^${package}==" "$requirements")" \
      || die "pip could not build ${package} (see above)"
  done
  if [[ -n "$own_client" ]]; then
    say "installing the ProjectAirSim client from $pas_client"
    "${pip[@]}" --no-build-isolation "$pas_client" || die "pip could not install $pas_client"
  fi
  site="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  if [[ -n "$own_carla" ]]; then
    say "installing CARLA-Air's carla module from $carla_module"
    tar -xzf "$carla_module" -C "$site" || die "cannot unpack $carla_module"
    "$venv/bin/python" -c "import carla" || die "CARLA-Air's carla module does not import in \
.venv-$backend ($("$venv/bin/python" --version 2>&1)); it is built for CARLA-Air's Python"
  fi
  # Last, so that pip above never saw the main venv's packages as already installed.
  cp "$root/tools/backend_venv_site.py" "$site/aerialdojo_main_venv.py"
  echo "import aerialdojo_main_venv" > "$site/aerialdojo_main_venv.pth"
  "$venv/bin/python" -c "import ${client_module[$backend]}, rclpy, yaml" \
    || die ".venv-$backend cannot import its client and rclpy together"
  echo "$key" > "$venv/.backend-key"
done
