"""Helpers for the simulator tests: hand-built episodes and a tiny IK driver."""

from __future__ import annotations

import os

os.environ.setdefault("MUJOCO_GL", "egl")

import numpy as np  # noqa: E402

from rearrange.sim.apartment import generate_layout  # noqa: E402
from rearrange.sim.episode_types import Episode, ObjectPlacement  # noqa: E402
from rearrange.sim.snapshot import place_on, stand_in_front  # noqa: E402
from rearrange.sim.world import RearrangeSim  # noqa: E402


def episode_at(
    furniture: str,
    objects: list[tuple[str, str]],
    seed: int = 0,
    dist: float = 0.6,
    articulations: dict | None = None,
) -> Episode:
    """Robot `dist` m in front of `furniture`; objects as (type, receptacle) at centres."""
    layout = generate_layout(seed, "train")
    placed = []
    for k, (obj, rec) in enumerate(objects):
        pos, quat = place_on(layout.receptacle(rec), obj, 0.0, -0.6 + 1.2 * (k % 2))
        placed.append(ObjectPlacement(obj, pos, quat, rec))
    return Episode(
        "test",
        "pick",
        "train",
        seed,
        stand_in_front(layout, furniture, dist),
        placed,
        articulations=articulations or {},
    )


def move_ee_to(
    sim: RearrangeSim, target, steps: int = 150, tol: float = 0.01, grip: float | None = None
) -> float:
    """Drive the arm with damped-least-squares IK actions until the EE is at `target`."""
    target = np.asarray(target, dtype=np.float64)
    for _ in range(steps):
        err = target - sim.ee_pos()
        if np.linalg.norm(err) < tol:
            break
        jac = sim.arm_jacobian()
        dq = jac.T @ np.linalg.solve(jac @ jac.T + 1e-3 * np.eye(3), err)
        sim.step(np.clip(dq / sim.config.arm_delta_scale, -1, 1), grip, None)
    return float(np.linalg.norm(target - sim.ee_pos()))
