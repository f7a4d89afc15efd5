"""Success rate of the scripted oracle skills on their own skill-task envs (val episodes).

A task that no script solves is a broken task (DESIGN / issue 3): this is the check.

    MUJOCO_GL=egl python benchmarks/oracle_success.py                  # 7 tasks x 50 episodes
    python benchmarks/oracle_success.py --tasks pick place --episodes 10 --base-movement

Prints a markdown table: task, episodes, success rate, mean steps (successful episodes),
and how failed episodes ended. Oracles run under the task env's own step limit.
"""

from __future__ import annotations

import argparse
import collections
import sys
import time

from rearrange.sim.episode_types import SKILL_TASKS
from rearrange.skills.registry import make_oracle
from rearrange.skills.rollout import EpisodeResult, run_skill_episode


def run_task(task: str, episodes: int, base_movement: bool, seed: int) -> list[EpisodeResult]:
    from rearrange.tasks import default_task_config, make_env

    cfg = default_task_config(
        task, obs_preset="state", num_episodes=episodes, base_movement=base_movement
    )
    env = make_env(task, cfg, split="val", seed=seed)
    skill = make_oracle(task, base_movement=base_movement)
    skill.step_limit = cfg.max_episode_steps
    try:
        return [run_skill_episode(env, skill, i) for i in range(episodes)]
    finally:
        env.close()


def table_row(task: str, results: list[EpisodeResult], seconds: float) -> str:
    ok = [r for r in results if r.success]
    rate = len(ok) / max(len(results), 1)
    mean_steps = sum(r.steps for r in ok) / len(ok) if ok else float("nan")
    ends = collections.Counter(r.end for r in results if not r.success)
    fails = ", ".join(f"{k} {v}" for k, v in sorted(ends.items())) or "-"
    return f"| {task} | {len(results)} | {rate:.0%} | {mean_steps:.0f} | {fails} | {seconds:.0f} |"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tasks", nargs="+", default=list(SKILL_TASKS), choices=SKILL_TASKS)
    p.add_argument("--episodes", type=int, default=50)
    p.add_argument("--base-movement", action="store_true", help="arm skills may drive the base")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--verbose", action="store_true", help="print every failed episode")
    args = p.parse_args(argv)
    if args.episodes < 1:
        p.error(f"--episodes must be >= 1, got {args.episodes}")
    mode = "base movement" if args.base_movement else "fixed base"
    print(f"Oracle skills on val episodes ({mode}, seed {args.seed})\n")
    print("| task | episodes | success | mean steps (succ.) | failures by end | time (s) |")
    print("|---|---|---|---|---|---|")
    for task in args.tasks:
        t0 = time.time()
        results = run_task(task, args.episodes, args.base_movement, args.seed)
        print(table_row(task, results, time.time() - t0), flush=True)
        if args.verbose:
            for r in results:
                if not r.success:
                    print(f"    {r.episode_id}: {r.end} after {r.steps} steps", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
