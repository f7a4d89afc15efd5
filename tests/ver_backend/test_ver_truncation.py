"""Time-limit truncation: a truncated episode bootstraps from V(final observation), by hand.

gymnasium semantics: `terminated` = the MDP reached a terminal state (the return after it is
0); `truncated` = the episode was cut by a time limit, so the return continues with
γ·V(s_final). Both end the episode (the next observation starts a new one), so the GAE
recursion is cut either way; only the one-step bootstrap differs.
"""

from __future__ import annotations

import dataclasses

import torch

from rearrange.ver_backend.config import PPOConfig
from rearrange.ver_backend.gae import compute_gae
from rearrange.ver_backend.learner import Learner
from rearrange.ver_backend.rollout_storage import concat_rollouts, stale_fill
from ver_backend.learner_testlib import plain_rollout


def with_truncation(rollout, truncated, final_values):
    return dataclasses.replace(
        rollout,
        truncated=torch.tensor(truncated),
        final_values=torch.tensor(final_values, dtype=torch.float32),
    )


def _rollout():
    # env 0 (time order): r=[1,2,3], V=[.5,1,2], episode ends at t1, bootstrap 4
    # env 1 (time order): r=[1,1],   V=[0,2],    no episode end,    bootstrap 8
    # flat order: e0 t0, e1 t0, e0 t1, e0 t2, e1 t1
    return plain_rollout(
        rewards=[1, 1, 2, 3, 1],
        values=[0.5, 0, 1, 2, 2],
        dones=[False, False, True, False, False],
        env_ids=[0, 1, 0, 0, 1],
        bootstrap=[4, 8],
    )


def _gae(r):
    return compute_gae(
        r.rewards, r.values, r.dones, r.env_ids, r.bootstrap_values, 0.5, 0.5,
        truncated=r.truncated, final_values=r.final_values,
    )  # fmt: skip


def test_truncated_step_bootstraps_from_the_final_observation():
    # env 0's t1 was cut by the time limit; V(final obs) = 6.
    r = with_truncation(_rollout(), [False, False, True, False, False], [0, 0, 6.0, 0, 0])
    adv, ret = _gae(r)
    # gamma = lambda = 0.5, gamma*lambda = 0.25
    # env 0: t2: 3 + .5*4 - 2 = 3
    #        t1: 2 + .5*6 - 1 = 4             (truncated: V(final obs); recursion still cut)
    #        t0: 1 + .5*1 - .5 = 1; + .25*4 = 2
    # env 1 as without truncation: t1 = 3, t0 = 2.75
    torch.testing.assert_close(adv, torch.tensor([2.0, 2.75, 4.0, 3.0, 3.0]))
    torch.testing.assert_close(ret, torch.tensor([2.5, 2.75, 5.0, 5.0, 5.0]))


def test_terminated_step_ignores_a_final_value():
    # terminated (not truncated): V(final) must not leak in, even if a value is present
    r = with_truncation(_rollout(), [False] * 5, [0, 0, 6.0, 0, 0])
    adv, _ = _gae(r)
    torch.testing.assert_close(adv, torch.tensor([1.25, 2.75, 1.0, 3.0, 3.0]))


def test_default_rollout_has_no_truncation():
    r = _rollout()
    assert r.truncated.dtype == torch.bool and not bool(r.truncated.any())
    assert r.final_values.shape == r.rewards.shape and not bool(r.final_values.any())
    r.validate()


def test_truncated_last_step_ignores_the_rollout_bootstrap():
    r = plain_rollout([1, 2], [0, 0], [False, True], [0, 0], bootstrap=[100.0])
    r = with_truncation(r, [False, True], [0.0, 10.0])
    adv, ret = _gae(r)
    # t1: 2 + .5*10 - 0 = 7 (not the next rollout's 100); t0: 1 + 0 + .25*7 = 2.75
    torch.testing.assert_close(adv, torch.tensor([2.75, 7.0]))


def test_learner_uses_the_truncation_bootstrap():
    r = with_truncation(_rollout(), [False, False, True, False, False], [0, 0, 6.0, 0, 0])
    policy = torch.nn.Linear(1, 1)  # prepare() only needs parameters
    learner = Learner(policy, PPOConfig(gamma=0.5, gae_lambda=0.5), total_updates=1)
    adv, ret, _ = learner.prepare(r)
    torch.testing.assert_close(adv, torch.tensor([2.0, 2.75, 4.0, 3.0, 3.0]))


def test_truncation_fields_survive_select_concat_and_stale_fill():
    r = with_truncation(_rollout(), [False, False, True, False, False], [0, 0, 6.0, 0, 0])
    picked = r.select_steps(torch.tensor([2, 3]))
    assert picked.truncated.tolist() == [True, False]
    assert picked.final_values.tolist() == [6.0, 0.0]
    both = concat_rollouts(picked, r)
    assert both.truncated.tolist() == [True, False, False, False, True, False, False]
    fill = stale_fill(r, 3)
    assert fill.truncated.tolist() == [True, False, False]
    assert fill.final_values.tolist() == [6.0, 0.0, 0.0]
    both.validate()
