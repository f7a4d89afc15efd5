"""Systems benchmark (VER paper Table 1 analogue): SPS of ddppo, nover, ver and collect_only.

Same machine, same policy (small state-only LSTM), same synthetic env; only the collection
system changes. Step time is sleep-based so many env processes fit on a 2-core machine.

    python -m benchmarks.systems                    # both workloads, markdown table
    python -m benchmarks.systems --workload heterogeneous --updates 6

Workloads:
- heterogeneous: lognormal per-step time (sigma 0.5) with per-env median scale spread 8x
  (env i of N gets base·8^(i/(N-1))), like the paper's Open Fridge (action- and env-level
  stragglers);
- homogeneous: constant step time, same for every env.
"""

from __future__ import annotations

import argparse
import functools
import logging
import tempfile
from dataclasses import dataclass
from pathlib import Path

import torch

from rearrange.models import ModelConfig, build_policy
from rearrange.ver_backend.config import PPOConfig, VERConfig
from rearrange.ver_backend.synthetic_env import SyntheticEnvConfig, SyntheticEnvFactory
from rearrange.ver_backend.trainer import Trainer, TrainSetup

SYSTEMS = ("ddppo", "nover", "ver", "collect_only")
MODEL = ModelConfig(
    backbone="none",
    rnn_hidden_size=64,
    rnn_layers=1,
    state_mlp_hidden=(64,),
    prev_action_embedding_size=16,
)


@dataclass
class Workload:
    name: str
    env: SyntheticEnvConfig


def workloads(step_ms: float, spread: float, sigma: float) -> dict[str, Workload]:
    return {
        "heterogeneous": Workload(
            "heterogeneous",
            SyntheticEnvConfig(step_time_ms=step_ms, step_time_sigma=sigma, scale_spread=spread),
        ),
        "homogeneous": Workload("homogeneous", SyntheticEnvConfig(step_time_ms=step_ms)),
    }


def _policy(obs_space, action_space):
    return build_policy(obs_space, action_space, MODEL)


def run_system(system: str, workload: Workload, args: argparse.Namespace) -> float:
    """Steps per second over `args.updates` rollouts (+ learning, except collect_only)."""
    torch.manual_seed(0)
    ver = VERConfig(
        system="ver" if system == "collect_only" else system,
        num_envs=args.num_envs,
        rollout_steps=args.rollout_steps,
        total_steps=10**9,
        checkpoint_interval=10**6,
        log_interval=10**6,
        device="cpu",
    )
    ppo = PPOConfig(entropy_mode="fixed", entropy_coef=1e-4)  # as the paper's benchmarks
    with tempfile.TemporaryDirectory() as tmp:
        setup = TrainSetup(
            env_factory=SyntheticEnvFactory(workload.env, args.num_envs),
            policy_builder=functools.partial(_policy),
            run_dir=Path(tmp),
            system=system,
            tensorboard=False,
            progress=False,
            max_updates=args.updates,
        )
        return Trainer(ver, ppo, setup).train().sps


def markdown(results: dict[str, dict[str, float]]) -> str:
    lines = [
        "| workload | " + " | ".join(SYSTEMS) + " | VER/DD-PPO | VER/NoVER |",
        "|---" * (len(SYSTEMS) + 3) + "|",
    ]
    for name, sps in results.items():
        cells = " | ".join(f"{sps[s]:.0f}" for s in SYSTEMS)
        lines.append(
            f"| {name} | {cells} | {sps['ver'] / sps['ddppo']:.2f}x | {sps['ver'] / sps['nover']:.2f}x |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--workload", choices=("heterogeneous", "homogeneous", "both"), default="both"
    )
    parser.add_argument("--num-envs", type=int, default=16)
    parser.add_argument("--rollout-steps", type=int, default=32)
    parser.add_argument("--updates", type=int, default=6)
    parser.add_argument("--step-ms", type=float, default=10.0)
    parser.add_argument("--spread", type=float, default=8.0)
    parser.add_argument("--sigma", type=float, default=0.5)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    torch.set_num_threads(1)
    chosen = workloads(args.step_ms, args.spread, args.sigma)
    names = list(chosen) if args.workload == "both" else [args.workload]
    results = {}
    for name in names:
        results[name] = {}
        for system in SYSTEMS:
            results[name][system] = run_system(system, chosen[name], args)
            print(f"{name:14s} {system:12s} {results[name][system]:8.0f} SPS", flush=True)
    print()
    print(markdown(results))


if __name__ == "__main__":
    main()
