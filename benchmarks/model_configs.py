"""The policies the systems benchmarks train, read from the training configs themselves
(skill_configs/model/*.yaml), so a benchmark's state policy is the one `train_skill` builds
and is written in one place. benchmarks/trainer_ceiling.py reads the same files without
importing this module (its baseline children put an older checkout first on the path)."""

from __future__ import annotations

from pathlib import Path

MODEL_CONFIG_DIR = Path(__file__).resolve().parents[1] / "skill_configs" / "model"


def model_config(name: str, **overrides):
    """ModelConfig of skill_configs/model/NAME.yaml (e.g. 'state', 'state_cpu'), then
    `overrides` (ModelConfig field names)."""
    import yaml

    from rearrange.models import ModelConfig

    path = MODEL_CONFIG_DIR / f"{name}.yaml"
    if not path.is_file():
        known = sorted(p.stem for p in MODEL_CONFIG_DIR.glob("*.yaml"))
        raise ValueError(f"no model config {path}; known: {', '.join(known)}")
    fields = yaml.safe_load(path.read_text()) or {}
    fields.update(overrides)
    return ModelConfig(**fields)
