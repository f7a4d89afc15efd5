"""How place legs find their object held: the place task's own starts against a HAB chain's.

    python -m benchmarks.held_pose_starts --episodes 200 \
        --results benchmarks/results/hab_learned/bm_depth2_seed1/results_tidy_house_learned_bm_depth.json

Resets the place task (`--base-movement` by default, the training split) `--episodes` times
and measures `eval/held_pose.held_pose` at each start (the grasps the place skills learned
on: `sim/episodes/arm_starts.pick_end`), then reads the place legs of each HAB results file
(`skill_runs`' "held_dist_m" / "held_tilt_deg", recorded since the executor measures them)
and prints, side by side, the quantiles of both numbers, the chain's split by whether the
place leg succeeded. No timing: a distribution check.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

KEYS = ("held_dist_m", "held_tilt_deg")
QUANTILES = (0.05, 0.5, 0.95)


def task_starts(episodes: int, base_movement: bool, split: str, seed: int) -> list[dict]:
    """held_pose at the start of `episodes` place-task episodes."""
    from rearrange.eval.held_pose import held_pose
    from rearrange.tasks import default_task_config, make_env

    cfg = default_task_config(
        "place", obs_preset="state", num_episodes=episodes, base_movement=base_movement
    )
    env = make_env("place", cfg, split=split, seed=seed)
    try:
        out = []
        for i in range(episodes):
            env.reset(options={"episode_index": i})
            out.append(held_pose(env.unwrapped.sim))
        return out
    finally:
        env.close()


def chain_place_legs(path: Path) -> list[dict]:
    """The place legs of a HAB results file that recorded how they found the object held."""
    data = json.loads(path.read_text())
    legs = [r for e in data["episodes"] for r in e["skill_runs"] if r["skill"] == "place"]
    return [r for r in legs if KEYS[0] in r]


def quantile_row(name: str, rows: list[dict]) -> str:
    cells = []
    for key in KEYS:
        values = np.array([r[key] for r in rows if key in r], dtype=np.float64)
        if values.size == 0:
            cells.append("–")
            continue
        q = np.quantile(values, QUANTILES)
        cells.append(" / ".join(f"{v:.3g}" for v in q))
    return f"| {name} | {len(rows)} | " + " | ".join(cells) + " |"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.held_pose_starts", description=__doc__)
    p.add_argument("--episodes", type=int, default=200)
    p.add_argument("--fixed-base", action="store_true", help="the fixed-base place task")
    p.add_argument("--split", default="train")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--results", nargs="*", default=[], help="HAB results_*.json files")
    args = p.parse_args(argv)
    missing = [r for r in args.results if not Path(r).is_file()]
    if missing:
        print(
            f"held_pose_starts: no results file {missing[0]}: run benchmarks.hab_learned first",
            file=sys.stderr,
        )
        return 2
    q = ", ".join(f"{int(100 * v)} %" for v in QUANTILES)
    print(f"| place starts | n | held_dist_m ({q}) | held_tilt_deg ({q}) |")
    print("|---|---|---|---|")
    starts = task_starts(args.episodes, not args.fixed_base, args.split, args.seed)
    print(quantile_row(f"place task ({args.split}, seed {args.seed})", starts), flush=True)
    for path in map(Path, args.results):
        legs = chain_place_legs(path)
        if not legs:
            print(f"| {path.parent.name}: no held pose recorded (older run) | 0 | – | – |")
            continue
        print(quantile_row(f"{path.parent.name}, placed", [r for r in legs if r["ok"]]))
        print(quantile_row(f"{path.parent.name}, failed", [r for r in legs if not r["ok"]]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
