"""A dead worker or an env exception raises a clear EnvWorkerError naming the env, no hang."""

import pytest

from rearrange.runtime.env_worker import EnvWorkerError, make_env_pool
from rearrange.ver_backend.inference import DynamicBatcher, InferenceWorker
from rearrange.ver_backend.rollout_storage import RolloutStorage
from rearrange.ver_backend.systems import Collector
from ver_backend.helpers import FailingEnvFactory, HangingEnvFactory, build_collector
from ver_backend.tiny_policy import TinyPolicy


def test_killed_worker_is_reported_with_its_index():
    collector, pool, storage = build_collector("ver", num_envs=3, rollout_steps=50, serial=False)
    try:
        collector.collect(0)
        storage.start_next_rollout()
        pool.kill_worker(1)
        with pytest.raises(EnvWorkerError, match=r"env 1 worker process died"):
            collector.collect(1)
    finally:
        pool.close()


def _two_envs(factory, serial: bool, system: str, rollout_steps: int, timeout_s: float = 120.0):
    """(pool, storage, collector) over `factory`'s envs 0 and 1, a tiny policy acting."""
    pool = make_env_pool(factory, 2, [0, 1], serial=serial)
    env = factory(0)
    policy = TinyPolicy(env.observation_space, env.action_space)
    storage = RolloutStorage(2, rollout_steps, env.observation_space, env.action_space, 1, 2)
    collector = Collector(
        pool, storage, InferenceWorker(policy, storage, pool.buffers), system,
        DynamicBatcher(1, 2, system == "ddppo"), worker_timeout_s=timeout_s,
    )  # fmt: skip
    return pool, storage, collector


@pytest.mark.parametrize("serial", [True, False])
def test_env_exception_is_reported_with_index_and_message(serial):
    pool, storage, collector = _two_envs(FailingEnvFactory(2, bad_index=1), serial, "ver", 100)
    try:
        # VER's variable rollout may fill the first rollout from env 0 alone while env 1's
        # process is still starting (2-core CI), so keep collecting: env 1 fails on its 3rd
        # step, and the error must name it whenever that comes.
        with pytest.raises(
            EnvWorkerError, match=r"env 1 raised ValueError: simulator exploded"
        ) as err:
            for update in range(20):
                collector.collect(update)
                storage.start_next_rollout()
    finally:
        pool.close()
    # one line; the worker's traceback travels apart (train_skill prints it under the line)
    assert "\n" not in str(err.value)
    assert "misbehave" in err.value.worker_traceback


def test_a_stuck_worker_is_reported_with_its_stack_and_the_fix_after_the_timeout(capfd):
    # lock-step (ddppo): 20 steps per env and rollout, so env 1's 25th step, which hangs,
    # comes in the second rollout, after the workers have started under a generous timeout
    factory = HangingEnvFactory(2, bad_index=1, hang_at=25, hang_s=30.0)
    pool, storage, collector = _two_envs(factory, False, "ddppo", 20)
    try:
        collector.collect(0)
        storage.start_next_rollout()
        collector.worker_timeout_s = 1.0
        with pytest.raises(EnvWorkerError, match=r"envs \[1\] returned no step for 1 s") as err:
            collector.collect(1)
        assert "raise run.worker_timeout_s and continue with --resume" in str(err.value)
        assert "their Python stacks are on stderr above" in str(err.value)
        # the stuck worker printed where it was: in the hanging factory's sleep
        assert "in misbehave" in capfd.readouterr().err
    finally:
        pool.close()
