"""Pick a run's checkpoint by success on val episodes (training-window success misleads).

    MUJOCO_GL=egl python -m rearrange.ship_skill select runs/pick/cpu_v1 --episodes 50 --seed 1

A release step: select the snapshot, then `ship_skill export` it (docs/DESIGN.md §9).

Evaluates every ckpt_<steps>.pt (and latest.pt) of a train_skill run with `eval_skill` on
val episodes of `--seed` (use a seed other than the one the shipped figure is measured on,
so selection and the reported success use different episodes), prints a markdown table and
the best file, and writes <run>/val_selection.csv.
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

from rearrange.eval.one_skill import SkillEvalArgs, evaluate_skill, table_row
from rearrange.eval.stats import format_rate
from rearrange.runtime.checkpoint import SkillCheckpoint


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m rearrange.ship_skill select", description=__doc__.splitlines()[0]
    )
    p.add_argument("run", help="runs/SKILL/RUN_NAME")
    p.add_argument("--episodes", type=int, default=50)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--last", type=int, default=0, help="only the last K snapshots (0: all)")
    args = p.parse_args(argv)
    run = Path(args.run)
    ckpts = sorted((run / "checkpoints").glob("ckpt_*.pt"))
    if args.last:
        ckpts = ckpts[-args.last :]
    if not ckpts:
        print(f"error: no ckpt_*.pt under {run / 'checkpoints'}", file=sys.stderr)
        return 2
    rows = []
    for ckpt in ckpts:
        trained = SkillCheckpoint.load(ckpt)  # the skill and base movement it was trained for
        result = evaluate_skill(
            SkillEvalArgs.for_checkpoint(ckpt, trained, args.episodes, args.seed)
        )
        print(table_row(result), flush=True)
        rows.append((ckpt, result.success_rate, result.successes))
    with open(run / "val_selection.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["checkpoint", "val_success", "episodes", "seed"])
        for ckpt, rate, _ in rows:
            w.writerow([ckpt.name, f"{rate:.3f}", args.episodes, args.seed])
    best = max(rows, key=lambda r: (r[1], r[0].name))
    rate = format_rate(best[2], args.episodes)  # with its Wilson 95 % interval
    print(f"best: {best[0]} ({rate} on {args.episodes} val episodes, seed {args.seed})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
