"""`ModelConfig.squash_mean`: optional tanh on the Gaussian mean.

Off by default so that checkpoints written before the field existed (their stored model
config lacks it) rebuild exactly the network they were trained with.
"""

from __future__ import annotations

import dataclasses

import torch
from models_testlib import action_space, pick_observation_space, random_obs

from rearrange.models import ModelConfig, build_policy
from rearrange.skills.learned import build_policy_from_checkpoint


def _state_policy(**overrides):
    space = pick_observation_space(16)
    return space, build_policy(space, action_space(4), ModelConfig(backbone="none", **overrides))


def _mean(policy, space, batch=5):
    gen = torch.Generator().manual_seed(0)
    obs = random_obs(space, batch, gen)
    hidden = torch.zeros(batch, policy.num_recurrent_layers, policy.hidden_size)
    with torch.no_grad():
        _, mean, _, _ = policy.act(obs, hidden, torch.zeros(batch, 4), torch.ones(batch).bool(),
                                   deterministic=True)  # fmt: skip
    return mean


def test_default_is_an_unsquashed_mean():
    assert ModelConfig().squash_mean is False
    space, policy = _state_policy()
    with torch.no_grad():
        policy.action_head.mean.bias.fill_(3.0)  # far outside the action box
    assert float(_mean(policy, space).min()) > 2.5


def test_squashed_mean_stays_inside_the_action_box():
    space, policy = _state_policy(squash_mean=True)
    with torch.no_grad():
        policy.action_head.mean.bias.fill_(3.0)
    mean = _mean(policy, space)
    assert float(mean.max()) < 1.0
    torch.testing.assert_close(mean, torch.tanh(mean.atanh()))  # it is a tanh output


def test_same_parameters_with_and_without_squash():
    _, plain = _state_policy()
    _, squashed = _state_policy(squash_mean=True)
    assert plain.state_dict().keys() == squashed.state_dict().keys()
    squashed.load_state_dict(plain.state_dict())


def test_old_checkpoint_config_without_the_field_loads_unchanged(tmp_path):
    space, policy = _state_policy()
    stored = dataclasses.asdict(ModelConfig(backbone="none"))
    del stored["squash_mean"]  # written before the field existed
    ckpt = {"config": {"model": stored}, "policy": policy.state_dict(), "learner": {},
            "num_steps": 0, "num_updates": 0, "observation_space": space,
            "action_space": action_space(4)}  # fmt: skip
    torch.save(ckpt, tmp_path / "old.pt")  # the dict layout before SkillCheckpoint
    loaded, _ = build_policy_from_checkpoint(tmp_path / "old.pt", "pick", "cpu")
    assert loaded.config.squash_mean is False
    torch.testing.assert_close(_mean(loaded, space), _mean(policy, space), rtol=0, atol=0)
