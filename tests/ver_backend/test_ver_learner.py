"""PPO learner on a tiny LSTM policy: exact replay, loss decrease, NaN guard, LR, checkpoints."""

from __future__ import annotations

import copy
import io
import math

import pytest
import torch

from rearrange.ver_backend.config import PPOConfig
from rearrange.ver_backend.learner import Learner, TrainingDivergedError, cosine_lr
from rearrange.ver_backend.minibatch import iter_minibatches
from ver_backend.learner_testlib import TinyPolicy, collect_rollout

# 3 envs, uneven collection (env 0 fastest), episode ends inside the rollout
ENV_ORDER = [0, 1, 0, 2, 0, 0, 1, 0, 2, 0, 0, 1, 0, 2, 0, 0, 1, 0, 0, 2, 0, 1, 0, 0]
DONE_AT = {(0, 4), (1, 2), (2, 1)}


def _setup(seed: int = 0, **cfg):
    torch.manual_seed(seed)
    policy = TinyPolicy()
    rollout = collect_rollout(policy, ENV_ORDER, 3, DONE_AT, seed=seed)
    learner = Learner(
        policy, PPOConfig(**cfg), total_updates=10, generator=torch.Generator().manual_seed(seed)
    )
    return policy, rollout, learner


def _full_batch_loss(learner, rollout):
    adv, ret, w = learner.prepare(rollout)
    mb = next(iter_minibatches(rollout, adv, ret, w, 1, torch.Generator().manual_seed(0)))
    with torch.no_grad():
        return learner.compute_losses(mb)


