"""Helpers shared by the skills tests."""

import dataclasses
import math
from dataclasses import asdict

import numpy as np


def train_ckpt(path, task="pick", base_movement=False, obs_preset="state", depth_size=32):
    """A real (untrained) policy checkpoint as train_skill writes it (its config): a state
    policy, or with obs_preset="depth" a small ResNet on depth_size² head depth."""
    from rearrange.models import ModelConfig, build_policy
    from rearrange.runtime.checkpoint import SkillCheckpoint, TrainingState, rng_state
    from rearrange.tasks import task_observation_space
    from rearrange.tasks.actions import action_space

    obs_space = task_observation_space(task, obs_preset, depth_size, base_movement=base_movement)
    act_space = action_space(task, base_movement or task == "nav")
    model = ModelConfig(backbone="none", rnn_hidden_size=16, state_mlp_hidden=[16])
    if obs_preset == "depth":
        model = ModelConfig(
            base_width=8, groupnorm_groups=4, blocks_per_stage=[1, 1], stage_dilations=[1, 1],
            compressed_size=64, visual_embedding_size=16, rnn_hidden_size=16, rnn_layers=1,
            state_mlp_hidden=[16],
        )  # fmt: skip
    policy = build_policy(obs_space, act_space, model)
    config = {
        "skill": task,
        "base_movement": base_movement,
        "model": asdict(model),
        "task": {"task": task, "obs_preset": obs_preset, "base_movement": base_movement},
    }
    SkillCheckpoint.from_training(
        config, policy.state_dict(), obs_space, act_space, num_steps=4096, num_updates=4,
        wall_time_s=12.5, training=TrainingState({"optimizer": {}}, rng_state()),
    ).save(path)  # fmt: skip
    return policy


def one_target_hab_env():
    """The HAB env on tidy_house val episode 0 cut to its first target, reset."""
    from rearrange.tasks import HabConfig, HabEnv
    from rearrange.tasks.base import load_task_episodes

    ep = load_task_episodes("tidy_house", None, 1, "val", 0)[0]
    ep = dataclasses.replace(ep, targets=ep.targets[:1])
    env = HabEnv(ep.task, HabConfig(obs_preset="state"), split="val", episodes=[ep])
    env.reset()
    return env


def face_nearest_wall(sim, gap: float) -> None:
    """Turn the robot toward the nearest obstacle of its range scan with open floor behind
    (1.2 m) and stand the base disc `gap` (m) from it: the base clear, the folded arm in or
    against the wall."""
    angles = np.linspace(-math.pi, math.pi, 72, endpoint=False)
    ranges = np.asarray(sim.obstacle_ranges(angles, 5.0))
    behind = np.roll(ranges, len(angles) // 2)  # the range straight behind each heading
    k = int(np.argmin(np.where(behind > 1.2 + ranges, ranges, np.inf)))
    x, y, yaw = (float(v) for v in sim.base_pose())
    a = yaw + float(angles[k])
    d = float(ranges[k]) - sim.config.robot_radius - gap
    assert sim.set_base_pose(x + d * math.cos(a), y + d * math.sin(a), a)


def backed_off(sim, n: int, step: float) -> tuple[float, float, float]:
    """The base pose `n` reverse steps of `step` (m) straight behind the current one."""
    x, y, yaw = (float(v) for v in sim.base_pose())
    return (x - n * step * math.cos(yaw), y - n * step * math.sin(yaw), yaw)
