"""The VER training loop: collect (inference worker) → learn (learner) → log → checkpoint.

The main process plays both roles in turn (VER Appendix A.1). `run.serial` steps the envs
in-process through the same storage, collector and learner code (debugging, fast tests).
`overlap_learning=True` learns on rollout k in a thread while rollout k+1 is collected with
the weights from before that update (HTS-RL style; off in the paper). `VERTrainer` is the
"ver" row of the table of trainers (`rearrange/trainers.py`, docs/DESIGN.md §5).
"""

from __future__ import annotations

import contextlib
import copy
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from torch import nn

from rearrange.runtime.checkpoint import (
    SkillCheckpoint,
    TrainingState,
    load_init_weights,
    load_weights,
)
from rearrange.runtime.env_worker import EnvWorkerError, env_seeds, make_env_pool
from rearrange.runtime.logging_utils import TrainLogger, episode_scalars, log
from rearrange.runtime.result import SessionSpeed, TrainResult
from rearrange.runtime.run import RunConfig, RunSetup, next_multiple
from rearrange.runtime.session import RunSession
from rearrange.runtime.stop_flag import StopFlag
from rearrange.ver_backend.config import PPOConfig, VERConfig
from rearrange.ver_backend.distributed import DistContext, init_distributed
from rearrange.ver_backend.graph_acting import ActingStep
from rearrange.ver_backend.host_cost import HostCost
from rearrange.ver_backend.inference import DynamicBatcher, InferenceWorker, now
from rearrange.ver_backend.numpy_acting import NumpyActingStep, numpy_acting_supported
from rearrange.ver_backend.preemption import PreemptionDecider, optimal_preemption
from rearrange.ver_backend.rollout_storage import RolloutStorage, stale_fill
from rearrange.ver_backend.systems import Collector

PolicyBuilder = Callable[[gym.spaces.Dict, gym.spaces.Box], nn.Module]


