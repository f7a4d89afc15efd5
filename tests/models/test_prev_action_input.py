"""`ModelConfig.prev_action_input`: the previous action as an input, or not (zeros embedded).

On by default (the paper's policy). Off, the policy acts the same whatever previous action it
is handed, in acting and in the sequence path DAgger and PPO train through, with the same
parameters, so weights move between the two settings.
"""

from __future__ import annotations

import torch
from models_testlib import action_space, pick_observation_space, random_obs

from rearrange.models import ModelConfig, build_policy

BATCH, ACTIONS = 4, 4


def _policy(**overrides):
    space = pick_observation_space(16)
    torch.manual_seed(0)
    policy = build_policy(space, action_space(ACTIONS), ModelConfig(backbone="none", **overrides))
    with torch.no_grad():  # the default gain 0.01 makes every mean ~0: widen it to see inputs
        policy.action_head.mean.weight.mul_(100.0)
    return space, policy


def _act_mean(policy, space, prev):
    obs = random_obs(space, BATCH, torch.Generator().manual_seed(1))
    hidden = policy.initial_hidden(BATCH)
    with torch.no_grad():
        _, mean, _, _ = policy.act(obs, hidden, prev, torch.ones(BATCH).bool(), deterministic=True)
    return mean


def _sequence_log_probs(policy, space, prev):
    obs = random_obs(space, BATCH, torch.Generator().manual_seed(2))
    actions = torch.zeros(BATCH, ACTIONS)
    with torch.no_grad():
        _, log_probs, _ = policy.evaluate_actions(
            obs, policy.initial_hidden(1), prev, actions, torch.tensor([BATCH])
        )
    return log_probs


def test_default_has_the_input_and_it_changes_the_action():
    assert ModelConfig().prev_action_input is True
    space, policy = _policy()
    zeros, ones = torch.zeros(BATCH, ACTIONS), torch.ones(BATCH, ACTIONS)
    assert not torch.allclose(_act_mean(policy, space, zeros), _act_mean(policy, space, ones))


def test_without_the_input_any_previous_action_acts_as_zeros():
    space, policy = _policy(prev_action_input=False)
    zeros = torch.zeros(BATCH, ACTIONS)
    other = torch.linspace(-1.0, 1.0, BATCH * ACTIONS).reshape(BATCH, ACTIONS)
    torch.testing.assert_close(_act_mean(policy, space, other), _act_mean(policy, space, zeros))
    torch.testing.assert_close(
        _sequence_log_probs(policy, space, other), _sequence_log_probs(policy, space, zeros)
    )


def test_same_parameters_either_way_and_zeros_match_the_default():
    space, with_input = _policy()
    _, without = _policy(prev_action_input=False)
    without.load_state_dict(with_input.state_dict())
    zeros = torch.zeros(BATCH, ACTIONS)
    other = torch.full((BATCH, ACTIONS), 0.5)
    # Without the input, any previous action gives what the default gives for zeros.
    torch.testing.assert_close(
        _act_mean(without, space, other), _act_mean(with_input, space, zeros)
    )
