"""Decoding a skill's flat action into `RearrangeSim.step` arguments.

The layouts themselves are `skill_spec.action_layout`: manipulation skills [7 arm joint
deltas, grip] (+ [linear, angular] base with base_movement), nav [linear, angular, stop].
Grip and stop are thresholded at 0. Shared by the skill envs and the HAB composite env so a
skill drives the robot the same way in both.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from gymnasium import spaces

from rearrange.skill_spec import action_layout


@dataclass
class DecodedAction:
    arm: np.ndarray | None  # [7] in [-1, 1]
    grip: float | None  # >= 0 grasp, < 0 release
    base: np.ndarray | None  # [2] in [-1, 1]
    stop: bool


def action_space(task: str, base_movement: bool) -> spaces.Box:
    n = action_layout(task, base_movement).size
    return spaces.Box(-1.0, 1.0, shape=(n,), dtype=np.float32)


def decode_action(task: str, base_movement: bool, action: np.ndarray) -> DecodedAction:
    """Clip to [-1, 1] and split; raises ValueError on a wrong-sized action."""
    a = np.asarray(action, dtype=np.float64).reshape(-1)
    layout = action_layout(task, base_movement)
    if a.shape[0] != layout.size:
        raise ValueError(
            f"{task} action has {a.shape[0]} values, expected {layout.size} "
            f"(base_movement={base_movement}); check the policy's action space"
        )
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{task} action contains NaN/inf: {a.tolist()}")
    a = np.clip(a, -1.0, 1.0)
    return DecodedAction(
        arm=None if layout.arm is None else a[layout.arm],
        grip=None if layout.grip is None else float(a[layout.grip]),
        base=None if layout.base is None else a[layout.base],
        stop=layout.stop is not None and bool(a[layout.stop] > 0),
    )
