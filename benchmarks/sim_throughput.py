"""Single-process simulator throughput (steps/s) with random actions.

    MUJOCO_GL=egl python benchmarks/sim_throughput.py [--steps 300] [--repeats 5] [--objects 10]

Modes: physics only (no rendering); idle with 128x128 depth (no arm/base motion);
interacting with depth (random arm + base + grip every step, 4 physics substeps at 120 Hz,
depth rendered every step). Each mode runs `--repeats` times, interleaved so that load
spikes on a shared machine hit all modes alike; the table reports the median and range of
wall-clock steps/s and the median CPU time per step (all threads of this process: on a
loaded machine it says what a step costs when the process has a core to itself).
`--render-threads` / `--full-quality-head` reproduce the slower pre-optimisation settings.
`--compare-blocking` runs every mode in two sims side by side, the world blocking the robot
(`SimConfig.world_blocks_robot`, the default) and not (the world before it): random arm and
base actions are blocked far more often than a trained policy's, so this is its worst case.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from dataclasses import replace

os.environ.setdefault("MUJOCO_GL", "egl")

import numpy as np  # noqa: E402

from rearrange.sim.config import SimConfig  # noqa: E402
from rearrange.sim.snapshot import demo_episode  # noqa: E402
from rearrange.sim.world import RearrangeSim  # noqa: E402

MODES = (
    ("physics only", True, False),
    ("idle + depth 128x128", False, True),
    ("interact + depth 128x128", True, True),
)


def run(
    sim: RearrangeSim, steps: int, interact: bool, depth: bool, seed: int = 0
) -> tuple[float, float]:
    """(wall-clock steps/s, CPU ms per step) over `steps` policy steps."""
    rng = np.random.default_rng(seed)
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(steps):
        if interact:
            sim.step(rng.uniform(-1, 1, 7), float(rng.uniform(-1, 1)), rng.uniform(-1, 1, 2))
        else:
            sim.step(None, None, None)
        if depth:
            sim.render_depth()
    return steps / (time.perf_counter() - t0), 1e3 * (time.process_time() - c0) / steps


def table(results: dict[str, list[tuple[float, float]]]) -> str:
    lines = [
        "| mode | median steps/s | min | max | wall ms/step | CPU ms/step |",
        "|---|---|---|---|---|---|",
    ]
    for name, rows in results.items():
        sps = [r[0] for r in rows]
        med, cpu = statistics.median(sps), statistics.median(r[1] for r in rows)
        lines.append(
            f"| {name} | {med:.0f} | {min(sps):.0f} | {max(sps):.0f} | {1e3 / med:.2f} | {cpu:.2f} |"
        )
    return "\n".join(lines)


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=300, help="policy steps per measurement")
    p.add_argument("--repeats", type=int, default=5, help="measurements per mode (median)")
    p.add_argument("--objects", type=int, default=10, help="free objects in the scene")
    p.add_argument("--render-threads", type=int, default=1, help="llvmpipe threads")
    p.add_argument(
        "--full-quality-head",
        action="store_true",
        help="head camera with full robot meshes and MuJoCo default primitive quality",
    )
    p.add_argument(
        "--compare-blocking",
        action="store_true",
        help="each mode with the world blocking the robot and without, side by side",
    )
    a = p.parse_args(argv)
    for name in ("steps", "repeats", "objects", "render_threads"):
        if getattr(a, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be >= 1, got {getattr(a, name)}")
    return a


def main(argv=None) -> None:
    a = parse_args(argv)
    full = a.full_quality_head
    cfg = SimConfig(
        render_threads=a.render_threads, head_cheap_primitives=not full, head_lowpoly_robot=not full
    )
    variants = {"": cfg}
    if a.compare_blocking:
        variants = {
            "blocking off: ": replace(cfg, world_blocks_robot=False),
            "blocking on: ": replace(cfg, world_blocks_robot=True),
        }
    sims = {}
    for label, c in variants.items():
        sims[label] = RearrangeSim(c)
        sims[label].reset(demo_episode(0, "train", a.objects))
        run(sims[label], 20, True, True)  # warm up (renderer context, caches)
    load0 = os.getloadavg()[0]
    results: dict[str, list[tuple[float, float]]] = {}
    for r in range(a.repeats):  # interleaved, so load spikes hit every variant alike
        for label, sim in sims.items():
            for name, interact, depth in MODES:
                row = run(sim, a.steps, interact, depth, seed=r)
                results.setdefault(label + name, []).append(row)
    blocked = {label: sim.blocked_steps for label, sim in sims.items()}
    for sim in sims.values():
        sim.close()
    print(
        f"LP_NUM_THREADS={os.environ.get('LP_NUM_THREADS', 'unset')}, "
        f"MUJOCO_GL={os.environ['MUJOCO_GL']}, head quality "
        f"{'full' if a.full_quality_head else 'cheap'}, {a.objects} objects, "
        f"{a.steps} steps x {a.repeats} repeats, load avg {load0:.1f} -> {os.getloadavg()[0]:.1f} "
        f"on {os.cpu_count()} CPUs"
    )
    print(table(results))
    if a.compare_blocking:
        for name, _, _ in MODES:
            off = statistics.median(r[0] for r in results["blocking off: " + name])
            on = statistics.median(r[0] for r in results["blocking on: " + name])
            print(f"{name}: blocking on / off = {on / off:.3f}")
        print(f"steps cut short by the world (blocking on, all runs): {blocked['blocking on: ']}")


if __name__ == "__main__":
    main()
