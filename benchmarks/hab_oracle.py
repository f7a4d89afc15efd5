"""Oracle-skill TP-SRL on HAB val episodes: per-stage and full-task success.

    MUJOCO_GL=egl python benchmarks/hab_oracle.py [--episodes 50] [--scenarios tidy_house ...]
    PYTHONPATH=/tmp/blk python benchmarks/hab_oracle.py --import blockon   # a plugin first

Runs every scenario with the plan's nav steps (TP-SRL) and without them (TP-SRL(NoNav):
the oracle manipulation skills then drive the base themselves), prints a markdown table
(success rates with Wilson 95 % intervals, and how many episodes the contact-force limit
ended: Habitat's force_terminate, `tasks/force_limit.py`) and writes each run's
results.json under --out. With oracle skills the numbers measure the executor, planner,
sim and task definitions, not learning. `--import MODULE` imports a module first (e.g.
one that changes SimConfig or ForceLimit defaults); the header states whether the world
blocks the robot and the force limit.
"""

from __future__ import annotations

import argparse
import importlib
import time
from pathlib import Path

from rearrange.eval.args import EvalArgs
from rearrange.eval.report import EvalResult, FailureCause, write_json
from rearrange.eval.runner import evaluate
from rearrange.eval.stats import format_rate
from rearrange.sim.episode_types import HAB_SCENARIOS


def run(scenario: str, no_nav: bool, args: argparse.Namespace) -> tuple[EvalResult, float]:
    eval_args = EvalArgs(
        scenario=scenario,
        no_nav=no_nav,
        skills="oracle",
        episodes=args.episodes,
        split="val",
        videos=0,
        seed=args.seed,
        step_limits=dict(args.step_limits),
        progress=args.progress,
        max_steps=args.max_steps,
    )
    start = time.perf_counter()
    result = evaluate(eval_args)
    return result, time.perf_counter() - start


def markdown(rows: list[tuple[EvalResult, float]]) -> str:
    width = max(len(r.stage_names) for r, _ in rows)
    head = "| scenario | method | eps | " + " | ".join(f"stage {k + 1}" for k in range(width))
    lines = [head + " | full | excessive force | steps/s |", "|" + "---|" * (width + 6)]
    for result, seconds in rows:
        n = len(result.episodes)
        reached = [e.stages_completed for e in result.episodes]
        cells = [  # each stage's rate with its Wilson 95 % interval
            f"{name} {format_rate(sum(r >= k for r in reached), n)}"
            for k, name in enumerate(result.stage_names, start=1)
        ]
        cells += [""] * (width - len(cells))
        steps = sum(e.steps for e in result.episodes)
        forced = sum(e.failure_cause == FailureCause.EXCESSIVE_FORCE for e in result.episodes)
        lines.append(
            f"| {result.scenario} | {result.label} | {len(result.episodes)} | "
            + " | ".join(cells)
            + f" | **{format_rate(result.full_successes, n)}** | {forced} "
            + f"| {steps / max(seconds, 1e-9):.0f} |"
        )
    return "\n".join(lines)


def failures(result: EvalResult) -> str:
    """Count of failed skills, e.g. 'nav 7, place 3'."""
    counts: dict[str, int] = {}
    for e in result.episodes:
        if not e.success:
            skill = e.failed_skill.split("(")[0] or "?"
            counts[skill] = counts.get(skill, 0) + 1
    return ", ".join(f"{k} {v}" for k, v in sorted(counts.items(), key=lambda kv: -kv[1]))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--episodes", type=int, default=50)
    p.add_argument("--scenarios", nargs="+", default=list(HAB_SCENARIOS))
    p.add_argument("--skip-nonav", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--step-limit", action="append", default=[], metavar="SKILL=N")
    p.add_argument(
        "--max-steps", type=int, default=3000, help="whole-episode step budget (HAB: 3000)"
    )
    p.add_argument("--out", default="runs/eval/hab_oracle")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--import", dest="imports", action="append", default=[], metavar="MODULE")
    args = p.parse_args()
    for name in args.imports:
        importlib.import_module(name)
    from rearrange.sim.config import SimConfig
    from rearrange.tasks.force_limit import ForceLimit

    world = "blocks the robot" if SimConfig().world_blocks_robot else "lets the robot through"
    print(f"The world {world}; force limit {ForceLimit().max_accum:g} N accumulated", flush=True)
    args.step_limits = {k: int(v) for k, _, v in (s.partition("=") for s in args.step_limit)}
    args.progress = not args.no_progress
    rows = []
    for scenario in args.scenarios:
        for no_nav in (False,) if args.skip_nonav else (False, True):
            result, seconds = run(scenario, no_nav, args)
            rows.append((result, seconds))
            name = f"{scenario}{'_nonav' if no_nav else ''}"
            Path(args.out).mkdir(parents=True, exist_ok=True)
            write_json(result, Path(args.out) / f"{name}.json")
            print(
                f"{name}: full {format_rate(result.full_successes, len(result.episodes))} "
                f"in {seconds:.0f} s; "
                f"failures: {failures(result) or 'none'}",
                flush=True,
            )
    print()
    print(markdown(rows))


if __name__ == "__main__":
    main()
