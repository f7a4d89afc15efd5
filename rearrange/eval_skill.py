"""`python -m rearrange.eval_skill SKILL`: one skill on its own task, on held-out episodes.

    python -m rearrange.eval_skill pick                         # the shipped checkpoint
    python -m rearrange.eval_skill pick --checkpoints runs/pick/cpu_v1   # a training run
    python -m rearrange.eval_skill pick --newest-run            # the newest run under runs/
    python -m rearrange.eval_skill pick --checkpoints A.pt B.pt --json snaps.json  # a row each
    python -m rearrange.eval_skill open_cab --skills oracle --episodes 20 --videos 1
    python -m rearrange.eval_skill place --base-movement --episodes 100 --json out.json
    python -m rearrange.eval_skill nav --set nav_hold_prob=1.0    # a variant of the episodes

Runs a learned skill (the checkpoint shipped with the package unless `--checkpoints
FILE|DIR` or `--newest-run` names a training run) or the scripted oracle on the skill's task
env (val episodes by default: apartments the policy never trained in) with the task's own
step limit, and prints a markdown table: success rate with its Wilson 95 % interval, mean
steps of successful episodes, mean return, and how failed episodes ended (timeout, drop,
wrong_pick, ...), one row per checkpoint where `--checkpoints` names several (the same
episodes for each; `--json` then writes a list, one object per checkpoint). For a pick whose
episodes come from more than one source, a line after the table gives the successes by
source (open receptacle, fridge shelf, drawer; each episode's `source` in --json). Bad input prints
one line to stderr and exits with code 2. `--set FIELD=VALUE` sets a TaskConfig field of the
eval episodes (e.g. the episode generation options nav_near_start_prob, nav_hold_prob).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rearrange.eval.one_skill import (
    TABLE_HEADER,
    SkillEvalArgs,
    UsageError,
    checkpoint_file,
    end_pose_line,
    evaluate_skill,
    source_line,
    table_row,
    task_overrides,
)
from rearrange.sim.episode_types import SPLITS
from rearrange.skill_spec import SKILL_NAMES, skill_names

PROG = "python -m rearrange.eval_skill"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):
        raise UsageError(f"{message} (see {PROG} --help)")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog=PROG, description=__doc__.split("\n\n")[0])
    p.add_argument("skill", help=f"one of: {', '.join(SKILL_NAMES)}")
    p.add_argument("--base-movement", action="store_true", help="the base-movement variant")
    p.add_argument("--skills", default="learned", choices=("learned", "oracle"))
    p.add_argument(
        "--policy",
        default="state",
        choices=("state", "depth"),
        help="the shipped state skill (SKILL[_bm].pt) or its policy on head depth, the paper's "
        "(SKILL[_bm]_depth.pt); --checkpoints/--newest-run look for the same kind",
    )
    weights = p.add_mutually_exclusive_group()
    weights.add_argument(
        "--checkpoints",
        nargs="+",
        metavar="FILE|DIR",
        help="a checkpoint file, a training run (runs/SKILL/RUN) or a folder of SKILL.pt files "
        "(default: the checkpoint shipped with the package); several: one row each, on the "
        "same episodes",
    )
    weights.add_argument(
        "--newest-run", action="store_true", help="the skill's newest training run under runs/"
    )
    p.add_argument("--episodes", type=int, default=100, help="number of episodes (default 100)")
    p.add_argument("--split", default="val", help=f"one of {', '.join(SPLITS)} (default val)")
    p.add_argument("--seed", type=int, default=0, help="episode generation seed")
    p.add_argument("--videos", type=int, default=0, help="record the first K episodes")
    p.add_argument("--video-dir", default="videos")
    p.add_argument("--stochastic", action="store_true", help="sample actions (default: mean)")
    p.add_argument(
        "--unstick",
        action="store_true",
        help="nav: the HAB executor's recovery where the base is stuck (backs off and turns; "
        "the nav as rearrange.eval runs it, not the policy alone)",
    )
    p.add_argument("--json", help="also write the results to this JSON file")
    p.add_argument("--verbose", action="store_true", help="print every failed episode")
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="a TaskConfig field of the eval episodes, e.g. nav_near_start_prob=1.0 (repeatable)",
    )
    return p


def parse_args(argv: list[str] | None) -> list[SkillEvalArgs]:
    """One evaluation per --checkpoints value (one for the shipped checkpoint or the oracle)."""
    args = build_parser().parse_args(argv)
    paths = args.checkpoints or [None]
    if len(paths) > 1 and args.videos:
        raise UsageError("--videos records one checkpoint's episodes: pass one --checkpoints")
    overrides = task_overrides(args.set, args.skill) if args.skill in skill_names() else {}
    return [
        SkillEvalArgs(
            skill=args.skill,
            base_movement=args.base_movement,
            skills=args.skills,
            policy=args.policy,
            checkpoints=path,
            newest_run=args.newest_run,
            episodes=args.episodes,
            split=args.split,
            seed=args.seed,
            videos=args.videos,
            video_dir=args.video_dir,
            stochastic=args.stochastic,
            unstick=args.unstick,
            verbose=args.verbose,
            json=args.json,
            task_overrides=overrides,
        )
        for path in paths
    ]


def main(argv: list[str] | None = None) -> int:
    try:
        runs = parse_args(argv)
        for run in runs:  # every path checked before the first evaluation
            checkpoint_file(run)
        first = runs[0]
        print(f"{first.skill} on {first.episodes} {first.split} episodes (seed {first.seed})\n")
        print(TABLE_HEADER, flush=True)
        results, seconds, ends = [], 0.0, []
        for run in runs:
            result = evaluate_skill(run)
            results.append(result.to_dict())
            seconds += result.seconds
            print(table_row(result), flush=True)
            ends.extend([end_pose_line(result), source_line(result)])
        print("".join(f"\n{line}" for line in ends if line))
        print(f"{seconds:.0f} s")
    except (ValueError, RuntimeError, OSError) as err:
        message = str(err).splitlines()[0] if str(err) else type(err).__name__
        print(f"{PROG}: error: {message}", file=sys.stderr)
        return 2
    if first.json:
        Path(first.json).parent.mkdir(parents=True, exist_ok=True)
        Path(first.json).write_text(json.dumps(results[0] if len(runs) == 1 else results, indent=1))
        print(f"results: {first.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
