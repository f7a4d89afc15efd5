"""`python -m rearrange.eval SCENARIO`: TP-SRL on the Home Assistant Benchmark.

Plans every episode with the PDDL planner, runs the plans with learned (checkpoint) or
oracle skills, prints per-stage success with Wilson 95% intervals (VER Fig. 6) and
writes results.json, results.csv, success.png under --out plus K evaluation videos.
`--plot a.json b.json ...` draws several saved runs on one figure instead.

Usage errors (bad scenario, missing / corrupt checkpoint, unreadable file) print one line
to stderr and exit with code 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rearrange.eval.args import EvalArgs
from rearrange.sim.episode_types import HAB_SCENARIOS, SPLITS

PROG = "python -m rearrange.eval"

SKILL_KINDS = ("learned", "oracle")
POLICY_KINDS = ("state", "depth")


class UsageError(ValueError):
    """Bad command-line input; printed as one line, exit code 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line instead of usage + error
        raise UsageError(f"{message} (see {PROG} --help)")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog=PROG, description=__doc__.split("\n\n")[0])
    p.add_argument("scenario", nargs="?", help=f"one of: {', '.join(HAB_SCENARIOS)}")
    p.add_argument("--no-nav", action="store_true", help="TP-SRL(NoNav): drop the nav skills")
    p.add_argument(
        "--base-movement",
        action="store_true",
        help="manipulation skills that move the base (their _bm checkpoints) also after nav",
    )
    p.add_argument("--skills", default="learned", help="learned (checkpoints) or oracle")
    p.add_argument(
        "--policy",
        default="state",
        help="learned skills on state observations (the shipped SKILL[_bm].pt) or on head depth, "
        "the paper's ResNet18 + LSTM (SKILL[_bm]_depth.pt: shipped, or in --checkpoints)",
    )
    p.add_argument(
        "--oracle",
        default="",
        metavar="SKILL[,SKILL]",
        help="with learned skills: run these skills scripted instead, e.g. --oracle nav",
    )
    p.add_argument(
        "--stochastic",
        nargs="?",
        const="all",
        default="",
        metavar="SKILL[,SKILL]",
        help="learned skills sample their actions (alone: all of them; default: the mean), "
        "e.g. --stochastic nav; the samples repeat from --seed",
    )
    weights = p.add_mutually_exclusive_group()
    weights.add_argument(
        "--checkpoints",
        metavar="DIR",
        help="use a training run (runs/SKILL/RUN: that skill from the run, the others shipped) "
        "or a folder of SKILL.pt files (default: the checkpoints shipped with the package)",
    )
    weights.add_argument(
        "--newest-run",
        action="store_true",
        help="use each skill's newest training run under runs/ (skills never trained: shipped)",
    )
    p.add_argument("--episodes", type=int, default=50, help="number of episodes (default 50)")
    p.add_argument("--episodes-file", help="episode JSON(.gz) instead of generating episodes")
    p.add_argument("--split", default="val", help=f"one of {', '.join(SPLITS)} (default val)")
    p.add_argument("--videos", type=int, default=2, help="record the first K episodes")
    p.add_argument("--video-dir", default="videos")
    p.add_argument("--video-every", type=int, default=2, help="a frame every N steps")
    p.add_argument("--seed", type=int, default=0, help="episode generation seed")
    p.add_argument("--out", help="output dir (default runs/eval/<scenario>[_nonav]_<skills>)")
    p.add_argument(
        "--plot",
        nargs="+",
        default=[],
        metavar="RESULTS_JSON",
        help="plot saved results.json files on one figure and exit",
    )
    p.add_argument("--max-steps", type=int, default=3000, help="HAB episode step limit")
    p.add_argument(
        "--stop-mask-dist",
        type=float,
        default=None,
        metavar="M",
        help="ignore nav stop farther than M from its goal (default: the learned nav's "
        "training success radius + 0.5, 1 for the shipped one; the VER paper: 2)",
    )
    p.add_argument(
        "--stop-mask-heading",
        type=float,
        default=None,
        metavar="DEG",
        help="also ignore nav stop while its heading is more than DEG off the goal's "
        "(default 30: the nav's 15 degree success angle + 15; 180: distance only, as the "
        "VER paper)",
    )
    p.add_argument(
        "--step-limit",
        action="append",
        default=[],
        metavar="SKILL=N",
        help="override a skill's step limit, e.g. nav=600 (repeatable)",
    )
    p.add_argument(
        "--no-reset-arm",
        action="store_true",
        help="no scripted arm reset between skills (habitat-lab's add_arm_rest; on by default)",
    )
    p.add_argument(
        "--no-nav-unstick",
        action="store_true",
        help="no step back where a nav leg's base stopped moving (on by default; not in the "
        "VER paper, whose world never holds the robot)",
    )
    p.add_argument("--device", default="cpu", help="torch device of learned skills")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def parse_args(argv: list[str] | None = None) -> EvalArgs:
    ns = build_parser().parse_args(argv)
    args = EvalArgs(
        scenario=ns.scenario,
        no_nav=ns.no_nav,
        base_movement=ns.base_movement,
        skills=ns.skills,
        policy=ns.policy,
        oracle=[n for n in ns.oracle.split(",") if n],
        stochastic=[n for n in ns.stochastic.split(",") if n],
        checkpoints=ns.checkpoints,
        newest_run=ns.newest_run,
        episodes=ns.episodes,
        episodes_file=ns.episodes_file,
        split=ns.split,
        videos=ns.videos,
        video_dir=ns.video_dir,
        video_every=ns.video_every,
        seed=ns.seed,
        out=ns.out,
        plot=ns.plot,
        max_steps=ns.max_steps,
        stop_mask_dist=ns.stop_mask_dist,
        stop_mask_heading=ns.stop_mask_heading,
        step_limits=_step_limits(ns.step_limit),
        device=ns.device,
        reset_arm=not ns.no_reset_arm,
        nav_unstick=not ns.no_nav_unstick,
        progress=not ns.no_progress,
    )
    _validate(args)
    return args


