"""PQL networks over flat state vectors: tanh actor, double-Q critics (and the observation
normaliser, `models/normalizer.py`).

The critics take [normalised obs, action]; with `num_atoms > 1` each outputs logits over a
fixed value support (PQL-D) and `values` turns them into expected values.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor, nn

from rearrange.models.normalizer import ObsNormalizer

__all__ = ["ObsNormalizer"]  # re-exported: the PQL learners and policy import it from here


def mlp(in_dim: int, hidden: list[int], out_dim: int) -> nn.Sequential:
    """Linear layers with ELU between them (the PQL reference's state MLP)."""
    sizes = [in_dim, *hidden, out_dim]
    layers: list[nn.Module] = []
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        layers.append(nn.Linear(a, b))
        if i < len(sizes) - 2:
            layers.append(nn.ELU())
    return nn.Sequential(*layers)


class RunningMeanStd:
    """Streaming mean/variance over batches (Chan et al.'s parallel update), float64."""

    def __init__(self, dim: int):
        self.mean = np.zeros(dim)
        self.var = np.ones(dim)
        self.count = 0

    def update(self, batch: np.ndarray) -> None:
        n = batch.shape[0]
        if n == 0:
            return
        b_mean, b_var = batch.mean(axis=0), batch.var(axis=0)
        total = self.count + n
        delta = b_mean - self.mean
        m2 = self.var * self.count + b_var * n + delta**2 * self.count * n / total
        self.mean = self.mean + delta * n / total
        self.var = m2 / total
        self.count = total

    def packed(self) -> np.ndarray:
        return np.concatenate([self.mean, self.var, [float(self.count)]])

    def load_packed(self, stats: np.ndarray) -> None:
        dim = self.mean.shape[0]
        self.mean, self.var = stats[:dim].copy(), stats[dim : 2 * dim].copy()
        self.count = int(stats[2 * dim])


# A prior mean of ±1 is a saturated tanh; the output layer's bias gets atanh of this at most.
MEAN_INIT_LIMIT = 0.95


class DeterministicActor(nn.Module):
    """π(s) = tanh(MLP(s)): one deterministic action in [-1, 1]^A per (normalised) state.

    `mean_init` (empty, or one value per action dim; `ModelConfig.action_mean_init`) is an
    exploration prior, as for the VER policies' Gaussian mean: the output layer's bias is
    atanh(m) (m clipped to ±MEAN_INIT_LIMIT) and, where m != 0, that dim's weights shrink
    100×, so π(s) starts at ~m whatever the state. Nav uses [0, 0, -1]: the stop output
    starts far below its 0 threshold instead of being a coin flip each step."""

    def __init__(
        self, obs_dim: int, act_dim: int, hidden: list[int], mean_init: Sequence[float] = ()
    ):
        super().__init__()
        self.net = mlp(obs_dim, list(hidden), act_dim)
        if len(mean_init):
            if len(mean_init) != act_dim:
                raise ValueError(
                    f"action_mean_init has {len(mean_init)} values for {act_dim} action dims"
                )
            m = np.clip(np.asarray(mean_init, np.float64), -MEAN_INIT_LIMIT, MEAN_INIT_LIMIT)
            out = self.net[-1]
            with torch.no_grad():
                out.bias.copy_(torch.as_tensor(np.arctanh(m), dtype=out.bias.dtype))
                shrink = torch.as_tensor(np.where(m != 0.0, 0.01, 1.0), dtype=out.weight.dtype)
                out.weight.mul_(shrink[:, None])

    def forward(self, obs: Tensor) -> Tensor:
        return torch.tanh(self.net(obs))


@dataclass(frozen=True)
class ActorSpec:
    """What builds a DeterministicActor, and sizes the critics beside it; picklable, so the
    learner processes build the same networks as the trainer."""

    obs_dim: int
    act_dim: int
    hidden: tuple[int, ...]
    mean_init: tuple[float, ...] = ()  # ModelConfig.action_mean_init (empty: none)

    def build(self) -> DeterministicActor:
        return DeterministicActor(self.obs_dim, self.act_dim, list(self.hidden), self.mean_init)


class DoubleQCritic(nn.Module):
    """Two independent Q networks over [obs, action] (clipped double-Q learning).

    `num_atoms == 1`: scalar Q values; otherwise logits over `support` (PQL-D)."""

    def __init__(
        self,
        obs_dim: int,
        act_dim: int,
        hidden: list[int],
        num_atoms: int = 1,
        v_min: float = -10.0,
        v_max: float = 10.0,
    ):
        super().__init__()
        self.num_atoms = num_atoms
        self.q1 = mlp(obs_dim + act_dim, list(hidden), num_atoms)
        self.q2 = mlp(obs_dim + act_dim, list(hidden), num_atoms)
        self.register_buffer("support", torch.linspace(v_min, v_max, max(num_atoms, 2)))

    @property
    def distributional(self) -> bool:
        return self.num_atoms > 1

    def forward(self, obs: Tensor, action: Tensor) -> tuple[Tensor, Tensor]:
        """(out1, out2): [B] Q values, or [B, K] logits when distributional."""
        x = torch.cat([obs, action], dim=1)
        out1, out2 = self.q1(x), self.q2(x)
        if not self.distributional:
            return out1.squeeze(-1), out2.squeeze(-1)
        return out1, out2

    def values(self, out: Tensor) -> Tensor:
        """Expected value [B] of one head's output."""
        if not self.distributional:
            return out
        return (torch.softmax(out, dim=-1) * self.support).sum(-1)

    def min_q(self, obs: Tensor, action: Tensor) -> Tensor:
        """min(Q1, Q2)(s, a) as expected values [B] (the P-learner's objective)."""
        out1, out2 = self(obs, action)
        return torch.minimum(self.values(out1), self.values(out2))
