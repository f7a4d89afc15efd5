"""PQL vs VER-PPO in wall-clock time on the same skills, observations, machine and budget.

    MUJOCO_GL=egl python -m benchmarks.pql_vs_ppo --skills pick open_cab --seeds 0 1 --minutes 45
    MUJOCO_GL=egl python -m benchmarks.pql_vs_ppo ... --continue   # after a session end
    MUJOCO_GL=egl python -m benchmarks.pql_vs_ppo --eval-only      # evaluate existing runs

For every (skill, algo, seed): train with `python -m rearrange.train_skill SKILL --profile cpu`
(`--algo pql` / `--algo ver`; both on the CPU profile's state observations) for `--minutes` of wall
time (then SIGINT: both trainers checkpoint and exit), keeping a snapshot every
`--pql-snapshot-steps` / `--ver-snapshot-steps` environment steps; then evaluate every snapshot on `--episodes` val
episodes with `eval_skill` (training-window success misleads, DESIGN §9). A snapshot's time
is the training wall time stored in it (start-up included).

Writes, under --out (default benchmarks/results/pql_vs_ppo): evals.csv (one row per
snapshot), curves.png (val success against wall-clock minutes, one panel per skill) and
table.md: minutes and env steps to reach 50 / 70 / 90 % val success per run (the first
snapshot at or above the threshold; '-' = not reached), for benchmarks/RESULTS.md.
Runs go sequentially (the machine has 2 cores): 2 skills × 2 algos × 2 seeds × 45 min ≈ 6 h
plus evaluation.
"""

from __future__ import annotations

import argparse
import csv
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ALGOS = ("pql", "ver")
THRESHOLDS = (0.5, 0.7, 0.9)


@dataclass
class SnapshotEval:
    skill: str
    algo: str
    seed: int
    checkpoint: str
    steps: int
    minutes: float
    val_success: float


def run_name(algo: str, seed: int) -> str:
    return f"bench_{algo}_s{seed}"


def train_command(
    skill: str,
    algo: str,
    seed: int,
    runs_root: Path,
    snapshot_steps: int,
    ver_total_steps: int | None = None,
) -> list[str]:
    cmd = [sys.executable, "-m", "rearrange.train_skill", skill, "--profile", "cpu"]
    cmd += ["--algo", algo, "--run-name", run_name(algo, seed), f"runs_root={runs_root}"]
    # A snapshot every `snapshot_steps` env steps under either trainer (run.* counts env steps).
    cmd += [f"run.seed={seed}", f"run.checkpoint_every_steps={snapshot_steps}"]
    cmd += ["run.keep_checkpoints=100000"]
    if algo == "pql":  # PQL has no schedule over total_steps: the budget alone stops it
        cmd += ["run.total_steps=1000000000"]
    elif ver_total_steps:  # PPO's lr schedule spans total_steps: fit it to the budget
        cmd += [f"run.total_steps={ver_total_steps}"]
    return cmd


def train(cmd: list[str], minutes: float, log_path: Path) -> int:
    """Run one training command for `minutes`, then SIGINT it (it checkpoints and exits)."""
    env = {**os.environ, "MUJOCO_GL": os.environ.get("MUJOCO_GL", "egl")}
    print(" ".join(cmd), flush=True)
    with open(log_path, "w") as log:
        proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            proc.wait(timeout=minutes * 60)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=300)
            except subprocess.TimeoutExpired:
                proc.kill()
    return proc.wait()


