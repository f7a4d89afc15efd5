"""Build the reach env, step it, and train it for a few steps (docs/ADDING_A_SKILL.md).

python docs/examples/train_reach.py RUNS_ROOT
"""

from __future__ import annotations

import sys

import reach_skill  # noqa: F401  (registers the reach skill: its definition and env class)

from rearrange.tasks import default_task_config, make_env
from rearrange.train_skill import main


def try_env() -> None:
    env = make_env("reach", default_task_config("reach", obs_preset="state", num_episodes=2))
    obs, info = env.reset(seed=0)
    for _ in range(5):
        obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
    print("reach observes", sorted(obs), "reward terms", sorted(info["reward_terms"]))
    env.close()


def train(runs_root: str) -> int:
    """64 steps of PQL, the CPU profile's trainer, with tiny networks. --serial steps the envs
    in this process; without it they run in worker processes, which import reach_skill
    through the env class they are given (runtime/env_worker.py, TaskEnvFactory)."""
    flags = ["--profile", "cpu", "--algo", "pql", "--serial", "--run-name", "tiny"]
    run = ["run.num_envs=2", "run.total_steps=64", "task.num_episodes=2", "pql.batch_size=16"]
    tiny = ["pql.warmup_steps=4", "model.state_mlp_hidden=[16]", "pql.critic_hidden=[16]"]
    return main(["reach", *flags, f"runs_root={runs_root}", *run, *tiny])


if __name__ == "__main__":  # spawned processes import this file without running this
    try_env()
    sys.exit(train(sys.argv[1]))
