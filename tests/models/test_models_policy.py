"""The recurrent Gaussian policy against docs/CONTRACTS.md §5."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from gymnasium import spaces
from models_testlib import action_space, pick_observation_space, random_obs

from rearrange.models import ModelConfig, build_policy, count_parameters, parameter_breakdown

GEN_SEED = 1234


def _depth_policy(image: int = 32, action_dim: int = 8, **overrides):
    space = pick_observation_space(image)
    return space, build_policy(space, action_space(action_dim), ModelConfig(**overrides))


def _state_policy(action_dim: int = 10):
    space = pick_observation_space(32)
    return space, build_policy(space, action_space(action_dim), ModelConfig(backbone="none"))


def _rand_hidden(policy, batch: int, gen: torch.Generator) -> torch.Tensor:
    shape = (batch, policy.num_recurrent_layers, policy.hidden_size)
    return torch.randn(shape, generator=gen) * 0.5


@pytest.mark.parametrize(
    ("make", "action_dim"),
    [(lambda: _depth_policy(128, 8), 8), (lambda: _state_policy(10), 10)],
    ids=["depth128", "state"],
)
def test_act_shapes_and_dtypes(make, action_dim: int) -> None:
    space, policy = make()
    gen = torch.Generator().manual_seed(GEN_SEED)
    batch = 3
    assert policy.num_recurrent_layers == 4 and policy.hidden_size == 512
    with torch.no_grad():
        value, action, log_prob, hidden = policy.act(
            random_obs(space, batch, gen),
            policy.initial_hidden(batch),
            torch.zeros(batch, action_dim),
            torch.ones(batch, dtype=torch.bool),
        )
    assert value.shape == (batch,) and log_prob.shape == (batch,)
    assert action.shape == (batch, action_dim)
    assert hidden.shape == (batch, 4, 512)
    for t in (value, action, log_prob, hidden):
        assert t.dtype == torch.float32 and bool(torch.isfinite(t).all())


def test_not_done_false_equals_zero_hidden_and_prev_action() -> None:
    space, policy = _depth_policy()
    gen = torch.Generator().manual_seed(GEN_SEED)
    obs = random_obs(space, 4, gen)
    hidden = _rand_hidden(policy, 4, gen)
    prev = torch.randn(4, 8, generator=gen)
    not_done = torch.tensor([True, False, True, False])
    with torch.no_grad():
        v1, a1, lp1, h1 = policy.act(obs, hidden, prev, not_done, deterministic=True)
        keep = not_done.float()
        v2, a2, lp2, h2 = policy.act(
            obs, hidden * keep.view(-1, 1, 1), prev * keep.view(-1, 1), torch.ones(4).bool(), True
        )
        v3, _, _, _ = policy.act(obs, hidden, prev, torch.ones(4).bool(), True)
    for x, y in ((v1, v2), (a1, a2), (lp1, lp2), (h1, h2)):
        torch.testing.assert_close(x, y, rtol=0, atol=1e-6)
    # sanity: the reset actually changed the reset rows only
    assert not torch.allclose(v1[1::2], v3[1::2]) and torch.allclose(v1[::2], v3[::2])


def _rollout_step_by_step(policy, obs, hiddens, prev_actions, lengths):
    """act() along each sequence from its given hidden state; the actions it samples."""
    values, actions, log_probs = [], [], []
    start = 0
    for k, n in enumerate(lengths):
        h = hiddens[k : k + 1]
        for t in range(start, start + n):
            step_obs = {key: val[t : t + 1] for key, val in obs.items()}
            v, a, lp, h = policy.act(step_obs, h, prev_actions[t : t + 1], torch.ones(1).bool())
            values.append(v)
            actions.append(a)
            log_probs.append(lp)
        start += n
    return torch.cat(values), torch.cat(actions), torch.cat(log_probs)


@pytest.mark.parametrize("variant", ["depth", "state"])
def test_evaluate_actions_matches_step_by_step_act(variant: str) -> None:
    space, policy = _depth_policy(64, 8) if variant == "depth" else _state_policy(8)
    gen = torch.Generator().manual_seed(GEN_SEED)
    lengths = [5, 2, 7]
    steps = sum(lengths)
    obs = random_obs(space, steps, gen)
    hiddens = _rand_hidden(policy, len(lengths), gen)
    prev_actions = torch.randn(steps, 8, generator=gen)
    with torch.no_grad():
        values, actions, log_probs = _rollout_step_by_step(
            policy, obs, hiddens, prev_actions, lengths
        )
        ev_values, ev_log_probs, entropy = policy.evaluate_actions(
            obs, hiddens, prev_actions, actions, torch.tensor(lengths)
        )
    torch.testing.assert_close(ev_values, values, rtol=0, atol=1e-5)
    torch.testing.assert_close(ev_log_probs, log_probs, rtol=0, atol=1e-5)
    assert entropy.shape == (steps,)
    # the packed path must also be reachable through forward (what DDP wraps)
    with torch.no_grad():
        fw_values, _, _ = policy(obs, hiddens, prev_actions, actions, torch.tensor(lengths))
    torch.testing.assert_close(fw_values, values, rtol=0, atol=1e-5)


def test_entropy_is_the_analytic_gaussian_entropy() -> None:
    space, policy = _state_policy(4)
    gen = torch.Generator().manual_seed(GEN_SEED)
    obs = random_obs(space, 3, gen)
    hidden = policy.initial_hidden(3)
    acts = torch.zeros(3, 4)
    with torch.no_grad():
        policy.action_head.log_std.copy_(torch.tensor([0.0, -1.0, 0.5, 10.0]))
        _, _, entropy = policy.evaluate_actions(obs, hidden, acts, acts, torch.tensor([1, 1, 1]))
    # per dim 0.5 * ln(2 pi e) + log_std; 10.0 is clamped to log_std_max = 2.0
    expected = 4 * 0.5 * math.log(2 * math.pi * math.e) + (0.0 - 1.0 + 0.5 + 2.0)
    assert expected == pytest.approx(7.175754, abs=1e-6)
    torch.testing.assert_close(entropy, torch.full((3,), expected), rtol=0, atol=1e-5)


def test_deterministic_act_returns_the_mean() -> None:
    space, policy = _depth_policy()
    gen = torch.Generator().manual_seed(GEN_SEED)
    obs = random_obs(space, 2, gen)
    hidden, prev, nd = _rand_hidden(policy, 2, gen), torch.zeros(2, 8), torch.ones(2).bool()
    with torch.no_grad():
        _, a1, lp1, _ = policy.act(obs, hidden, prev, nd, deterministic=True)
        _, a2, _, _ = policy.act(obs, hidden, prev, nd, deterministic=True)
        _, sampled, _, _ = policy.act(obs, hidden, prev, nd, deterministic=False)
    torch.testing.assert_close(a1, a2, rtol=0, atol=0)
    assert not torch.allclose(a1, sampled)
    # log-density at the mean is the Gaussian's peak: -sum(log_std) - A/2 ln(2 pi), log_std = 0
    torch.testing.assert_close(lp1, torch.full((2,), -4 * math.log(2 * math.pi)))
    # the small-gain mean layer starts near zero (habitat: orthogonal gain 0.01)
    assert float(a1.abs().max()) < 0.2


def test_gradient_flows_to_visual_encoder_and_heads() -> None:
    space, policy = _depth_policy(64, 8)
    gen = torch.Generator().manual_seed(GEN_SEED)
    obs = random_obs(space, 5, gen)
    acts = torch.randn(5, 8, generator=gen)
    values, log_probs, entropy = policy.evaluate_actions(
        obs, policy.initial_hidden(2), acts, acts, torch.tensor([3, 2])
    )
    (values.sum() - log_probs.sum() - entropy.sum()).backward()
    visual = policy.encoder.visual
    for param in (
        visual.backbone.stem[0].weight,
        visual.fc[1].weight,
        policy.rnn.weight_ih_l0,
        policy.action_head.log_std,
        policy.prev_action_embedding.weight,
    ):
        assert param.grad is not None and float(param.grad.abs().sum()) > 0
    gammas = [p for n, p in visual.named_parameters() if n.endswith("gamma")]
    assert gammas and all(float(g.grad.abs().sum()) > 0 for g in gammas)


def test_vector_keys_are_concatenated_in_sorted_order() -> None:
    space, policy = _state_policy(8)
    assert policy.layout.vector_keys == (
        "is_holding",
        "joint",
        "obj_start_sensor",
        "relative_resting_position",
    )
    assert policy.layout.vector_size == 14 and policy.layout.visual_keys == ()
    gen = torch.Generator().manual_seed(GEN_SEED)
    obs = random_obs(space, 2, gen)
    reordered = dict(reversed(list(obs.items())))
    args = (policy.initial_hidden(2), torch.zeros(2, 8), torch.ones(2).bool(), True)
    with torch.no_grad():
        torch.testing.assert_close(policy.act(obs, *args)[0], policy.act(reordered, *args)[0])


def test_depth_is_scaled_by_max_depth() -> None:
    _, policy = _depth_policy(32, 8, depth_max=5.0)
    assert policy.layout.visual_keys == ("depth",) and policy.layout.image_scales == (5.0,)


def test_parameter_count_of_the_depth_pick_policy() -> None:
    counts = {}
    for dim in (8, 10):
        _, policy = _depth_policy(128, dim)
        counts[dim] = count_parameters(policy)
        print(f"depth policy (128x128 depth, pick sensors, {dim} actions): {counts[dim]:,} params")
        print("  breakdown:", parameter_breakdown(policy))
    assert counts[8] > 0
    # two more action dims: 2 x (32 embedding + 512 mean weights + 1 bias + 1 log-std + ...)
    assert counts[10] - counts[8] == 2 * (32 + 512 + 1 + 1)


def test_works_with_uint8_rgb_and_bool_observations() -> None:
    space = spaces.Dict(
        {
            "rgb": spaces.Box(0, 255, (64, 64, 3), np.uint8),
            "is_holding": spaces.MultiBinary(1),
        }
    )
    policy = build_policy(space, action_space(2), ModelConfig())
    assert policy.layout.image_scales == (255.0,)
    obs = {
        "rgb": torch.randint(0, 256, (2, 64, 64, 3), dtype=torch.uint8),
        "is_holding": torch.tensor([[True], [False]]),
    }
    with torch.no_grad():
        value, *_ = policy.act(obs, policy.initial_hidden(2), torch.zeros(2, 2), torch.ones(2))
    assert bool(torch.isfinite(value).all())
