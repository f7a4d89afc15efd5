"""How much of the nav's head depth view the robot's own arm and a held object take, for the
arm starts a nav episode can have: empty-handed at rest, carrying at the HAB reset's carry
joints (`arm_starts.carry_arm`, what nav episodes with `nav_hold_prob` use), and carrying
at a free IK solution round the same carry EE (damped least squares from a perturbed rest,
what those episodes used before 2026-12-04).

    MUJOCO_GL=egl python -m benchmarks.carry_view --episodes 40

For each start kind: the same `--episodes` nav val episodes (seed 0, `nav_hold_prob` 0 or 1),
their first 128x128 head view segmented by MuJoCo (the head camera's own visibility options),
the share of pixels on robot geoms, on the held object, and nearer than 0.6 m
(mean / median / p90 / max over episodes). Prints markdown (benchmarks/RESULTS.md, "The carry
pose in view").
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("MUJOCO_GL", "egl")

import numpy as np  # noqa: E402

NEAR_M = 0.6  # m: a pixel this near the camera is counted as blocked view
KINDS = ("empty, rest joints", "carrying, carry joints", "carrying, free IK")


def free_ik_carry(rng, cfg, kin) -> np.ndarray:
    """The old carry start: the carry EE reached from a random perturbation of the rest joints."""
    from rearrange.sim.episodes import arm_starts as A

    goal = kin.rest_ee + np.asarray(A.CARRY_EE_OFFSET)
    for _ in range(20):
        q = A._reach(kin, goal, A._perturbed_rest(rng, cfg, kin))
        if np.linalg.norm(kin.ee() - goal) <= 0.01:
            return q
    return A._reach(kin, goal, kin.rest.copy())


def view_shares(env, seed: int) -> tuple[float, float, float]:
    """(robot, held object, near) pixel shares of the head view after `env.reset(seed=seed)`."""
    import mujoco

    obs, _ = env.reset(seed=seed)
    sim = env.unwrapped.sim
    cfg = sim.config
    r = mujoco.Renderer(sim.model, cfg.depth_height, cfg.depth_width)
    try:
        r.enable_segmentation_rendering()
        r.update_scene(sim.data, camera=sim.idx.head_camera, scene_option=sim.head_vopt)
        seg = r.render()
    finally:
        r.close()
    ids, types = seg[..., 0], seg[..., 1]
    geom = np.where(types == mujoco.mjtObj.mjOBJ_GEOM, ids, -1)
    hit = geom >= 0
    robot = np.zeros(geom.shape, bool)
    robot[hit] = sim.idx.robot_geoms[geom[hit]]
    held = np.zeros(geom.shape, bool)
    if sim.held_object() is not None:
        body = sim.model.geom_bodyid[sim.idx.obj_geoms[sim.held_object()]]
        held[hit] = sim.model.geom_bodyid[geom[hit]] == body
    near = np.asarray(obs["depth"]).squeeze() < NEAR_M
    return float(robot.mean()), float(held.mean()), float(near.mean())


def measure(kind: str, episodes: int) -> np.ndarray:
    """[episodes, 3] shares for one start kind."""
    from rearrange.sim.episodes import arm_starts as A
    from rearrange.tasks import default_task_config, make_env

    hold = 0.0 if kind.startswith("empty") else 1.0
    original = A.carry_arm
    if kind.endswith("free IK"):
        A.carry_arm = free_ik_carry
    try:
        cfg = default_task_config(
            "nav", obs_preset="depth", num_episodes=episodes, nav_hold_prob=hold
        )
        env = make_env("nav", cfg, "val", 0)
        rows = [view_shares(env, ep) for ep in range(episodes)]
        env.close()
    finally:
        A.carry_arm = original
    return np.array(rows)


def fmt(values: np.ndarray) -> str:
    v = 100 * values
    return f"{v.mean():.1f} / {np.median(v):.1f} / {np.percentile(v, 90):.1f} / {v.max():.1f}"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=40, help="nav val episodes per start kind")
    args = ap.parse_args(argv)
    if args.episodes < 1:
        ap.error("--episodes must be at least 1")
    print(f"head view shares, % of pixels (mean / median / p90 / max over {args.episodes} eps)\n")
    print(f"| nav start | robot | held object | nearer than {NEAR_M} m |")
    print("|---|---|---|---|")
    for kind in KINDS:
        s = measure(kind, args.episodes)
        print(f"| {kind} | {fmt(s[:, 0])} | {fmt(s[:, 1])} | {fmt(s[:, 2])} |", flush=True)


if __name__ == "__main__":
    main()
