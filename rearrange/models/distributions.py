"""Independent (diagonal) Gaussian action distribution with a state-independent log-std."""

from __future__ import annotations

import math

import torch
from torch import nn

_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)


def check_noise(noise: torch.Tensor, shape: tuple[int, ...]) -> None:
    """Raise a one-line ValueError unless the given action noise has the actions' `shape`."""
    if tuple(noise.shape) != tuple(shape):
        raise ValueError(
            f"noise has shape {tuple(noise.shape)}, expected {tuple(shape)} "
            "(one standard-normal value per action dimension)"
        )


class DiagGaussian:
    """N(mean, exp(log_std)^2) per action dimension; log-prob and entropy summed over dims."""

    def __init__(self, mean: torch.Tensor, log_std: torch.Tensor) -> None:
        self.mean = mean
        self.log_std = log_std.expand_as(mean)

    def sample(self, noise: torch.Tensor | None = None) -> torch.Tensor:
        """mean + std * noise; noise [B, A] standard normal, drawn here (randn_like) if None.

        Passing the noise lets a caller draw it elsewhere (e.g. outside a CUDA graph) and
        makes the sample reproducible; zeros give the mode.
        """
        if noise is None:
            noise = torch.randn_like(self.mean)
        else:
            check_noise(noise, tuple(self.mean.shape))
        return self.mean + noise.to(self.mean.dtype) * self.log_std.exp()

    def mode(self) -> torch.Tensor:
        return self.mean

    def log_prob(self, actions: torch.Tensor) -> torch.Tensor:
        z = (actions - self.mean) * torch.exp(-self.log_std)
        return (-0.5 * z.pow(2) - self.log_std - _HALF_LOG_2PI).sum(dim=-1)

    def entropy(self) -> torch.Tensor:
        # 0.5 * log(2 pi e sigma^2) per dimension.
        return (self.log_std + 0.5 + _HALF_LOG_2PI).sum(dim=-1)


class GaussianHead(nn.Module):
    """Linear action mean (optionally through tanh) + learned, clamped, state-independent
    log-std. The squash only bounds the mean; the distribution stays an unsquashed Gaussian,
    so log-probs and entropy are unchanged and `squash_mean` adds no parameters."""

    def __init__(
        self,
        in_size: int,
        action_dim: int,
        log_std_init: float,
        log_std_bounds: tuple[float, float],
        mean_init_gain: float,
        squash_mean: bool = False,
        mean_init: list[float] | tuple[float, ...] = (),
    ) -> None:
        super().__init__()
        self.squash_mean = squash_mean
        self.mean = nn.Linear(in_size, action_dim)
        nn.init.orthogonal_(self.mean.weight, gain=mean_init_gain)
        nn.init.zeros_(self.mean.bias)
        if len(mean_init) > action_dim:
            raise ValueError(
                f"action_mean_init has {len(mean_init)} values for {action_dim} action dims"
            )
        with torch.no_grad():
            for i, value in enumerate(mean_init):  # tanh(atanh(v)) = v when squashed
                self.mean.bias[i] = (
                    math.atanh(max(min(value, 0.999), -0.999)) if squash_mean else value
                )
        self.log_std = nn.Parameter(torch.full((action_dim,), float(log_std_init)))
        self.log_std_bounds = log_std_bounds

    def forward(self, features: torch.Tensor) -> DiagGaussian:
        log_std = self.log_std.clamp(*self.log_std_bounds)
        mean = self.mean(features)
        return DiagGaussian(torch.tanh(mean) if self.squash_mean else mean, log_std)
