#!/usr/bin/env bash
# GPU probe of 2026-11-26 (benchmarks/RESULTS.md, "VER on a GPU"): the torchrun two-ranks-on-one-GPU
# run with the kit's PYTHONPATH, and cProfile + per-step host costs of VER on zero-cost and pick
# depth envs (paper profile). On the GPU machine: source .gpu-kit/setup.sh && bash benchmarks/gpu_probe.sh "$OUT"
set -u
OUT=$1
spec() { echo "{\"workload\":\"$1/depth\",\"system\":\"$2\",\"device\":\"cuda\",\"num_envs\":16,\"rollout_steps\":128,\"updates\":5,\"depth_size\":128,\"rnn_hidden\":512,\"task\":\"pick\",\"base_movement\":false,\"threads\":4,\"cpu_ppo\":false}"; }
stats() { python3 - "$1" <<'PY'
import pstats, sys
p = pstats.Stats(sys.argv[1]); p.sort_stats("tottime").print_stats(30); p.sort_stats("cumulative").print_stats(45)
PY
}
( cd /tmp && timeout 60 torchrun --nproc-per-node 2 --master-port 29641 -m rearrange.train_skill synthetic --serial --run-name gpu runs_root=/tmp/tr ver.device=cuda:0 ver.num_envs=2 ver.rollout_steps=8 total_steps=96 ) > $OUT/torchrun.log 2>&1
echo "torchrun rc=$?"; grep -a "Error\|error\|share" $OUT/torchrun.log | grep -v elastic | head -20
for w in zero task; do
  timeout 75 python3 -m cProfile -o /tmp/$w.prof benchmarks/trainer_ceiling.py --child "$(spec $w ver)" > $OUT/${w}_run.log 2>&1
  echo "$w rc=$?"; tail -c 600 $OUT/${w}_run.log; echo
  stats /tmp/$w.prof > $OUT/${w}_prof.txt 2>&1
done