def test_minibatch_replay_reproduces_collection_log_probs_and_values():
    # Splitting sequences across 3 mini-batches must be exact: before any update, evaluating
    # each mini-batch reproduces the stored log-probs and values (ratio == 1).
    _, rollout, learner = _setup()
    adv, ret, w = learner.prepare(rollout)
    for mb in iter_minibatches(rollout, adv, ret, w, 3, torch.Generator().manual_seed(1)):
        values, log_probs, _ = learner.policy.evaluate_actions(
            mb.obs, mb.hidden, mb.prev_actions, mb.actions, mb.seq_lengths
        )
        torch.testing.assert_close(log_probs, mb.old_log_probs, atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(values, mb.old_values, atol=1e-5, rtol=1e-5)


def test_update_reduces_loss_on_a_fixed_batch():
    _, rollout, learner = _setup(lr=1e-2, lr_schedule="constant", max_grad_norm=1.0)
    before = _full_batch_loss(learner, rollout)
    stats = {}
    for _ in range(5):
        stats = learner.update(rollout)
    after = _full_batch_loss(learner, rollout)
    assert float(after.total) < float(before.total)
    assert float(after.value_loss) < float(before.value_loss)
    expected_keys = {
        "value_loss",
        "action_loss",
        "entropy",
        "entropy_coef",
        "lr",
        "grad_norm",
        "approx_kl",
        "clip_fraction",
        "is_weight_mean",
        "num_skipped",
    }
    assert expected_keys <= set(stats)
    assert all(math.isfinite(v) for v in stats.values())
    assert stats["num_skipped"] == 0.0
    # env 0 gave 15 of 24 steps (weight 8/15), envs 1 and 2 fewer than 8 (weight 1)
    assert stats["is_weight_mean"] == pytest.approx((15 * 8 / 15 + 9) / 24)


def test_learned_alpha_falls_while_entropy_above_target():
    _, rollout, learner = _setup()
    stats = learner.update(rollout)  # Gaussian with std 1 in 2-D: entropy ~2.84 > 0
    assert stats["entropy"] > 0
    assert stats["entropy_coef"] < 1e-3


def test_grad_sync_called_between_backward_and_step():
    _, rollout, learner = _setup(ppo_epoch=2, num_mini_batch=2)
    calls = []

    def sync(params):
        params = list(params)
        assert all(p.grad is not None for p in params)
        calls.append(len(params))

    learner.grad_sync = sync
    learner.update(rollout)
    n_params = len(list(learner.policy.parameters())) + 1  # + log alpha
    assert calls == [n_params] * 4


def test_nan_guard_skips_then_raises_after_three_consecutive():
    policy, rollout, learner = _setup(ppo_epoch=1, num_mini_batch=2)
    before = copy.deepcopy(policy.state_dict())
    bad = copy.copy(rollout)
    bad.rewards = torch.full_like(rollout.rewards, float("nan"))
    stats = learner.update(bad)
    assert stats["num_skipped"] == 2.0
    for key, value in policy.state_dict().items():
        torch.testing.assert_close(value, before[key])  # weights untouched
    with pytest.raises(TrainingDivergedError, match="3 consecutive"):
        learner.update(bad)


def test_a_good_step_resets_the_skip_count():
    _, rollout, learner = _setup(ppo_epoch=1, num_mini_batch=2)
    bad = copy.copy(rollout)
    bad.rewards = torch.full_like(rollout.rewards, float("inf"))
    learner.update(bad)
    assert learner.update(rollout)["num_skipped"] == 0.0
    assert learner.update(bad)["num_skipped"] == 2.0


def test_cosine_lr_at_known_points():
    assert cosine_lr(1.0, 0.0) == pytest.approx(1.0)
    assert cosine_lr(1.0, 0.25) == pytest.approx(0.5 * (1 + math.cos(math.pi / 4)))
    assert cosine_lr(1.0, 0.5) == pytest.approx(0.5)
    assert cosine_lr(1.0, 1.0) == pytest.approx(0.0)
    assert cosine_lr(1.0, 2.25) == pytest.approx(0.0)
    _, rollout, learner = _setup(ppo_epoch=1, num_mini_batch=1)
    learner.total_updates = 4
    lrs = [learner.update(rollout)["lr"] for _ in range(3)]
    assert lrs == pytest.approx([2.5e-4 * cosine_lr(1.0, u / 4) for u in range(3)])
    assert learner.optimizer.param_groups[0]["lr"] == pytest.approx(lrs[-1])
    assert learner.entropy_coef.optimizer.param_groups[0]["lr"] == pytest.approx(lrs[-1])


def test_lr_follows_steps_done_not_update_count():
    # A preempted run: 4 updates planned (total_updates) but each rollout brought only half
    # the steps, so after 4 updates only half the steps are done and the lr is half, not 0.
    _, rollout, learner = _setup(ppo_epoch=1, num_mini_batch=1)
    learner.total_updates = 4
    total = 4 * 128
    for update in range(4):
        learner.set_progress(update * 64, total)
        assert learner.update(rollout)["lr"] == pytest.approx(2.5e-4 * cosine_lr(1.0, update / 8))
    learner.set_progress(4 * 64, total)
    assert learner.current_lr == pytest.approx(2.5e-4 * 0.5)
    with pytest.raises(ValueError, match="total_steps"):
        learner.set_progress(1, 0)


def test_state_dict_round_trip_resumes_identically():
    policy_a, rollout, learner_a = _setup(lr=1e-2)
    learner_a.update(rollout)
    learner_a.update(rollout)
    policy_b = TinyPolicy()
    policy_b.load_state_dict(policy_a.state_dict())
    learner_b = Learner(policy_b, PPOConfig(lr=1e-2), total_updates=10)
    buffer = io.BytesIO()  # through bytes, like a checkpoint file: no tensors shared with A
    torch.save(learner_a.state_dict(), buffer)
    buffer.seek(0)
    learner_b.load_state_dict(torch.load(buffer))
    assert learner_b.num_updates == 2
    assert learner_b.current_lr == pytest.approx(learner_a.current_lr)
    assert learner_b.entropy_coef.value() == pytest.approx(learner_a.entropy_coef.value())
    learner_a.generator = torch.Generator().manual_seed(7)
    learner_b.generator = torch.Generator().manual_seed(7)
    learner_a.update(rollout)
    learner_b.update(rollout)
    for (name, a), b in zip(policy_a.state_dict().items(), policy_b.state_dict().values()):
        torch.testing.assert_close(a, b, msg=name)


def test_bad_learner_input_is_a_clear_error():
    with pytest.raises(ValueError, match="total_updates"):
        Learner(TinyPolicy(), PPOConfig(), total_updates=0)
    _, _, learner = _setup()
    with pytest.raises(ValueError, match="missing"):
        learner.load_state_dict({"optimizer": {}})


def test_stale_steps_train_with_their_stored_log_probs_and_is_off_gives_unit_weights():
    _, rollout, learner = _setup(use_ver_is=False)
    rollout.is_stale[:6] = True  # e.g. preemption fill from the previous rollout
    stats = learner.update(rollout)
    assert stats["fraction_stale"] == pytest.approx(0.25)
    assert stats["is_weight_mean"] == 1.0


def test_rollout_to_and_select_obs():
    _, rollout, _ = _setup()
    moved = rollout.to("cpu")
    assert moved is not rollout and moved.num_steps == 24 and moved.num_envs == 3
    picked = moved.select_obs(torch.tensor([3, 0]))
    torch.testing.assert_close(picked["state"], rollout.obs["state"][[3, 0]])
    assert moved.steps_per_env().tolist() == [15, 5, 4]


def test_bf16_autocast_update_stays_close_to_fp32():
    """ppo.autocast_bf16 runs the forward in bf16 and the loss in fp32: same statistics to
    bf16 precision (~3 significant digits), and the weights move the same way."""
    results, weights = [], []
    for autocast in (False, True):
        torch.manual_seed(0)
        policy = TinyPolicy()
        rollout = collect_rollout(policy, ENV_ORDER, 3, DONE_AT, seed=0)
        cfg = PPOConfig(ppo_epoch=1, num_mini_batch=1, autocast_bf16=autocast)
        results.append(Learner(policy, cfg, 10).update(rollout))
        weights.append(torch.cat([p.detach().flatten() for p in policy.parameters()]))
    fp32, bf16 = results
    for key in ("value_loss", "action_loss", "entropy"):
        assert math.isfinite(bf16[key])
        assert bf16[key] == pytest.approx(fp32[key], rel=2e-2, abs=2e-2)
    assert torch.allclose(weights[0], weights[1], atol=1e-3)
