"""Training logs: TensorBoard scalars, a tqdm progress bar (SPS, ETA), one line per update."""

from __future__ import annotations

import logging
from collections import deque
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger("rearrange.train")


def episode_scalars(episodes: list[dict[str, Any]]) -> dict[str, float]:
    """Mean success, return, length and each reward term over finished episodes."""
    if not episodes:
        return {}
    out = {
        "episode/success": float(np.mean([e["success"] for e in episodes])),
        "episode/return": float(np.mean([e["return"] for e in episodes])),
        "episode/length": float(np.mean([e["length"] for e in episodes])),
    }
    terms = sorted({k for e in episodes for k in e.get("reward_terms", {})})
    for term in terms:
        values = [e.get("reward_terms", {}).get(term, 0.0) for e in episodes]
        out[f"reward_terms/{term}"] = float(np.mean(values))
    return out


class TrainLogger:
    """Writes scalars to TensorBoard, advances the progress bar, logs a line per update.

    Only rank 0 writes (`enabled=False` elsewhere)."""

    def __init__(self, tb_dir: Path | None, total_steps: int, start_steps: int, enabled=True):
        self.enabled = enabled
        self.writer = None
        self.bar = None
        self.recent_episodes: deque[dict[str, Any]] = deque(maxlen=100)
        if not enabled:
            return
        if tb_dir is not None:
            try:
                from torch.utils.tensorboard import SummaryWriter

                self.writer = SummaryWriter(str(tb_dir))
            except ImportError:  # tensorboard is optional at run time
                log.warning("tensorboard not installed: no TensorBoard logs")
        from tqdm import tqdm

        self.bar = tqdm(total=total_steps, initial=start_steps, unit="step", dynamic_ncols=True)

    def update(self, num_steps: int, update: int, scalars: dict[str, float], new_steps: int):
        if not self.enabled:
            return
        for key, value in scalars.items():
            if self.writer is not None and np.isfinite(value):
                self.writer.add_scalar(key, value, num_steps)
        if self.bar is not None:
            self.bar.update(new_steps)
            self.bar.set_postfix(sps=f"{scalars.get('perf/sps', 0):.0f}", refresh=False)
        keys = (
            "perf/sps",
            "episode/success",
            "episode/return",
            "learn/value_loss",
            "learn/entropy",
        )
        parts = [f"{k.split('/')[-1]}={scalars[k]:.3g}" for k in keys if k in scalars]
        log.info("update %d steps %d %s", update, num_steps, " ".join(parts))

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        if self.bar is not None:
            self.bar.close()


def format_duration(seconds: float) -> str:
    """'45 s', '12 min', '2 h 20 min': how long a run takes, for banners and ETA lines."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    minutes = round(seconds / 60)
    if minutes < 90:
        return f"{minutes} min"
    return f"{minutes // 60:,} h {minutes % 60:02d} min"


def eta_text(steps_left: int, sps: float, total_steps: int) -> str:
    """'ETA 7 min to 200,000 steps' at `sps` environment steps per second."""
    if sps <= 0:
        return f"ETA unknown to {total_steps:,} steps"
    return f"ETA {format_duration(max(steps_left, 0) / sps)} to {total_steps:,} steps"
