#!/usr/bin/env bash
# The GPU figures of issue 30 in one device call (benchmarks/RESULTS.md, "VER on a GPU").
# On the GPU machine, from the project root, with the kit carried (bash ../shared/gpu/make-kit.sh):
#   source .gpu-kit/setup.sh && bash benchmarks/gpu_session.sh "$OUT"
# Parts run one after another (never side by side: they would share the GPU and the cores),
# most important first, each under its own time cap, so a slow part costs only itself. Each
# part's whole output goes to OUT/<part>.log. SMOKE=1 runs every part tiny on the CPU, to
# check the commands before a device call. The caps sum to ~585 s (one call, under the 600 s
# command limit); on 2026-11-27 (H200) the whole call took 435 s with two parts cut by their
# caps, which are now the sizes those parts needed.
set -u
OUT=${1:-gpu_out}
mkdir -p "$OUT"
DEV=cuda
SYS=(--repeats 2 --updates 4)
CEIL=(--repeats 1 --updates 3)
if [ "${SMOKE:-0}" = 1 ]; then
  DEV=cpu
  SYS=(--quick)
  CEIL=(--repeats 1 --updates 2 --num-envs 2 --rollout-steps 8 --depth-size 32 --rnn-hidden 32)
fi

source "$(dirname "$0")/gpu_part.sh"

{
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>/dev/null || true
  nproc
} >"$OUT/machine.log" 2>&1
cat "$OUT/machine.log"

if [ "$DEV" = cuda ]; then
  part gpu_tests 60 python3 -m pytest -q -m gpu tests/ver_backend tests/models
  part acting 35 python3 -m benchmarks.acting_graph --device cuda
fi
part sys_pick 130 python3 -m benchmarks.systems_real --device "$DEV" --task pick "${SYS[@]}"
part sys_fridge_bm 110 python3 -m benchmarks.systems_real --device "$DEV" --task open_fridge \
  --base-movement "${SYS[@]}"
part ceiling 90 python3 -m benchmarks.trainer_ceiling --device "$DEV" --workloads zero/depth \
  --systems ver,ddppo "${CEIL[@]}" --learner-variants bf16
part sys_nav 100 python3 -m benchmarks.systems_real --device "$DEV" --task nav "${SYS[@]}"
if [ "$DEV" = cuda ]; then
  part eta_pick_bm 60 python3 -m rearrange.train_skill pick --base-movement \
    --run-name gpu_eta run.checkpoint_every_steps=1000000000
fi
