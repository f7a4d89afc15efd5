"""Rollout storage layout: slots, reward write-back, hidden states, in-flight carry, stale fill."""

import numpy as np
import pytest
import torch
from gymnasium import spaces

from rearrange.ver_backend.rollout_storage import RolloutStorage, stale_fill

OBS = spaces.Dict({"x": spaces.Box(-10, 10, (1,), np.float32)})
ACT = spaces.Box(-1, 1, (1,), np.float32)


def make_storage(n=2, t=2):
    return RolloutStorage(n, t, OBS, ACT, num_recurrent_layers=1, hidden_size=1)


def act(storage, env_ids, obs_value, version=0):
    b = len(env_ids)
    hidden, _, not_done = storage.policy_inputs(env_ids)
    storage.insert(
        env_ids,
        {"x": torch.full((b, 1), float(obs_value))},
        values=torch.full((b,), float(obs_value) * 10),
        actions=torch.full((b, 1), float(obs_value)),
        log_probs=torch.zeros(b),
        hidden_out=hidden * not_done.float().view(-1, 1, 1) + 1,
        policy_version=version,
    )


def test_reward_written_back_into_previous_slot():
    s = make_storage()
    act(s, [0, 1], 1)  # slots 0 (env 0), 1 (env 1)
    s.complete_step(1, reward=5.0, done=False)  # env 1 finishes first
    act(s, [1], 2)  # slot 2
    s.complete_step(0, reward=7.0, done=True)
    assert s.rewards[:3].tolist() == [7.0, 5.0, 0.0]
    assert s.dones[:3].tolist() == [True, False, False]
    assert s.complete[:3].tolist() == [True, True, False]
    assert s.env_ids[:3].tolist() == [0, 1, 1]
    assert s.step_ids[:3].tolist() == [0, 0, 1]
    assert s.num_complete == 2


def test_hidden_and_prev_action_reset_at_episode_start():
    s = make_storage(n=1, t=4)
    act(s, [0], 1)
    s.complete_step(0, 0.0, done=False)
    act(s, [0], 2)
    s.complete_step(0, 0.0, done=True)
    act(s, [0], 3)
    # hidden_in counts steps since the episode start; prev action zeroed at the start.
    assert s.hidden_in[:3, 0, 0].tolist() == [0.0, 1.0, 0.0]
    assert s.prev_actions[:3, 0].tolist() == [0.0, 1.0, 0.0]
    assert s.episode_starts[:3].tolist() == [True, False, True]
    assert s.episode_ids[:3].tolist() == [0, 0, 1]


def test_pending_step_carried_to_next_rollout():
    s = make_storage(n=2, t=1)
    act(s, [0, 1], 1)
    s.complete_step(0, 1.0, False)
    act(s, [0], 2)  # env 0 pending in slot 2, env 1 pending in slot 1
    s.complete_step(0, 2.0, False)  # 2 completions = T·N
    act(s, [0], 3)  # slot 3
    rollout = s.build_rollout(s.bootstrap_values())
    assert rollout.env_ids.tolist() == [0, 0]
    assert rollout.rewards.tolist() == [1.0, 2.0]
    # env 0: value of its pending step; env 1's pending step starts an episode -> 0
    assert rollout.bootstrap_values.tolist() == [30.0, 0.0]
    s.start_next_rollout()
    assert s.num_used == 2 and s.num_complete == 0
    assert sorted(s.pending.tolist()) == [0, 1]
    s.complete_step(1, 4.0, False)  # env 1's in-flight step from the last rollout
    slot = int(np.nonzero(s.complete[: s.num_used])[0][0])
    assert s.env_ids[slot] == 1 and s.step_ids[slot] == 0 and s.rewards[slot] == 4.0


def test_bootstrap_zero_after_done_and_given_value_for_idle_envs():
    s = make_storage(n=2, t=1)
    act(s, [0, 1], 1)
    s.complete_step(0, 0.0, done=True)
    s.complete_step(1, 0.0, done=False)
    boot = s.bootstrap_values({0: 99.0, 1: 3.0})
    assert boot.tolist() == [0.0, 3.0]


def test_stale_fill_takes_per_env_suffixes():
    s = make_storage(n=2, t=2)
    act(s, [0, 1], 1)
    s.complete_step(0, 1.0, False)
    act(s, [0], 2)
    s.complete_step(1, 2.0, False)
    act(s, [1], 3)
    s.complete_step(0, 3.0, False)
    s.complete_step(1, 4.0, False)
    prev = s.build_rollout(s.bootstrap_values({0: 0.0, 1: 0.0}))
    fill = stale_fill(prev, 3)
    assert fill.rewards.tolist() == [2.0, 3.0, 4.0]
    assert fill.env_ids.tolist() == [1, 0, 1]
    assert bool(fill.is_stale.all())


def test_staged_path_matches_direct_path():
    """The CUDA staging path (obs rows + env id + not_done trailer in one block), run on CPU."""
    direct, staged = make_storage(n=3, t=2), RolloutStorage(3, 2, OBS, ACT, 1, 1, staged=True)
    rows = direct.layout.pack({"x": np.array([[1.0], [2.0], [3.0]], np.float32)})
    for s in (direct, staged):
        b = s.stage([2, 0], rows)
        assert b.obs["x"][:, 0].tolist() == [3.0, 1.0]  # env 2 then env 0
        assert b.env_index.tolist() == [2, 0] and b.not_done.tolist() == [False, False]
        s.commit(b, torch.zeros(2), torch.ones(2, 1), torch.zeros(2), torch.ones(2, 1, 1), 4)
        s.complete_steps(np.array([0]), np.array([1.5]), np.array([False]), np.array([False]),
                         np.zeros(1))  # fmt: skip
        b = s.stage([0], rows)
        assert b.not_done.tolist() == [True] and b.hidden[0, 0, 0] == 1.0
    assert direct.env_ids[:2].tolist() == staged.env_ids[:2].tolist() == [2, 0]
    assert direct.rewards[:2].tolist() == staged.rewards[:2].tolist() == [0.0, 1.5]
    assert direct.policy_versions[:2].tolist() == [4, 4]


def test_vectorised_completion_and_its_errors():
    s = make_storage(n=3, t=2)
    act(s, [0, 1, 2], 1)
    s.complete_steps(
        np.array([2, 0]), np.array([2.0, 0.5]), np.array([True, False]),
        np.array([True, False]), np.array([9.0, 7.0]),
    )  # fmt: skip
    assert s.rewards[:3].tolist() == [0.5, 0.0, 2.0]
    assert s.truncated[:3].tolist() == [False, False, True]
    assert s.final_values[:3].tolist() == [0.0, 0.0, 9.0]  # only where truncated
    assert s.not_done.tolist() == [True, True, False] and s.episode_id.tolist() == [0, 0, 1]
    with pytest.raises(RuntimeError, match=r"envs \[0\] have no in-flight step"):
        s.complete_steps(np.array([0]), np.zeros(1), np.zeros(1, bool), np.zeros(1, bool),
                         np.zeros(1))  # fmt: skip
    with pytest.raises(ValueError, match="a truncated step ends its episode"):
        s.complete_step(1, 0.0, done=False, truncated=True)
    with pytest.raises(RuntimeError, match=r"envs \[1\] already have an in-flight step"):
        act(s, [1], 2)
