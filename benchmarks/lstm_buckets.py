"""The PPO update's LSTM on a CPU: one padded block against length buckets (issue 30).

The learner runs a mini-batch's K sequences (one episode segment each) through the LSTM as one
zero-padded [T_max, K] block (`models/policy.py` `_run_sequences`); with uneven lengths most
of the block is padding (1.68x in the zero-cost profile of benchmarks/RESULTS.md). This
measures whether splitting the sequences into two blocks of similar lengths (the split that
minimises the padded work), or a packed sequence, makes the forward and backward faster. The
LSTM is the CPU profile's (skill_configs/model/state_cpu.yaml: 80 inputs, 64 units, one
layer); the lengths come from simulated rollouts: 8 envs x 128 steps (VER's per-env counts
vary; here they do not), episodes of a geometric length with mean `--episode-means` (a
sweep), cut into 2 mini-batches as the trainer cuts them. The three ways alternate in rounds
on the same inputs, so clock drift hits them alike; their gradients are checked equal.

    python -m benchmarks.lstm_buckets
    python -m benchmarks.lstm_buckets --episode-means 40 --rounds 5   # quick
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import torch
from torch.nn.utils.rnn import pack_sequence, pad_packed_sequence

from benchmarks.spread import median_cell

INPUT, HIDDEN, ENVS, STEPS, MINIBATCHES = 80, 64, 8, 128, 2


def rollout_lengths(rng: np.random.Generator, episode_mean: float) -> list[list[int]]:
    """Sequence lengths of each mini-batch, as `ver_backend/minibatch.py` cuts them: every
    env's 128 steps cut at episode ends (its first episode began before the rollout), the
    sequences shuffled and concatenated, the steps cut into equal mini-batches (a sequence
    across a cut becomes two pieces)."""
    lengths = []
    for _ in range(ENVS):
        t = -int(rng.integers(0, episode_mean * 2))  # the running episode's start
        while t < STEPS:
            end = t + int(rng.geometric(1.0 / episode_mean))
            if end > 0:
                lengths.append(min(end, STEPS) - max(t, 0))
            t = end
    lengths = [lengths[i] for i in rng.permutation(len(lengths))]
    per_batch, batches, current, room = (
        ENVS * STEPS // MINIBATCHES,
        [],
        [],
        ENVS * STEPS // MINIBATCHES,
    )
    for n in lengths:
        while n > 0:
            piece = min(n, room)
            current.append(piece)
            n, room = n - piece, room - piece
            if room == 0:
                batches.append(current)
                current, room = [], per_batch
    return batches


def best_split(lengths: list[int]) -> int:
    """Index into the lengths sorted longest first where two blocks pad least."""
    s = sorted(lengths, reverse=True)
    costs = [s[0] * i + s[i] * (len(s) - i) for i in range(1, len(s))]
    return 1 + int(np.argmin(costs)) if costs else len(s)


def padded(rnn, seqs: list[torch.Tensor]) -> torch.Tensor:
    """One [T_max, K] zero-padded block; the outputs of the real steps, sequence after sequence."""
    lengths = [len(x) for x in seqs]
    block = torch.nn.utils.rnn.pad_sequence(seqs)  # [T_max, K, F]
    out, _ = rnn(block)
    return torch.cat([out[:n, k] for k, n in enumerate(lengths)])


def bucketed(rnn, seqs: list[torch.Tensor]) -> torch.Tensor:
    """Two padded blocks, the longer sequences in one; outputs in the original order."""
    order = sorted(range(len(seqs)), key=lambda k: -len(seqs[k]))
    cut = best_split([len(x) for x in seqs])
    outs = {}
    for group in (order[:cut], order[cut:]):
        if group:
            for k, o in zip(group, padded_parts(rnn, [seqs[k] for k in group]), strict=True):
                outs[k] = o
    return torch.cat([outs[k] for k in range(len(seqs))])


def padded_parts(rnn, seqs: list[torch.Tensor]) -> list[torch.Tensor]:
    block = torch.nn.utils.rnn.pad_sequence(seqs)
    out, _ = rnn(block)
    return [out[: len(x), k] for k, x in enumerate(seqs)]


def packed(rnn, seqs: list[torch.Tensor]) -> torch.Tensor:
    out, _ = rnn(pack_sequence(seqs, enforce_sorted=False))
    pad, lengths = pad_packed_sequence(out)
    return torch.cat([pad[: int(n), k] for k, n in enumerate(lengths)])


WAYS = {"one padded block": padded, "two length buckets": bucketed, "packed sequence": packed}


def time_way(rnn, way, seqs: list[torch.Tensor]) -> tuple[float, torch.Tensor]:
    rnn.zero_grad(set_to_none=True)
    t0 = time.perf_counter()
    way(rnn, seqs).square().sum().backward()
    seconds = time.perf_counter() - t0
    return seconds, rnn.weight_hh_l0.grad.clone()


def measure(
    episode_mean: float, rounds: int, seed: int = 0, hidden: int = HIDDEN, layers: int = 1
) -> dict:
    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    rnn = torch.nn.LSTM(INPUT, hidden, layers)
    batches = [
        [torch.randn(n, INPUT) for n in lengths] for lengths in rollout_lengths(rng, episode_mean)
    ]
    times = {name: [] for name in WAYS}
    for r in range(rounds + 1):  # round 0 warms the kernels up, not timed
        for name, way in WAYS.items():
            total, grads = 0.0, []
            for seqs in batches:
                seconds, grad = time_way(rnn, way, seqs)
                total += seconds
                grads.append(grad)
            if r:
                times[name].append(1000 * total)
            if name == "one padded block":
                ref = grads
            else:
                for a, b in zip(ref, grads, strict=True):
                    torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)
    work = {"steps": 0, "padded": 0, "bucketed": 0}  # LSTM steps run, padding included
    for seqs in batches:
        s = sorted((len(x) for x in seqs), reverse=True)
        cut = best_split(s)
        work["steps"] += sum(s)
        work["padded"] += s[0] * len(s)
        work["bucketed"] += s[0] * cut + (s[cut] * (len(s) - cut) if cut < len(s) else 0)
    return {"times": times, "work": work, "k": [len(b) for b in batches]}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--episode-means", default="20,40,80,200")
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--hidden", type=int, default=HIDDEN, help="LSTM units (the paper's: 512)")
    p.add_argument("--layers", type=int, default=1, help="LSTM layers (the paper's: 2)")
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    print("| episode mean (steps) | K per mini-batch | padded work | bucketed work | "
          + " | ".join(f"{w} (ms per update, median [min–max])" for w in WAYS) + " |")  # fmt: skip
    print("|---" * (4 + len(WAYS)) + "|")
    for mean in (float(m) for m in args.episode_means.split(",")):
        r = measure(mean, args.rounds, hidden=args.hidden, layers=args.layers)
        w = r["work"]
        cells = [median_cell(r["times"][name], 1) for name in WAYS]
        print(
            f"| {mean:g} | {'/'.join(map(str, r['k']))} | {w['padded'] / w['steps']:.2f}x | "
            f"{w['bucketed'] / w['steps']:.2f}x | " + " | ".join(cells) + " |"
        )
        ratio = statistics.median(r["times"]["one padded block"]) / statistics.median(
            r["times"]["two length buckets"]
        )
        print(f"  (padded / bucketed: {ratio:.2f}x)", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
