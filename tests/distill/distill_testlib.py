"""Helpers of the distillation tests: tiny students, a recurrent state teacher, tiny runs."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

# A depth student small enough for a 2-core CPU: 32x32 depth, a ResNet of width 8 with one
# block per stage, a 32-unit 2-layer LSTM.
TINY_STUDENT = [
    "task.depth_size=32",
    "model.base_width=8",
    "model.groupnorm_groups=8",
    "model.blocks_per_stage=[1,1,1,1]",
    "model.compressed_size=64",
    "model.visual_embedding_size=32",
    "model.rnn_hidden_size=32",
]
# Rounds of 2 envs × 16 steps (32 env steps), chunks of 8, one pass over a 256-step buffer.
TINY_DAGGER = [
    "run.num_envs=2",
    "distill.rollout_steps=16",
    "distill.chunk_len=8",
    "distill.buffer_steps=256",
    "distill.minibatch_steps=64",
    "distill.epochs=1",
    "task.num_episodes=2",
]


def tiny_run(tmp_path: Path, skill: str, name: str) -> tuple[list[str], Path]:
    """The argv of a tiny serial distillation run `name` of `skill` under `tmp_path` (a log
    line every 32 steps; the caller adds run.total_steps and the options it tests), and the
    path of the run's latest checkpoint."""
    argv = [skill, "--algo", "distill", "--serial", "--run-name", name, f"runs_root={tmp_path}",
            *TINY_STUDENT, *TINY_DAGGER, "run.log_every_steps=32"]  # fmt: skip
    return argv, tmp_path / skill / name / "checkpoints" / "latest.pt"


class CountingTeacher:
    """A teacher whose label is 0.5 in every dimension but `index`, which holds its call count
    since the last reset (so every call shows)."""

    def __init__(self, size: int, index: int):
        self.size, self.index, self.calls = size, index, 0

    def reset(self):
        self.calls = 0

    def act(self, env, obs, executed):
        import numpy as np

        self.calls += 1
        out = np.full(self.size, 0.5, np.float32)
        out[self.index] = float(self.calls)
        return out


def recurrent_teacher(path: Path, task: str = "pick", base_movement: bool = False):
    """A (random) recurrent state policy of `task`, saved as train_skill saves one: a teacher
    whose labels depend on its hidden state and previous action."""
    from rearrange.models import ModelConfig, build_policy
    from rearrange.runtime.checkpoint import SkillCheckpoint, TrainingState, rng_state
    from rearrange.tasks import task_observation_space
    from rearrange.tasks.actions import action_space

    obs_space = task_observation_space(task, "state", base_movement=base_movement)
    act_space = action_space(task, base_movement or task == "nav")
    model = ModelConfig(backbone="none", rnn_hidden_size=16, state_mlp_hidden=[16],
                        action_mean_init_gain=1.0)  # fmt: skip
    policy = build_policy(obs_space, act_space, model)
    config = {
        "skill": task,
        "model": asdict(model),
        "task": {"task": task, "obs_preset": "state", "base_movement": base_movement},
    }
    SkillCheckpoint.from_training(
        config, policy.state_dict(), obs_space, act_space, num_steps=1, num_updates=1,
        wall_time_s=1.0, training=TrainingState({}, rng_state()),
    ).save(path)  # fmt: skip
    return path


def tb_scalars(run_dir: Path, tag: str) -> list[tuple[int, float]]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(run_dir / "tb"))
    acc.Reload()
    return [(e.step, e.value) for e in acc.Scalars(tag)]


def goal_error(env) -> tuple[float, float]:
    """(m, rad) from the nav env's base to its goal pose."""
    from rearrange.tasks.nav import goal_pose_error

    base = env.unwrapped
    return goal_pose_error(base.sim, base.target.nav_goal)
