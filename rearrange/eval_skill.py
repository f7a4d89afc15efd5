"""`python -m rearrange.eval_skill SKILL`: one skill on its own task, on held-out episodes.

    python -m rearrange.eval_skill pick                         # the shipped checkpoint
    python -m rearrange.eval_skill pick --checkpoints runs/pick/cpu_v1   # a training run
    python -m rearrange.eval_skill pick --newest-run            # the newest run under runs/
    python -m rearrange.eval_skill open_cab --skills oracle --episodes 20 --videos 1
    python -m rearrange.eval_skill place --base-movement --episodes 100 --json out.json
    python -m rearrange.eval_skill nav --set nav_hold_prob=1.0    # a variant of the episodes

Runs a learned skill (the checkpoint shipped with the package unless `--checkpoints
FILE|DIR` or `--newest-run` names a training run) or the scripted oracle on the skill's task
env (val episodes by default: apartments the policy never trained in) with the task's own
step limit, and prints a markdown table: success rate with its Wilson 95 % interval, mean
steps of successful episodes, mean return, and how failed episodes ended (timeout, drop,
wrong_pick, ...). Bad input prints one line to stderr and exits with code 2. `--set FIELD=VALUE` sets a TaskConfig field of the
eval episodes (e.g. the episode generation options nav_near_start_prob, nav_hold_prob).
"""

from __future__ import annotations

import argparse
import ast
import collections
import dataclasses
import json
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from rearrange.eval.stats import format_rate, wilson_interval
from rearrange.sim.episode_types import SPLITS
from rearrange.skill_spec import SKILL_NAMES

PROG = "python -m rearrange.eval_skill"


