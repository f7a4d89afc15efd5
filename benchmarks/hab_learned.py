"""The VER paper's HAB table, measured: TP-SRL and TP-SRL(NoNav), learned and oracle skills.

    MUJOCO_GL=egl python -m benchmarks.hab_learned                       # everything, 50 eps
    python -m benchmarks.hab_learned --scenarios tidy_house --configs learned oracle \
        --oracle nav --episodes 20

For each scenario and configuration (learned_oracle_nav: learned manipulation skills,
scripted nav; learned: TP-SRL with every skill learned (shipped, or the training runs that
--checkpoints / --newest-run name, as in `rearrange.eval`), those named in
--oracle scripted; learned_bm: learned nav, then manipulation skills that move the base;
learned_depth / learned_bm_depth: the same two with every skill a policy on head depth;
learned_nonav / learned_nonav_depth: NoNav, which needs base-movement checkpoints (state /
depth); oracle / oracle_nonav: scripted
skills), runs `rearrange.eval` on the same val episodes and writes under --out:
- results_<scenario>_<config>.json (per episode);
- table.md: per-stage and full-task success with Wilson 95% intervals
  (`rearrange.eval.stats`), one column per configuration, the VER
  paper's figures beside ours, and failures by plan step and cause;
- fig6_<scenario>.png: success vs interaction for every configuration (the paper's Fig. 6);
- with --outcome-videos, a video of the first success and the first failure of each
  configuration under <video-dir>/<config>/{success,failure}/ (listed in table.md).
A configuration whose checkpoints are missing is reported as such and skipped.
"""

from __future__ import annotations

import argparse
import collections
import re
import sys
import tempfile
import time
from pathlib import Path

from rearrange.eval.args import EvalArgs
from rearrange.eval.report import EvalResult, plot_results, write_json
from rearrange.eval.runner import evaluate
from rearrange.eval.stats import format_rate
from rearrange.sim.episode_types import HAB_SCENARIOS
from rearrange.skills.base import SkillError

CONFIGS = {
    # learned manipulation skills, scripted nav (isolates the manipulation chain)
    "learned_oracle_nav": dict(skills="learned", no_nav=False, oracle=["nav"]),
    "learned": dict(skills="learned", no_nav=False),
    "learned_nonav": dict(skills="learned", no_nav=True),
    # learned nav, then manipulation skills that move the base (their _bm checkpoints)
    "learned_bm": dict(skills="learned", no_nav=False, base_movement=True),
    # every skill a policy on head depth (issue 29: SKILL[_bm]_depth.pt, `--policy depth`)
    "learned_depth": dict(skills="learned", no_nav=False, policy="depth"),
    "learned_bm_depth": dict(skills="learned", no_nav=False, base_movement=True, policy="depth"),
    "learned_nonav_depth": dict(skills="learned", no_nav=True, policy="depth"),
    "oracle": dict(skills="oracle", no_nav=False),
    "oracle_nonav": dict(skills="oracle", no_nav=True),
}
# VER paper (Szot et al. 2022 / VER §5.3) full-task success of learned TP-SRL, for reference.
PAPER = {
    "tidy_house": "TP-SRL 32 %; NoNav: NavPick 50 %, NavPickNavPlace 20 %",
    "prepare_groceries": "TP-SRL 5 %",
    "set_table": "TP-SRL 0–7.5 %",
}


def step_name(failed_skill: str) -> str:
    """'pick(obj_8, shelf_0)' -> 'pick'."""
    return re.split(r"[(\s]", failed_skill, maxsplit=1)[0] or "?"


def config_args(scenario: str, name: str, args: argparse.Namespace, **over) -> EvalArgs:
    """The `rearrange.eval` arguments of one configuration (`over` replaces fields)."""
    spec = CONFIGS[name]
    fields = dict(
        scenario=scenario,
        no_nav=spec["no_nav"],
        base_movement=spec.get("base_movement", False),
        skills=spec["skills"],
        policy=spec.get("policy", "state"),
        oracle=list(spec.get("oracle", args.oracle)) if spec["skills"] == "learned" else [],
        checkpoints=args.checkpoints,
        newest_run=args.newest_run,
        episodes=args.episodes,
        split="val",
        videos=args.videos,
        video_dir=str(Path(args.video_dir) / name),  # one folder per configuration
        seed=args.seed,
        stop_mask_dist=args.stop_mask_dist,
        stop_mask_heading=args.stop_mask_heading,
        nav_unstick=not args.no_nav_unstick,
        stochastic=list(args.stochastic) if spec["skills"] == "learned" else [],
        progress=False,
    )
    return EvalArgs(**{**fields, **over})


def run_config(scenario: str, name: str, args: argparse.Namespace) -> EvalResult | str:
    try:
        return evaluate(config_args(scenario, name, args))
    except SkillError as err:
        return f"skipped: {str(err).splitlines()[0]}"


