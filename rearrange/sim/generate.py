"""Command line: write episode datasets.

    python -m rearrange.sim.generate pick --split val --num 50 --seed 0 \
        --out data/episodes/pick_val.json.gz
    python -m rearrange.sim.generate --all --split train --num 1000 --out data/episodes/

With --all, --out is a directory and each task goes to TASK_SPLIT.json.gz inside it.
Bad input prints one line to stderr and exits with status 2.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from rearrange.sim.episode_types import SPLITS
from rearrange.sim.episodes import (
    TASKS,
    EpisodeError,
    LayoutFn,
    check_task_split,
    generate_episodes,
    save_episodes,
)

DEFAULT_DIR = Path("data/episodes")


class _ArgumentError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of printing usage and exiting (one-line errors)."""

    def error(self, message: str):
        raise _ArgumentError(message)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="python -m rearrange.sim.generate", description=__doc__.split("\n")[0])
    p.add_argument("task", nargs="?", help=f"one of: {', '.join(TASKS)}")
    p.add_argument("--all", action="store_true", help="generate every task")
    p.add_argument("--split", default="val", help=f"one of: {', '.join(SPLITS)} (default val)")
    p.add_argument("--num", type=int, default=50, help="episodes per task (default 50)")
    p.add_argument("--seed", type=int, default=0, help="generation seed (default 0)")
    p.add_argument("--out", type=Path, default=None, help="output file (a directory with --all)")
    return p


def _jobs(args: argparse.Namespace) -> list[tuple[str, Path]]:
    """(task, output path) pairs to generate; raises EpisodeError on bad names."""
    if args.all == (args.task is not None):
        raise EpisodeError("give either one TASK or --all")
    tasks = list(TASKS) if args.all else [args.task]
    for task in tasks:
        check_task_split(task, args.split)
    if args.num < 0:
        raise EpisodeError(f"--num must be >= 0, got {args.num}")
    if args.all:
        folder = args.out or DEFAULT_DIR
        return [(t, folder / f"{t}_{args.split}.json.gz") for t in tasks]
    return [(args.task, args.out or DEFAULT_DIR / f"{args.task}_{args.split}.json.gz")]


def main(argv: list[str] | None = None, layout_fn: LayoutFn | None = None) -> int:
    """`layout_fn(scene_seed, split)`: the scenes (default the procedural apartments)."""
    try:
        args = build_parser().parse_args(argv)
        jobs = _jobs(args)
        for task, out in jobs:
            t0 = time.perf_counter()
            episodes = generate_episodes(task, args.split, args.num, args.seed, layout_fn=layout_fn)
            save_episodes(out, episodes)
            print(
                f"{task}: {len(episodes)} {args.split} episodes -> {out} ({time.perf_counter() - t0:.1f} s)"
            )
    except (_ArgumentError, EpisodeError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except OSError as err:
        print(f"error: cannot write episodes: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