def _step_limits(items: list[str]) -> dict[str, int]:
    out = {}
    for item in items:
        name, _, value = item.partition("=")
        if not value.isdigit() or int(value) <= 0:
            raise UsageError(f"--step-limit {item!r}: expected SKILL=N with N > 0, e.g. nav=600")
        out[name] = int(value)
    return out


def _validate(args: EvalArgs) -> None:
    if args.plot and args.scenario is None:
        return
    if args.scenario is None:
        raise UsageError(f"missing scenario; choose one of: {', '.join(HAB_SCENARIOS)}")
    if args.scenario not in HAB_SCENARIOS:
        raise UsageError(
            f"unknown scenario {args.scenario!r}; choose one of: {', '.join(HAB_SCENARIOS)}"
        )
    if args.skills not in SKILL_KINDS:
        raise UsageError(f"--skills {args.skills!r}: use one of {', '.join(SKILL_KINDS)}")
    if args.policy not in POLICY_KINDS:
        raise UsageError(f"--policy {args.policy!r}: use one of {', '.join(POLICY_KINDS)}")
    from rearrange.skill_spec import SKILL_NAMES

    bad = [n for n in args.oracle if n not in SKILL_NAMES]
    if bad:
        raise UsageError(f"--oracle {bad[0]!r}: use skill names from {', '.join(SKILL_NAMES)}")
    bad = [n for n in args.stochastic if n not in SKILL_NAMES and n != "all"]
    if bad:
        raise UsageError(
            f"--stochastic {bad[0]!r}: use skill names from {', '.join(SKILL_NAMES)}, or no value for all"
        )
    if args.stochastic and args.skills == "oracle":
        raise UsageError(
            "--stochastic samples learned policies' actions: drop it with --skills oracle"
        )
    both = [n for n in args.stochastic if n in args.oracle]
    if both:
        raise UsageError(f"--stochastic {both[0]}: it runs scripted (--oracle {both[0]}); name one")
    if args.split not in SPLITS:
        raise UsageError(f"--split {args.split!r}: use one of {', '.join(SPLITS)}")
    for name, value in (
        ("--episodes", args.episodes),
        ("--max-steps", args.max_steps),
        ("--video-every", args.video_every),
    ):
        if value <= 0:
            raise UsageError(f"{name} must be > 0, got {value}")
    if args.stop_mask_dist is not None and args.stop_mask_dist <= 0:
        raise UsageError(f"--stop-mask-dist must be > 0, got {args.stop_mask_dist}")
    heading = args.stop_mask_heading
    if heading is not None and not 0 < heading <= 180:
        raise UsageError(f"--stop-mask-heading must be in (0, 180] degrees, got {heading}")
    if args.videos < 0:
        raise UsageError(f"--videos must be >= 0, got {args.videos}")
    if args.checkpoints and not Path(args.checkpoints).exists():
        raise UsageError(
            f"--checkpoints {args.checkpoints} does not exist; pass a training run "
            "(runs/SKILL/RUN, see `ls runs/*/`) or a folder of SKILL.pt files, or drop it for "
            "the shipped checkpoints"
        )