def evaluate_run(skill, algo, seed, run_dir: Path, episodes: int, eval_seed: int, known=None):
    """Val success of every snapshot of one run; `known` (checkpoint name -> SnapshotEval)
    holds evaluations from an earlier invocation, reused instead of evaluated again."""
    from rearrange.eval.one_skill import SkillEvalArgs, evaluate_skill
    from rearrange.eval.stats import format_rate
    from rearrange.runtime.checkpoint import SkillCheckpoint

    known = known or {}
    out = []
    for ckpt in sorted((run_dir / "checkpoints").glob("ckpt_*.pt")):
        if ckpt.name in known:
            out.append(known[ckpt.name])
            continue
        trained = SkillCheckpoint.load(ckpt)
        run = SkillEvalArgs(skill, checkpoints=str(ckpt), episodes=episodes, seed=eval_seed)
        result = evaluate_skill(run)
        row = SnapshotEval(
            skill, algo, seed, ckpt.name, trained.num_steps, trained.wall_time_s / 60,
            result.success_rate,
        )  # fmt: skip
        rate = format_rate(result.successes, len(result.results))  # Wilson 95 % interval
        print(f"{skill} {algo} s{seed} {ckpt.name}: {rate} "
              f"at {row.minutes:.1f} min", flush=True)  # fmt: skip
        out.append(row)
    return out


def runs_of(evals: list[SnapshotEval]) -> set[tuple[str, str, int]]:
    return {(e.skill, e.algo, e.seed) for e in evals}


def first_reaching(rows: list[SnapshotEval], threshold: float) -> SnapshotEval | None:
    for row in sorted(rows, key=lambda r: r.minutes):
        if row.val_success >= threshold:
            return row
    return None


def table(evals: list[SnapshotEval]) -> str:
    head = "| skill | algo | seed | " + " | ".join(
        f"{int(t * 100)}%: min / steps" for t in THRESHOLDS
    )
    # best alone hides a run that reached it once and lost it: the last snapshot (what the
    # budget ends with) and how many snapshots held >= 90 % say whether it stayed
    lines = [head + " | best val | last val | ≥ 90 % |", "|" + "---|" * (6 + len(THRESHOLDS))]
    runs = sorted({(e.skill, e.algo, e.seed) for e in evals})
    for skill, algo, seed in runs:
        rows = [e for e in evals if (e.skill, e.algo, e.seed) == (skill, algo, seed)]
        cells = []
        for t in THRESHOLDS:
            hit = first_reaching(rows, t)
            cells.append(f"{hit.minutes:.1f} / {hit.steps:,}" if hit else "-")
        best = max(r.val_success for r in rows)
        last = max(rows, key=lambda r: r.minutes).val_success
        held = f"{sum(r.val_success >= 0.9 for r in rows)} of {len(rows)}"
        tail = f" | {best:.0%} | {last:.0%} | {held} |"
        lines.append(f"| {skill} | {algo} | {seed} | " + " | ".join(cells) + tail)
    return "\n".join(lines)


