"""Sampled actions (`eval_skill --stochastic`, `eval --stochastic`): the draws come from a
generator seeded per episode and skill, so a stochastic evaluation repeats from its seed."""

import numpy as np
import pytest
import torch
from skills_testlib import train_ckpt

from rearrange.skills import SkillError, SkillTarget
from rearrange.skills.learned import LearnedSkill, sampling_seed
from rearrange.skills.pretrained import pretrained_path


def _obs(skill):
    return {
        k: np.full(s.shape, 0.3, dtype=np.float32)
        for k, s in skill.observation_space.spaces.items()
    }


def _actions(skill, seed, steps=3):
    skill.reset(SkillTarget(obj_index=0))
    if seed is not None:
        skill.seed_sampling(seed)
    return np.stack([skill.act(_obs(skill), None) for _ in range(steps)])


def test_a_seeded_sample_is_the_mean_plus_std_times_the_seeded_normal(tmp_path):
    train_ckpt(tmp_path / "pick.pt")
    skill = LearnedSkill(tmp_path / "pick.pt", deterministic=False)
    skill.reset(SkillTarget(obj_index=0))
    skill.seed_sampling(7)
    got = skill.act(_obs(skill), None)
    # by hand: the first step's Gaussian from a zero state, noise from a generator seeded 7
    policy = skill.policy
    obs = {k: torch.as_tensor(v)[None] for k, v in _obs(skill).items()}
    hidden = torch.zeros(1, policy.num_recurrent_layers, policy.hidden_size)
    with torch.no_grad():
        out, _ = policy._single_step(
            obs, hidden, torch.zeros(1, 8), torch.zeros(1, dtype=torch.bool)
        )
        dist = policy.distribution(out)
    noise = torch.randn((1, 8), generator=torch.Generator().manual_seed(7))
    want = np.clip((dist.mean + dist.log_std.exp() * noise)[0].numpy(), -1.0, 1.0)
    np.testing.assert_allclose(got, want, atol=1e-6)
    assert not np.allclose(got, np.clip(dist.mean[0].numpy(), -1, 1), atol=1e-3)


def test_sampled_actions_repeat_from_their_seed_and_the_mean_ignores_it(tmp_path):
    train_ckpt(tmp_path / "pick.pt")
    sampled = LearnedSkill(tmp_path / "pick.pt", deterministic=False)
    a, b, c = _actions(sampled, 3), _actions(sampled, 3), _actions(sampled, 4)
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)
    mean = LearnedSkill(tmp_path / "pick.pt")  # deterministic: the seed changes nothing
    np.testing.assert_array_equal(_actions(mean, 3), _actions(mean, 4))


def test_the_seed_of_an_episode_depends_on_the_seed_the_episode_and_the_skill():
    seeds = {sampling_seed(s, e, n) for s in (0, 1) for e in (0, 1, 2) for n in ("nav", "pick")}
    assert len(seeds) == 12
    assert sampling_seed(0, 5, "nav") == sampling_seed(0, 5, "nav")
    assert all(0 <= s < 2**32 for s in seeds)


def test_a_pql_actor_cannot_sample_and_says_so_in_one_line():
    path = pretrained_path("pick")  # the shipped state pick: a PQL actor
    assert LearnedSkill(path).deterministic
    with pytest.raises(SkillError) as err:
        LearnedSkill(path, deterministic=False)
    msg = str(err.value)
    assert "\n" not in msg and "PQL actor" in msg and str(path) in msg
