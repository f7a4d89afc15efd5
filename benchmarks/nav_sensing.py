"""Nav observation presets side by side: env SPS of state, state_rays and 128x128 depth.

    MUJOCO_GL=egl nice -n 19 python -m benchmarks.nav_sensing --steps 1000 --repeats 9 \
        --note "beside a 2-core training run"

1. Env SPS: one nav skill env per preset (own sim, train split, the same episodes and the
   same seeded actions: forward 0..1, turn -1..1, never stop; resets included), stepped in
   one process, presets interleaved (order rotated) in each repeat; min / median / max SPS
   and each median over the plain-state median; beside it the policy's `act` time per batch
   (the CPU model on state / state_rays, the paper's ResNet18 on depth) and env + act SPS.
2. The scan itself: microseconds per `RearrangeSim.obstacle_ranges` call (64 rays).
3. Why the scan reads 2-D footprints and not MuJoCo rays against the meshes: at the nav
   spawns of `--layouts` train episodes it compares the scan with a one-height lidar
   (`mujoco.mj_multiRay` at --lidar-height from the base centre) and counts rays
   where the lidar reads farther than the footprint scan (it passes something that blocks
   the base: between the legs under a table top) or nearer.

Prints markdown; absolute SPS depend on the load of the machine (printed: load average),
so compare the ratios.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("MUJOCO_GL", "egl")
os.environ.setdefault("LP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

PRESETS = ("state", "state_rays", "depth")
TIMED_CALLS = 20  # scans per spawn in the lidar comparison's timing


def make_nav_env(preset: str, episodes: int, seed: int = 0):
    from rearrange.tasks import default_task_config, make_env

    cfg = default_task_config("nav", obs_preset=preset, num_episodes=episodes)
    return make_env("nav", cfg, "train", seed)


def run_steps(env, steps: int, seed: int) -> float:
    """SPS of `steps` env steps with seeded actions (resets counted in the time)."""
    rng = np.random.default_rng(seed)
    actions = np.column_stack(
        [rng.uniform(0.0, 1.0, steps), rng.uniform(-1.0, 1.0, steps), -np.ones(steps)]
    ).astype(np.float32)
    env.reset(seed=seed)
    t0 = time.perf_counter()
    for a in actions:
        _, _, term, trunc, _ = env.step(a)
        if term or trunc:
            env.reset()
    return steps / (time.perf_counter() - t0)


def env_sps(steps: int, repeats: int, episodes: int) -> dict[str, list[float]]:
    envs = {p: make_nav_env(p, episodes) for p in PRESETS}
    for env in envs.values():  # warm-up: model build, renderer, caches
        run_steps(env, 20, 12345)
    sps: dict[str, list[float]] = {p: [] for p in PRESETS}
    for r in range(repeats):
        for k in range(len(PRESETS)):  # rotate the order: load swings hit every preset alike
            p = PRESETS[(r + k) % len(PRESETS)]
            sps[p].append(run_steps(envs[p], steps, 1000 + r))
        print(f"repeat {r + 1}: " + ", ".join(f"{p} {sps[p][-1]:.0f}" for p in PRESETS),
              file=sys.stderr, flush=True)  # fmt: skip
    for env in envs.values():
        env.close()
    return sps


def scan_cost_us(calls: int = 2000) -> float:
    from rearrange.tasks.sensors import RAY_ANGLES, RAY_MAX_RANGE

    env = make_nav_env("state_rays", 1)
    env.reset(seed=0)
    best = np.inf
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(calls // 5):
            env.sim.obstacle_ranges(RAY_ANGLES, RAY_MAX_RANGE)
        best = min(best, (time.perf_counter() - t0) / (calls // 5))
    env.close()
    return best * 1e6


def policy_act_ms(batch: int, calls: int) -> dict[str, float]:
    """ms per `policy.act` on a batch of `batch` observations (torch 1 thread, no grad): the
    CPU profile's model (model/state_cpu) on state and state_rays, the paper's ResNet18 +
    LSTM (model/default) on depth. A training step pays this again in the PPO update."""
    import torch

    from rearrange.config import compose_train_config
    from rearrange.models import build_policy
    from rearrange.tasks.actions import action_space
    from rearrange.tasks.sensors import task_observation_space

    torch.set_num_threads(1)
    cpu = compose_train_config("nav", ["profile=cpu"]).model
    paper = compose_train_config("nav").model
    out = {}
    for preset, model in (("state", cpu), ("state_rays", cpu), ("depth", paper)):
        space = task_observation_space("nav", preset)
        policy = build_policy(space, action_space("nav", True), model).eval()
        obs = {k: torch.as_tensor(np.stack([v.sample() for _ in range(batch)]))
               for k, v in space.spaces.items()}  # fmt: skip
        args = (policy.initial_hidden(batch), torch.zeros(batch, 3),
                torch.ones(batch, dtype=torch.bool))  # fmt: skip
        times = []
        with torch.no_grad():
            policy.act(obs, *args)
            for _ in range(calls):
                t0 = time.perf_counter()
                policy.act(obs, *args)
                times.append(time.perf_counter() - t0)
        out[preset] = statistics.median(times) * 1e3
    return out


def lidar_ranges(sim, angles: np.ndarray, height: float, max_range: float):
    """One-height MuJoCo lidar: `mj_multiRay` from the base centre at `height`, all geoms but
    the base body, capped at max_range. Returns (ranges, rays that hit another robot geom)."""
    import mujoco

    x, y, yaw = sim.base_pose()
    a = yaw + angles
    vec = np.column_stack([np.cos(a), np.sin(a), np.zeros(len(a))]).reshape(-1)
    gid = np.zeros(len(a), np.int32)
    dist = np.zeros(len(a))
    pnt = np.array([x, y, height])
    mujoco.mj_multiRay(sim.model, sim.data, pnt, vec, None, 1, sim.idx.base_body, gid, dist,
                       None, len(a), max_range)  # fmt: skip
    hit = gid >= 0
    robot = hit & sim.idx.robot_geoms[np.maximum(gid, 0)]
    return np.where(hit, np.minimum(dist, max_range), max_range), int(robot.sum())


def lidar_vs_footprints(layouts: int, height: float) -> dict[str, float]:
    from rearrange.tasks.sensors import RAY_ANGLES, RAY_MAX_RANGE

    env = make_nav_env("state_rays", layouts)
    rays = far = near = self_hits = 0
    seen_layouts = set()
    t_lidar = t_scan = 0.0
    for i in range(layouts):
        env.reset(options={"episode_index": i})
        seen_layouts.add(env.episode.scene_seed)
        t0 = time.perf_counter()
        for _ in range(TIMED_CALLS):
            scan = env.sim.obstacle_ranges(RAY_ANGLES, RAY_MAX_RANGE)
        t1 = time.perf_counter()
        for _ in range(TIMED_CALLS):
            lidar, robot_hits = lidar_ranges(env.sim, RAY_ANGLES, height, RAY_MAX_RANGE)
        t_lidar += (time.perf_counter() - t1) / TIMED_CALLS
        t_scan += (t1 - t0) / TIMED_CALLS
        self_hits += robot_hits
        rays += len(scan)
        far += int(np.sum(lidar > scan + 0.1))
        near += int(np.sum(lidar < scan - 0.1))
    env.close()
    return {
        "spawns": layouts,
        "layouts": len(seen_layouts),
        "rays": rays,
        "far": far / rays,
        "near": near / rays,
        "self_hits": self_hits,
        "lidar_us": t_lidar / layouts * 1e6,
        "scan_us": t_scan / layouts * 1e6,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=1000, help="env steps per preset per repeat")
    p.add_argument("--repeats", type=int, default=9)
    p.add_argument("--episodes", type=int, default=10, help="nav train episodes per env")
    p.add_argument("--layouts", type=int, default=40, help="spawns for the lidar comparison")
    p.add_argument("--lidar-height", type=float, default=0.25, help="m (Fetch's laser: ~0.24)")
    p.add_argument("--batch", type=int, default=8, help="envs per policy call (ver/cpu: 8)")
    p.add_argument("--note", default="", help="conditions to print (e.g. what else ran)")
    args = p.parse_args(argv)

    load0 = os.getloadavg()
    t0 = time.time()
    sps = env_sps(args.steps, args.repeats, args.episodes)
    scan_us = scan_cost_us()
    act_ms = policy_act_ms(args.batch, 5)
    cmp = lidar_vs_footprints(args.layouts, args.lidar_height)
    load1 = os.getloadavg()

    print(f"## Nav observation presets: env SPS ({os.cpu_count()} CPUs, one process)\n")
    print(f"{args.steps} steps x {args.repeats} repeats per preset, interleaved; load average "
          f"{load0[0]:.1f} before, {load1[0]:.1f} after; {time.time() - t0:.0f} s in all."
          + (f" Conditions: {args.note}." if args.note else ""))  # fmt: skip
    print(
        f"\n| preset | observation | env SPS min | median | max | median / state | "
        f"policy.act, batch {args.batch} | env + act SPS |"
    )
    print("|---|---|---|---|---|---|---|---|")
    what = {
        "state": "joint + goal_polar + goal_heading (10 floats)",
        "state_rays": "state + 64 obstacle ranges (74 floats)",
        "depth": "state + 128x128 head depth",
    }
    base = statistics.median(sps["state"])
    for preset in PRESETS:
        v = sps[preset]
        med = statistics.median(v)
        print(f"| {preset} | {what[preset]} | {min(v):.0f} | {med:.0f} | {max(v):.0f} | "
              f"{med / base:.2f} | {act_ms[preset]:.1f} ms | "
              f"{1 / (1 / med + act_ms[preset] / 1e3 / args.batch):.0f} |")  # fmt: skip
    rays, depth = statistics.median(sps["state_rays"]), statistics.median(sps["depth"])
    print(f"\nstate_rays / depth (medians): {rays / depth:.1f}x the env steps per second.")
    print(
        f"The 64-ray scan alone: {scan_us:.0f} us per call (best of 5). policy.act: the "
        f"CPU model (model/state_cpu) on state / state_rays, the paper's ResNet18 + LSTM "
        f"(model/default) on depth; median of 5, torch 1 thread, no grad. env + act SPS: "
        f"1 / (1 / env SPS + act time / batch), serial collection before any learning.\n"
    )
    print(f"## Footprint scan vs a one-height MuJoCo lidar ({args.lidar_height} m)\n")
    print(f"{cmp['spawns']} nav spawns in {cmp['layouts']} train layouts, {cmp['rays']} rays: "
          f"the lidar reads > 10 cm farther than the footprint scan on {cmp['far']:.1%} of rays "
          f"(between table legs, into open shelves: space the base cannot enter) and > 10 cm "
          f"nearer on {cmp['near']:.1%} ({cmp['self_hits']} rays hit a robot geom). Per 64-ray "
          f"scan: footprints {cmp['scan_us']:.0f} us, mj_multiRay {cmp['lidar_us']:.0f} us.")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
