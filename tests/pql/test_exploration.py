"""Mixed exploration: σ_i spread uniformly over [σ_min, σ_max], one σ per env."""

import numpy as np
import pytest

from rearrange.pql.exploration import mixed_sigmas, noisy_actions


def test_sigmas_spread_uniformly_from_min_to_max():
    # σ_i = 0.05 + i/3 · 0.75 for i = 0..3 (the paper's (i-1)/(N-1) with i = 1..N)
    assert mixed_sigmas(4, 0.05, 0.8).tolist() == pytest.approx([0.05, 0.3, 0.55, 0.8])
    assert mixed_sigmas(2, 0.1, 0.5).tolist() == pytest.approx([0.1, 0.5])


def test_one_env_gets_the_middle_of_the_range():
    assert mixed_sigmas(1, 0.05, 0.8).tolist() == pytest.approx([0.425])


def test_each_env_explores_with_its_own_sigma_and_actions_are_clipped():
    sigmas = mixed_sigmas(3, 0.0, 0.3)
    mean = np.zeros((3, 20000), np.float32)
    actions = noisy_actions(mean, sigmas, np.random.default_rng(0))
    assert np.all(actions[0] == 0.0)  # σ = 0: the policy's action
    assert actions[1].std() == pytest.approx(0.15, rel=0.03)
    assert actions[2].std() == pytest.approx(0.3, rel=0.03)
    near_edge = noisy_actions(np.full((3, 1000), 0.9, np.float32), sigmas, np.random.default_rng(1))
    assert near_edge.max() == 1.0 and near_edge.min() >= -1.0
