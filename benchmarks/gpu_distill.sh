#!/usr/bin/env bash
# Depth students on a lent GPU (issue 29), one device call: for each SKILL[:bm] named, DAgger
# from the shipped state skill into the paper's policy on CUDA (16 envs), the last snapshots
# evaluated side by side on 50 val episodes of seed 1, the best one exported with int4 weights
# after 100 val episodes of seed 0 (ship_skill export: the manifest holds both commands and the
# measured figures). What comes back in OUT: each skill's SKILL[_bm]_depth.pt and .json (copy
# them to rearrange/skills/pretrained/ as they are) and one log of every part.
#   here:   bash ../shared/gpu/make-kit.sh
#   there:  source .gpu-kit/setup.sh && COMMIT=<sha> bash benchmarks/gpu_distill.sh "$OUT" place open_cab
# Budget: ~3 skills at most per call (OUT takes 8 files). STEPS (default 200000) and the caps
# below size a call; SMOKE=1 runs it tiny on the CPU to check the commands.
set -u
OUT=${1:?usage: gpu_distill.sh OUT SKILL[:bm] ...}
shift
mkdir -p "$OUT"
STEPS=${STEPS:-200000}
SNAPS=${SNAPS:-3}
SELECT_EPS=${SELECT_EPS:-50}
SHIP_EPS=${SHIP_EPS:-100}
TRAIN_CAP=${TRAIN_CAP:-330}
COMMIT=${COMMIT:-unknown}
RUN=${RUN:-gpu_distill_v1}
ENVS=16
SIZE=(distill.minibatch_steps=256)
if [ "${SMOKE:-0}" = 1 ]; then
  ENVS=2
  SIZE=(task.depth_size=32 model.base_width=8 model.groupnorm_groups=4 model.rnn_hidden_size=32
    distill.rollout_steps=32 distill.minibatch_steps=64 run.device=cpu)
fi
TRAIN=(--profile paper --algo distill "run.num_envs=$ENVS" distill.updates_per_round=8
  distill.lr=5e-4 "distill.beta_steps=$((STEPS * 6 / 10))"
  "run.total_steps=$STEPS" "run.checkpoint_every_steps=$((STEPS / 8))" run.keep_checkpoints=10
  "run.log_every_steps=$((STEPS / 40))" "${SIZE[@]}")
LOG="$OUT/distill.log"
PART_TAIL=6
PART_LOG=$LOG # every part's whole output goes to one log (OUT holds 8 files)
source "$(dirname "$0")/gpu_part.sh"

for spec in "$@"; do
  skill=${spec%:bm}
  bm=()
  [ "$spec" != "$skill" ] && bm=(--base-movement)
  name=$skill$([ ${#bm[@]} -gt 0 ] && echo _bm)
  run_dir=runs/$skill/$RUN$([ ${#bm[@]} -gt 0 ] && echo _bm)
  cmd=(python -m rearrange.train_skill "$skill" "${bm[@]}" --run-name "$(basename "$run_dir")" "${TRAIN[@]}")
  part "train_$name" "$TRAIN_CAP" python3 "${cmd[@]:1}" || true
  snaps=$(ls "$run_dir"/checkpoints/ckpt_*.pt 2>/dev/null | tail -n "$SNAPS")
  [ -z "$snaps" ] && { echo "no snapshot of $name" | tee -a "$LOG"; continue; }
  # the snapshots' val evaluations side by side (16 cores), 2 threads each
  for ckpt in $snaps; do
    OMP_NUM_THREADS=2 python3 -m rearrange.eval_skill "$skill" "${bm[@]}" --policy depth \
      --checkpoints "$ckpt" --episodes "$SELECT_EPS" --seed 1 >"$ckpt.val" 2>&1 &
  done
  wait
  best="" best_rate=-1
  for ckpt in $snaps; do
    rate=$(grep -aoE '\| [0-9]+% \[' "$ckpt.val" | head -1 | grep -oE '[0-9]+')
    echo "select $name $(basename "$ckpt"): ${rate:-?} % of $SELECT_EPS (seed 1)" | tee -a "$LOG"
    if [ -n "$rate" ] && [ "$rate" -ge "$best_rate" ]; then best=$ckpt best_rate=$rate; fi
  done
  [ -z "$best" ] && continue
  text="${cmd[*]} (on one GPU: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)); the $(basename "$best") snapshot, chosen on $SELECT_EPS val episodes of seed 1 ($best_rate %)"
  part "export_$name" 300 python3 -m rearrange.ship_skill export "$best" --episodes "$SHIP_EPS" \
    --seed 0 --commit "$COMMIT" --precision int4 --out-dir "$OUT" --command "$text" || true
done
ls -la "$OUT"
