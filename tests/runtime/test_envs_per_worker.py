"""Several envs per worker process (`run.envs_per_worker`): the same env trajectories, results
and errors as one env per process, with one message per worker per batch."""

import multiprocessing
import os
import select
import threading

import numpy as np
import pytest
import torch
from ver_backend.helpers import FailingEnvFactory, build_collector
from ver_backend.test_collection import collect_rollouts, drain

from rearrange.runtime.env_worker import (
    EnvWorkerError,
    ProcessEnvPool,
    frame,
    make_env_pool,
    read_frame,
)
from rearrange.runtime.run import RunConfig
from rearrange.runtime.synthetic_env import SyntheticEnvConfig, SyntheticEnvFactory

CFG = SyntheticEnvConfig(max_episode_steps=3)


def _trajectories(num_envs: int, serial: bool, envs_per_worker: int, steps: int):
    """Each env's observations and finished episodes under the same fixed actions."""
    factory = SyntheticEnvFactory(CFG, num_envs)
    pool = make_env_pool(factory, num_envs, [10 + i for i in range(num_envs)], serial,
                         envs_per_worker=envs_per_worker)  # fmt: skip
    obs = {e: [] for e in range(num_envs)}
    episodes = {e: [] for e in range(num_envs)}
    try:
        ready = {r.env_id for r in pool.poll(30.0, num_envs)}
        while len(ready) < num_envs:
            ready |= {r.env_id for r in pool.poll(30.0, num_envs)}
        for t in range(steps):
            for e in range(num_envs):
                pool.buffers.actions[e] = 0.3 * np.sin(t + e)
            pool.step(range(num_envs))
            got = []
            while len(got) < num_envs:
                got += pool.poll(30.0, num_envs)
            assert sorted(r.env_id for r in got) == list(range(num_envs))
            for r in got:
                obs[r.env_id].append(pool.buffers.obs["delta"][r.env_id].copy())
                if r.episode is not None:
                    episodes[r.env_id].append(r.episode["length"])
        simulated = pool.buffers.scalars["steps_simulated"].copy()
    finally:
        pool.close()
    return obs, episodes, simulated


def test_grouped_workers_step_each_env_as_a_process_per_env_does():
    # 5 envs in workers of 2: [0, 1], [2, 3], [4] (the last worker hosts one env)
    serial = _trajectories(5, True, 1, 7)
    grouped = _trajectories(5, False, 2, 7)
    for e in range(5):
        np.testing.assert_array_equal(np.stack(grouped[0][e]), np.stack(serial[0][e]))
        # the same episodes (3 steps at most, or fewer on reaching the goal) for this env
        assert grouped[1][e] == serial[1][e]
        assert len(serial[1][e]) >= 2 and all(1 <= n <= 3 for n in serial[1][e])
    assert grouped[2].tolist() == [7] * 5


def test_a_poll_hands_out_at_most_limit_and_keeps_the_rest_for_the_next():
    factory = SyntheticEnvFactory(CFG, 4)
    pool = make_env_pool(factory, 4, [0, 1, 2, 3], False, envs_per_worker=4)
    try:
        first = pool.poll(30.0, 4)  # the one worker answers for its 4 resets at once
        assert sorted(r.env_id for r in first) == [0, 1, 2, 3]
        pool.step([3, 1, 2])
        priority = {3: 0, 1: 2, 2: 1}.get  # take env 3, then env 2
        got = []
        while len(got) < 2:
            got += pool.poll(30.0, 2 - len(got), priority)
        assert [r.env_id for r in got] == [3, 2]
        # env 1's result was read with the others: the next poll returns it without waiting
        assert [r.env_id for r in pool.poll(0.0, 4)] == [1]
        assert pool.poll(0.0, 4) == []
    finally:
        pool.close()


def test_one_message_per_worker_per_batch():
    """step() writes one Connection-framed STEP message per worker to its pipe."""
    pool = ProcessEnvPool.__new__(ProcessEnvPool)  # only step()'s grouping, no processes
    pipes = [os.pipe() for _ in range(3)]
    try:
        pool.num_envs, pool.envs_per_worker = 8, 3
        pool._fds = [w for _, w in pipes]
        pool.step([7, 0, 4, 2, 3])

        def pending(r):
            return bool(select.select([r], [], [], 0)[0])

        sent = {}
        for w, (r, _) in enumerate(pipes):
            while pending(r):
                sent.setdefault(w, []).append(read_frame(r))
        assert sent == {0: [b"S\x00\x02"], 1: [b"S\x01\x00"], 2: [b"S\x01"]}
        for bad in ([1, 1], [8], [-1]):  # a repeat, past the last env, negative
            with pytest.raises(ValueError, match=r"env ids must be distinct and in \[0, 8\)"):
                pool.step(bad)
        assert not any(pending(r) for r, _ in pipes)  # nothing reached a worker
    finally:
        for fds in pipes:
            for fd in fds:
                os.close(fd)


