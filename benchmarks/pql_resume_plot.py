"""PQL resume after SIGKILL: train success of an uninterrupted run against the same run killed
with `kill -9` and resumed with `--resume` (replay restored from checkpoints/replay.npz), and
optionally the same resume with replay.npz deleted (what every resume did before replays
were saved). Reads each run's tb/ (a resumed run's later event file overwrites the steps the
killed session logged after its last checkpoint) and writes NAME.csv + NAME.png into
benchmarks/results/

    python -m benchmarks.pql_resume_plot --name pql_resume_open_cab --resume-step 75000 \
        --kill-step 93248 --run uninterrupted=runs/open_cab/resume_base \
        --run "killed, resumed=runs/open_cab/resume_kill" ...
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

from rearrange.train_curve import read_curve

RESULTS_DIR = Path(__file__).resolve().parent / "results"


def parse_runs(specs: list[str]) -> dict[str, Path]:
    """'label=path' pairs, in the order given."""
    runs = {}
    for spec in specs:
        label, _, path = spec.rpartition("=")
        runs[label] = Path(path)
    return runs


def success_by_step(runs: dict[str, Path]) -> dict[str, dict[int, float]]:
    out = {}
    for label, path in runs.items():
        steps, values = read_curve(path).series("success")
        out[label] = dict(zip(steps, values, strict=True))
    return out


def write_csv(curves: dict[str, dict[int, float]], path: Path) -> None:
    steps = sorted({s for curve in curves.values() for s in curve})
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["steps", *curves])
        for step in steps:
            values = [f"{c[step]:.4g}" if step in c else "" for c in curves.values()]
            writer.writerow([step, *values])


def window_means(curves: dict[str, dict[int, float]], start: int) -> dict[str, tuple]:
    """(mean, min) of each curve's success over the logs after `start` (the resume step)."""
    out = {}
    for label, curve in curves.items():
        after = [v for s, v in curve.items() if s > start]
        out[label] = (sum(after) / len(after), min(after)) if after else (float("nan"),) * 2
    return out


def plot(
    curves: dict[str, dict[int, float]],
    path: Path,
    resume_step: int,
    kill_step: int | None,
    title: str,
) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 4.5))
    styles = ["-", "--", ":"]
    for (label, curve), style in zip(curves.items(), styles, strict=False):
        steps = sorted(curve)
        ax.plot(steps, [curve[s] for s in steps], style, marker=".", label=label)
    ax.axvline(resume_step, color="grey", lw=0.8)
    ax.text(resume_step, 0.62, " resumed from\n this checkpoint", color="grey", fontsize=8)
    if kill_step is not None:
        ax.axvline(kill_step, color="red", lw=0.8, ls=":")
        ax.text(kill_step, 0.45, " kill -9", color="red", fontsize=8)
    ax.set_xlabel("environment steps")
    ax.set_ylabel("train success (last 100 episodes)")
    ax.set_ylim(-0.02, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="center right")
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", action="append", required=True, help="LABEL=RUN_DIR")
    parser.add_argument("--resume-step", type=int, required=True, help="the checkpoint's steps")
    parser.add_argument("--kill-step", type=int, help="where the run was killed (a marker)")
    parser.add_argument("--name", default="pql_resume")
    parser.add_argument("--title", default="PQL: uninterrupted vs killed (kill -9) and resumed")
    args = parser.parse_args(argv)
    curves = success_by_step(parse_runs(args.run))
    write_csv(curves, RESULTS_DIR / f"{args.name}.csv")
    png = RESULTS_DIR / f"{args.name}.png"
    plot(curves, png, args.resume_step, args.kill_step, args.title)
    for label, (mean, low) in window_means(curves, args.resume_step).items():
        print(f"{label}: success after step {args.resume_step:,}: mean {mean:.3f}, min {low:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
