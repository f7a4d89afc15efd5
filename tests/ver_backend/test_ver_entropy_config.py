"""Learned / fixed entropy coefficient and the config defaults (Table A1)."""

from __future__ import annotations

import math

import pytest
import torch

from rearrange.runtime.run import RunConfig
from rearrange.ver_backend.config import PPOConfig, VERConfig
from rearrange.ver_backend.entropy import EntropyCoefficient


def _train(coef: EntropyCoefficient, entropy: float, steps: int) -> None:
    for _ in range(steps):
        coef.zero_grad()
        coef.coef_loss(torch.tensor(entropy)).backward()
        coef.step()


def test_learned_alpha_starts_at_init_and_moves_against_entropy_excess():
    coef = EntropyCoefficient(PPOConfig(lr=1e-2))
    assert coef.value() == pytest.approx(1e-3)
    _train(coef, entropy=5.0, steps=10)  # H above target 0 => alpha decreases
    assert coef.value() < 1e-3
    low = coef.value()
    _train(coef, entropy=-5.0, steps=20)  # H below target => alpha increases
    assert coef.value() > low


def test_learned_alpha_stays_in_bounds_and_recovers_from_a_bound():
    coef = EntropyCoefficient(PPOConfig(lr=0.5))
    _train(coef, entropy=10.0, steps=200)
    assert coef.value() == pytest.approx(1e-4)
    _train(coef, entropy=-10.0, steps=300)
    assert coef.value() == pytest.approx(1.0)
    _train(coef, entropy=10.0, steps=40)  # the gradient survives at the bound
    assert 1e-4 <= coef.value() < 1.0


def test_policy_term_uses_stopped_alpha():
    coef = EntropyCoefficient(PPOConfig())
    h = torch.tensor(2.0, requires_grad=True)
    coef.policy_loss(h).backward()
    assert h.grad == pytest.approx(-1e-3)
    assert coef.log_alpha.grad is None


def test_fixed_alpha_is_constant():
    coef = EntropyCoefficient(PPOConfig(entropy_mode="fixed", entropy_coef=1e-4))
    coef.step()
    assert coef.optimizer is None and not coef.log_alpha.requires_grad
    assert coef.value() == pytest.approx(1e-4)
    assert float(coef.coef_loss(torch.tensor(3.0))) == 0.0


def test_defaults_follow_table_a1():
    p = PPOConfig()
    assert (p.lr, p.lr_schedule, p.eps, p.ppo_epoch, p.num_mini_batch) == (
        2.5e-4,
        "cosine",
        1e-5,
        3,
        2,
    )
    assert (p.clip_param, p.value_loss_coef, p.gamma, p.gae_lambda) == (0.2, 0.5, 0.99, 0.95)
    assert not p.use_clipped_value_loss and not p.use_normalized_advantage
    assert (p.entropy_mode, p.entropy_coef, p.min_entropy_coef, p.max_entropy_coef) == (
        "learned",
        1e-3,
        1e-4,
        1.0,
    )
    assert (p.target_entropy, p.max_is_weight, p.max_grad_norm) == (0.0, 1.0, 0.2)
    v, run = VERConfig(), RunConfig()
    assert (v.system, run.num_envs, v.rollout_steps, v.steps_per_rollout(run.num_envs)) == (
        "ver",
        16,
        128,
        2048,
    )
    assert v.ddppo_sync_fraction == 0.6
    assert (v.resolved_min_inference_batch(16), v.resolved_max_inference_batch(16)) == (10, 16)
    assert v.total_updates(run) == math.ceil(500_000_000 / 2048)
    assert v.total_updates(RunConfig(total_steps=4096), world_size=2) == 1
    # the paper's intervals, in env steps: a log every 10 and a checkpoint every 100 updates
    assert (run.log_every_steps, run.checkpoint_every_steps) == (10 * 2048, 100 * 2048)


@pytest.mark.parametrize(
    "make, field",
    [
        (lambda: PPOConfig(entropy_mode="adaptive"), "entropy_mode"),
        (lambda: PPOConfig(num_mini_batch=0), "num_mini_batch"),
        (lambda: PPOConfig(entropy_coef=5.0), "entropy_coef"),
        (lambda: VERConfig(system="sync"), "system"),
        (lambda: VERConfig(min_inference_batch=20, max_inference_batch=10), "inference batch"),
        (lambda: VERConfig(min_inference_batch=20).check_run(RunConfig()), "run.num_envs=16"),
        (lambda: RunConfig(checkpoint_every_steps=0), "RunConfig.checkpoint_every_steps"),
        (lambda: RunConfig(device="tpu"), "RunConfig.device"),
        (lambda: VERConfig(num_inference_workers=2), "num_inference_workers"),
    ],
)
def test_bad_config_is_a_one_line_error(make, field):
    with pytest.raises(ValueError, match=field):
        make()