class VERTrainer:
    """VER-PPO over the run's envs (`runtime.run.Trainer`: `train() -> TrainResult`).

    Besides the configs and the run's setup it takes the policy builder and, keyword-only:
    `init_weights`, policy weights a new run (nothing to resume) starts from (a train_skill or
    shipped checkpoint; optimiser, step counters and RNG start fresh); `system`, overriding
    ver.system ('collect_only' for benchmarks); `learner_factory` (tests); `max_updates`, an
    early stop (benchmarks); `host_cost`, per-part collection timing
    (benchmarks/trainer_ceiling)."""

    def __init__(
        self,
        run: RunConfig,
        ver: VERConfig,
        ppo: PPOConfig,
        setup: RunSetup,
        policy_builder: PolicyBuilder,
        *,
        init_weights: Path | None = None,
        system: str | None = None,
        learner_factory: Callable[..., Any] | None = None,
        max_updates: int | None = None,
        host_cost: HostCost | None = None,
    ):
        ver.check_run(run)
        self.run, self.ver, self.ppo, self.setup = run, ver, ppo, setup
        self.policy_builder, self.init_weights = policy_builder, init_weights
        self.learner_factory, self.max_updates = learner_factory, max_updates
        self.host_cost = host_cost
        self.system = system or ver.system
        self.session = RunSession(run, setup)  # checkpoints, wall time, stop, shutdown
        self.num_steps = 0
        self.num_updates = 0

    # ------------------------------------------------------------------ setup
    def _build(self, ctx: DistContext) -> None:
        run, ver, setup = self.run, self.ver, self.setup
        torch.manual_seed(run.seed + ctx.rank)
        np.random.seed(run.seed + ctx.rank)
        seeds = env_seeds(run.seed, ctx.rank, run.num_envs)
        self.pool = make_env_pool(
            setup.env_factory, run.num_envs, seeds, run.serial, envs_per_worker=run.envs_per_worker
        )
        self.obs_space, self.action_space = self.pool.observation_space, self.pool.action_space
        self.policy = self.policy_builder(self.obs_space, self.action_space).to(ctx.device)
        ctx.broadcast_module(self.policy)
        make_learner = self.learner_factory or _default_learner
        grad_sync = ctx.grad_sync if ctx.is_distributed else None
        self.learner = make_learner(
            self.policy, self.ppo, ver.total_updates(run, ctx.world_size), grad_sync=grad_sync
        )
        self.actor = copy.deepcopy(self.policy) if ver.overlap_learning else self.policy
        self.storage = RolloutStorage(
            run.num_envs,
            ver.rollout_steps,
            self.obs_space,
            self.action_space,
            self.policy.num_recurrent_layers,
            self.policy.hidden_size,
            ctx.device,
            layout=self.pool.buffers.layout,
        )
        if ver.update_threads is not None and (ctx.device.type != "cpu" or ver.overlap_learning):
            why = "overlap_learning runs it beside collection" if ver.overlap_learning else "a GPU"
            log.warning(
                "ver.update_threads=%d has no effect (%s): the update keeps the run's "
                "torch_threads; drop the setting, or use it on CPU without overlap_learning",
                ver.update_threads, why,
            )  # fmt: skip
        acting = None
        if ctx.device.type == "cuda" and ver.cuda_graphs:
            acting = ActingStep(
                self.actor, self.obs_space, self.storage.actions.shape[1], run.num_envs, ctx.device
            )
        elif ver.numpy_acting and numpy_acting_supported(self.actor):  # a state policy on CPU
            acting = NumpyActingStep(self.actor)
        self.inference = InferenceWorker(self.actor, self.storage, self.pool.buffers, acting)
        batcher = DynamicBatcher(
            ver.resolved_min_inference_batch(run.num_envs),
            ver.resolved_max_inference_batch(run.num_envs),
            lockstep=self.system == "ddppo",
        )
        use_preemption = ver.preemption and ctx.is_distributed and self.system == "ver"
        self.decider = (
            PreemptionDecider(
                run.num_envs, ver.resolved_preemption_step_window, ver.preemption_learn_window
            )
            if use_preemption
            else None
        )
        self.collector = Collector(
            self.pool,
            self.storage,
            self.inference,
            self.system,
            batcher,
            ctx,
            self.decider,
            ver.ddppo_sync_fraction,
            run.worker_timeout_s,
        )
        self.collector.cost = self.inference.cost = self.host_cost

    # ------------------------------------------------------------------ checkpoints
    def save(self, ctx: DistContext) -> None:
        if ctx.is_main:
            self.session.save(
                self.policy,
                self.obs_space,
                self.action_space,
                num_steps=self.num_steps,
                num_updates=self.num_updates,
                learner=self.learner.state_dict(),
            )

    def _maybe_resume(self, ctx: DistContext) -> None:
        resumed = self.session.resume(self._restore, map_location=ctx.device)
        if resumed is None and self.init_weights is not None:
            self._init_from(self.init_weights, ctx)

    def _restore(self, path: Path, ckpt: SkillCheckpoint, training: TrainingState) -> None:
        load_weights(self.policy, ckpt.weights, f"checkpoint {path}", "policy",
                     "resume with the model config it was trained with")  # fmt: skip
        self.learner.load_state_dict(training.learner)
        self.num_steps, self.num_updates = ckpt.num_steps, ckpt.num_updates
        if self.actor is not self.policy:
            self.actor.load_state_dict(self.policy.state_dict())
        self.inference.policy_version = self.num_updates

    def _init_from(self, path: Path, ctx: DistContext) -> None:
        """Policy weights from another checkpoint (fine-tuning); its spaces must match."""
        ckpt = load_init_weights(path, self.policy, self.obs_space, self.action_space, ctx.device)
        if self.actor is not self.policy:
            self.actor.load_state_dict(self.policy.state_dict())
        log.info("policy weights from %s (trained %d steps)", path, ckpt.num_steps)

    # ------------------------------------------------------------------ loop
    def train(self) -> TrainResult:
        ctx = init_distributed(self.run.device)
        stop = self.session.start()  # the wall clock includes env start-up
        self.pool = None
        try:
            self._build(ctx)
            self._maybe_resume(ctx)
            logger = self.session.open_logger(self.num_steps, enabled=ctx.is_main)
            return self._loop(ctx, logger, stop)
        except EnvWorkerError as exc:
            where = self.session.last_checkpoint or "none yet"
            raise EnvWorkerError(f"{exc}; last checkpoint: {where}", exc.worker_traceback) from None
        finally:
            self.session.shutdown(self.pool, ctx)

    def _loop(self, ctx: DistContext, logger: TrainLogger, stop: StopFlag) -> TrainResult:
        run, ver = self.run, self.ver
        previous = None
        thread, thread_out = None, {}
        collect_total = learn_total = 0.0
        speed, scalars = SessionSpeed(self.num_steps, now), {}
        updates_run = 0
        # Logs and checkpoints fall on the first update that reaches the next multiple of
        # their interval in env steps (all ranks count the same all-reduced steps).
        next_log = next_multiple(self.num_steps, run.log_every_steps)
        next_ckpt = next_multiple(self.num_steps, run.checkpoint_every_steps)
        while self.num_steps < run.total_steps and not stop.stop:
            if self.max_updates is not None and updates_run >= self.max_updates:
                break
            self._plan_preemption(ctx)
            stats = self.collector.collect(self.num_updates)
            # Stale fill is VER's (§2.3); DD-PPO learns on the shorter preempted rollout.
            filled = stats.preempted and self.system == "ver"
            fill = ver.steps_per_rollout(run.num_envs) - stats.steps if filled else 0
            rollout = self.storage.build_rollout(
                self.collector.bootstrap_values(), stale_fill(previous, fill)
            )
            previous = rollout
            self.storage.start_next_rollout()
            t_learn = now()
            # LR schedule by environment steps done before this rollout (all ranks), not by
            # updates: preempted rollouts are shorter, so an update count would run out early.
            self.learner.set_progress(self.num_steps, run.total_steps)
            if self.system == "collect_only":
                learn_stats = {}
            elif ver.overlap_learning:
                learn_stats = self._join(thread, thread_out)
                thread = self._learn_async(rollout, thread_out)
            else:
                with update_threads(self.ver.update_threads, ctx.device):
                    learn_stats = self.learner.update(rollout)
            learn_s = now() - t_learn
            if self.decider is not None:
                self.decider.record_learn(learn_s)
            self.inference.policy_version += 1
            self.num_updates += 1
            updates_run += 1
            new_steps = int(ctx.all_reduce_sum(stats.steps))
            self.num_steps += new_steps
            collect_total += stats.seconds
            learn_total += learn_s
            scalars = self._scalars(stats, learn_stats, learn_s, new_steps, speed)
            logger.recent_episodes.extend(stats.episodes)
            scalars.update(episode_scalars(list(logger.recent_episodes)))
            if self.num_steps >= next_log or self.num_steps >= run.total_steps:
                logger.update(self.num_steps, self.num_updates, scalars, new_steps)
                next_log = next_multiple(self.num_steps, run.log_every_steps)
            elif logger.bar is not None:
                logger.bar.update(new_steps)
            if next_ckpt <= self.num_steps < run.total_steps:  # the end saves below
                # Overlap: finish the running update so weights and learner state agree.
                self._join(thread, thread_out)
                thread = None
                self.save(ctx)
                next_ckpt = next_multiple(self.num_steps, run.checkpoint_every_steps)
            speed.round_done(self.num_steps)
            if updates_run == 1 and self.host_cost is not None:  # as SPS: from the second
                self.host_cost.reset()
        if thread is not None:
            self._join(thread, thread_out)
        self.save(ctx)
        return speed.result(
            self.num_steps, self.num_updates, collect_total, learn_total,
            self.session.last_checkpoint, scalars,
        )  # fmt: skip

    def _plan_preemption(self, ctx: DistContext) -> None:
        if self.decider is None:
            return
        ready = ctx.all_reduce_sum(float(self.decider.ready)) == ctx.world_size
        if not ready:
            self.collector.steps_target = None
            return
        taus = ctx.all_gather_array(self.decider.mean_step_times())
        learn = ctx.all_reduce_sum(self.decider.learn_time()) / ctx.world_size
        target, _ = optimal_preemption(taus, learn, self.ver.steps_per_rollout(self.run.num_envs))
        self.collector.steps_target = target

    def _learn_async(self, rollout, out: dict) -> threading.Thread:
        def run():
            try:
                out["stats"] = self.learner.update(rollout)
            except BaseException as exc:  # noqa: BLE001 - re-raised in the main thread
                out["error"] = exc

        thread = threading.Thread(target=run, name="learner", daemon=True)
        thread.start()
        return thread

    def _join(self, thread: threading.Thread | None, out: dict) -> dict[str, float]:
        if thread is None:
            return {}
        thread.join()
        if "error" in out:
            raise out.pop("error")
        self.actor.load_state_dict(self.policy.state_dict())
        return out.pop("stats", {})

    def _scalars(self, stats, learn_stats, learn_s, new_steps, speed: SessionSpeed):
        batches = stats.batch_sizes or [0]
        out = {
            "perf/sps": speed.sps(self.num_steps),
            "perf/rollout_sps": new_steps / max(stats.seconds + learn_s, 1e-9),
            "perf/collect_s": stats.seconds,
            "perf/learn_s": learn_s,
            "perf/batch_size_mean": float(np.mean(batches)),
            "perf/batch_size_max": float(np.max(batches)),
            "perf/preempted": float(stats.preempted),
        }
        for key, value in learn_stats.items():
            name = "learn/alpha" if key == "entropy_coef" else f"learn/{key}"
            out[name] = float(value)
        return out


@contextlib.contextmanager
def update_threads(threads: int | None, device: torch.device):
    """Run the block with `threads` torch threads on a CPU device (None or a GPU: as is),
    then restore the acting step's count."""
    acting = torch.get_num_threads()
    if threads is None or device.type != "cpu" or threads == acting:
        yield
        return
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(acting)


def _default_learner(policy, ppo, total_updates, grad_sync=None):
    from rearrange.ver_backend.learner import Learner

    return Learner(policy, ppo, total_updates, grad_sync=grad_sync)
