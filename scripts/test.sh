#!/usr/bin/env bash
# Installs what the tests need (Debian EGL packages, .venv, torch==2.13.0, the package with
# its dev extra), then runs lint, the format check and the default (not slow, not gpu) test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh dev
.venv/bin/ruff check rearrange tests benchmarks
.venv/bin/ruff format --check rearrange tests benchmarks
MUJOCO_GL=${MUJOCO_GL:-egl} .venv/bin/python -m pytest -q "$@"
