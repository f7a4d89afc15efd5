"""The PQL training loop: the Actor in this process, the V- and P-learner in two others.

    warm-up (random actions) → [Actor step | V-learner update | P-learner update] concurrently,
    each waiting to hold β_a:v and β_p:v → log → checkpoint

`run.serial` runs the three roles in this process, interleaved by the same ratio control
(the role furthest behind goes next), through the same Actor and LearnerRunner code.

Outputs are the VER trainer's: run_dir/tb/ scalars, a progress bar, one log line per
interval, atomic checkpoints (checkpoints/latest.pt + optional ckpt_<steps>.pt snapshots)
whose `policy` is the deployable `pql_actor` (a learned skill loads it), and resume from
latest.pt. The replay buffer is saved beside latest.pt as replay.npz (`replay_io`: the newest
`checkpoint_replay` transitions, fp16 observations/actions) and restored on resume, so a run
killed and resumed continues with its data; without the file it warms up again.
`PQLTrainer` is the "pql" row of the table of trainers (`rearrange/trainers.py`,
docs/DESIGN.md §5).
"""

from __future__ import annotations

import contextlib
import time
import traceback
from pathlib import Path
from typing import Any

import numpy as np
import torch

from rearrange.models.config import ModelConfig
from rearrange.pql.actor import Actor
from rearrange.pql.config import PQLConfig
from rearrange.pql.control import Control, Stat
from rearrange.pql.exploration import mixed_sigmas
from rearrange.pql.learner_process import (
    LearnerError,
    LearnerProcesses,
    LearnerRunner,
    LearnerSetup,
    Slots,
    sigint_ignored,
    spawn_context,
)
from rearrange.pql.networks import DoubleQCritic, RunningMeanStd
from rearrange.pql.param_sync import VectorSlot, num_params
from rearrange.pql.policy import PQLActorPolicy
from rearrange.pql.ratio import Role
from rearrange.pql.replay import ReplayBuffer
from rearrange.pql.replay_io import REPLAY_FILE, ReplayFileError, load_replay, save_replay
from rearrange.runtime.checkpoint import (
    SkillCheckpoint,
    TrainingState,
    load_weights,
    require_algo,
)
from rearrange.runtime.env_worker import env_seeds, make_env_pool
from rearrange.runtime.logging_utils import TrainLogger, episode_scalars, eta_text, log
from rearrange.runtime.result import TrainResult
from rearrange.runtime.run import RunConfig, RunSetup, next_multiple
from rearrange.runtime.session import RunSession
from rearrange.runtime.stop_flag import StopFlag

ALGO_KEY = "pql"  # marks a PQL checkpoint's learner state
# Env steps of a session after which one log line gives the measured speed and the ETA.
MEASURED_ETA_STEPS = 10_000


