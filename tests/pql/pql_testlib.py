"""Helpers of the PQL tests: tiny CLI runs and a greedy rollout of a checkpoint."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

# A small synthetic-reach PQL setup: ~2 s of updates per 1,000 steps on a quiet 2-core CPU.
TINY = [
    "run.num_envs=4",
    "pql.batch_size=256",
    "pql.beta_a_v=0.5",
    "pql.warmup_steps=16",
    "run.log_every_steps=400",
    "model.state_mlp_hidden=[64,64]",
    "pql.critic_hidden=[64,64]",
]


def train_synthetic(runs_root: Path, name: str, *extra: str) -> int:
    from rearrange.train_skill import main

    argv = ["synthetic", "--algo", "pql", "--run-name", name, f"runs_root={runs_root}"]
    return main([*argv, *TINY, *extra])


def greedy_success(checkpoint: Path, episodes: int = 50, seed: int = 123) -> float:
    """Success rate of the checkpoint's deterministic policy on fresh synthetic episodes."""
    from rearrange.runtime.synthetic_env import SyntheticReachEnv
    from rearrange.skills.learned import build_policy_from_checkpoint

    policy, _ = build_policy_from_checkpoint(checkpoint, "synthetic", "cpu")
    env = SyntheticReachEnv()
    hidden = torch.zeros(1, 1, 1)
    wins = 0
    for ep in range(episodes):
        obs, _ = env.reset(seed=seed + ep)
        done, info = False, {}
        while not done:
            batch = {k: torch.as_tensor(v)[None] for k, v in obs.items()}
            with torch.no_grad():
                _, action, _, hidden = policy.act(batch, hidden, None, None, deterministic=True)
            obs, _, terminated, truncated, info = env.step(action[0].numpy())
            done = terminated or truncated
        wins += bool(info["success"])
    return wins / episodes


def tb_tags(run: Path) -> set[str]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(run / "tb"))
    acc.Reload()
    return set(acc.Tags()["scalars"])


def scalar_values(run: Path, tag: str) -> np.ndarray:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(run / "tb"))
    acc.Reload()
    return np.array([e.value for e in acc.Scalars(tag)])