def default_out(args: EvalArgs) -> Path:
    suffix = "_nonav" if args.no_nav else "_bm" if args.base_movement else ""
    depth = "_depth" if args.policy == "depth" and args.skills == "learned" else ""
    return Path("runs/eval") / f"{args.scenario}{suffix}_{args.skills}{depth}"


def run_plot(args: EvalArgs) -> int:
    from rearrange.eval.report import format_table, plot_results, read_json

    results = [read_json(Path(p)) for p in args.plot]
    for r in results:
        print(format_table(r), end="\n\n")
    out = Path(args.out) if args.out else Path("runs/eval")
    out.mkdir(parents=True, exist_ok=True)
    path = out / "comparison.png"
    plot_results(results, path)
    print(f"plot: {path}")
    return 0


def run_eval(args: EvalArgs) -> int:
    from rearrange.eval.report import format_table, plot_results, write_csv, write_json
    from rearrange.eval.runner import evaluate

    result = evaluate(args)
    out = Path(args.out) if args.out else default_out(args)
    out.mkdir(parents=True, exist_ok=True)
    write_json(result, out / "results.json")
    write_csv(result, out / "results.csv")
    plot_results([result], out / "success.png")
    print(format_table(result))
    print(f"results: {out / 'results.json'}, {out / 'results.csv'}, {out / 'success.png'}")
    for record in result.episodes:
        if record.video:
            outcome = "success" if record.success else f"failed at {record.failed_skill}"
            print(f"video: {record.video} ({outcome})")
    return 0


def _quiet_imports() -> None:
    """gymnasium_robotics prints a notice about its Adroit envs to stderr when imported
    (the sim loads the Fetch assets from it); import it silently so errors stay one line."""
    import contextlib
    import io

    with contextlib.redirect_stderr(io.StringIO()):
        try:
            import gymnasium_robotics  # noqa: F401
        except ImportError:
            pass


def main(argv: list[str] | None = None) -> int:
    try:
        args = parse_args(argv)
        _quiet_imports()
        return run_plot(args) if args.plot and args.scenario is None else run_eval(args)
    except (ValueError, RuntimeError, OSError) as err:
        # Every error the packages raise for bad input (SkillError, PlanningError,
        # EpisodeError, ReportError, CheckpointError, ...) carries a one-line message.
        message = str(err).splitlines()[0] if str(err) else type(err).__name__
        print(f"{PROG}: error: {message}", file=sys.stderr)
        return 2
