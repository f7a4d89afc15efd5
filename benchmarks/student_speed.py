"""The depth student's own cost on CPU (issue 29): what `--algo distill` pays per env step.

The paper's policy (ResNet18-ConvNeXt on 128² head depth + 2×512 LSTM, fixed-base pick's
observation and action spaces) does the two things a distillation round asks of it:
- acting: one deterministic `act` on a batch of `--batch` envs (the lock-step collector's
  call each env step), frames/s = batch / seconds;
- an update: `distill.sequence_distribution` + `distill_loss` + backward + Adam on a
  minibatch of `--chunks` chunks of `--chunk-len` steps (the learner's call), frames/s =
  steps / seconds.

Each variant (torch threads × memory format) runs in a fresh process, the variants
interleaved `--repeats` times so that drift hits all alike; cells are frames/s, median
[min–max]. Nothing else should run on the machine.

    python -m benchmarks.student_speed                       # 1 and 2 threads, NCHW and NHWC
    python -m benchmarks.student_speed --threads 2 --repeats 5
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.spread import median_cell

ROOT = Path(__file__).resolve().parents[1]


def measure(spec: dict) -> dict:
    """frames/s of acting and of an update for one variant (in this process)."""
    import gymnasium as gym
    import numpy as np
    import torch

    from rearrange.distill.loss import distill_loss, sequence_distribution
    from rearrange.models import ModelConfig, build_policy
    from rearrange.tasks.actions import action_space
    from rearrange.tasks.sensors import task_observation_space

    torch.set_num_threads(spec["threads"])
    torch.manual_seed(0)
    space = task_observation_space("pick", "depth", spec["depth_size"], base_movement=False)
    actions: gym.spaces.Box = action_space("pick", False)
    adim = int(np.prod(actions.shape))
    model = ModelConfig(channels_last=spec["channels_last"])
    policy = build_policy(space, actions, model)
    gen = torch.Generator().manual_seed(1)

    def obs(n: int) -> dict:
        return {
            k: torch.rand((n, *v.shape), generator=gen) * (5.0 if k == "depth" else 1.0)
            for k, v in space.spaces.items()
        }

    layers, hidden = policy.num_recurrent_layers, policy.hidden_size
    b = spec["batch"]
    o, h = obs(b), torch.zeros(b, layers, hidden)
    prev, not_done = torch.zeros(b, adim), torch.ones(b, dtype=torch.bool)
    with torch.no_grad():
        for _ in range(3):
            policy.act(o, h, prev, not_done, deterministic=True)
        t = time.perf_counter()
        for _ in range(spec["act_calls"]):
            policy.act(o, h, prev, not_done, deterministic=True)
        act_s = (time.perf_counter() - t) / spec["act_calls"]

    k, length = spec["chunks"], spec["chunk_len"]
    steps = k * length
    o, h = obs(steps), torch.zeros(k, layers, hidden)
    prev = torch.zeros(steps, adim)
    lengths = torch.full((k,), length, dtype=torch.long)
    targets = torch.rand(steps, adim, generator=gen) * 2 - 1
    opt = torch.optim.Adam(policy.parameters(), lr=1e-4)

    def update() -> None:
        dist = sequence_distribution(policy, o, h, prev, lengths)
        loss, _ = distill_loss(dist, targets)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    update()
    t = time.perf_counter()
    for _ in range(spec["updates"]):
        update()
    update_s = (time.perf_counter() - t) / spec["updates"]
    return {"act_fps": b / act_s, "update_fps": steps / update_s}


def run_child(spec: dict) -> dict | None:
    cmd = [sys.executable, "-m", "benchmarks.student_speed", "--child", json.dumps(spec)]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=str(ROOT))
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
    print(f"    failed: {tail[0]}", flush=True)
    return None


cell = median_cell  # "median [min–max]", "n/a" without values


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--child", default=None, help=argparse.SUPPRESS)
    p.add_argument("--threads", default="1,2", help="torch thread counts to compare")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--depth-size", type=int, default=128)
    p.add_argument("--batch", type=int, default=8, help="envs per acting call")
    p.add_argument("--chunks", type=int, default=4, help="chunks per update minibatch")
    p.add_argument("--chunk-len", type=int, default=32)
    p.add_argument("--act-calls", type=int, default=20)
    p.add_argument("--updates", type=int, default=5)
    args = p.parse_args(argv)
    if args.child is not None:
        print("RESULT " + json.dumps(measure(json.loads(args.child))), flush=True)
        return 0
    variants = [(int(t), cl) for t in args.threads.split(",") for cl in (False, True)]
    base = {
        "depth_size": args.depth_size,
        "batch": args.batch,
        "chunks": args.chunks,
        "chunk_len": args.chunk_len,
        "act_calls": args.act_calls,
        "updates": args.updates,
    }
    results: dict = {v: [] for v in variants}
    for _ in range(args.repeats):
        for threads, cl in variants:
            out = run_child(base | {"threads": threads, "channels_last": cl})
            if out is not None:
                results[(threads, cl)].append(out)
                print(
                    f"  threads={threads} channels_last={cl}: act {out['act_fps']:.0f} fr/s, "
                    f"update {out['update_fps']:.0f} fr/s",
                    flush=True,
                )
    steps = args.chunks * args.chunk_len
    print(
        f"\n| torch threads | memory format | acting fr/s (batch {args.batch}) "
        f"| update fr/s ({steps} steps) |\n|---|---|---|---|"
    )
    for (threads, cl), runs in results.items():
        fmt = "channels_last" if cl else "contiguous"
        act = cell([r["act_fps"] for r in runs])
        upd = cell([r["update_fps"] for r in runs])
        print(f"| {threads} | {fmt} | {act} | {upd} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
