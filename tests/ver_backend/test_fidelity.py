"""VER fidelity against the reference implementation (issue 11, items 2 and 4-7).

- the preemption decider's step times exclude the learning phase between rollouts;
- DD-PPO never fills a preempted rollout with stale steps (VER does);
- at the rollout-end quota cut, lagging envs (fewest steps collected) complete first;
- at rollout end only true in-flight actions are carried; ready envs act with new weights;
- the batching wait is half the average inference time, not half the env step time.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
import torch
import torch.distributed as dist

from rearrange.runtime.run import RunConfig, RunSetup
from rearrange.runtime.synthetic_env import SyntheticEnvConfig, SyntheticEnvFactory
from rearrange.ver_backend.config import PPOConfig, VERConfig
from rearrange.ver_backend.distributed import DistContext
from rearrange.ver_backend.inference import now
from rearrange.ver_backend.learner import Learner
from rearrange.ver_backend.preemption import PreemptionDecider
from rearrange.ver_backend.systems import CollectStats
from rearrange.ver_backend.trainer import VERTrainer
from ver_backend.helpers import build_collector
from ver_backend.tiny_policy import build_tiny_policy


def next_rollout(collector, storage):
    rollout = storage.build_rollout(collector.bootstrap_values())
    storage.start_next_rollout()
    return rollout


# ---------------------------------------------------------------- item 2: decider windows
def test_decider_step_times_exclude_the_learning_phase():
    cfg = SyntheticEnvConfig(step_time_ms=5.0, max_episode_steps=50)
    decider = PreemptionDecider(num_envs=2, step_window=200, learn_window=1)
    collector, pool, storage = build_collector(
        "ver", num_envs=2, rollout_steps=4, env_cfg=cfg, decider=decider
    )
    try:
        for i in range(3):
            collector.collect(i)
            next_rollout(collector, storage)
            time.sleep(0.4)  # a slow learner: envs are idle or in flight meanwhile
        times = [t for window in decider.step_times for t in window]
        assert len(times) >= 6
        # ~2 x 5 ms per round (serial envs); the 0.4 s learning gap must not be one of them.
        assert max(times) < 0.2, sorted(times)[-3:]
    finally:
        pool.close()


# ---------------------------------------------------------------- item 4: no stale fill in DD-PPO
class RecordingLearner(Learner):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.stale_counts: list[int] = []
        self.sizes: list[int] = []

    def update(self, rollout):
        self.stale_counts.append(int(rollout.is_stale.sum()))
        self.sizes.append(rollout.num_steps)
        return super().update(rollout)


class FakeTwoRankTrainer(VERTrainer):
    """Single process, but the collector sees a second rank that has always finished."""

    def _build(self, ctx):
        super()._build(ctx)
        store = dist.HashStore()
        for i in range(32):
            store.add(f"done/{i}", 1)  # the other rank finished every rollout
        self.collector.dist = DistContext(rank=0, world_size=2, store=store)
        if self.system == "ver":
            self.collector.steps_target = 6  # S* of the (absent) decider


def run_preempted(system: str, tmp_path) -> RecordingLearner:
    run = RunConfig(
        num_envs=2, total_steps=10**6, serial=True, device="cpu", checkpoint_every_steps=10**9
    )
    ver = VERConfig(system=system, rollout_steps=8, ddppo_sync_fraction=0.5)
    learners = []

    def make_learner(policy, ppo, total_updates, grad_sync=None):
        learners.append(RecordingLearner(policy, ppo, total_updates, grad_sync=grad_sync))
        return learners[-1]

    setup = RunSetup(
        env_factory=SyntheticEnvFactory(SyntheticEnvConfig(max_episode_steps=5), 2),
        run_dir=tmp_path,
        resume=False,
        tensorboard=False,
        progress=False,
    )
    trainer = FakeTwoRankTrainer(
        run, ver, PPOConfig(), setup, build_tiny_policy, learner_factory=make_learner, max_updates=4
    )
    trainer.train()
    return learners[0]


def test_ddppo_preempted_rollouts_are_not_stale_filled(tmp_path):
    learner = run_preempted("ddppo", tmp_path)
    assert len(learner.sizes) == 4
    assert all(size < 16 for size in learner.sizes)  # every rollout was preempted
    assert learner.stale_counts == [0, 0, 0, 0]


def test_ver_preempted_rollouts_are_stale_filled(tmp_path):
    learner = run_preempted("ver", tmp_path)
    assert learner.stale_counts[0] == 0  # nothing to fill from yet
    assert all(count > 0 for count in learner.stale_counts[1:])
    fresh = [size - stale for size, stale in zip(learner.sizes, learner.stale_counts)]
    assert all(n < 16 for n in fresh)  # every rollout was preempted


# ---------------------------------------------------------------- item 5: lagging first at the cut
@pytest.mark.parametrize("serial", [True, False])
def test_quota_cut_completes_lagging_envs_first(serial):
    collector, pool, storage = build_collector("ver", num_envs=4, rollout_steps=10, serial=serial)
    stats = CollectStats()
    try:
        deadline = time.monotonic() + 60
        while len(collector.ready) < 4:  # the reset observations
            collector.poll(40, stats)
            assert time.monotonic() < deadline
        collector.infer([0, 1, 2, 3])
        if not serial:
            time.sleep(0.5)  # every result is waiting in its pipe
        storage.steps_this_rollout[:] = [5, 0, 3, 1]
        storage.num_complete = 38  # 2 steps left of T*N = 40
        collector.poll(40, stats)
        completed = {e for e in range(4) if not storage.has_pending(e)}
        assert completed == {1, 3}  # the two envs with the fewest steps this rollout
    finally:
        pool.close()


# ---------------------------------------------------------------- item 6: ready envs use new weights
def test_ready_envs_act_with_the_new_weights_after_a_rollout():
    # Serial envs finish every step before the next poll, so nothing is truly in flight at
    # the end of a rollout: every env must wait for the new policy instead of acting with
    # the old one.
    collector, pool, storage = build_collector("ver", num_envs=3, rollout_steps=5)
    try:
        collector.collect(0)
        assert not collector.busy and not any(storage.has_pending(e) for e in range(3))
        first = next_rollout(collector, storage)
        assert first.policy_versions.tolist() == [0] * 15
        collector.inference.policy_version = 1  # the learner updated the weights
        collector.collect(1)
        second = next_rollout(collector, storage)
        assert second.policy_versions.tolist() == [1] * 15
    finally:
        pool.close()


def test_only_in_flight_actions_are_carried_with_processes():
    cfg = SyntheticEnvConfig(step_time_ms=2.0, scale_spread=8.0, max_episode_steps=6)
    collector, pool, storage = build_collector("ver", 3, 8, serial=False, env_cfg=cfg)
    try:
        collector.collect(0)
        for i in range(1, 4):
            carried = {e for e in range(3) if storage.has_pending(e)}
            waiting = set(collector.ready)
            assert carried == collector.busy  # carried == still simulating
            assert waiting and not (waiting & carried)  # at least the env that ended it
            next_rollout(collector, storage)
            collector.inference.policy_version = i  # the learner updated the weights
            collector.collect(i)
            env_ids, _, _ = storage.completed_step_ids()
            versions = storage.policy_versions[storage.completed_indices()]
            for e in carried | waiting:
                first = int(torch.nonzero(env_ids == e)[0])
                # in-flight actions keep the old version; waiting envs act with the new one
                assert int(versions[first]) == (i - 1 if e in carried else i), (e, i)
    finally:
        pool.close()


# ---------------------------------------------------------------- item 7: batching wait
def test_batching_wait_is_half_the_average_inference_time():
    collector, pool, storage = build_collector("ver", num_envs=3, rollout_steps=5, min_batch=3)
    stats = CollectStats()
    try:
        while len(collector.ready) < 3:
            collector.poll(15, stats)
        collector.infer([1, 2])  # envs 1 and 2 simulate; env 0 waits for a batch of 3
        collector.inference.inference_times.clear()
        collector.inference.inference_times.extend([0.001] * 8)  # 1 ms per inference
        assert collector.batch_wait_s() == pytest.approx(0.0005)
        collector.ready_since[0] = now() - 0.003  # env 0 has waited 3 ms (< half an env step)
        assert collector.try_infer()  # 3 ms > 0.5 ms: run on the partial batch
        assert storage.has_pending(0)
    finally:
        pool.close()


def test_inference_times_are_measured_by_the_worker():
    cfg = SyntheticEnvConfig(step_time_ms=20.0, max_episode_steps=50)
    collector, pool, storage = build_collector("ver", num_envs=2, rollout_steps=3, env_cfg=cfg)
    try:
        collector.collect(0)
        times = np.array(collector.inference.inference_times)
        assert len(times) >= 3
        # TinyPolicy inference takes well under the 20 ms env step.
        assert collector.batch_wait_s() == pytest.approx(0.5 * times.mean())
        assert collector.batch_wait_s() < 0.01
    finally:
        pool.close()


def test_inference_wait_defaults_before_any_measurement():
    collector, pool, storage = build_collector("ver", num_envs=2, rollout_steps=3)
    try:
        assert 0 < collector.batch_wait_s() <= 0.01
    finally:
        pool.close()