def test_frames_are_what_a_connection_reads_and_writes():
    """The main process writes frames with os.write and reads them with os.read; a worker
    uses multiprocessing's Connection on the other end: both framings must agree."""
    parent, child = multiprocessing.Pipe(duplex=True)
    try:
        os.write(parent.fileno(), frame(b"S\x00"))
        assert child.recv_bytes() == b"S\x00"
        big = bytes(range(256)) * 400  # 100 kB: past a pipe's atomic size, read in chunks
        writer = threading.Thread(target=child.send_bytes, args=(big,))
        writer.start()
        assert read_frame(parent.fileno()) == big
        writer.join()
        child.close()
        with pytest.raises(EOFError):
            read_frame(parent.fileno())
    finally:
        parent.close()


def test_envs_per_worker_out_of_the_pool_range_is_refused():
    factory = SyntheticEnvFactory(CFG, 2)
    with pytest.raises(ValueError, match=r"envs_per_worker=0: use 1 to 256"):
        make_env_pool(factory, 2, [0, 1], False, envs_per_worker=0)


def test_check_alive_reports_the_error_behind_earlier_results():
    # env 1 fails on its first step; env 0's result reaches the pipe before env 1's error
    factory = FailingEnvFactory(2, bad_index=1, fail_at=1)
    pool = make_env_pool(factory, 2, [0, 1], False, envs_per_worker=2)
    try:
        got = []
        while len(got) < 2:
            got += pool.poll(30.0, 2)
        pool.step([0])
        pool.step([1])
        pool._procs[0].join(30.0)  # the worker exits after sending its error
        with pytest.raises(EnvWorkerError, match=r"env 1 raised ValueError: simulator exploded"):
            pool.check_alive()
    finally:
        pool.close()


def test_an_env_error_names_the_env_not_its_worker():
    factory = FailingEnvFactory(4, bad_index=3)
    pool = make_env_pool(factory, 4, [0, 1, 2, 3], False, envs_per_worker=2)
    try:
        with pytest.raises(EnvWorkerError, match=r"env 3 raised ValueError: simulator exploded"):
            for _ in range(6):
                got = []
                while len(got) < 4:
                    got += pool.poll(30.0, 4)
                pool.step(range(4))
    finally:
        pool.close()


def test_a_dead_grouped_worker_names_its_envs():
    collector, pool, storage = build_collector(
        "ver", num_envs=4, rollout_steps=20, serial=False, envs_per_worker=2
    )
    try:
        collector.collect(0)
        storage.start_next_rollout()
        pool.kill_worker(3)
        pool._procs[pool.worker_of(3)].join(10.0)  # dead before collection goes on
        with pytest.raises(EnvWorkerError, match=r"envs 2-3 worker process died"):
            collector.collect(1)
    finally:
        pool.close()


@pytest.mark.parametrize("system", ["ver", "ddppo"])
def test_no_step_lost_or_duplicated_with_grouped_workers(system):
    collector, pool, storage = build_collector(
        system, num_envs=5, rollout_steps=6, serial=False, envs_per_worker=2
    )
    try:
        per_env, rollouts = collect_rollouts(collector, storage, 4)
        assert all(r.num_steps == 30 for r in rollouts)
        for e, steps in per_env.items():
            assert steps == list(range(len(steps))), (e, steps)
        if system == "ddppo":
            for r in rollouts:
                assert torch.bincount(r.env_ids, minlength=5).tolist() == [6] * 5
        drain(collector, pool, storage)
        assert np.array_equal(pool.buffers.scalars["steps_simulated"], storage.total_collected)
    finally:
        pool.close()


@pytest.mark.parametrize("bad", [0, 257])
def test_envs_per_worker_out_of_range_is_refused(bad):
    with pytest.raises(ValueError, match=r"RunConfig.envs_per_worker must be in \[1, 256\]"):
        RunConfig(envs_per_worker=bad)
