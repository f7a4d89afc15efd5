"""GAE over interleaved variable-length env sequences and VER importance weights, by hand."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rearrange.ver_backend.gae import compute_gae, per_env_step_table
from rearrange.ver_backend.importance import (
    compute_is_weights,
    per_env_is_coefficients,
    truncate_is_weights,
)
from ver_backend.learner_testlib import plain_rollout


def _gae(r):
    return compute_gae(r.rewards, r.values, r.dones, r.env_ids, r.bootstrap_values, 0.5, 0.5)


def test_gae_two_envs_interleaved_episode_and_rollout_boundary():
    # env 0 (time order): r=[1,2,3], V=[.5,1,2], done=[F,T,F], bootstrap 4
    # env 1 (time order): r=[1,1],   V=[0,2],    done=[F,F],   bootstrap 8
    # flat order: e0 t0, e1 t0, e0 t1, e0 t2, e1 t1
    r = plain_rollout(
        rewards=[1, 1, 2, 3, 1],
        values=[0.5, 0, 1, 2, 2],
        dones=[False, False, True, False, False],
        env_ids=[0, 1, 0, 0, 1],
        bootstrap=[4, 8],
    )
    adv, ret = _gae(r)
    # gamma = lambda = 0.5, gamma*lambda = 0.25
    # env 0: t2: 3 + .5*4 - 2 = 3            (bootstraps from the in-flight step)
    #        t1: 2 + 0 - 1 = 1                (done: no bootstrap, recursion reset)
    #        t0: 1 + .5*1 - .5 = 1; + .25*1 = 1.25
    # env 1: t1: 1 + .5*8 - 2 = 3
    #        t0: 1 + .5*2 - 0 = 2; + .25*3 = 2.75
    torch.testing.assert_close(adv, torch.tensor([1.25, 2.75, 1.0, 3.0, 3.0]))
    torch.testing.assert_close(ret, torch.tensor([1.75, 2.75, 2.0, 5.0, 5.0]))


def test_gae_last_step_done_ignores_bootstrap():
    r = plain_rollout([1, 2], [0, 0], [False, True], [0, 0], bootstrap=[100.0])
    adv, ret = _gae(r)
    # t1: 2 (done); t0: 1 + .5*0 + .25*2 = 1.5
    torch.testing.assert_close(adv, torch.tensor([1.5, 2.0]))
    torch.testing.assert_close(ret, torch.tensor([1.5, 2.0]))


def _reference_gae(r, gamma, lam):
    adv = torch.zeros(r.num_steps)
    for e in range(r.num_envs):
        idx = [i for i in range(r.num_steps) if int(r.env_ids[i]) == e]
        next_v, next_a = float(r.bootstrap_values[e]), 0.0
        for i in reversed(idx):
            nd = 0.0 if bool(r.dones[i]) else 1.0
            delta = float(r.rewards[i]) + gamma * next_v * nd - float(r.values[i])
            next_a = delta + gamma * lam * nd * next_a
            adv[i] = next_a
            next_v = float(r.values[i])
    return adv


def test_gae_matches_per_env_loop_on_random_rollout():
    g = torch.Generator().manual_seed(3)
    s, n = 200, 7
    env_ids = torch.randint(0, n, (s,), generator=g)
    env_ids[:n] = torch.arange(n)
    r = plain_rollout(
        rewards=torch.randn(s, generator=g).tolist(),
        values=torch.randn(s, generator=g).tolist(),
        dones=(torch.rand(s, generator=g) < 0.1).tolist(),
        env_ids=env_ids.tolist(),
        bootstrap=torch.randn(n, generator=g).tolist(),
    )
    adv, ret = compute_gae(r.rewards, r.values, r.dones, r.env_ids, r.bootstrap_values, 0.99, 0.95)
    expected = _reference_gae(r, 0.99, 0.95)
    torch.testing.assert_close(adv, expected)
    torch.testing.assert_close(ret, expected + r.values)


def test_step_table_keeps_time_order_and_pads():
    table, lengths = per_env_step_table(np.array([1, 0, 1, 1, 0]), 3)
    assert lengths.tolist() == [2, 3, 0]
    assert table.tolist() == [[1, 4, -1], [0, 2, 3], [-1, -1, -1]]


def test_is_weights_for_envs_with_1_2_4_steps():
    env_ids = torch.tensor([2, 0, 2, 1, 2, 1, 2])  # env 0: 1 step, env 1: 2, env 2: 4; S = 7
    # average steps per env S/N = 7/3
    coeffs = per_env_is_coefficients(env_ids, 3)
    torch.testing.assert_close(coeffs, torch.tensor([7 / 3, 7 / 6, 7 / 12]))
    w = compute_is_weights(env_ids, 3)
    torch.testing.assert_close(
        w, torch.tensor([7 / 12, 7 / 3, 7 / 12, 7 / 6, 7 / 12, 7 / 6, 7 / 12])
    )
    truncated = truncate_is_weights(w, 1.0)
    torch.testing.assert_close(truncated, torch.tensor([7 / 12, 1, 7 / 12, 1, 7 / 12, 1, 7 / 12]))


def test_is_weights_uniform_collection_is_one_and_idle_env_counts():
    assert compute_is_weights(torch.tensor([0, 1, 0, 1]), 2).tolist() == [1.0, 1.0, 1.0, 1.0]
    # a 4th env that produced nothing still counts in the uniform share S/N = 7/4
    coeffs = per_env_is_coefficients(torch.tensor([2, 0, 2, 1, 2, 1, 2]), 4)
    torch.testing.assert_close(coeffs[:3], torch.tensor([1.75, 0.875, 0.4375]))
    assert coeffs[3] == float("inf")


def test_rollout_validate_names_bad_field():
    r = plain_rollout([1, 2], [0, 0], [False, False], [0, 0], bootstrap=[0.0])
    r.values = torch.zeros(3)
    with pytest.raises(ValueError, match="values"):
        r.validate()
    r = plain_rollout([1, 2], [0, 0], [False, False], [0, 1], bootstrap=[0.0])
    with pytest.raises(ValueError, match="env_ids"):
        r.validate()
