#!/usr/bin/env bash
# Second GPU call of 2026-11-26 (benchmarks/RESULTS.md, "VER on a GPU"): the VER trainer with
# this commit's value path against f8348f5 (a copy of its rearrange/ in .base/, carried), on the
# pick and the zero-cost depth workloads, plus bf16 on pick; then the gpu-marked tests.
#   here:  git worktree add --detach /tmp/base f8348f5 && mkdir -p .base && cp -r /tmp/base/rearrange .base/
#   there: source .gpu-kit/setup.sh && bash benchmarks/gpu_recheck.sh "$OUT"
set -u
OUT=${1:-gpu_out}
mkdir -p "$OUT"
PART_TAIL=14
source "$(dirname "$0")/gpu_part.sh"
CEIL=(python3 -m benchmarks.trainer_ceiling --device cuda --systems ver --updates 4 --baseline-src .base)
part ceiling_pick 110 "${CEIL[@]}" --workloads task/depth --repeats 1 --learner-variants bf16
part ceiling_zero 80 "${CEIL[@]}" --workloads zero/depth --repeats 2
part gpu_tests 45 python3 -m pytest -q -m gpu tests/ver_backend tests/models
