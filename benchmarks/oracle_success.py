"""Success rate of the scripted oracle skills on their own skill-task envs (val episodes).

A task that no script solves is a broken task: this is the check. A thin loop over
`python -m rearrange.eval_skill TASK --skills oracle` for every task.

    MUJOCO_GL=egl python benchmarks/oracle_success.py                  # 7 tasks x 50 episodes
    python benchmarks/oracle_success.py --tasks pick place --episodes 10 --base-movement
"""

from __future__ import annotations

import argparse
import sys

from rearrange.eval.one_skill import TABLE_HEADER, SkillEvalArgs, evaluate_skill, table_row
from rearrange.skill_spec import SKILL_NAMES


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tasks", nargs="+", default=list(SKILL_NAMES), choices=SKILL_NAMES)
    p.add_argument("--episodes", type=int, default=50)
    p.add_argument("--base-movement", action="store_true", help="arm skills may drive the base")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    mode = "base movement" if args.base_movement else "fixed base"
    print(f"Oracle skills on val episodes ({mode}, seed {args.seed})\n\n{TABLE_HEADER}")
    for task in args.tasks:
        run = SkillEvalArgs(
            task,
            skills="oracle",
            episodes=args.episodes,
            seed=args.seed,
            base_movement=args.base_movement and task != "nav",
        )
        print(table_row(evaluate_skill(run)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
