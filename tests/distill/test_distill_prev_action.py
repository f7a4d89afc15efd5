"""The student's previous-action input during DAgger collection is its own previous output
(what it is fed when deployed), not the teacher's executed action, unless asked: a teacher's
smooth actions fed back as input teach the student to copy them (distill/collect.py)."""

import numpy as np
import pytest
import torch

from rearrange.distill.buffer import RoundStorage
from rearrange.distill.collect import LockstepCollector
from rearrange.distill.config import DistillConfig
from rearrange.distill.teacher_labels import TeacherLabelFactory, TeacherSpec
from rearrange.distill.trainer import student_space
from rearrange.models import ModelConfig, build_policy
from rearrange.runtime.env_worker import make_env_pool
from rearrange.runtime.synthetic_env import SyntheticEnvConfig, SyntheticEnvFactory


def _round(prev_action: str):
    """One round with β = 1 (the teacher executes every step): (stored previous-action inputs,
    the student's means, the teacher's labels, episode starts), each [steps, envs, ...]."""
    factory = TeacherLabelFactory(
        SyntheticEnvFactory(SyntheticEnvConfig(max_episode_steps=5, success_radius=0.0), 2),
        TeacherSpec("synthetic", None),
    )
    pool = make_env_pool(factory, 2, [0, 1], serial=True)
    try:
        torch.manual_seed(0)
        model = ModelConfig(backbone="none", rnn_hidden_size=8, state_mlp_hidden=[8],
                            action_mean_init_gain=1.0)  # fmt: skip
        policy = build_policy(student_space(pool.observation_space), pool.action_space, model)
        collector = LockstepCollector(pool, policy, torch.device("cpu"), 10.0, prev_action)
        collector.start()
        hidden = (policy.num_recurrent_layers, policy.hidden_size)
        storage = RoundStorage(collector.obs_dtypes(), 2, 8, 4, 1, hidden)
        means = []
        act = policy.act

        def spy(*args, **kwargs):
            out = act(*args, **kwargs)
            means.append(out[1].detach().numpy().copy())
            return out

        policy.act = spy
        stats = collector.collect(storage, lambda step: 1.0, 0)
        assert stats.teacher_share == 1.0
        return storage.prev_actions, np.stack(means), storage.targets, storage.starts
    finally:
        pool.close()


def _inside_episodes(starts):
    """(step, env) pairs that continue an episode (their previous step is in the round)."""
    steps, envs = np.nonzero(~starts[1:])
    return steps + 1, envs


def test_the_student_is_fed_its_own_previous_output_while_the_teacher_acts():
    prev, means, labels, starts = _round("student")
    t, e = _inside_episodes(starts)
    assert len(t) > 6
    np.testing.assert_allclose(prev[t, e], means[t - 1, e], atol=1e-6)
    # ...which is not the executed (teacher's) action: the student is untrained
    assert np.abs(prev[t, e] - labels[t - 1, e]).max() > 0.1
    assert not prev[starts].any()  # an episode starts from a zero previous action


def test_executed_feeds_back_the_teachers_action():
    prev, _, labels, starts = _round("executed")
    t, e = _inside_episodes(starts)
    # the synthetic teacher's actions lie in [-1, 1]: the label is the executed action
    np.testing.assert_allclose(prev[t, e], labels[t - 1, e], atol=1e-6)


def test_an_unknown_prev_action_is_refused_in_one_line():
    with pytest.raises(ValueError, match="prev_action='teacher'"):
        DistillConfig(prev_action="teacher")
