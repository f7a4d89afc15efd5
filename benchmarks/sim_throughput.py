"""Single-process simulator throughput (steps/s) with random actions.

    MUJOCO_GL=egl python benchmarks/sim_throughput.py [--steps 300] [--objects 10]

Modes: physics only (no rendering); idle with 128x128 depth (no arm/base motion);
interacting with depth (random arm + base + grip every step). Prints a markdown table.
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("MUJOCO_GL", "egl")

import numpy as np  # noqa: E402

from rearrange.sim.snapshot import demo_episode  # noqa: E402
from rearrange.sim.world import RearrangeSim  # noqa: E402


def run(sim: RearrangeSim, steps: int, interact: bool, depth: bool, seed: int = 0) -> float:
    rng = np.random.default_rng(seed)
    t0 = time.perf_counter()
    for _ in range(steps):
        if interact:
            sim.step(rng.uniform(-1, 1, 7), float(rng.uniform(-1, 1)), rng.uniform(-1, 1, 2))
        else:
            sim.step(None, None, None)
        if depth:
            sim.render_depth()
    return steps / (time.perf_counter() - t0)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--objects", type=int, default=10)
    a = p.parse_args()
    sim = RearrangeSim()
    sim.reset(demo_episode(0, "train", a.objects))
    run(sim, 20, True, True)  # warm up (renderer context, caches)
    rows = [
        ("physics only", run(sim, a.steps, True, False)),
        ("idle + depth 128x128", run(sim, a.steps, False, True)),
        ("interact + depth 128x128", run(sim, a.steps, True, True)),
    ]
    print(
        f"LP_NUM_THREADS={os.environ.get('LP_NUM_THREADS', 'unset')}, "
        f"MUJOCO_GL={os.environ['MUJOCO_GL']}, {a.objects} objects, {a.steps} steps"
    )
    print("| mode | steps/s |\n|---|---|")
    for name, sps in rows:
        print(f"| {name} | {sps:.0f} |")
    sim.close()


if __name__ == "__main__":
    main()
