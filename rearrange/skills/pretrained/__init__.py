"""Pretrained skill checkpoints shipped inside the package (nothing is downloaded).

Each skill has `<skill>[_bm].pt` (a `rearrange.runtime.checkpoint.SkillCheckpoint`: fp16
policy weights, spaces, model config, no training state) and `<skill>[_bm].json` (its
manifest: skill, base movement, training command, steps, wall time, val success, commit, the
run checkpoint it came from). `_bm` marks the base-movement variant the NoNav ablation needs
(`checkpoint_stem`); `_depth` (`<skill>[_bm]_depth.pt`) marks a policy on head depth, the
paper's (`python -m rearrange.eval SCENARIO --policy depth` chains them).

    python -m rearrange.ship_skill export runs/pick/cpu_v1/checkpoints/ckpt_X.pt \
        --command "python -m rearrange.train_skill pick --profile cpu" --episodes 100
    python -m rearrange.ship_skill list
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

PRETRAINED_DIR = Path(__file__).resolve().parent


def pretrained_path(skill: str, base_movement: bool = False, depth: bool = False) -> Path | None:
    """The shipped checkpoint of `skill` (base-movement variant, depth policy if asked), or None."""
    from rearrange.runtime.checkpoint import checkpoint_stem  # lazy: torch-heavy

    path = PRETRAINED_DIR / f"{checkpoint_stem(skill, base_movement, depth)}.pt"
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


def training_argv(command: str) -> list[str]:
    """The `rearrange.train_skill` arguments of a manifest's training command, split as the
    shell splits them (quotes too: 'x=[1,1,4]'), without the parenthesised notes that may
    follow it; [] for a command that is not a train_skill one."""
    try:
        words = shlex.split(command.split("(")[0])
    except ValueError:  # an unbalanced quote: not a command a shell would run
        return []
    if "rearrange.train_skill" not in words:
        return []
    return words[words.index("rearrange.train_skill") + 1 :]


def shipped() -> list[dict[str, Any]]:
    """Manifests of every shipped checkpoint, by file name."""
    out = []
    for pt in sorted(PRETRAINED_DIR.glob("*.pt")):
        manifest = read_manifest(pt) or {}
        out.append({"file": pt.name, "bytes": pt.stat().st_size, **manifest})
    return out
