"""Reward terms shared by the skill tasks.

Each task reports a fixed set of named terms every step (`info["reward_terms"]`), and the
reward is their sum. Distance terms are potential differences, coef * (previous - current),
so moving 0.1 m closer with coef 2.0 gives exactly +0.2. When the quantity a distance term
tracks switches (e.g. EE->object becomes EE->rest once the object is grasped), the term is 0
on the switching step instead of a jump between two unrelated distances.
"""

from __future__ import annotations

import numpy as np

from rearrange.skill_spec import RewardConfig


class DistanceDelta:
    """coef * (previous - current) for a tracked distance that may switch meaning ("phase")."""

    def __init__(self) -> None:
        self._prev: float | None = None
        self._phase: object = None

    def reset(self, value: float, phase: object = None) -> None:
        self._prev, self._phase = float(value), phase

    def step(self, value: float, coef: float, phase: object = None) -> float:
        value = float(value)
        same = self._prev is not None and phase == self._phase and np.isfinite(self._prev)
        delta = coef * (self._prev - value) if same and np.isfinite(value) else 0.0
        self._prev, self._phase = value, phase
        return float(delta)


def slack_term(rc: RewardConfig) -> float:
    return -rc.slack


def force_term(sim, rc: RewardConfig) -> float:
    """-min(coef * contact force, cap): discourages bumping into the world."""
    if not rc.use_force:
        return 0.0
    return -min(rc.force * float(sim.contact_force()), rc.force_cap)


def constraint_term(sim, rc: RewardConfig) -> float:
    return -rc.constraint if sim.grasp_violated() else 0.0


def ee_to_rest(sim) -> float:
    return float(np.linalg.norm(np.asarray(sim.ee_pos("base")) - np.asarray(sim.rest_ee_pos_base)))


def ee_to_point(sim, p_world) -> float:
    return float(np.linalg.norm(np.asarray(sim.ee_pos("world")) - np.asarray(p_world)))
