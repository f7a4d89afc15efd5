"""Training curve of a `rearrange.train_skill` run: CSV + PNG from its TensorBoard logs.

    python -m rearrange.ship_skill curve runs/pick/RUN --name train_pick_state
    python -m rearrange.ship_skill curve /tmp/train.log --name train_pick_state   # the line log

A release step: the curve a shipped checkpoint's figures cite (docs/DESIGN.md §9). Writes
(into --out-dir, default benchmarks/results of the current directory, i.e. of a clone) NAME.csv (one row per logged update: steps, SPS, mean return,
success rate, episode length and every reward term, each a mean over the trainer's window of
the last 100 finished episodes) and NAME.png (success, return, reward terms, SPS against
environment steps). A run directory is read through its tb/ event files; a plain text file is
parsed as the trainer's line log ("update U steps S sps=... success=... return=..."), which
has no reward terms.
"""

from __future__ import annotations

import argparse
import csv
import re
from dataclasses import dataclass, field
from pathlib import Path

RESULTS_DIR = Path("benchmarks") / "results"
BASE_COLUMNS = {
    "perf/sps": "sps",  # cumulative: steps since the first rollout / time since then
    "perf/rollout_sps": "rollout_sps",  # this update only (collection + learning)
    "episode/return": "return",
    "episode/success": "success",
    "episode/length": "length",
}
TERM_PREFIX = "reward_terms/"
LINE_RE = re.compile(r"update (\d+) steps (\d+) (.*)$")


class CurveError(ValueError):
    """The run has no readable training log (one line naming the path and the fix)."""


@dataclass
class Curve:
    """Scalars by environment step: rows[step][column] (columns: BASE_COLUMNS values, term_*)."""

    rows: dict[int, dict[str, float]] = field(default_factory=dict)

    def add(self, step: int, column: str, value: float) -> None:
        self.rows.setdefault(int(step), {})[column] = float(value)

    @property
    def columns(self) -> list[str]:
        present = {c for row in self.rows.values() for c in row}
        base = [c for c in BASE_COLUMNS.values() if c in present]
        return base + sorted(present - set(base))

    def series(self, column: str) -> tuple[list[int], list[float]]:
        steps = [s for s in sorted(self.rows) if column in self.rows[s]]
        return steps, [self.rows[s][column] for s in steps]


def _column(tag: str) -> str | None:
    if tag in BASE_COLUMNS:
        return BASE_COLUMNS[tag]
    if tag.startswith(TERM_PREFIX):
        return "term_" + tag[len(TERM_PREFIX) :]
    return None


def read_tensorboard(tb_dir: Path) -> Curve:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    curve = Curve()
    # A resumed run appends a second event file; later files overwrite earlier steps.
    for events in sorted(tb_dir.glob("events.out.tfevents.*"), key=lambda p: p.stat().st_mtime):
        acc = EventAccumulator(str(events), size_guidance={"scalars": 0})
        acc.Reload()
        for tag in acc.Tags().get("scalars", []):
            column = _column(tag)
            if column is None:
                continue
            for event in acc.Scalars(tag):
                curve.add(event.step, column, event.value)
    return curve


def read_line_log(path: Path) -> Curve:
    curve = Curve()
    for line in path.read_text(errors="replace").replace("\r", "\n").splitlines():
        match = LINE_RE.search(line)
        if not match:
            continue
        step = int(match.group(2))
        for part in match.group(3).split():
            key, _, value = part.partition("=")
            if key in BASE_COLUMNS.values():
                curve.add(step, key, float(value))
    return curve


def read_curve(source: Path) -> Curve:
    """From a run directory (its tb/), a tb directory, or a line-log file."""
    if source.is_file():
        curve = read_line_log(source)
    elif (source / "tb").is_dir():
        curve = read_tensorboard(source / "tb")
    elif source.is_dir():
        curve = read_tensorboard(source)
    else:
        raise CurveError(f"{source} does not exist: pass a run directory or a training log file")
    if not curve.rows:
        raise CurveError(
            f"no training scalars in {source}: pass runs/SKILL/RUN (with tb/) or the "
            "train_skill log, after at least one logged update"
        )
    return curve


def write_csv(curve: Curve, path: Path) -> None:
    columns = curve.columns
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["steps", *columns])
        for step in sorted(curve.rows):
            row = curve.rows[step]
            writer.writerow([step, *(f"{row[c]:.6g}" if c in row else "" for c in columns)])


def plot(curve: Curve, path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(11, 7), sharex=True)
    panels = [
        (axes[0, 0], ["success"], "success rate"),
        (axes[0, 1], ["return"], "episode return"),
        (axes[1, 0], [c for c in curve.columns if c.startswith("term_")], "reward terms / episode"),
        (axes[1, 1], ["sps", "rollout_sps"], "steps per second"),
    ]
    for ax, columns, label in panels:
        for column in columns:
            steps, values = curve.series(column)
            if steps:
                ax.plot(steps, values, label=column.removeprefix("term_"))
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
        if len(columns) > 1:
            ax.legend(fontsize=7, ncol=2)
    for ax in axes[1]:
        ax.set_xlabel("environment steps")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def summary(curve: Curve) -> str:
    """First vs last logged success / return (the numbers a report quotes)."""
    out = []
    for column in ("success", "return", "sps"):
        steps, values = curve.series(column)
        if steps:
            out.append(
                f"{column}: {values[0]:.3g} @ {steps[0]} -> {values[-1]:.3g} @ {steps[-1]} "
                f"(max {max(values):.3g})"
            )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m rearrange.ship_skill curve", description=__doc__.splitlines()[0]
    )
    parser.add_argument("source", type=Path, help="run directory, its tb/ or a line-log file")
    parser.add_argument("--name", default="train_curve", help="output file stem")
    parser.add_argument("--out-dir", type=Path, default=RESULTS_DIR)
    parser.add_argument("--title", default=None)
    args = parser.parse_args(argv)
    if Path(args.name).name != args.name:
        print(f"error: --name {args.name!r} must be a file stem; use --out-dir for the folder")
        return 2
    try:
        curve = read_curve(args.source)
    except CurveError as exc:
        print(f"error: {exc}")
        return 2
    args.out_dir.mkdir(parents=True, exist_ok=True)
    csv_path, png_path = args.out_dir / f"{args.name}.csv", args.out_dir / f"{args.name}.png"
    write_csv(curve, csv_path)
    plot(curve, png_path, args.title or args.name)
    print(summary(curve))
    print(f"wrote {csv_path} and {png_path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
