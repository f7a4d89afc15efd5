"""Ship a trained checkpoint with the package, or list the shipped ones.

    python -m rearrange.ship_skill list
    python -m rearrange.ship_skill select RUN [--episodes 50] [--seed 1]   # pick the snapshot
    python -m rearrange.ship_skill curve RUN --name NAME                   # its training curve
    python -m rearrange.ship_skill export CKPT --command "TRAINING COMMAND" \
        [--episodes 100] [--seed 0] [--commit SHA] [--precision fp16|int8|int4]
    python -m rearrange.ship_skill reencode SHIPPED.pt --precision int4   # smaller weights

`export` evaluates CKPT with `rearrange.eval_skill` on val episodes (the success in the
manifest is measured here, never typed in), then writes rearrange/skills/pretrained/
<skill>[_bm][_depth].pt (fp16 weights, or int8 / int4 codes with scales,
`runtime/weight_codec.py`; no optimiser) and its .json manifest, after evaluating those weights
on the same episodes (`val_success_shipped`: what the shipped file does). `reencode` stores a
shipped file's weights in another precision (when its training checkpoint is gone), measures
the new file on the manifest's val episodes and records the step in the manifest (`reencoded`).
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rearrange.eval.stats import format_rate
from rearrange.runtime.weight_codec import PRECISIONS
from rearrange.skills.pretrained import PRETRAINED_DIR, shipped, shipped_dirs, weights_dir

PROG = "python -m rearrange.ship_skill"


def _git_head() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True, timeout=10
        )
        return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def export(args: argparse.Namespace) -> int:
    from rearrange.eval.one_skill import SkillEvalArgs, evaluate_skill, table_row
    from rearrange.runtime.checkpoint import SkillCheckpoint

    src = Path(args.checkpoint)
    ckpt = SkillCheckpoint.load(src)
    folder = Path(args.out_dir) if args.out_dir else ship_dir(ckpt.base_movement, ckpt.obs_preset)
    run = SkillEvalArgs.for_checkpoint(src, ckpt, args.episodes, args.seed)
    result = evaluate_skill(run)
    print(table_row(result))
    manifest = {
        "skill": ckpt.skill,
        "base_movement": ckpt.base_movement,
        "obs_preset": ckpt.obs_preset,
        "training_command": args.command,
        "steps": ckpt.num_steps,
        "updates": ckpt.num_updates,
        "wall_time_s": round(float(args.wall_time_s or ckpt.wall_time_s), 1),
        "val_success": result.success_rate,
        "val_episodes": len(result.results),
        "val_seed": args.seed,
        "eval_command": run.command(),
        "commit": args.commit or _git_head(),
        "source_checkpoint": str(src),
        "source_sha256": hashlib.sha256(src.read_bytes()).hexdigest(),
        "exported": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    out = folder / f"{ckpt.file_stem}.pt"
    return _ship(ckpt, manifest, args.precision, args.episodes, args.seed, out)


def ship_dir(base_movement: bool, obs_preset: str) -> Path:
    """Where `export` ships a checkpoint by default: the package's folder, but for a
    base-moving depth student, which goes to the weights distribution (weights/ in the
    repository: the package's weight budget holds the fixed-base students only)."""
    if not (base_movement and obs_preset == "depth"):
        return PRETRAINED_DIR
    extra = weights_dir()
    if extra is None:
        raise SystemExit(
            "ship_skill export: a base-moving depth student ships in the weights "
            "distribution, which is not installed: pip install -e weights (or pass --out-dir)"
        )
    return extra


def _ship(ckpt, manifest: dict, precision: str, episodes: int, seed: int, out: Path) -> int:
    """Write `ckpt` in `precision` to `out` (.pt) and its .json, `manifest` completed with the
    precision and the success of those very weights on the val episodes (`episodes` of
    `seed`): what the shipped file does (it can differ by an episode or two from the source).
    Measured on a temporary copy, so that the package's .pt and .json are written together;
    the weights are encoded once, so the file shipped holds the tensors measured."""
    from rearrange.eval.one_skill import SkillEvalArgs, evaluate_skill, table_row

    shipped = ckpt.for_shipping(manifest, precision)
    with tempfile.TemporaryDirectory() as tmp:
        small = shipped.save(Path(tmp) / out.name)
        check = evaluate_skill(SkillEvalArgs.for_checkpoint(small, ckpt, episodes, seed))
    print(f"the {precision} weights: {table_row(check)}")
    manifest["weights"] = precision
    manifest["val_success_shipped"] = check.success_rate
    path = dataclasses.replace(shipped, manifest=dict(manifest)).save(out)
    out.with_suffix(".json").write_text(json.dumps(manifest, indent=1) + "\n")
    print(f"shipped {path} ({path.stat().st_size / 1024:.0f} KiB), manifest {out.stem}.json")
    return 0


def reencode(args: argparse.Namespace) -> int:
    from rearrange.runtime.checkpoint import SkillCheckpoint

    src = Path(args.file)
    ckpt = SkillCheckpoint.load(src)
    manifest = dict(ckpt.manifest or {})
    if "val_episodes" not in manifest or "val_seed" not in manifest:
        raise ValueError(
            f"{src} is not a shipped checkpoint (its manifest names no val episodes): ship a "
            f"training checkpoint with `{PROG} export` instead"
        )
    # What the file was, so the chain from the training command stays on record: its precision,
    # its bytes (sha256) and what it did on the same episodes.
    manifest["reencoded"] = {
        "command": f"{PROG} reencode {src} --precision {args.precision}",
        "from_weights": manifest.get("weights", "fp16"),
        "from_sha256": hashlib.sha256(src.read_bytes()).hexdigest(),
        "from_val_success_shipped": manifest.get("val_success_shipped"),
        "commit": _git_head(),
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    episodes, seed = int(manifest["val_episodes"]), int(manifest["val_seed"])
    out = (Path(args.out_dir) if args.out_dir else src.parent) / f"{src.stem}.pt"
    return _ship(ckpt, manifest, args.precision, episodes, seed, out)


def list_shipped() -> int:
    rows = shipped()
    if not rows:
        print(f"no checkpoints shipped in {' or '.join(str(d) for d in shipped_dirs())}")
    for m in rows:
        rate, n = m.get("val_success"), m.get("val_episodes")
        rate_txt = "?"
        if rate is not None and n:  # the manifest keeps the rate; its count is rate * n
            rate_txt = f"{format_rate(round(rate * n), n)} on {n} val eps"
            shipped_rate = m.get("val_success_shipped")
            if shipped_rate is not None:  # exports since it was added evaluate the file too
                kind = m.get("weights", "fp16")
                rate_txt += f" (this {kind} file: {format_rate(round(shipped_rate * n), n)})"
        print(f"{m['file']}: {m['bytes'] / 1024:.0f} KiB, {m.get('steps', 0):,} steps, {rate_txt}")
    return 0


RELEASE_STEPS = {"select": "select_checkpoint", "curve": "train_curve"}
"""Subcommands whose arguments their own module parses (`ship_skill select --help`)."""


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] in RELEASE_STEPS:
        import importlib

        return importlib.import_module(f"rearrange.{RELEASE_STEPS[argv[0]]}").main(argv[1:])
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("list", help="list the shipped checkpoints")
    sub.add_parser("select", help="choose a run's snapshot by val success (see select --help)")
    sub.add_parser("curve", help="a run's training curve as CSV + PNG (see curve --help)")
    e = sub.add_parser("export", help="evaluate a training checkpoint and ship it")
    e.add_argument("checkpoint", help="a train_skill checkpoint (latest.pt or ckpt_<steps>.pt)")
    e.add_argument("--command", required=True, help="the training command that produced it")
    e.add_argument("--episodes", type=int, default=100)
    e.add_argument("--seed", type=int, default=0)
    e.add_argument("--commit", help="commit the training ran at (default: HEAD)")
    e.add_argument(
        "--out-dir",
        help="default: rearrange/skills/pretrained/, or weights/rearrange_weights/ for a "
        "base-moving depth student (the package's weight budget holds the others)",
    )
    e.add_argument(
        "--precision",
        choices=PRECISIONS,
        default="fp16",
        help="how the shipped file stores the weights: fp16, int8 with one scale per output "
        "row (half the bytes), or int4 with one scale per 32 weights (under a third; for the "
        "depth students)",
    )
    e.add_argument(
        "--wall-time-s",
        type=float,
        help="training wall time, for checkpoints written before they recorded it",
    )
    r = sub.add_parser("reencode", help="store a shipped file's weights in another precision")
    r.add_argument("file", help="a shipped checkpoint (rearrange/skills/pretrained/NAME.pt)")
    r.add_argument("--precision", choices=PRECISIONS, required=True)
    r.add_argument("--out-dir", help="where to write it (default: beside the file, replacing it)")
    args = p.parse_args(argv)
    try:
        if args.cmd == "reencode":
            return reencode(args)
        return list_shipped() if args.cmd == "list" else export(args)
    except (ValueError, RuntimeError, OSError, KeyError) as err:
        message = str(err).splitlines()[0] if str(err) else type(err).__name__
        print(f"{PROG}: error: {message}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
