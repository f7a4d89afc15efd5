"""Success rate of the scripted oracle skills on their own skill-task envs (val episodes).

A task that no script solves is a broken task: this is the check. A thin loop over
`python -m rearrange.eval_skill TASK --skills oracle` for every task, plus the physical
honesty figures of issue 27: per task the deepest robot overlap with static geometry at any
step of any episode (`EpisodeResult.max_depth`), its median over episodes, and how many
episodes the force limit ended (`excessive_force`, `tasks/force_limit.py`).

    MUJOCO_GL=egl python benchmarks/oracle_success.py                  # 7 tasks x 50 episodes
    python benchmarks/oracle_success.py --tasks pick place --episodes 10 --base-movement
    PYTHONPATH=/tmp/blk python benchmarks/oracle_success.py --import blockon   # a plugin first

`--import MODULE` imports a module before anything runs (e.g. one that changes SimConfig or
ForceLimit defaults); the header states whether the world blocks the robot and the force limit.
"""

from __future__ import annotations

import argparse
import collections
import importlib
import sys

import numpy as np

from rearrange.eval.stats import format_rate
from rearrange.skill_spec import SKILL_NAMES, skill_def

HEADER = (
    "| task | episodes | success [95% CI] | mean steps (succ.) | max depth (cm) "
    "| median ep. depth (cm) | excessive_force | blocked / ep | failures |\n"
    "|---|---|---|---|---|---|---|---|---|"
)


def row(r, blocked: list[int]) -> str:
    """One task's line: success, steps, depths, force-limit ends, failure causes."""
    res = r.results
    n = len(res)
    ok = [e for e in res if e.success]
    steps = f"{sum(e.steps for e in ok) / len(ok):.0f}" if ok else "-"
    depths = np.array([e.max_depth for e in res]) * 100.0
    forced = sum(e.cause == "excessive_force" for e in res)
    causes = collections.Counter(e.cause for e in res if not e.success)
    fails = ", ".join(f"{k} {v}" for k, v in sorted(causes.items())) or "-"
    name = r.skill + (" (base)" if r.base_movement else "")
    return (
        f"| {name} | {n} | {format_rate(r.successes, n)} | {steps} | {depths.max():.2f} "
        f"| {np.median(depths):.2f} | {forced} | {sum(blocked) / max(n, 1):.1f} | {fails} |"
    )


def evaluate(
    task: str,
    episodes: int,
    seed: int,
    base_movement: bool,
    verbose: bool,
    max_steps: int | None = None,
):
    """`eval_skill TASK --skills oracle`'s loop (`eval.one_skill`), also returning each
    episode's blocked steps (`sim.blocked_steps`: policy steps the world cut short).
    `max_steps` replaces the task's step limit (how long a skill needs beyond it)."""
    from rearrange.eval.one_skill import SkillEvalArgs, SkillEvalResult
    from rearrange.skills.registry import make_oracle
    from rearrange.skills.rollout import run_skill_episode
    from rearrange.tasks import default_task_config, make_env

    args = SkillEvalArgs(task, base_movement, "oracle", episodes=episodes, seed=seed)
    cfg = default_task_config(
        task, obs_preset="state", num_episodes=episodes, base_movement=base_movement
    )
    if max_steps is not None:
        cfg.max_episode_steps = max_steps
    env = make_env(task, cfg, split=args.split, seed=seed)
    skill = make_oracle(task, base_movement=base_movement)
    skill.step_limit = cfg.max_episode_steps  # the task's own limit binds
    out = SkillEvalResult(task, "oracle", base_movement, "oracle", args.split, seed)
    blocked: list[int] = []
    try:
        for i in range(episodes):
            result = run_skill_episode(env, skill, i)
            blocked.append(int(env.unwrapped.sim.blocked_steps))
            out.results.append(result)
            if verbose and not result.success:
                print(
                    f"  {result.episode_id} (#{i}): {result.cause} after {result.steps} steps, "
                    f"depth {100 * result.max_depth:.1f} cm, blocked {blocked[-1]}",
                    flush=True,
                )
    finally:
        env.close()
    return out, blocked


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tasks", nargs="+", default=list(SKILL_NAMES), choices=SKILL_NAMES)
    p.add_argument("--episodes", type=int, default=50)
    p.add_argument("--base-movement", action="store_true", help="arm skills may drive the base")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--import", dest="imports", action="append", default=[], metavar="MODULE")
    p.add_argument("--verbose", action="store_true", help="print each failed episode")
    p.add_argument(
        "--max-episode-steps",
        type=int,
        default=None,
        metavar="N",
        help="replace every task's step limit (to see how long a skill needs beyond it)",
    )
    args = p.parse_args(argv)
    for name in args.imports:
        importlib.import_module(name)
    from rearrange.sim.config import SimConfig
    from rearrange.tasks.force_limit import ForceLimit

    mode = "base movement" if args.base_movement else "fixed base"
    if args.max_episode_steps is not None:
        mode += f", step limit {args.max_episode_steps}"
    world = "blocks the robot" if SimConfig().world_blocks_robot else "lets the robot through"
    print(
        f"Oracle skills on val episodes ({mode}, seed {args.seed}); the world {world}, "
        f"force limit {ForceLimit().max_accum:g} N accumulated\n\n{HEADER}"
    )
    for task in args.tasks:
        moving = args.base_movement and skill_def(task).has_base_movement_variant
        result, blocked = evaluate(
            task, args.episodes, args.seed, moving, args.verbose, args.max_episode_steps
        )
        print(row(result, blocked), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
