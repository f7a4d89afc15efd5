"""The acting step eager against CUDA graphs (issue 30): milliseconds per `act` call by batch.

The paper's policy (128² depth ResNet18 + 2×512 LSTM, pick's state keys and action size)
acts on batches of 1..16 envs, as VER's inference worker does; each batch size is timed
eager (`policy.act`) and through `ActingStep` with one CUDA graph per bucket (a batch padded
to its bucket). Eager and graph calls alternate in rounds, so clock drift hits both alike.

    python -m benchmarks.acting_graph --device cuda
    python -m benchmarks.acting_graph --device cpu --depth-size 32 --rnn-hidden 32   # smoke

On CPU `ActingStep` stays eager (graphs need CUDA), so only the eager column is measured.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import torch
from gymnasium import spaces

from benchmarks.spread import median_cell
from rearrange.models import ModelConfig, build_policy
from rearrange.ver_backend.graph_acting import ActingStep

ACTION_DIM = 11  # pick --base-movement: 7 arm joints, grip, 2 base, stop (a representative size)
STATE_KEYS = {"joint": 7, "ee_pos": 3, "goal": 3, "is_holding": 1}


def obs_space(depth_size: int) -> spaces.Dict:
    keys = {k: spaces.Box(-np.inf, np.inf, (n,), np.float32) for k, n in STATE_KEYS.items()}
    keys["depth"] = spaces.Box(0.0, 10.0, (depth_size, depth_size, 1), np.float32)
    return spaces.Dict(keys)


def inputs(policy, space: spaces.Dict, batch: int, device: torch.device):
    gen = torch.Generator().manual_seed(batch)
    obs = {k: torch.rand((batch, *s.shape), generator=gen).to(device) for k, s in space.items()}
    hidden = torch.zeros(batch, policy.num_recurrent_layers, policy.hidden_size, device=device)
    prev = torch.zeros(batch, ACTION_DIM, device=device)
    not_done = torch.ones(batch, dtype=torch.bool, device=device)
    return obs, hidden, prev, not_done


def time_calls(fn, n: int, device: torch.device) -> float:
    """Milliseconds per call of fn over n calls, synchronised at both ends."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    start = time.perf_counter()
    for _ in range(n):
        fn()
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return (time.perf_counter() - start) * 1e3 / n


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--batches", default="1,2,4,8,12,16")
    parser.add_argument("--depth-size", type=int, default=128)
    parser.add_argument("--rnn-hidden", type=int, default=512)
    parser.add_argument("--calls", type=int, default=100, help="calls per timing")
    parser.add_argument("--rounds", type=int, default=5, help="timings per column (alternating)")
    args = parser.parse_args(argv)
    device = torch.device(args.device)
    torch.manual_seed(0)
    space = obs_space(args.depth_size)
    action_space = spaces.Box(-1.0, 1.0, (ACTION_DIM,), np.float32)
    model = ModelConfig(rnn_hidden_size=args.rnn_hidden, rnn_layers=2)
    policy = build_policy(space, action_space, model).to(device).eval()
    batches = [int(b) for b in args.batches.split(",")]
    graphs = ActingStep(policy, space, ACTION_DIM, max(batches), device)
    eager = ActingStep(policy, space, ACTION_DIM, max(batches), device, use_graphs=False)
    columns = {"eager": eager} | ({"graph": graphs} if graphs.use_graphs else {})
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
    print(
        f"{name}: act on depth {args.depth_size}² + ResNet18, LSTM 2x{args.rnn_hidden}, "
        f"{args.calls} calls x {args.rounds} rounds, median [min–max] ms per call"
    )
    print("| batch | " + " | ".join(columns) + " | eager/graph | graph env-steps/s |")
    print("|---" * (len(columns) + 3) + "|")
    for batch in batches:
        x = inputs(policy, space, batch, device)
        times: dict[str, list[float]] = {c: [] for c in columns}
        for step in columns.values():
            for _ in range(3):  # warm-up (and the graph's capture)
                step(*x)
        for _ in range(args.rounds):
            for c, step in columns.items():
                times[c].append(time_calls(lambda s=step, x=x: s(*x), args.calls, device))
        cells = [median_cell(v, digits=3) for v in times.values()]
        if "graph" in times:
            g = statistics.median(times["graph"])
            ratio = statistics.median(times["eager"]) / g
            cells += [f"{ratio:.2f}x", f"{batch / g * 1e3:.0f}"]
        else:
            cells += ["-", "-"]
        print(f"| {batch} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
