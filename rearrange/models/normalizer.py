"""Fixed per-feature normalisation of flat vector observations, with its statistics in buffers."""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor, nn


class ObsNormalizer(nn.Module):
    """(x - mean) / std, clipped to ±`clip`; the statistics are set from outside.

    Buffers, not parameters: they travel in the policy's state dict (a checkpoint deploys
    with the statistics it was trained with) but not in the parameter sync or the optimiser.
    Without statistics (count 0) it is the identity. No host sync in forward (count is
    compared on the device), so it can sit inside a captured CUDA graph.

    Users: the PQL actor and critics (`pql.obs_norm`, running statistics of the replay data)
    and the depth policy's vector inputs (`model.vector_norm`, the DAgger teacher's
    statistics, `distill/trainer.py`)."""

    def __init__(self, dim: int, clip: float = 5.0):
        super().__init__()
        self.clip = clip
        self.register_buffer("mean", torch.zeros(dim))
        self.register_buffer("var", torch.ones(dim))
        self.register_buffer("count", torch.zeros((), dtype=torch.int64))

    def forward(self, x: Tensor) -> Tensor:
        std = torch.sqrt(self.var.float() + 1e-8)
        y = ((x - self.mean.float()) / std).clamp(-self.clip, self.clip)
        return torch.where(self.count > 0, y, x)

    def set_stats(self, stats: np.ndarray) -> None:
        """Load [mean (D), var (D), count] as written by `RunningMeanStd.packed`."""
        dim = self.mean.numel()
        self.set_mean_var(stats[:dim], stats[dim : 2 * dim], int(stats[2 * dim]))

    def set_mean_var(self, mean, var, count: int) -> None:
        """Set the statistics (D values each) of `count` samples; count 0: the identity."""
        dim = self.mean.numel()
        mean = torch.as_tensor(np.asarray(mean, np.float64)).reshape(-1)
        var = torch.as_tensor(np.asarray(var, np.float64)).reshape(-1)
        if mean.numel() != dim or var.numel() != dim:
            raise ValueError(
                f"ObsNormalizer: got {mean.numel()} means and {var.numel()} variances for "
                f"{dim} features"
            )
        self.mean.copy_(mean)
        self.var.copy_(var)
        self.count.fill_(int(count))