def outcome_videos(
    scenario: str, name: str, args: argparse.Namespace, result: EvalResult
) -> list[str]:
    """Film the first successful and the first failed episode of a configuration's run: each
    is run again alone with a video (skills act deterministically and the sim is
    deterministic, so the replay repeats the run; a replay that ends otherwise is
    reported). Videos go to <video-dir>/<config>/{success,failure}/, replacing the
    scenario's videos there from an earlier run; returns report lines."""
    from rearrange.sim.episodes import save_episodes
    from rearrange.tasks.base import load_task_episodes

    episodes = load_task_episodes(scenario, None, args.episodes, "val", args.seed)
    by_id = {e.episode_id: e for e in episodes}
    lines = []
    for outcome in ("success", "failure"):
        video_dir = Path(args.video_dir) / name / outcome
        for old in video_dir.glob(f"{scenario}_*.mp4"):  # an earlier run's film
            old.unlink()
        rec = next((e for e in result.episodes if e.success == (outcome == "success")), None)
        if rec is None:
            lines.append(f"- {scenario} {name}: no {outcome} to film")
            continue
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "episode.json"
            save_episodes(path, [by_id[rec.episode_id]])
            one = dict(episodes_file=str(path), episodes=1, videos=1, video_dir=str(video_dir))
            replay = evaluate(config_args(scenario, name, args, **one)).episodes[0]
        note = ""
        if (replay.success, replay.stages_completed) != (rec.success, rec.stages_completed):
            ended = replay.failed_skill or "success"
            note = f" (the replay ended otherwise: {replay.stages_completed} stages, {ended})"
        why = "" if rec.success else f": {rec.failed_skill}: {rec.failure_reason}"
        lines.append(f"- {scenario} {name} {outcome} `{replay.video}`{why}{note}")
    return lines


def _full(result: EvalResult) -> str:
    """'**40%** [28%, 54%] (50 eps)': the full-task rate with its Wilson 95 % interval, as
    the stage cells show theirs."""
    low, high = result.full_success_ci()
    return f"**{result.full_success:.0%}** [{low:.0%}, {high:.0%}] ({len(result.episodes)} eps)"


def stage_table(scenario: str, results: dict[str, EvalResult]) -> list[str]:
    names = max((r.stage_names for r in results.values()), key=len)
    cols = list(results)
    lines = [f"### {scenario}", "", f"VER paper: {PAPER[scenario]}", ""]
    lines.append("| stage | " + " | ".join(f"{c} ({results[c].label})" for c in cols) + " |")
    lines.append("|---" * (len(cols) + 1) + "|")
    rows = {c: results[c].stage_rows() for c in cols}
    for k, stage in enumerate(names):
        cells = []
        for c in cols:
            if k < len(rows[c]):
                mean, low, high = rows[c][k]
                cells.append(f"{mean:.0%} [{low:.0%}, {high:.0%}]")
            else:
                cells.append("-")
        lines.append(f"| {stage} | " + " | ".join(cells) + " |")
    lines.append("| **full task** | " + " | ".join(_full(results[c]) for c in cols) + " |")
    lines += ["", "Failures by plan step and cause:", ""]
    for c in cols:
        causes = collections.Counter(
            (step_name(e.failed_skill), e.failure_cause or "not recorded")
            for e in results[c].episodes
            if not e.success
        )
        text = ", ".join(f"{s}: {cause} {n}" for (s, cause), n in causes.most_common()) or "-"
        lines.append(f"- {c}: {text}")
    return lines + [""]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scenarios", nargs="+", default=list(HAB_SCENARIOS), choices=HAB_SCENARIOS)
    p.add_argument("--configs", nargs="+", default=list(CONFIGS), choices=list(CONFIGS))
    p.add_argument(
        "--oracle",
        nargs="*",
        default=[],
        help="skills run scripted in learned configs that name none themselves",
    )
    p.add_argument(
        "--stochastic",
        nargs="*",
        default=[],
        metavar="SKILL",
        help="learned skills that sample their actions (`all`: every one; default: the mean)",
    )
    weights = p.add_mutually_exclusive_group()
    weights.add_argument(
        "--checkpoints",
        help="a training run (runs/SKILL/RUN) or a folder of SKILL.pt files (default: shipped)",
    )
    weights.add_argument(
        "--newest-run", action="store_true", help="each skill's newest training run under runs/"
    )
    p.add_argument("--episodes", type=int, default=50)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--stop-mask-dist",
        type=float,
        default=None,
        help="nav stop-mask distance, m (default: the learned nav's training success radius "
        "+ 0.5, 1 for the shipped one; the VER paper: 2)",
    )
    p.add_argument(
        "--stop-mask-heading",
        type=float,
        default=None,
        help="nav stop-mask heading, degrees (default 30; 180: distance only)",
    )
    p.add_argument(
        "--no-nav-unstick",
        action="store_true",
        help="no step back where a nav leg's base stopped moving (rearrange.eval's flag)",
    )
    p.add_argument("--videos", type=int, default=0)
    p.add_argument("--video-dir", default="videos")
    p.add_argument(
        "--outcome-videos",
        action="store_true",
        help="film the first success and the first failure of every configuration",
    )
    p.add_argument("--out", default="benchmarks/results/hab_learned")
    args = p.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    report = [
        f"# HAB, val split, {args.episodes} episodes per configuration (seed {args.seed})",
        "",
    ]
    report.append(f"Command: `python -m benchmarks.hab_learned {' '.join(argv or sys.argv[1:])}`")
    report.append("")
    films: list[str] = []
    for scenario in args.scenarios:
        results: dict[str, EvalResult] = {}
        for name in args.configs:
            t0 = time.time()
            res = run_config(scenario, name, args)
            if isinstance(res, str):
                print(f"{scenario} {name}: {res}", flush=True)
                report.append(f"- {scenario} {name}: {res}")
                continue
            res.config["wall_time_s"] = round(time.time() - t0, 1)  # this configuration's
            write_json(res, out / f"results_{scenario}_{name}.json")
            results[name] = res
            print(f"{scenario} {name}: full task "
                  f"{format_rate(res.full_successes, len(res.episodes))} "
                  f"({res.config['wall_time_s']:.0f} s)", flush=True)  # fmt: skip
            if args.outcome_videos:
                films += outcome_videos(scenario, name, args, res)
        if results:
            report += stage_table(scenario, results)
            plot_results(list(results.values()), out / f"fig6_{scenario}.png")
    if films:
        report += ["Videos (first success and first failure, replayed):", "", *films, ""]
    (out / "table.md").write_text("\n".join(report) + "\n")
    print("\n".join(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
