"""Rollout storage layout: slots, reward write-back, hidden states, in-flight carry, stale fill."""

import numpy as np
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
    slot = int(np.nonzero(s.complete[: s.num_used].numpy())[0][0])
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
