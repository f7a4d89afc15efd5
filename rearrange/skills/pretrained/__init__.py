"""Pretrained skill checkpoints shipped inside the package (nothing is downloaded).

Each skill has `<skill>[_bm].pt` (fp16 policy weights, the spaces, the model and task config)
and `<skill>[_bm].json` (the manifest: skill, base movement, training command, steps, wall
time, val success, commit, the run checkpoint it came from). `_bm` marks the base-movement
variant the NoNav ablation needs.

    python -m rearrange.ship_skill export runs/pick/cpu_v1/checkpoints/ckpt_X.pt \
        --command "python -m rearrange.train_skill pick --profile cpu" --episodes 100
    python -m rearrange.ship_skill list
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

PRETRAINED_DIR = Path(__file__).resolve().parent


def pretrained_name(skill: str, base_movement: bool) -> str:
    return f"{skill}_bm" if base_movement else skill


def pretrained_path(skill: str, base_movement: bool = False) -> Path | None:
    """The shipped checkpoint of `skill` (base-movement variant if asked), or None."""
    path = PRETRAINED_DIR / f"{pretrained_name(skill, base_movement)}.pt"
    return path if path.is_file() else None


def read_manifest(checkpoint: Path) -> dict[str, Any] | None:
    """The manifest beside a shipped checkpoint (None for a training-run checkpoint)."""
    path = Path(checkpoint).with_suffix(".json")
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def shipped() -> list[dict[str, Any]]:
    """Manifests of every shipped checkpoint, by file name."""
    out = []
    for pt in sorted(PRETRAINED_DIR.glob("*.pt")):
        manifest = read_manifest(pt) or {}
        out.append({"file": pt.name, "bytes": pt.stat().st_size, **manifest})
    return out


def compact_state(ckpt: dict[str, Any], manifest: dict[str, Any]) -> dict[str, Any]:
    """What a shipped checkpoint keeps of a training checkpoint: fp16 weights, no optimiser.

    The learner key holds no optimiser state (the file is for inference); the rest of the
    training-checkpoint keys stay so `rearrange.runtime.checkpoint.load_checkpoint` and
    `LearnedSkill` read it like any other checkpoint."""
    import torch

    weights = {k: v.half() if torch.is_floating_point(v) else v for k, v in ckpt["policy"].items()}
    return {
        "policy": weights,
        "learner": {},
        "num_steps": int(ckpt["num_steps"]),
        "num_updates": int(ckpt["num_updates"]),
        "wall_time_s": float(ckpt.get("wall_time_s", 0.0)),
        "config": {k: ckpt["config"][k] for k in ("skill", "base_movement", "model", "task")},
        "observation_space": ckpt["observation_space"],
        "action_space": ckpt["action_space"],
        "manifest": manifest,
    }
