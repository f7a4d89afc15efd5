"""Helpers for the simulator tests: hand-built episodes, a tiny IK driver and a scripted
open_fridge run that holds the handle."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

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


@contextlib.contextmanager
def scripted_fridge_hold() -> Iterator[RearrangeSim]:
    """An open_fridge val episode in the blocking world, stepped by the scripted skill until
    it holds the handle (the door still closed); the env closes on exit."""
    from rearrange.sim.config import SimConfig
    from rearrange.skills.registry import make_oracle
    from rearrange.tasks import default_task_config, make_env

    cfg = default_task_config(
        "open_fridge", obs_preset="state", num_episodes=1, sim=SimConfig(world_blocks_robot=True)
    )
    env = make_env("open_fridge", cfg, split="val", seed=0)
    try:
        obs, _ = env.reset(options={"episode_index": 0})
        sim = env.unwrapped.sim
        skill = make_oracle("open_fridge")
        skill.reset(env.unwrapped.target, sim)
        for _ in range(200):
            if sim.held_articulation() == "fridge":
                break
            obs, *_ = env.step(skill.act(obs, sim))
        assert sim.held_articulation() == "fridge"
        yield sim
    finally:
        env.close()
