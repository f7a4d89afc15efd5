"""Where a place skill lets go of its object, and where the object ends up.

    python -m benchmarks.place_release --policy state|depth [--base-movement] --episodes 100 --seed 0

Runs the shipped place skill (or `--checkpoints`) on the place task's val episodes, as
`eval_skill` does, and records per episode the step of the release, the object's distance from
its goal and its height above it at that step, and its distance at the episode's end. It
counts the releases inside the place threshold (0.15 m) whose object ended outside it:
objects let go at the goal and then moved (bounced, slid, or swept by the arm swinging back to
rest). No timing: a behaviour check.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

import numpy as np

from rearrange.skill_spec import SUCCESS

THRESHOLD = SUCCESS.place  # m: the place task's success distance


@dataclass
class Release:
    episode: int
    success: bool
    step: int | None  # the first step with nothing held (None: never released)
    dist: float | None  # object to goal at that step (m)
    height: float | None  # object centre above the goal point at that step (m)
    end_dist: float  # object to goal when the episode ended (m)

    @property
    def moved_off(self) -> bool:
        """Let go within the threshold, ended outside it."""
        return self.dist is not None and self.dist < THRESHOLD <= self.end_dist


def run_episode(env, skill, index: int) -> Release:
    obs, _ = env.reset(options={"episode_index": index})
    base = env.unwrapped
    sim = base.sim
    skill.reset(base.target, sim)
    obj, goal = base.target.obj_index, np.asarray(base.target.goal_pos, dtype=float)
    step, at, info = 0, None, {}
    while True:
        obs, _, terminated, truncated, info = env.step(skill.act(obs, sim))
        step += 1
        if at is None and sim.held_object() is None:
            p = sim.object_pos(obj)
            at = (step, float(np.linalg.norm(p - goal)), float(p[2] - goal[2]))
        if info.get("success") or terminated or truncated or skill.is_done(obs, sim):
            break
    end = float(np.linalg.norm(sim.object_pos(obj) - goal))
    step_at, dist, height = at if at is not None else (None, None, None)
    return Release(index, bool(info.get("success")), step_at, dist, height, end)


def measure(args: argparse.Namespace) -> list[Release]:
    from rearrange.eval.one_skill import SkillEvalArgs, load_skill, task_env

    eval_args = SkillEvalArgs(
        "place",
        base_movement=args.base_movement,
        policy=args.policy,
        checkpoints=args.checkpoints,
        episodes=args.episodes,
        seed=args.seed,
    )
    skill, _, preset = load_skill(eval_args)
    env = task_env(eval_args, skill, preset)
    try:
        return [run_episode(env, skill, i) for i in range(args.episodes)]
    finally:
        env.close()


def summary(rows: list[Release]) -> str:
    released = [r for r in rows if r.step is not None]
    at_goal = [r for r in released if r.dist < THRESHOLD]
    moved = [r for r in at_goal if r.moved_off]

    def median(values) -> float:
        return float(np.median(values)) if values else float("nan")

    dist = median([r.dist for r in released])
    height = median([r.height for r in released])
    return (
        f"success {sum(r.success for r in rows)}/{len(rows)}; released {len(released)}, "
        f"{len(at_goal)} within {THRESHOLD} m of the goal, {len(moved)} of those ended outside "
        f"it; at the release a median {dist:.3f} m from the goal and {height:.3f} m above it"
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--policy", choices=("state", "depth"), default="state")
    p.add_argument("--base-movement", action="store_true")
    p.add_argument("--checkpoints", default=None, help="a place checkpoint (default: shipped)")
    p.add_argument("--episodes", type=int, default=100)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--verbose", action="store_true", help="print every moved-off release")
    args = p.parse_args(argv)
    rows = measure(args)
    print(summary(rows))
    if args.verbose:
        for r in rows:
            if r.moved_off:
                print(f"  episode {r.episode}: let go at step {r.step}, {r.dist:.3f} m off and "
                      f"{r.height:.3f} m up; ended {r.end_dist:.3f} m off")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
