"""Systems benchmark on the real pick env (issue 4, benchmark (c)): SPS of ddppo, nover, ver.

The same machine, the same policy and the same env (MuJoCo pick, close start); only the
collection system changes. SPS is training throughput (collection + PPO update), measured by
the trainer after the first rollout (worker start-up and resets excluded).

    MUJOCO_GL=egl python -m benchmarks.systems_real                   # state and depth presets
    MUJOCO_GL=egl python -m benchmarks.systems_real --preset state --updates 8 --num-envs 4

Presets:
- state: state sensors only, small state-only LSTM policy (backbone "none");
- depth: head depth camera (`--depth-size`, default 64) + state sensors, the paper's
  ConvNeXt-style half-width ResNet18 + LSTM (`--rnn-hidden`, default 128 to keep CPU learning
  time in proportion).
"""

from __future__ import annotations

import argparse
import functools
import logging
import tempfile
import time
from pathlib import Path

import torch

from rearrange.models import ModelConfig, build_policy
from rearrange.tasks.config import default_task_config
from rearrange.ver_backend.config import PPOConfig, VERConfig
from rearrange.ver_backend.env_worker import TaskEnvFactory
from rearrange.ver_backend.trainer import Trainer, TrainResult, TrainSetup

SYSTEMS = ("ddppo", "nover", "ver")
PRESETS = ("state", "depth")


def model_for(preset: str, rnn_hidden: int) -> ModelConfig:
    if preset == "state":
        return ModelConfig(
            backbone="none",
            rnn_hidden_size=64,
            rnn_layers=1,
            state_mlp_hidden=[64],
            prev_action_embedding_size=16,
        )
    return ModelConfig(rnn_hidden_size=rnn_hidden, rnn_layers=2)


def _policy(obs_space, action_space, model: ModelConfig):
    return build_policy(obs_space, action_space, model)


def run_system(system: str, preset: str, args: argparse.Namespace) -> TrainResult:
    """Train `system` on the pick env for `args.updates` rollouts (SPS, collect/learn time)."""
    torch.manual_seed(0)
    task = default_task_config(
        "pick", obs_preset=preset, depth_size=args.depth_size, num_episodes=args.num_episodes
    )
    rollout_steps = args.rollout_steps or (64 if preset == "state" else 16)
    ver = VERConfig(
        system=system,
        num_envs=args.num_envs,
        rollout_steps=rollout_steps,
        total_steps=10**9,
        checkpoint_interval=10**6,
        log_interval=10**6,
        device="cpu",
    )
    ppo = PPOConfig(entropy_mode="fixed", entropy_coef=1e-4)  # as the paper's benchmarks
    model = model_for(preset, args.rnn_hidden)
    with tempfile.TemporaryDirectory() as tmp:
        setup = TrainSetup(
            env_factory=TaskEnvFactory("pick", task, "train", args.seed),
            policy_builder=functools.partial(_policy, model=model),
            run_dir=Path(tmp),
            tensorboard=False,
            progress=False,
            max_updates=args.updates,
        )
        return Trainer(ver, ppo, setup).train()


def markdown(results: dict[str, dict[str, float]], args: argparse.Namespace) -> str:
    lines = [
        "| preset | " + " | ".join(SYSTEMS) + " | VER/DD-PPO | VER/NoVER |",
        "|---" * (len(SYSTEMS) + 3) + "|",
    ]
    for preset, sps in results.items():
        cells = " | ".join(f"{sps[s]:.0f}" for s in SYSTEMS)
        lines.append(
            f"| {preset} | {cells} | {sps['ver'] / sps['ddppo']:.2f}x "
            f"| {sps['ver'] / sps['nover']:.2f}x |"
        )
    lines.append(
        f"\npick env, {args.num_envs} env processes, {args.updates} updates per system, "
        f"depth {args.depth_size}x{args.depth_size}, {time.strftime('%Y-%m-%d')}"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", choices=(*PRESETS, "both"), default="both")
    parser.add_argument("--num-envs", type=int, default=4)
    parser.add_argument("--rollout-steps", type=int, default=None, help="T (state 64, depth 16)")
    parser.add_argument("--updates", type=int, default=6)
    parser.add_argument("--depth-size", type=int, default=64)
    parser.add_argument("--rnn-hidden", type=int, default=128)
    parser.add_argument("--num-episodes", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    torch.set_num_threads(1)
    presets = list(PRESETS) if args.preset == "both" else [args.preset]
    results: dict[str, dict[str, float]] = {}
    for preset in presets:
        results[preset] = {}
        for system in SYSTEMS:
            result = run_system(system, preset, args)
            results[preset][system] = result.sps
            share = result.learn_s / max(result.learn_s + result.collect_s, 1e-9)
            print(
                f"{preset:6s} {system:6s} {result.sps:8.0f} SPS  (learning {share:.0%} of the time)",
                flush=True,
            )
    print()
    print(markdown(results, args))


if __name__ == "__main__":
    main()
