#!/usr/bin/env bash
# Installs everything `rearrange` needs on a fresh Debian machine (Python 3.10+, no GPU needed):
# Debian EGL/Mesa packages for headless rendering, a venv in .venv, torch==2.13.0, the package.
# Usage: bash scripts/install.sh [dev]
set -euo pipefail
cd "$(dirname "$0")/.."
if ! ldconfig -p 2>/dev/null | grep -q libEGL_mesa; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq libegl1 libgl1-mesa-dri libegl-mesa0 >/dev/null
fi
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip 2>/dev/null || true
# Pin torch first: an open range would pull a multi-GB CUDA build.
.venv/bin/python -m pip install -q "torch==2.13.0" 2>&1 | grep -v "^WARNING: Location" || true
extra=""; [ "${1:-}" = "dev" ] && extra="[dev]"
.venv/bin/python -m pip install -q -e ".${extra}" 2>&1 | grep -v "^WARNING: Location" || true
# The base-moving depth students: a second distribution of this repository (weights/), as
# they do not fit the package's weight budget; installed from the working tree, no fetch.
.venv/bin/python -m pip install -q -e weights 2>&1 | grep -v "^WARNING: Location" || true
.venv/bin/python -c "import rearrange, rearrange_weights, torch, mujoco" 
