"""Mixed exploration (PQL §3.3): env i of N acts with its own Gaussian noise scale.

    σ_i = σ_min + i/(N-1) · (σ_max - σ_min),   i = 0..N-1   (the paper's i-1 for i = 1..N)
    a_i = clip(π(s_i) + N(0, σ_i²), -1, 1)

Some envs exploit while others explore, so no single σ has to be tuned. A single env gets
the middle of the range.
"""

from __future__ import annotations

import numpy as np


def mixed_sigmas(num_envs: int, sigma_min: float, sigma_max: float) -> np.ndarray:
    """[N] noise std per env, spread uniformly over [σ_min, σ_max]."""
    if num_envs == 1:
        return np.array([(sigma_min + sigma_max) / 2], np.float32)
    return np.linspace(sigma_min, sigma_max, num_envs, dtype=np.float32)


def noisy_actions(mean: np.ndarray, sigmas: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """[N, A] exploration actions: the policy's actions plus per-env noise, clipped to [-1, 1]."""
    noise = rng.standard_normal(mean.shape).astype(np.float32) * sigmas[:, None]
    return np.clip(mean + noise, -1.0, 1.0).astype(np.float32)
