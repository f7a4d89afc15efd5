"""Shared spaces and helpers for the policy tests (small images keep the CPU tests fast)."""

from __future__ import annotations

import numpy as np
import torch
from gymnasium import spaces


def pick_observation_space(image: int = 128) -> spaces.Dict:
    """The pick skill's sensors: head depth + target, joints, holding flag, EE-to-rest."""
    return spaces.Dict(
        {
            "depth": spaces.Box(0.0, 10.0, (image, image, 1), np.float32),
            "obj_start_sensor": spaces.Box(-np.inf, np.inf, (3,), np.float32),
            "joint": spaces.Box(-np.inf, np.inf, (7,), np.float32),
            "is_holding": spaces.Box(0.0, 1.0, (1,), np.float32),
            "relative_resting_position": spaces.Box(-np.inf, np.inf, (3,), np.float32),
        }
    )


def action_space(dim: int) -> spaces.Box:
    return spaces.Box(-1.0, 1.0, (dim,), np.float32)


def random_obs(space: spaces.Dict, batch: int, gen: torch.Generator) -> dict[str, torch.Tensor]:
    obs = {}
    for key, sub in space.spaces.items():
        scale = 10.0 if key == "depth" else 1.0
        obs[key] = torch.rand((batch, *sub.shape), generator=gen) * scale
    return obs
