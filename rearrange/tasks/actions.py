"""Action layouts of the skills and their decoding into `RearrangeSim.step` arguments.

Manipulation skills: [7 arm joint deltas, grip] (+ [linear, angular] base with base_movement).
Nav: [linear, angular, stop]; nav never moves the arm. Grip and stop are thresholded at 0.
Shared by the skill envs and the HAB composite env so a skill drives the robot the same way
in both.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from gymnasium import spaces

ARM_DOF = 7
BASE_DOF = 2


@dataclass
class DecodedAction:
    arm: np.ndarray | None  # [7] in [-1, 1]
    grip: float | None  # >= 0 grasp, < 0 release
    base: np.ndarray | None  # [2] in [-1, 1]
    stop: bool


def action_dim(task: str, base_movement: bool) -> int:
    if task == "nav":
        return BASE_DOF + 1
    return ARM_DOF + 1 + (BASE_DOF if base_movement else 0)


def action_space(task: str, base_movement: bool) -> spaces.Box:
    n = action_dim(task, base_movement)
    return spaces.Box(-1.0, 1.0, shape=(n,), dtype=np.float32)


def decode_action(task: str, base_movement: bool, action: np.ndarray) -> DecodedAction:
    """Clip to [-1, 1] and split; raises ValueError on a wrong-sized action."""
    a = np.asarray(action, dtype=np.float64).reshape(-1)
    expected = action_dim(task, base_movement)
    if a.shape[0] != expected:
        raise ValueError(
            f"{task} action has {a.shape[0]} values, expected {expected} "
            f"(base_movement={base_movement}); check the policy's action space"
        )
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{task} action contains NaN/inf: {a.tolist()}")
    a = np.clip(a, -1.0, 1.0)
    if task == "nav":
        return DecodedAction(arm=None, grip=None, base=a[:BASE_DOF], stop=bool(a[BASE_DOF] > 0))
    base = a[ARM_DOF + 1 :] if base_movement else None
    return DecodedAction(arm=a[:ARM_DOF], grip=float(a[ARM_DOF]), base=base, stop=False)
