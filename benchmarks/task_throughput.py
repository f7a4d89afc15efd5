"""Steps/s of each skill env (random actions, one process), with depth and state obs.

    MUJOCO_GL=egl python benchmarks/task_throughput.py --steps 300 [--tasks pick nav]

Resets count towards the step time (as in training) and are also timed on their own. Nav's
stop dimension is held at -1: a uniformly random stop would end every other step and the
number would measure resets only. Prints a markdown table; `--json PATH` writes the numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import time

os.environ.setdefault("MUJOCO_GL", "egl")
os.environ.setdefault("LP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from rearrange.sim.world import RearrangeSim  # noqa: E402
from rearrange.skill_spec import SKILL_NAMES  # noqa: E402
from rearrange.tasks import default_task_config, make_env  # noqa: E402


def _action(rng: np.random.Generator, task: str, n: int) -> np.ndarray:
    a = rng.uniform(-1, 1, n)
    if task == "nav":
        a[-1] = -1.0
    return a


def measure(sim, task: str, preset: str, steps: int, seed: int) -> tuple[float, float]:
    """(steps/s including resets, mean reset seconds)."""
    cfg = default_task_config(task, obs_preset=preset, num_episodes=4)
    env = make_env(task, cfg, "train", seed, sim=sim)
    rng = np.random.default_rng(seed)
    n = env.action_space.shape[0]
    env.reset(seed=seed)
    for _ in range(10):  # warm up: model build, renderer, navmap
        env.step(_action(rng, task, n))
    reset_time, resets = 0.0, 0
    t0 = time.perf_counter()
    for _ in range(steps):
        _, _, term, trunc, _ = env.step(_action(rng, task, n))
        if term or trunc:
            t1 = time.perf_counter()
            env.reset()
            reset_time, resets = reset_time + time.perf_counter() - t1, resets + 1
    sps = steps / (time.perf_counter() - t0)
    return sps, reset_time / max(resets, 1)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--tasks", nargs="+", default=list(SKILL_NAMES), choices=SKILL_NAMES)
    p.add_argument("--presets", nargs="+", default=["state", "depth"], choices=["state", "depth"])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", default=None)
    args = p.parse_args()
    sim = RearrangeSim()
    results: dict[str, dict[str, list[float]]] = {}
    cols = [f"{q} SPS (reset ms)" for q in args.presets]
    print("| task | " + " | ".join(cols) + " |")
    print("|---|" + "---|" * len(args.presets))
    for task in args.tasks:
        results[task] = {q: measure(sim, task, q, args.steps, args.seed) for q in args.presets}
        cells = [f"{sps:.0f} ({1000 * r:.0f})" for sps, r in results[task].values()]
        print(f"| {task} | " + " | ".join(cells) + " |")
    sim.close()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