class PQLTrainer:
    """PQL over the run's envs (`runtime.run.Trainer`: `train() -> TrainResult`); `model` is
    the deployable actor's architecture (policy 'pql_actor')."""

    def __init__(self, run: RunConfig, cfg: PQLConfig, setup: RunSetup, model: ModelConfig):
        self.run, self.cfg, self.setup, self.model = run, cfg, setup, model
        self.session = RunSession(run, setup, "step")  # checkpoints, wall time, stop, shutdown
        self.num_steps = 0
        self.base = {role: 0 for role in Role}  # units done before this session (resume)
        self._eta_reported = False
        self._session_start_steps = 0
        self.pool = self.replay = self.control = self.slots = self.learners = None
        self.runners: dict[Role, LearnerRunner] = {}

    # ------------------------------------------------------------------ setup
    def _build(self) -> SkillCheckpoint | None:
        run, cfg, setup = self.run, self.cfg, self.setup
        torch.manual_seed(run.seed)
        seeds = env_seeds(run.seed, 0, run.num_envs)
        # Env workers ignore SIGINT once running; started with it ignored, a Ctrl-C while they
        # import reaches only this process, which then checkpoints and closes them.
        with contextlib.nullcontext() if run.serial else sigint_ignored():
            self.pool = make_env_pool(
                setup.env_factory,
                run.num_envs,
                seeds,
                run.serial,
                envs_per_worker=run.envs_per_worker,
            )
        self.obs_space, self.action_space = self.pool.observation_space, self.pool.action_space
        self.policy = PQLActorPolicy(self.obs_space, self.action_space, self.model)
        obs_dim, act_dim = self.policy.obs_dim, self.policy.act_dim
        shared = not run.serial
        ctx = spawn_context() if shared else None
        rows = cfg.rows(run.num_envs)
        self.replay = ReplayBuffer.create(rows, run.num_envs, obs_dim, act_dim, shared)
        self.control = Control.create(shared)
        critic = DoubleQCritic(obs_dim, act_dim, cfg.critic_hidden, self._atoms())
        self.slots = Slots(
            VectorSlot.create(num_params(self.policy.actor), ctx=ctx, shared=shared),
            VectorSlot.create(num_params(critic), ctx=ctx, shared=shared),
            VectorSlot.create(2 * obs_dim + 1, np.float64, ctx=ctx, shared=shared),
        )
        self.obs_stats = RunningMeanStd(obs_dim) if cfg.obs_norm else None
        state = self._load_state()
        if state is not None:
            self._restore_replay()
        return state

    def _atoms(self) -> int:
        return self.cfg.num_atoms if self.cfg.distributional else 1

    def _learner_setups(self, state: SkillCheckpoint | None) -> list[LearnerSetup]:
        cfg = self.cfg
        device = self.run.resolved_device()
        learner_state = state.training.learner if state else {}
        return [
            LearnerSetup(
                role,
                cfg,
                self.policy.actor_spec,
                device,
                seed=self.run.seed * 10 + int(role),
                init_state=learner_state.get(key),
            )
            for role, key in ((Role.V_LEARNER, "v_learner"), (Role.P_LEARNER, "p_learner"))
        ]

    def _start_learners(self, state: SkillCheckpoint | None) -> None:
        setups = self._learner_setups(state)
        if self.run.serial:
            for setup in setups:
                self.runners[setup.role] = LearnerRunner(
                    setup, self.replay, self.control, self.slots
                )
            return
        self.learners = LearnerProcesses(
            setups,
            self.replay,
            self.control,
            self.slots,
            spawn_context(),
            self.cfg.learner_timeout_s,
        )

    # ------------------------------------------------------------------ checkpoints
    def _load_state(self) -> SkillCheckpoint | None:
        return self.session.resume(self._restore)

    def _restore(self, path: Path, state: SkillCheckpoint, training: TrainingState) -> None:
        learner = training.learner
        require_algo(path, training, ALGO_KEY, "resume it without --algo pql, or start a new "
                     "run (another --run-name)")  # fmt: skip
        load_weights(self.policy, state.weights, f"checkpoint {path}", "networks",
                     "resume with the settings it was trained with, or start a new run "
                     "(another --run-name)")  # fmt: skip
        if self.obs_stats is not None and learner.get("obs_stats") is not None:
            self.obs_stats.load_packed(np.asarray(learner["obs_stats"]))
            self.slots.obs_stats.write(self.obs_stats.packed())
        self.num_steps = state.num_steps
        self.base = {role: int(learner["units"][role.name]) for role in Role}

    @property
    def replay_path(self) -> Path:
        return self.session.checkpoint_dir / REPLAY_FILE

    def _restore_replay(self) -> None:
        """Refill the replay from replay.npz (before the learners start); without a usable
        file the run warms up again, as it did before replays were saved."""
        path = self.replay_path
        if not path.is_file():
            log.warning("no %s beside the checkpoint: the replay starts empty", path)
            return
        try:
            restored = load_replay(self.replay, path)
        except ReplayFileError as exc:
            self.replay.set_head(0)
            log.warning("%s: the replay starts empty", exc)
            return
        log.info(
            "restored %d replay transitions from %s (saved at step %d)",
            restored.transitions,
            path,
            restored.saved_at_step,
        )

    def _save_replay(self) -> None:
        """Write replay.npz before latest.pt: a kill between the two leaves a replay at most
        one checkpoint newer than latest.pt, which a resume can use as it is."""
        if self.cfg.checkpoint_replay <= 0:
            self.replay_path.unlink(missing_ok=True)  # never restore a stale one
            return
        start = time.monotonic()
        path, bound = self.replay_path, self.cfg.checkpoint_replay
        transitions = save_replay(self.replay, path, bound, self.num_steps)
        if transitions:
            log.info(
                "saved the replay (%d transitions, %.1f MB) in %.1f s",
                transitions,
                path.stat().st_size / 1e6,
                time.monotonic() - start,
            )

    def total_units(self, role: Role) -> int:
        return self.base[role] + int(self.control.counters[role])

    def _learner_states(self) -> dict[Role, dict[str, Any]]:
        if self.run.serial:
            return {role: runner.state_dict() for role, runner in self.runners.items()}
        return self.learners.states()

    def _learner_state(self) -> dict[str, Any]:
        """The checkpoint's learner state (the actor's weights synced into the policy)."""
        learners = self._learner_states()
        self.actor.sync_policy()
        return {
            "algo": ALGO_KEY,
            "v_learner": learners[Role.V_LEARNER],
            "p_learner": learners[Role.P_LEARNER],
            "obs_stats": None if self.obs_stats is None else self.obs_stats.packed(),
            "units": {role.name: self.total_units(role) for role in Role},
        }

    def save(self) -> None:
        self._save_replay()
        learner = self._learner_state()
        self.session.save(
            self.policy,
            self.obs_space,
            self.action_space,
            num_steps=self.num_steps,
            num_updates=self.total_units(Role.V_LEARNER),
            learner=learner,
        )

    # ------------------------------------------------------------------ loop
    def train(self) -> TrainResult:
        stop = self.session.start()
        try:
            state = self._build()
            self._session_start_steps = self.num_steps
            self._start_learners(state)
            rng = np.random.default_rng([self.run.seed, self.num_steps])
            sigmas = mixed_sigmas(self.run.num_envs, self.cfg.sigma_min, self.cfg.sigma_max)
            self.actor = Actor(
                self.pool,
                self.policy,
                self.replay,
                sigmas,
                rng,
                self.obs_stats,
                self.slots.policy,
                self.slots.obs_stats,
                self.run.worker_timeout_s,
            )
            logger = self.session.open_logger(self.num_steps)
            self._warm_up(logger, fresh=state is None, stop=stop)
            return self._loop(logger, stop)
        finally:
            self._close()

    def _close(self) -> None:
        self.session.shutdown(self.learners, self.pool, self.replay, self.control, self.slots)

    def _warm_up(self, logger: TrainLogger, fresh: bool, stop: StopFlag) -> None:
        """Fill the replay with `warmup_steps` rows before the learners start."""
        while self.replay.head < self.cfg.warmup_steps and not stop.stop:
            self._record_step(logger, self.actor.step(random=fresh))
            self._check_learners()

    def _record_step(self, logger: TrainLogger, episodes: list[dict[str, Any]]) -> None:
        self.num_steps += self.run.num_envs
        logger.recent_episodes.extend(episodes)
        if logger.bar is not None:
            logger.bar.update(self.run.num_envs)

    def _check_learners(self) -> None:
        if self.learners is not None:
            self.learners.check()

    def _loop(self, logger: TrainLogger, stop: StopFlag) -> TrainResult:
        cfg = self.cfg
        ratio = self.control.speed_ratio(
            cfg.beta_a_v, cfg.beta_p_v, cfg.ratio_lead, cfg.ratio_control
        )
        meter = _RateMeter(self.control, self.num_steps)
        run = self.run
        next_log = next_multiple(self.num_steps, run.log_every_steps)
        next_ckpt = next_multiple(self.num_steps, run.checkpoint_every_steps)
        scalars: dict[str, float] = {}
        learn_s = 0.0
        while self.num_steps < run.total_steps and not stop.stop:
            if run.serial:
                role = ratio.next_in_serial()
                if role is None:
                    raise RuntimeError("serial PQL: no role may run (ratio_lead must be >= 1)")
                if role != Role.ACTOR:
                    t0 = time.perf_counter()
                    self._serial_learner_step(role)
                    learn_s += time.perf_counter() - t0
                    continue
            elif not ratio.wait_turn(Role.ACTOR, lambda: stop.stop, self._check_learners):
                break
            self._record_step(logger, self.actor.step())
            self.control.counters[Role.ACTOR] += 1
            self._check_learners()
            if self.num_steps >= next_log or self.num_steps >= run.total_steps:
                scalars = self._log(logger, meter)
                next_log = next_multiple(self.num_steps, run.log_every_steps)
            if next_ckpt <= self.num_steps < run.total_steps:  # the end saves below
                self.save()
                next_ckpt = next_multiple(self.num_steps, run.checkpoint_every_steps)
        self.save()
        return TrainResult(
            self.num_steps,
            self.total_units(Role.V_LEARNER),
            meter.sps(self.num_steps),
            self.actor.busy_s,
            learn_s,
            self.session.last_checkpoint,
            scalars,
        )

    def _serial_learner_step(self, role: Role) -> None:
        """A learner's unit in this process; its failures read like a learner process's."""
        try:
            self.runners[role].step()
        except Exception as exc:
            name = role.name.lower().replace("_", "-")
            raise LearnerError(
                f"{name} raised {type(exc).__name__}: {exc}", traceback.format_exc()
            ) from exc

    def _report_measured_eta(self, meter: _RateMeter) -> None:
        """Once per session, after MEASURED_ETA_STEPS steps: the measured speed and the time
        left (the start banner's estimate was a recorded one)."""
        done = self.num_steps - self._session_start_steps
        if self._eta_reported or done < MEASURED_ETA_STEPS:
            return
        self._eta_reported = True
        sps = meter.sps(self.num_steps)  # after the warm-up, which runs at the envs' speed
        log.info(
            "measured %.0f steps/s over this session's first %d steps: %s",
            sps,
            done,
            eta_text(self.run.total_steps - self.num_steps, sps, self.run.total_steps),
        )

    def _log(self, logger: TrainLogger, meter: _RateMeter) -> dict[str, float]:
        scalars = meter.scalars(self.num_steps)
        stats = self.control.stats
        named = {
            "learn/value_loss": Stat.CRITIC_LOSS,
            "learn/q_mean": Stat.Q_MEAN,
            "learn/target_mean": Stat.TARGET_MEAN,
            "learn/actor_loss": Stat.ACTOR_LOSS,
        }
        scalars.update({k: float(stats[s]) for k, s in named.items() if np.isfinite(stats[s])})
        scalars.update(episode_scalars(list(logger.recent_episodes)))
        self._report_measured_eta(meter)
        # The bar already advanced step by step: no steps to add here.
        logger.update(self.num_steps, self.total_units(Role.V_LEARNER), scalars, 0)
        if logger.enabled:
            log.info(
                "pql ratios a:v=%.3f p:v=%.3f (target %.3f, %.3f) waits a/v/p=%.2f/%.2f/%.2f "
                "updates/s v=%.1f p=%.1f",
                scalars.get("ratio/a_v", float("nan")),
                scalars.get("ratio/p_v", float("nan")),
                self.cfg.beta_a_v,
                self.cfg.beta_p_v,
                scalars["perf/wait_actor"],
                scalars["perf/wait_v_learner"],
                scalars["perf/wait_p_learner"],
                scalars["perf/v_updates_per_s"],
                scalars["perf/p_updates_per_s"],
            )
        return scalars


