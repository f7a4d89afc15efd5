"""Pretrained skill checkpoints shipped inside the package (nothing is downloaded).

Each skill has `<skill>[_bm].pt` (a `rearrange.runtime.checkpoint.SkillCheckpoint`: fp16
policy weights, spaces, model config, no training state) and `<skill>[_bm].json` (its
manifest: skill, base movement, training command, steps, wall time, val success, commit, the
run checkpoint it came from). `_bm` marks the base-movement variant the NoNav ablation needs
(`checkpoint_stem`); `_depth` (`<skill>[_bm]_depth.pt`) marks a policy on head depth, the
paper's (`python -m rearrange.eval SCENARIO --policy depth` chains them).

The base-moving depth students (`<skill>_bm_depth.pt`) do not fit the package's weight
budget: they ship in a second distribution of the repository, `weights/` (the
`rearrange_weights` package, installed beside this one by `scripts/install.sh`; nothing is
fetched at run time), which `shipped_dirs` lists after this folder.

    python -m rearrange.ship_skill export runs/pick/cpu_v1/checkpoints/ckpt_X.pt \
        --command "python -m rearrange.train_skill pick --profile cpu" --episodes 100
    python -m rearrange.ship_skill list
"""

from __future__ import annotations

import importlib.util
import json
import shlex
from pathlib import Path
from typing import Any

PRETRAINED_DIR = Path(__file__).resolve().parent


def weights_dir() -> Path | None:
    """The folder of the `rearrange_weights` distribution (weights/ in the repository), or
    None where it is not installed. Found without importing it."""
    spec = importlib.util.find_spec("rearrange_weights")
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    return Path(locations[0]).resolve() if locations else None


def shipped_dirs() -> list[Path]:
    """Where shipped checkpoints live, in lookup order: the package's own folder, then the
    weights distribution where installed."""
    extra = weights_dir()
    return [PRETRAINED_DIR] + ([extra] if extra is not None and extra != PRETRAINED_DIR else [])


def pretrained_path(skill: str, base_movement: bool = False, depth: bool = False) -> Path | None:
    """The shipped checkpoint of `skill` (base-movement variant, depth policy if asked), or None."""
    from rearrange.runtime.checkpoint import checkpoint_stem  # lazy: torch-heavy

    return shipped_file(f"{checkpoint_stem(skill, base_movement, depth)}.pt")


def shipped_file(name: str) -> Path | None:
    """A shipped file by name (e.g. "pick_bm_depth.json") in the first of `shipped_dirs`
    that holds it, or None."""
    return next((d / name for d in shipped_dirs() if (d / name).is_file()), None)


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
    for pt in sorted((p for d in shipped_dirs() for p in d.glob("*.pt")), key=lambda p: p.name):
        manifest = read_manifest(pt) or {}
        out.append({"file": pt.name, "bytes": pt.stat().st_size, **manifest})
    return out