def plot(evals: list[SnapshotEval], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    skills = sorted({e.skill for e in evals})
    fig, axes = plt.subplots(1, len(skills), figsize=(6 * len(skills), 4), squeeze=False)
    colors = {"pql": "tab:red", "ver": "tab:blue"}
    for ax, skill in zip(axes[0], skills):
        for algo, seed in sorted({(e.algo, e.seed) for e in evals if e.skill == skill}):
            rows = sorted(
                (e for e in evals if (e.skill, e.algo, e.seed) == (skill, algo, seed)),
                key=lambda e: e.minutes,
            )
            ax.plot([r.minutes for r in rows], [r.val_success for r in rows],
                    color=colors.get(algo), linestyle=("-", "--", ":")[seed % 3],
                    marker="o", markersize=3, label=f"{algo} seed {seed}")  # fmt: skip
        for t in THRESHOLDS:
            ax.axhline(t, color="grey", linewidth=0.5)
        ax.set(title=f"{skill} (val success)", xlabel="wall-clock minutes", ylim=(0, 1))
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def read_csv(path: Path) -> list[SnapshotEval]:
    if not path.is_file():
        return []
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    num = {"seed": int, "steps": int, "minutes": float, "val_success": float}
    return [SnapshotEval(**{k: num.get(k, str)(v) for k, v in r.items()}) for r in rows]


def write_csv(evals: list[SnapshotEval], path: Path) -> None:
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["skill", "algo", "seed", "checkpoint", "steps", "minutes", "val_success"])
        for e in evals:
            w.writerow([e.skill, e.algo, e.seed, e.checkpoint, e.steps, f"{e.minutes:.2f}",
                        f"{e.val_success:.3f}"])  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--skills", nargs="+", default=["pick", "open_cab"])
    p.add_argument("--algos", nargs="+", default=list(ALGOS), choices=ALGOS)
    p.add_argument("--seeds", nargs="+", type=int, default=[0, 1])
    p.add_argument("--minutes", type=float, default=45.0, help="training wall time per run")
    p.add_argument("--pql-snapshot-steps", type=int, default=25_000)
    p.add_argument("--ver-snapshot-steps", type=int, default=100_000)
    p.add_argument(
        "--ver-total-steps",
        type=int,
        default=None,
        help="VER-PPO's total_steps (its lr/clip schedule spans them); default: the CPU "
        "profile's 2.4M (~50 min). Set ~ minutes x 60 x VER's SPS to fit the schedule to "
        "the budget",
    )
    p.add_argument(
        "--continue",
        dest="resume",
        action="store_true",
        help="continue a benchmark that a session end interrupted: keep the runs that "
        "finished (a DONE file in the run directory) and the evaluations in OUT/evals.csv",
    )
    p.add_argument("--episodes", type=int, default=50, help="val episodes per snapshot")
    p.add_argument("--eval-seed", type=int, default=1)
    p.add_argument("--runs-root", default="runs/bench_pql_vs_ppo")
    p.add_argument("--out", default="benchmarks/results/pql_vs_ppo")
    p.add_argument("--eval-only", action="store_true", help="skip training, evaluate runs")
    args = p.parse_args(argv)
    runs_root, out = REPO / args.runs_root, REPO / args.out
    out.mkdir(parents=True, exist_ok=True)
    earlier = read_csv(out / "evals.csv") if args.resume or args.eval_only else []
    evals: list[SnapshotEval] = []
    later = earlier
    for skill in args.skills:
        for algo in args.algos:
            for seed in args.seeds:
                run_dir = runs_root / skill / run_name(algo, seed)
                key = (skill, algo, seed)
                known = {e.checkpoint: e for e in earlier if (e.skill, e.algo, e.seed) == key}
                # finished: DONE in its directory, or (a fresh checkout, runs/ not in git)
                # its evaluations in evals.csv, written only once a run is evaluated
                done = (run_dir / "DONE").is_file() or bool(known)
                if not args.eval_only and not (args.resume and done):
                    shutil.rmtree(run_dir, ignore_errors=True)  # no snapshots of an old run
                    known = {}
                    snap = args.pql_snapshot_steps if algo == "pql" else args.ver_snapshot_steps
                    cmd = train_command(skill, algo, seed, runs_root, snap, args.ver_total_steps)
                    started = time.time()
                    rc = train(cmd, args.minutes, out / f"train_{skill}_{algo}_s{seed}.log")
                    print(f"trained in {(time.time() - started) / 60:.1f} min (rc {rc})")
                    if (run_dir / "checkpoints").is_dir():
                        (run_dir / "DONE").write_text(f"{args.minutes} min, rc {rc}\n")
                if (run_dir / "checkpoints").is_dir():
                    evals += evaluate_run(
                        skill, algo, seed, run_dir, args.episodes, args.eval_seed, known
                    )
                elif known:
                    evals += list(known.values())
                else:
                    print(f"error: no checkpoints under {run_dir}: train first", file=sys.stderr)
                    return 1
                # saved after every run: an interrupted benchmark keeps its evaluations
                finished = runs_of(evals)
                later = [e for e in earlier if (e.skill, e.algo, e.seed) not in finished]
                write_csv(evals + later, out / "evals.csv")
    evals += later  # runs of earlier invocations (other skills) stay in the table and plot
    plot(evals, out / "curves.png")
    text = table(evals)
    (out / "table.md").write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
