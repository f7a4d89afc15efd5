"""The shared replay ring: rows in time order per env, wrap-around, n-step look-ahead,
the guard before the write head, and a second mapping of the same memory."""

import numpy as np
import pytest

from rearrange.pql.replay import GUARD_ROWS, ReplayBuffer, TransitionRows

ROWS, ENVS, OBS, ACT = 8, 3, 2, 1


def _row(t: int, done_env: int | None = None) -> TransitionRows:
    """Step t: obs = (t, env), reward = 100·t + env; env `done_env` terminates."""
    env = np.arange(ENVS)
    obs = np.stack([np.full(ENVS, t), env], axis=1).astype(np.float32)
    terminated = env == done_env
    return TransitionRows(
        obs=obs,
        actions=np.full((ENVS, ACT), t / 100, np.float32),
        rewards=(100 * t + env).astype(np.float32),
        terminated=terminated,
        truncated=np.zeros(ENVS, bool),
        next_obs=obs + np.array([1.0, 0.0], np.float32),
    )


def _filled(steps: int, shared: bool = False) -> ReplayBuffer:
    buf = ReplayBuffer.create(ROWS, ENVS, OBS, ACT, shared=shared)
    for t in range(steps):
        buf.add(_row(t, done_env=1 if t == 5 else None))
    return buf


def test_rows_wrap_around_and_overwrite_the_oldest():
    buf = _filled(11)
    assert buf.head == 11 and len(buf) == ROWS * ENVS
    # step 10 lives in row 10 % 8 = 2 (it overwrote step 2); step 7 is still in row 7
    assert buf.obs[2, :, 0].tolist() == [10, 10, 10]
    assert buf.obs[7, :, 0].tolist() == [7, 7, 7]
    assert buf.rewards[2].tolist() == [1000, 1001, 1002]


def test_samples_skip_the_rows_about_to_be_overwritten():
    buf = _filled(11)
    obs = buf.sample_obs(4000, np.random.default_rng(0))
    steps = set(obs[:, 0].astype(int).tolist())
    # readable: steps 3..10; the oldest GUARD_ROWS of them (3..6) are next to be overwritten
    assert steps == set(range(11 - ROWS + GUARD_ROWS, 11))
    assert set(obs[:, 1].astype(int).tolist()) == {0, 1, 2}


def test_nstep_sample_follows_each_env_in_time_across_the_wrap():
    buf = _filled(11)
    s = buf.sample_nstep(2000, 3, np.random.default_rng(1))
    t, env = s.obs[:, 0].astype(int), s.obs[:, 1].astype(int)
    for k in range(3):
        future = t + k
        assert np.array_equal(s.available[:, k], future < 11)
        ok = s.available[:, k]
        assert np.array_equal(s.rewards[ok, k], 100 * future[ok] + env[ok])
        assert np.array_equal(s.next_obs[ok, k, 0], future[ok] + 1)
    assert np.array_equal(s.actions[:, 0], (t / 100).astype(np.float32))


def test_flags_are_per_env():
    buf = _filled(7)
    assert buf.terminated[5].tolist() == [False, True, False]
    s = buf.sample_nstep(3000, 2, np.random.default_rng(2))
    t, env = s.obs[:, 0].astype(int), s.obs[:, 1].astype(int)
    assert np.array_equal(s.terminated[:, 0], (t == 5) & (env == 1))
    assert np.array_equal(s.terminated[:, 1], (t == 4) & (env == 1))


def test_empty_buffer_refuses_to_sample():
    buf = ReplayBuffer.create(ROWS, ENVS, OBS, ACT, shared=False)
    with pytest.raises(RuntimeError, match="after the warm-up"):
        buf.sample_obs(1, np.random.default_rng(0))


def test_a_second_mapping_sees_the_writes():
    buf = _filled(3, shared=True)
    other = ReplayBuffer.attach(buf.spec)
    try:
        assert other.head == 3 and other.rewards[2].tolist() == [200, 201, 202]
        buf.add(_row(3))
        assert other.head == 4 and other.obs[3, 0, 0] == 3
    finally:
        other.close()
        buf.close()
