"""Shared plumbing of the scripted (privileged) oracle skills.

Oracles read the true sim state but act only through their skill task's action vector,
so a success proves the task is solvable with the learned policy's actions.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from rearrange.skill_spec import SkillTarget, action_layout, step_limit_for
from rearrange.skills.termination import postcondition_met


def base_rotation(sim) -> np.ndarray:
    """3x3 rotation taking base-frame vectors to the world frame (the base only yaws)."""
    yaw = float(sim.base_pose()[2])
    c, s = math.cos(yaw), math.sin(yaw)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def base_to_world(sim, p_base: np.ndarray) -> np.ndarray:
    """Inverse of `sim.to_base_frame` (found from its value at the world origin)."""
    rot = base_rotation(sim)
    origin_in_base = np.asarray(sim.to_base_frame(np.zeros(3)), dtype=np.float64)
    # to_base_frame(p) = Rᵀ p + origin_in_base  ⇒  p = R (p_base − origin_in_base)
    return rot @ (np.asarray(p_base, dtype=np.float64) - origin_in_base)


def rest_ee_world(sim) -> np.ndarray:
    return base_to_world(sim, np.asarray(sim.rest_ee_pos_base, dtype=np.float64))


class OracleSkill:
    """Step counting, termination and the action layout; subclasses implement `_act`."""

    name = "base"

    def __init__(self, base_movement: bool = False, step_limit: int | None = None) -> None:
        self.task = self.name
        self.base_movement = base_movement
        self.layout = action_layout(self.name, base_movement)
        self.step_limit = step_limit or step_limit_for(self.name, base_movement)
        self.target = SkillTarget()
        self.steps = 0
        self.stop_called = False
        self.phase = "start"

    def reset(self, target: SkillTarget, sim_or_env_state: Any = None) -> None:
        self.target = target
        self.steps = 0
        self.stop_called = False
        self.phase = "start"
        self._reset()

    def act(self, obs: dict, sim: Any) -> np.ndarray:
        self.steps += 1
        return self._act(obs, sim)

    def is_done(self, obs: dict, sim: Any) -> bool:
        if self.stop_called or self.steps >= self.step_limit:
            return True
        return postcondition_met(self.name, self.target, sim)

    def _reset(self) -> None:
        pass

    def _act(self, obs: dict, sim: Any) -> np.ndarray:
        raise NotImplementedError