class _RateMeter:
    """Measured speeds, ratios and wait fractions between two log points."""

    def __init__(self, control: Control, num_steps: int):
        self.control = control
        self.start_t = self.last_t = time.monotonic()
        self.start_steps = num_steps
        self.last_counts = control.counters.copy()
        self.last_waited = control.waited.copy()

    def sps(self, num_steps: int) -> float:
        return (num_steps - self.start_steps) / max(time.monotonic() - self.start_t, 1e-9)

    def scalars(self, num_steps: int) -> dict[str, float]:
        now = time.monotonic()
        dt = max(now - self.last_t, 1e-9)
        counts, waited = self.control.counters.copy(), self.control.waited.copy()
        d = counts - self.last_counts
        dw = waited - self.last_waited
        self.last_t, self.last_counts, self.last_waited = now, counts, waited
        out = {
            "perf/sps": self.sps(num_steps),
            "perf/actor_steps_per_s": d[Role.ACTOR] / dt,
            "perf/v_updates_per_s": d[Role.V_LEARNER] / dt,
            "perf/p_updates_per_s": d[Role.P_LEARNER] / dt,
        }
        for role in Role:
            out[f"perf/wait_{role.name.lower()}"] = float(dw[role] / dt)
        if d[Role.V_LEARNER] > 0:
            out["ratio/a_v"] = d[Role.ACTOR] / d[Role.V_LEARNER]
            out["ratio/p_v"] = d[Role.P_LEARNER] / d[Role.V_LEARNER]
        return out
