"""The CPU acting step of a state policy: torch (`policy.act`) against NumPy (issue 30).

The CPU profile's state policy (skill_configs/model/state_cpu.yaml: MLP [64], 64-unit LSTM),
with pick --base-movement's state keys and action size, acts on batches of 1..8 envs as VER's
inference worker does on a 2-core machine: `policy.act` under inference mode (what the
trainer ran before `ver.numpy_acting`) and `NumpyActingStep`, on the same inputs and noise.
The two alternate in rounds, so clock drift hits both alike; the largest output difference
is printed as a check.

    python -m benchmarks.acting_numpy
    python -m benchmarks.acting_numpy --batches 1,4 --rounds 3 --calls 100   # quick
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np
import torch
import yaml
from gymnasium import spaces

from benchmarks.acting_graph import ACTION_DIM, STATE_KEYS
from benchmarks.spread import median_cell
from rearrange.models import ModelConfig, build_policy
from rearrange.ver_backend.numpy_acting import NumpyActingStep

ROOT = Path(__file__).resolve().parents[1]


def state_policy():
    config = yaml.safe_load((ROOT / "skill_configs" / "model" / "state_cpu.yaml").read_text())
    keys = {k: spaces.Box(-np.inf, np.inf, (n,), np.float32) for k, n in STATE_KEYS.items()}
    actions = spaces.Box(-1.0, 1.0, (ACTION_DIM,), np.float32)
    torch.manual_seed(0)
    return build_policy(spaces.Dict(keys), actions, ModelConfig(**config))


def inputs(policy, batch: int):
    gen = torch.Generator().manual_seed(batch)
    obs = {k: torch.randn(batch, n, generator=gen) for k, n in STATE_KEYS.items()}
    hidden = torch.randn(batch, policy.num_recurrent_layers, policy.hidden_size, generator=gen)
    prev = torch.randn(batch, ACTION_DIM, generator=gen)
    not_done = torch.ones(batch, dtype=torch.bool)
    noise = torch.randn(batch, ACTION_DIM, generator=gen)
    return obs, hidden, prev, not_done, noise


def per_call_us(fn, args: tuple, calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        fn(*args)
    return (time.perf_counter() - start) * 1e6 / calls


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batches", default="1,2,4,8")
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds per batch")
    parser.add_argument("--calls", type=int, default=300, help="calls per round")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    policy = state_policy().eval()
    step = NumpyActingStep(policy)
    print(f"CPU profile state policy, {ACTION_DIM} actions, 1 thread, {args.rounds} rounds "
          f"x {args.calls} calls, µs per call (median [min–max])\n")  # fmt: skip
    print("| batch | `policy.act` | NumPy step | ratio | max abs diff |")
    print("|---|---|---|---|---|")
    for batch in [int(b) for b in args.batches.split(",")]:
        obs, hidden, prev, not_done, noise = inputs(policy, batch)
        with torch.inference_mode():
            want = policy.act(obs, hidden, prev, not_done, noise=noise)
            got = step(obs, hidden, prev, not_done, noise=noise)
            diff = max(float((g - w).abs().max()) for g, w in zip(got, want, strict=True))
            args_in = (obs, hidden, prev, not_done)
            eager, fast = [], []
            for _ in range(args.rounds):
                eager.append(per_call_us(policy.act, args_in, args.calls))
                fast.append(per_call_us(step, args_in, args.calls))
        ratio = statistics.median(eager) / statistics.median(fast)
        print(
            f"| {batch} | {median_cell(eager)} | {median_cell(fast)} | {ratio:.2f}× | {diff:.1e} |"
        )


if __name__ == "__main__":
    main()
