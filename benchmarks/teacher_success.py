"""A distillation teacher's labels, acted on: how often the teacher succeeds as the policy.

    python -m benchmarks.teacher_success pick --base-movement --episodes 100 --seed 0 \
        [--teacher CKPT|oracle] [--grip-near R] [--grip-clear R] [--unjam] [--oracle-near R]
        [--fixed-base-teacher CKPT|shipped [--fixed-base-reach R] [--drawer-teacher CKPT|shipped]
        [--fridge-teacher oracle|CKPT|shipped]] [--set FIELD=VALUE] [--verbose]

DAgger copies its teacher, so a student is bounded by its labels. This runs the teacher a
`--algo distill` run would build (`teacher_labels.resolve_teacher`, the same options as the
run's `distill.*`) as the acting policy on the skill's val episodes, through the task env
with its grip rule, as `eval_skill` runs a skill: each row is a teacher's success and failure
causes on the same episodes. No timing: the labels' quality, not their speed.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import sys

import numpy as np


class TeacherSkill:
    """A distillation teacher as a `Skill` of `skills/rollout.run_skill_episode`: it acts on
    the env it is given, and is told the action executed before (as the label wrapper does)."""

    def __init__(self, teacher, env):
        self.teacher, self.env = teacher, env
        self._executed = None

    def reset(self, target, sim) -> None:
        self.teacher.reset()
        self._executed = None

    def act(self, obs, sim) -> np.ndarray:
        action = self.teacher.act(self.env, obs, self._executed)
        self._executed = np.asarray(action, np.float32)
        return action

    def is_done(self, obs, sim) -> bool:
        return False


def run(args: argparse.Namespace) -> dict:
    from rearrange.distill.teacher_labels import resolve_teacher
    from rearrange.eval.one_skill import SkillEvalResult, source_line, task_overrides
    from rearrange.eval.stats import format_rate
    from rearrange.skills.rollout import run_skill_episode
    from rearrange.tasks import default_task_config, make_env

    spec = resolve_teacher(
        args.skill,
        args.base_movement,
        args.teacher,
        oracle_near=args.oracle_near,
        unjam=args.unjam,
        grip_near=args.grip_near,
        grip_clear=args.grip_clear,
        fixed_base=args.fixed_base_teacher,
        fixed_base_reach=args.fixed_base_reach,
        drawer=args.drawer_teacher,
        fridge=args.fridge_teacher,
    )
    cfg = default_task_config(
        args.skill, obs_preset="state", num_episodes=args.episodes, base_movement=args.base_movement
    )
    overrides = task_overrides(args.set or [], args.skill)
    cfg = dataclasses.replace(cfg, **overrides)
    env = make_env(args.skill, cfg, split=args.split, seed=args.seed)
    skill = TeacherSkill(spec.build(), env)
    try:
        results = [run_skill_episode(env, skill, i) for i in range(args.episodes)]
    finally:
        env.close()
    wins = sum(r.success for r in results)
    causes = collections.Counter(r.cause for r in results if not r.success)
    failed = ", ".join(f"{c} {n}" for c, n in causes.most_common()) or "none"
    print(f"{spec.name}: {format_rate(wins, len(results))} of {len(results)} ({failed})")
    split = SkillEvalResult(args.skill, "teacher", args.base_movement, "teacher", args.split,
                            args.seed, results)  # fmt: skip
    if (line := source_line(split)) is not None:
        print(line)
    if args.verbose:
        for r in results:
            if not r.success:
                print(f"  {r.episode_id}: {r.cause} after {r.steps} steps")
    return {"teacher": spec.name, "successes": wins, "episodes": len(results), "causes": causes}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("skill")
    p.add_argument("--base-movement", action="store_true")
    p.add_argument("--teacher", default=None, help="checkpoint, run or 'oracle' (default: shipped)")
    p.add_argument("--grip-near", type=float, default=0.0, help="distill.grip_near (m; pick)")
    p.add_argument("--grip-clear", type=float, default=0.0, help="distill.grip_clear (m; pick)")
    p.add_argument("--unjam", action="store_true", help="distill.unjam")
    p.add_argument("--oracle-near", type=float, default=0.0, help="distill.oracle_near (m; nav)")
    p.add_argument(
        "--fixed-base-teacher",
        default=None,
        help="distill.fixed_base_teacher: CKPT or 'shipped' (pick/place --base-movement)",
    )
    p.add_argument(
        "--fixed-base-reach", type=float, default=0.85, help="distill.fixed_base_reach (m)"
    )
    p.add_argument(
        "--drawer-teacher", default=None, help="distill.drawer_teacher: CKPT or 'shipped' (pick)"
    )
    p.add_argument(
        "--fridge-teacher",
        default=None,
        help="distill.fridge_teacher: 'oracle', CKPT or 'shipped' (pick)",
    )
    p.add_argument(
        "--set",
        action="append",
        metavar="FIELD=VALUE",
        help="a TaskConfig field of the episodes, e.g. drawer_pick_prob=1.0 (repeatable)",
    )
    p.add_argument("--episodes", type=int, default=100)
    p.add_argument("--split", default="val")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--verbose", action="store_true", help="print each failed episode")
    args = p.parse_args(argv)
    from rearrange.distill.teacher_labels import TeacherError
    from rearrange.eval.one_skill import UsageError

    try:
        run(args)
    except (TeacherError, UsageError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
