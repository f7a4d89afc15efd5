"""Steps/s of each skill env (random actions, one process), with depth and state obs.

    MUJOCO_GL=egl python benchmarks/task_throughput.py --steps 300 [--tasks pick nav]
        [--presets state state_rays depth] [--blocking on|off|both] [--repeats 3]
        [--field stop_loose_parts]   # --blocking then switches that SimConfig field

Resets count towards the step time (as in training) and are also timed on their own. Nav's
stop dimension is held at -1: a uniformly random stop would end every other step and the
number would measure resets only. Prints a markdown table; `--json PATH` writes the numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

os.environ.setdefault("MUJOCO_GL", "egl")
os.environ.setdefault("LP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from rearrange.sim.config import SimConfig  # noqa: E402
from rearrange.sim.world import RearrangeSim  # noqa: E402
from rearrange.skill_spec import SKILL_NAMES, action_layout  # noqa: E402
from rearrange.tasks import default_task_config, make_env  # noqa: E402


def _action(rng: np.random.Generator, task: str, n: int) -> np.ndarray:
    a = rng.uniform(-1, 1, n)
    stop = action_layout(task).stop
    if stop is not None:  # nav: never stop, drive to the step limit
        a[stop] = -1.0
    return a


def measure(sim, task: str, preset: str, steps: int, seed: int) -> tuple[float, float, float]:
    """(steps/s including resets, mean reset seconds, share of steps the world cut short)."""
    cfg = default_task_config(task, obs_preset=preset, num_episodes=4)
    env = make_env(task, cfg, "train", seed, sim=sim)
    rng = np.random.default_rng(seed)
    n = env.action_space.shape[0]
    env.reset(seed=seed)
    for _ in range(10):  # warm up: model build, renderer, navmap
        env.step(_action(rng, task, n))
    reset_time, resets, blocked = 0.0, 0, -sim.blocked_steps
    t0 = time.perf_counter()
    for _ in range(steps):
        _, _, term, trunc, _ = env.step(_action(rng, task, n))
        if term or trunc:
            blocked += sim.blocked_steps
            t1 = time.perf_counter()
            env.reset()
            reset_time, resets = reset_time + time.perf_counter() - t1, resets + 1
    sps = steps / (time.perf_counter() - t0)
    return sps, reset_time / max(resets, 1), (blocked + sim.blocked_steps) / steps


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--tasks", nargs="+", default=list(SKILL_NAMES), choices=SKILL_NAMES)
    p.add_argument(
        "--presets", nargs="+", default=["state", "depth"], choices=["state", "state_rays", "depth"]
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", default=None)
    p.add_argument(
        "--blocking",
        choices=["on", "off", "both"],
        default="on",
        help="the world blocks the robot (SimConfig.world_blocks_robot, or --field); both: "
        "side by side",
    )
    p.add_argument(
        "--field",
        default="world_blocks_robot",
        help="the boolean SimConfig field --blocking switches, e.g. stop_loose_parts",
    )
    p.add_argument("--repeats", type=int, default=1, help="interleaved runs (median, min-max)")
    args = p.parse_args()
    variants = {"on": [True], "off": [False], "both": [False, True]}[args.blocking]
    if not isinstance(getattr(SimConfig(), args.field, None), bool):
        p.error(f"--field {args.field!r} is not a boolean SimConfig field")
    sims = {b: RearrangeSim(SimConfig(**{args.field: b})) for b in variants}
    results: dict[str, dict[str, dict[str, list]]] = {}
    label = "blocking" if args.field == "world_blocks_robot" else args.field
    names = {b: f"{label} " + ("on" if b else "off") for b in variants}
    cols = [f"{q} SPS, {names[b]} (reset ms)" for q in args.presets for b in variants]
    if len(variants) == 2:
        cols += [f"{q} on / off" for q in args.presets]
    print("| task | " + " | ".join(cols) + " |")
    print("|---|" + "---|" * len(cols))
    for task in args.tasks:
        runs = {q: {b: [] for b in variants} for q in args.presets}
        for r in range(args.repeats):  # interleaved: load spikes hit every variant alike
            for q in args.presets:
                for b in variants:
                    runs[q][b].append(measure(sims[b], task, q, args.steps, args.seed + r))
        cells, ratios = [], []
        for q in args.presets:
            for b in variants:
                sps = sorted(x[0] for x in runs[q][b])
                reset = statistics.median(x[1] for x in runs[q][b])
                spread = f" [{sps[0]:.0f}-{sps[-1]:.0f}]" if len(sps) > 1 else ""
                cells.append(f"{statistics.median(sps):.0f}{spread} ({1000 * reset:.0f})")
            if len(variants) == 2:
                off, on = (statistics.median(x[0] for x in runs[q][b]) for b in variants)
                ratios.append(f"{on / off:.3f}")
        print(f"| {task} | " + " | ".join(cells + ratios) + " |", flush=True)
        results[task] = {q: {names[b]: runs[q][b] for b in variants} for q in args.presets}
    if True in sims and args.field == "world_blocks_robot":
        for task, by_preset in results.items():
            share = [x[2] for q in by_preset.values() for x in q[names[True]]]
            print(f"{task}: {100 * statistics.mean(share):.1f} % of steps cut short by the world")
    for sim in sims.values():
        sim.close()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