class UsageError(ValueError):
    """Bad command-line input; printed as one line, exit code 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):
        raise UsageError(f"{message} (see {PROG} --help)")


@dataclass
class SkillEvalResult:
    skill: str
    kind: str
    base_movement: bool
    checkpoint: str
    split: str
    seed: int
    results: list = field(default_factory=list)  # EpisodeResult
    seconds: float = 0.0

    @property
    def successes(self) -> int:
        return sum(r.success for r in self.results)

    @property
    def success_rate(self) -> float:
        return self.successes / max(len(self.results), 1)

    def success_ci(self) -> tuple[float, float]:
        """Wilson 95 % interval of the success rate."""
        return wilson_interval(self.successes, len(self.results))

    def to_dict(self) -> dict:
        d = asdict(self)
        d["success_rate"] = self.success_rate
        d["success_ci"] = list(self.success_ci())
        d["episodes"] = len(self.results)
        return d


TABLE_HEADER = (
    "| skill | checkpoint | episodes | success [95% CI] | mean steps (succ.) | mean return "
    "| collision steps / ep | failures |\n"
    "|---|---|---|---|---|---|---|---|"
)


def table_row(r: SkillEvalResult) -> str:
    ok = [e for e in r.results if e.success]
    steps = f"{sum(e.steps for e in ok) / len(ok):.0f}" if ok else "-"
    ret = sum(e.ret for e in r.results) / max(len(r.results), 1)
    coll = sum(e.collisions for e in r.results) / max(len(r.results), 1)
    causes = collections.Counter(e.cause for e in r.results if not e.success)
    fails = ", ".join(f"{k} {v}" for k, v in sorted(causes.items())) or "-"
    name = r.skill + (" (base)" if r.base_movement else "")
    return (
        f"| {name} | {r.checkpoint} | {len(r.results)} | "
        f"{format_rate(r.successes, len(r.results))} | {steps} | {ret:.2f} | {coll:.1f} | {fails} |"
    )


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog=PROG, description=__doc__.split("\n\n")[0])
    p.add_argument("skill", help=f"one of: {', '.join(SKILL_NAMES)}")
    p.add_argument("--base-movement", action="store_true", help="the base-movement variant")
    p.add_argument("--skills", default="learned", choices=("learned", "oracle"))
    weights = p.add_mutually_exclusive_group()
    weights.add_argument(
        "--checkpoints",
        metavar="FILE|DIR",
        help="a checkpoint file, a training run (runs/SKILL/RUN) or a folder of SKILL.pt files "
        "(default: the checkpoint shipped with the package)",
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


def task_overrides(items: list[str], skill: str) -> dict:
    """{field: value} from `--set FIELD=VALUE` items (values as Python literals, else text);
    FIELD may name a field of a nested config (`thresholds.nav_dist`), whose value is then
    that config (the skill's default) with the field replaced."""
    from rearrange.tasks.config import TaskConfig, default_task_config

    fields = TaskConfig.__dataclass_fields__
    out: dict = {}
    for item in items:
        name, sep, text = item.partition("=")
        top, _, sub = name.partition(".")
        if not sep or not name:
            raise UsageError(f"--set {item!r}: write FIELD=VALUE, e.g. nav_hold_prob=1.0")
        nested = getattr(default_task_config(skill), top) if top in fields and sub else None
        if (
            top not in fields
            or top in ("task", "obs_preset", "base_movement", "num_episodes")
            or (sub and not (dataclasses.is_dataclass(nested) and hasattr(nested, sub)))
        ):
            raise UsageError(
                f"--set {name}: not a settable TaskConfig field (e.g. nav_near_start_prob, "
                "thresholds.nav_dist; the skill, preset and --episodes have flags)"
            )
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            value = text
        if sub:
            value = dataclasses.replace(out.get(top, nested), **{sub: value})
        out[top] = value
    return out


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    args = build_parser().parse_args(argv)
    if args.skill not in SKILL_NAMES:
        raise UsageError(f"unknown skill {args.skill!r}; choose one of: {', '.join(SKILL_NAMES)}")
    if args.split not in SPLITS:
        raise UsageError(f"--split {args.split!r}: use one of {', '.join(SPLITS)}")
    if args.episodes < 1:
        raise UsageError(f"--episodes must be >= 1, got {args.episodes}")
    if args.videos < 0:
        raise UsageError(f"--videos must be >= 0, got {args.videos}")
    if args.base_movement and args.skill == "nav":
        raise UsageError("nav always moves the base: drop --base-movement")
    args.task_overrides = task_overrides(args.set, args.skill)
    return args


def load_skill(args: argparse.Namespace):
    """(skill, checkpoint description, obs preset) for the arguments."""
    from rearrange.skills.registry import make_oracle

    if args.skills == "oracle":
        return make_oracle(args.skill, base_movement=args.base_movement), "oracle", "state"
    from rearrange.skills.base import SkillError
    from rearrange.skills.checkpoint_lookup import resolve_checkpoint
    from rearrange.skills.learned import LearnedSkill

    path = resolve_checkpoint(args.skill, args.base_movement, args.checkpoints, args.newest_run)
    skill = LearnedSkill(path, skill_name=args.skill, deterministic=not args.stochastic)
    if args.skill != "nav" and skill.base_movement != args.base_movement:
        trained = "with" if skill.base_movement else "without"
        flag = "add" if skill.base_movement else "drop"
        raise SkillError(
            f"checkpoint {path} was trained {trained} base movement: {flag} --base-movement "
            "or pass a matching checkpoint"
        )
    return skill, str(path), skill.observation_preset


def evaluate_skill(args: argparse.Namespace) -> SkillEvalResult:
    """Run the episodes (torch single-threaded meanwhile: batch-1 inference)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return _evaluate(args)
    finally:
        torch.set_num_threads(threads)


def _evaluate(args: argparse.Namespace) -> SkillEvalResult:
    from rearrange.eval.video import VideoRecorder
    from rearrange.skills.rollout import run_skill_episode
    from rearrange.tasks import default_task_config, make_env

    skill, ckpt, preset = load_skill(args)
    cfg = default_task_config(
        args.skill,
        obs_preset=preset,
        num_episodes=args.episodes,
        base_movement=args.base_movement,
        **args.task_overrides,
    )
    env = make_env(args.skill, cfg, split=args.split, seed=args.seed)
    # The task's own step limit binds (what the skill was trained and is judged with).
    skill.step_limit = cfg.max_episode_steps
    out = SkillEvalResult(args.skill, args.skills, args.base_movement, ckpt, args.split, args.seed)
    t0 = time.time()
    try:
        for i in range(args.episodes):
            recorder = None
            if i < args.videos:
                name = f"{args.skill}{'_bm' if args.base_movement else ''}_{args.skills}_{i}.mp4"
                recorder = VideoRecorder(Path(args.video_dir) / name)
            result = run_skill_episode(env, skill, i, recorder.add if recorder else None)
            if recorder is not None:
                path = recorder.close()
                print(f"video: {path} ({'success' if result.success else result.cause})")
            out.results.append(result)
            if args.verbose and not result.success:
                print(f"  {result.episode_id}: {result.cause} after {result.steps} steps")
    finally:
        env.close()
    out.seconds = time.time() - t0
    return out


def main(argv: list[str] | None = None) -> int:
    try:
        args = parse_args(argv)
        result = evaluate_skill(args)
    except (ValueError, RuntimeError, OSError) as err:
        message = str(err).splitlines()[0] if str(err) else type(err).__name__
        print(f"{PROG}: error: {message}", file=sys.stderr)
        return 2
    print(f"{args.skill} on {len(result.results)} {args.split} episodes (seed {args.seed}), "
          f"{result.seconds:.0f} s\n")  # fmt: skip
    print(TABLE_HEADER)
    print(table_row(result))
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(result.to_dict(), indent=1))
        print(f"results: {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
