"""Resume an optimiser's moments under this command's hyper-parameters.

`torch.optim.Optimizer.load_state_dict` restores every saved hyper-parameter along with the
moments, so `--resume ... pql.actor_lr=1e-4` (or `distill.lr=`) would be silently ignored: the
run would keep the rate it was saved with. `load_moments` loads the moments and then puts back
the hyper-parameters the optimiser was built with (the resumed command's config).
"""

from __future__ import annotations

import torch

KEPT = ("lr", "eps")
"""The per-group hyper-parameters a resumed command may change."""


def load_moments(optim: torch.optim.Optimizer, state: dict) -> list[str]:
    """Load `state` into `optim`, keeping its current lr/eps per group; returns one text per
    changed value ("lr 0.0005 -> 0.0001"), for the caller's log."""
    wanted = [{k: g[k] for k in KEPT if k in g} for g in optim.param_groups]
    optim.load_state_dict(state)
    changes = []
    for group, keep in zip(optim.param_groups, wanted, strict=True):
        for key, value in keep.items():
            if group[key] != value:
                changes.append(f"{key} {group[key]:g} -> {value:g}")
            group[key] = value
    return changes
