"""The V- and P-learner's updates on hand-built batches: termination drops the bootstrap,
truncation keeps it, the target policy is the lagged copy, the policy climbs min(Q1, Q2)."""

import numpy as np
import pytest
import torch

from rearrange.pql.config import PQLConfig
from rearrange.pql.networks import ActorSpec, DoubleQCritic, ObsNormalizer, RunningMeanStd
from rearrange.pql.p_learner import PLearner
from rearrange.pql.replay import NStepSample
from rearrange.pql.v_learner import VLearner

D, A, B = 3, 2, 64


def _cfg(**kw) -> PQLConfig:
    base = dict(critic_hidden=[32, 32], gamma=0.5, critic_lr=3e-3, actor_lr=3e-3, tau=1.0)
    return PQLConfig(**{**base, **kw})


def _batch(terminated: bool, truncated: bool, reward: float = 1.0, seed: int = 0):
    rng = np.random.default_rng(seed)
    flags = np.zeros((B, 1), bool)
    return NStepSample(
        obs=rng.standard_normal((B, D)).astype(np.float32),
        actions=rng.uniform(-1, 1, (B, A)).astype(np.float32),
        rewards=np.full((B, 1), reward, np.float32),
        terminated=flags | terminated,
        truncated=flags | truncated,
        available=np.ones((B, 1), bool),
        next_obs=np.zeros((B, 1, D), np.float32),  # one fixed bootstrap state
    )


def _fit(learner: VLearner, batch: NStepSample, steps: int = 300) -> torch.Tensor:
    for _ in range(steps):
        learner.update(batch)
    with torch.no_grad():
        return learner.critic.min_q(torch.as_tensor(batch.obs), torch.as_tensor(batch.actions))


def test_terminal_steps_learn_the_reward_alone():
    torch.manual_seed(0)
    learner = VLearner(_cfg(nstep=1), ActorSpec(D, A, (16,)), "cpu")
    q = _fit(learner, _batch(terminated=True, truncated=False, reward=1.0))
    assert q.mean().item() == pytest.approx(1.0, abs=0.05)


def test_truncated_steps_keep_bootstrapping():
    # r = 1, γ = 0.5, bootstrap at a fixed state: Q* = 1 + 0.5 · Q(s', π(s')) -> 2 for
    # states like s'; the fit on the batch's states tends to the same fixed point.
    torch.manual_seed(0)
    learner = VLearner(_cfg(nstep=1), ActorSpec(D, A, (16,)), "cpu")
    batch = _batch(terminated=False, truncated=True, reward=1.0)
    batch = batch._replace(obs=np.zeros_like(batch.obs))  # s = s': one state
    q = _fit(learner, batch, steps=600)
    assert q.mean().item() == pytest.approx(2.0, abs=0.15)


def test_distributional_critic_learns_the_terminal_reward():
    torch.manual_seed(0)
    cfg = _cfg(nstep=1, distributional=True, v_min=-2.0, v_max=2.0, num_atoms=21)
    learner = VLearner(cfg, ActorSpec(D, A, (16,)), "cpu")
    q = _fit(learner, _batch(terminated=True, truncated=False, reward=1.0))
    assert q.mean().item() == pytest.approx(1.0, abs=0.1)


def test_target_uses_the_lagged_policy_copy():
    torch.manual_seed(0)
    learner = VLearner(_cfg(), ActorSpec(D, A, (16,)), "cpu")
    batch = _batch(terminated=False, truncated=False)
    before = [p.clone() for p in learner.policy.parameters()]
    learner.update(batch)
    assert all(torch.equal(a, b) for a, b in zip(before, learner.policy.parameters()))


def test_soft_update_moves_targets_by_tau():
    torch.manual_seed(0)
    learner = VLearner(_cfg(tau=0.25), ActorSpec(D, A, (16,)), "cpu")
    old_target = [p.clone() for p in learner.target.parameters()]
    learner.update(_batch(terminated=True, truncated=False))
    for old, new, online in zip(
        old_target, learner.target.parameters(), learner.critic.parameters()
    ):
        assert torch.allclose(new, 0.75 * old + 0.25 * online, atol=1e-6)


def test_p_learner_climbs_the_smaller_critic():
    torch.manual_seed(0)
    learner = PLearner(_cfg(), ActorSpec(D, A, (16,)), "cpu")
    obs = np.random.default_rng(0).standard_normal((B, D)).astype(np.float32)
    critic_before = [p.clone() for p in learner.critic.parameters()]
    first = learner.update(obs)["actor_loss"]
    for _ in range(100):
        last = learner.update(obs)["actor_loss"]
    assert last < first  # loss = -min(Q1, Q2)(s, π(s))
    assert all(torch.equal(a, b) for a, b in zip(critic_before, learner.critic.parameters()))


def test_min_q_is_the_smaller_of_the_two_heads():
    torch.manual_seed(0)
    critic = DoubleQCritic(D, A, [8])
    obs, act = torch.randn(5, D), torch.rand(5, A)
    q1, q2 = critic(obs, act)
    assert torch.equal(critic.min_q(obs, act), torch.minimum(q1, q2))


def test_running_stats_match_numpy_and_normalise():
    data = np.random.default_rng(0).normal(3.0, 2.0, (1000, D))
    stats = RunningMeanStd(D)
    for chunk in np.array_split(data, 7):
        stats.update(chunk)
    assert stats.mean == pytest.approx(data.mean(0)) and stats.var == pytest.approx(data.var(0))
    norm = ObsNormalizer(D)
    assert torch.equal(norm(torch.ones(1, D) * 100), torch.ones(1, D) * 100)  # no stats yet
    norm.set_stats(stats.packed())
    out = norm(torch.as_tensor(data, dtype=torch.float32))
    assert out.mean(0).abs().max() < 1e-3 and (out.std(0) - 1).abs().max() < 1e-2


def test_resumed_learners_take_the_new_commands_learning_rates():
    # A run saved at lr 3e-3 and resumed with pql.actor_lr / critic_lr = 1e-4: the moments come
    # back, the rates are the resuming command's (Adam's load_state_dict alone restores 3e-3).
    spec = ActorSpec(D, A, (16,))
    old_v, old_p = VLearner(_cfg(), spec, "cpu"), PLearner(_cfg(), spec, "cpu")
    old_v.update(_batch(False, False))
    old_p.update(_batch(False, False).obs)
    new_cfg = _cfg(critic_lr=1e-4, actor_lr=2e-4)
    new_v, new_p = VLearner(new_cfg, spec, "cpu"), PLearner(new_cfg, spec, "cpu")
    new_v.load_state_dict(old_v.state_dict())
    new_p.load_state_dict(old_p.state_dict())
    assert new_v.optim.param_groups[0]["lr"] == 1e-4
    assert new_p.optim.param_groups[0]["lr"] == 2e-4
    saved = old_p.optim.state_dict()["state"][0]["exp_avg"]
    assert torch.equal(new_p.optim.state_dict()["state"][0]["exp_avg"], saved)
