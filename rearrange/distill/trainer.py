"""The distillation loop (DAgger): collect a round → aggregate → train the student → log →
checkpoint. `DistillTrainer` is the "distill" row of the table of trainers
(`rearrange/trainers.py`, docs/DESIGN.md §5.4).

The env workers are the runtime's, each env wrapped so that its observation row carries the
teacher's action (`teacher_labels.TeacherLabelFactory`): the teacher runs in the worker beside
the simulator. The main process steps the envs in lock-step with the student
(`collect.LockstepCollector`), appends the round's labelled chunks to the FIFO buffer
(`buffer.ChunkBuffer`) and runs `distill.epochs` passes over it (`loss.distill_loss`, truncated
BPTT over chunks). Checkpoints are `RunSession`'s, the VER trainer's format: the student's
weights with the student's observation space (no teacher key), so `eval_skill --checkpoints`
loads a distilled student like any VER checkpoint. The aggregated buffer is not saved: a
resumed run continues weights, optimiser, counters, β and RNG, with an empty buffer.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from pathlib import Path

import gymnasium as gym
import numpy as np
import torch
from torch import nn

from rearrange.distill.buffer import ChunkBuffer, RoundStorage
from rearrange.distill.collect import LockstepCollector, RoundStats
from rearrange.distill.config import DistillConfig
from rearrange.distill.loss import distill_loss, sequence_distribution
from rearrange.distill.schedule import LinearSchedule
from rearrange.distill.student_norm import (
    WarmupStats,
    set_student_norm,
    student_norm,
    teacher_key_stats,
)
from rearrange.distill.teacher_labels import (
    ORACLE,
    TEACHER_KEY,
    TeacherError,
    TeacherLabelFactory,
    TeacherSpec,
    check_teacher,
    oracle_teacher,
)
from rearrange.runtime.checkpoint import (
    CheckpointError,
    SkillCheckpoint,
    TrainingState,
    find_latest,
    load_init_weights,
    load_weights,
    require_algo,
)
from rearrange.runtime.env_worker import EnvWorkerError, env_seeds, make_env_pool
from rearrange.runtime.logging_utils import TrainLogger, episode_scalars, log
from rearrange.runtime.optim_state import load_moments
from rearrange.runtime.result import SessionSpeed, TrainResult
from rearrange.runtime.run import RunConfig, RunSettingError, RunSetup, next_multiple
from rearrange.runtime.session import RunSession
from rearrange.skill_spec import SKILLS, action_layout

ALGO_KEY = "distill"  # marks a distillation checkpoint's learner state
RESUME_FIX = "resume it with the trainer that wrote it, or start a new run (another --run-name)"
PolicyBuilder = Callable[[gym.spaces.Dict, gym.spaces.Box], nn.Module]


def student_space(space: gym.spaces.Dict) -> gym.spaces.Dict:
    """The env's observation space less the teacher's label: what the student sees."""
    return gym.spaces.Dict({k: v for k, v in space.spaces.items() if k != TEACHER_KEY})


class DistillTrainer:
    """DAgger over the run's envs (`runtime.run.Trainer`: `train() -> TrainResult`)."""

    def __init__(
        self,
        run: RunConfig,
        cfg: DistillConfig,
        setup: RunSetup,
        teacher: TeacherSpec,
        policy_builder: PolicyBuilder,
        *,
        init_weights: Path | None = None,
    ):
        """`init_weights`: the student's weights a new run starts from (a distilled or VER
        depth checkpoint, e.g. the shipped SKILL_depth.pt; `pretrained_weights=`); the
        optimiser, counters and β start fresh (set distill.beta_start for a student that
        already acts)."""
        self.run, self.cfg, self.setup, self.teacher = run, cfg, setup, teacher
        self.policy_builder, self.init_weights = policy_builder, init_weights
        self.beta = LinearSchedule(cfg.beta_start, cfg.beta_end, cfg.beta_steps)
        self.session = RunSession(run, setup, "round")
        self.num_steps = 0
        self.num_updates = 0
        self.pool = None
        self.warmup: WarmupStats | None = None  # distill.norm_warmup_steps still measuring

    # ------------------------------------------------------------------ setup
    def _build(self) -> None:
        run, cfg = self.run, self.cfg
        self.device = torch.device(run.resolved_device())
        torch.manual_seed(run.seed)
        np.random.seed(run.seed)
        self.rng = np.random.default_rng(run.seed)
        self.teacher = self._teacher_of_run()
        factory = TeacherLabelFactory(self.setup.env_factory, self.teacher)
        seeds = env_seeds(run.seed, 0, run.num_envs)
        self.pool = make_env_pool(
            factory, run.num_envs, seeds, run.serial, envs_per_worker=run.envs_per_worker
        )
        self.obs_space = student_space(self.pool.observation_space)
        self.action_space = self.pool.action_space
        self.policy = self.policy_builder(self.obs_space, self.action_space).to(self.device)
        self.optimizer = torch.optim.Adam(self.policy.parameters(), lr=cfg.lr, eps=cfg.eps)
        self.collector = LockstepCollector(
            self.pool, self.policy, self.device, run.worker_timeout_s, cfg.prev_action,
            self._stop_index(), self._grip_index(),
        )  # fmt: skip
        hidden = (self.policy.num_recurrent_layers, self.policy.hidden_size)
        adim = int(np.prod(self.action_space.shape))
        self.storage = RoundStorage(
            self.collector.obs_dtypes(),
            run.num_envs,
            cfg.rollout_steps,
            cfg.chunk_len,
            adim,
            hidden,
        )
        self.weights = self._action_weights(adim)
        self.buffer = ChunkBuffer(
            self.obs_space, adim, hidden, cfg.chunk_len, cfg.buffer_chunks, cfg.depth_dtype
        )
        log.info(
            "distill: teacher %s (%s); buffer %d steps (%.0f MB)",
            self.teacher.name, self.teacher.obs_preset, self.buffer.capacity * cfg.chunk_len,
            self.buffer.nbytes / 2**20,
        )  # fmt: skip

    def _teacher_stats(self):
        if student_norm(self.policy) is None:
            return {}, 0  # no normaliser to set: the teacher's checkpoint is not read again
        return teacher_key_stats(self.teacher)

    def _start_norm(self) -> None:
        """A new student's normaliser: the teacher's statistics, or (distill.norm_warmup_steps)
        measured on the first steps, before any learning."""
        if self.cfg.norm_warmup_steps > 0 and student_norm(self.policy) is not None:
            self.warmup = WarmupStats(self.policy.layout.vector_keys, self.cfg.norm_warmup_steps)
            log.info("distill: student vector normaliser measured on the first %d steps; "
                     "learning starts after them", self.cfg.norm_warmup_steps)  # fmt: skip
            return
        line = set_student_norm(self.policy, self.obs_space, *self._teacher_stats())
        if line:
            log.info("distill: %s", line)

    def _warmup_round(self) -> None:
        assert self.warmup is not None
        self.warmup.add(self.storage.obs)
        if self.warmup.done:
            line = set_student_norm(self.policy, self.obs_space, self.warmup.stats(),
                                    self.warmup.count, "warmup")  # fmt: skip
            log.info("distill: %s", line)
            self.warmup = None

    def _norm_unset(self) -> bool:
        norm = student_norm(self.policy)
        return norm is not None and int(norm.count) == 0

    def _stop_index(self) -> int | None:
        """The stop action's position when distill.stop_veto is on (None when off)."""
        return self._veto_index("stop", self.cfg.stop_veto, "stop action (only nav has one)")

    def _grip_index(self) -> int | None:
        """The grip action's position when distill.grip_veto is on (None when off)."""
        return self._veto_index("grip", self.cfg.grip_veto, "grip action")

    def _veto_index(self, part: str, on: bool, what: str) -> int | None:
        """The position of action `part` (ActionLayout's "stop" or "grip") for its veto;
        RunSettingError (one line) when the skill has no such part."""
        if not on:
            return None
        skill = self.teacher.skill
        layout = action_layout(skill, self.teacher.base_movement) if skill in SKILLS else None
        index = None if layout is None else getattr(layout, part)
        if index is None:
            raise RunSettingError(
                f"distill.{part}_veto: the {skill} skill has no {what}: drop distill.{part}_veto"
            )
        return index

    def _action_weights(self, adim: int) -> torch.Tensor | None:
        """distill.action_weights as a tensor on the device (None: all 1); a count that does
        not match the action space is refused before any step."""
        weights = self.cfg.action_weights
        if not weights:
            return None
        if len(weights) != adim:
            raise RunSettingError(
                f"distill.action_weights has {len(weights)} weights but the action space has "
                f"{adim} dimensions: give one weight per dimension"
            )
        return torch.tensor(weights, dtype=torch.float32, device=self.device)

    def _teacher_of_run(self) -> TeacherSpec:
        """The teacher: a run resumed without distill.teacher keeps the one its checkpoint
        records (the default would be the shipped one, perhaps not what it trained with),
        without distill.oracle_near (None, the default) the radius it records, and without
        distill.oracle_yaw_tol (None) the heading tolerance it records, and without
        distill.unjam (None) whether it backed away after jammed steps, and without
        distill.grip_near / grip_clear (None) the radii of its grip labels, and without
        distill.fixed_base_teacher (None) its fixed-base hand-off."""
        path = find_latest(self.session.checkpoint_dir) if self.setup.resume else None
        if path is None:
            return self.teacher
        given = self.setup.config_dict.get("distill", {})
        training = SkillCheckpoint.load(path).training
        learner = training.learner if training else {}
        teacher = self._recorded_teacher(path, learner.get("teacher"), given.get("teacher"))
        near = float(learner.get("oracle_near", 0.0))
        if given.get("oracle_near") is None and near != teacher.oracle_near and not teacher.oracle:
            log.info("resuming with the oracle within %g m of the goal, as the run recorded", near)
            teacher = dataclasses.replace(teacher, oracle_near=near)
        unjam = given.get("unjam")
        if unjam is None and bool(learner.get("unjam")):
            log.info("resuming with the labels backing away after jammed steps, as recorded")
        unjam = bool(learner.get("unjam")) if unjam is None else bool(unjam)
        teacher = dataclasses.replace(teacher, unjam=unjam)
        for name in ("grip_near", "grip_clear"):
            radius = float(learner.get(name) or 0.0)
            if given.get(name) is None and radius != getattr(teacher, name):
                log.info("resuming with distill.%s=%g, as the run recorded", name, radius)
                teacher = dataclasses.replace(teacher, **{name: radius})
        fixed = learner.get("fixed_base")
        if given.get("fixed_base_teacher") is None and fixed:
            reach = float(learner.get("fixed_base_reach") or 0.0)
            log.info("resuming with %s labelling within %g m, as the run recorded", fixed, reach)
            drawer, fridge = learner.get("drawer"), learner.get("fridge")
            teacher = dataclasses.replace(
                teacher, fixed_base=fixed, fixed_base_reach=reach, drawer=drawer, fridge=fridge
            )
        yaw = learner.get("oracle_yaw_tol")
        if given.get("oracle_yaw_tol") is None and yaw is not None:
            log.info("resuming with the oracle's %g degree heading tolerance, as recorded", yaw)
            teacher = dataclasses.replace(teacher, oracle_yaw_tol=float(yaw))
        return teacher

    def _recorded_teacher(self, path: Path, recorded: str | None, given: str | None) -> TeacherSpec:
        """The teacher the run at `path` recorded, unless --teacher was given (or none fits)."""
        if given is not None or self.teacher.record is None:
            return self.teacher
        if not recorded or recorded == self.teacher.record:
            return self.teacher
        if recorded == ORACLE:
            log.info("resuming with the run's teacher, the scripted oracle")
            spec = oracle_teacher(self.teacher.skill, self.teacher.base_movement)
            return dataclasses.replace(spec, oracle_yaw_tol=self.teacher.oracle_yaw_tol)
        try:
            ckpt = check_teacher(Path(recorded), self.teacher.skill, self.teacher.base_movement)
        except TeacherError as exc:
            raise CheckpointError(
                f"{path} was distilled from teacher {recorded}, now unusable ({exc}): pass "
                "--teacher to continue with another"
            ) from None
        log.info("resuming with the run's teacher %s", recorded)
        return dataclasses.replace(self.teacher, path=recorded, obs_preset=ckpt.obs_preset)

    # ------------------------------------------------------------------ checkpoints
    def save(self) -> None:
        self.session.save(
            self.policy,
            self.obs_space,
            self.action_space,
            num_steps=self.num_steps,
            num_updates=self.num_updates,
            learner={
                "algo": ALGO_KEY,
                "optimizer": self.optimizer.state_dict(),
                "teacher": self.teacher.record,
                "oracle_near": self.teacher.oracle_near,
                "oracle_yaw_tol": self.teacher.oracle_yaw_tol,
                "unjam": self.teacher.unjam,
                "grip_near": self.teacher.grip_near,
                "grip_clear": self.teacher.grip_clear,
                "fixed_base": self.teacher.fixed_base,
                "fixed_base_reach": self.teacher.fixed_base_reach,
                "drawer": self.teacher.drawer,
                "fridge": self.teacher.fridge,
            },
        )

    def _restore(self, path: Path, ckpt: SkillCheckpoint, training: TrainingState) -> None:
        require_algo(path, training, ALGO_KEY, RESUME_FIX)
        fix = "resume with the model config it was trained with"
        load_weights(self.policy, ckpt.weights, f"checkpoint {path}", "student", fix)
        try:
            changes = load_moments(self.optimizer, training.learner["optimizer"])
        except (RuntimeError, ValueError, KeyError) as exc:
            first = str(exc).strip().splitlines()[-1].strip()
            raise CheckpointError(
                f"checkpoint {path}: its optimiser state does not fit this run's student "
                f"({first}): {fix}"
            ) from None
        if changes:
            log.info("distill: %s (this command's distill.lr/eps)", ", ".join(changes))
        self.num_steps, self.num_updates = ckpt.num_steps, ckpt.num_updates
        log.info("resumed at step %d: the aggregated buffer starts empty", self.num_steps)

    # ------------------------------------------------------------------ loop
    def train(self) -> TrainResult:
        stop = self.session.start()
        try:
            self._build()
            resumed = self.session.resume(self._restore, map_location=self.device)
            if resumed is None and self.init_weights is not None:
                ckpt = load_init_weights(
                    self.init_weights, self.policy, self.obs_space, self.action_space, self.device
                )
                log.info("student weights from %s (trained %d steps)", self.init_weights,
                         ckpt.num_steps)  # fmt: skip
            elif resumed is None:  # a new student: its normaliser (if any)
                self._start_norm()
            elif self.cfg.norm_warmup_steps > 0 and self._norm_unset():
                self._start_norm()  # stopped before its warm-up ended: measure again
            logger = self.session.open_logger(self.num_steps)
            self.collector.start()
            return self._loop(logger, stop)
        except EnvWorkerError as exc:
            where = self.session.last_checkpoint or "none yet"
            raise EnvWorkerError(f"{exc}; last checkpoint: {where}", exc.worker_traceback) from None
        finally:
            self.session.shutdown(self.pool)

    def _loop(self, logger: TrainLogger, stop) -> TrainResult:
        run = self.run
        next_log = next_multiple(self.num_steps, run.log_every_steps)
        next_ckpt = next_multiple(self.num_steps, run.checkpoint_every_steps)
        speed = SessionSpeed(self.num_steps)
        collect_total = learn_total = 0.0
        scalars = {}
        while self.num_steps < run.total_steps and not stop.stop:
            stats = self.collector.collect(self.storage, self.beta, self.num_steps)
            self.buffer.add(self.storage.chunks())
            t_learn = time.monotonic()
            if self.warmup is not None:  # the normaliser is still being measured
                self._warmup_round()
                learn = {}
            else:
                learn = self._learn()
            learn_s = time.monotonic() - t_learn
            self.num_steps += stats.steps
            collect_total += stats.seconds
            learn_total += learn_s
            logger.recent_episodes.extend(stats.episodes)
            scalars = self._scalars(stats, learn, learn_s, speed.sps(self.num_steps))
            scalars.update(episode_scalars(list(logger.recent_episodes)))
            if self.num_steps >= next_log or self.num_steps >= run.total_steps:
                logger.update(self.num_steps, self.num_updates, scalars, stats.steps)
                log.info(
                    "distill: loss=%.4g mse=%.4g |student-teacher|=%.3g beta=%.3g",
                    scalars.get("learn/loss", float("nan")),
                    scalars.get("learn/mse", float("nan")),
                    stats.abs_diff, stats.beta,
                )  # fmt: skip
                next_log = next_multiple(self.num_steps, run.log_every_steps)
            elif logger.bar is not None:
                logger.bar.update(stats.steps)
            if next_ckpt <= self.num_steps < run.total_steps:  # the end saves below
                self.save()
                next_ckpt = next_multiple(self.num_steps, run.checkpoint_every_steps)
            speed.round_done(self.num_steps)
        self.save()
        return speed.result(
            self.num_steps, self.num_updates, collect_total, learn_total,
            self.session.last_checkpoint, scalars,
        )  # fmt: skip

    def _learn(self) -> dict[str, float]:
        """`distill.updates_per_round` random minibatches of the buffer (or, at 0,
        `distill.epochs` passes over it); the minibatches' mean stats."""
        cfg, totals, count = self.cfg, {}, 0
        k = cfg.minibatch_chunks
        if cfg.updates_per_round > 0:
            batches = (self.buffer.sample(k, self.rng) for _ in range(cfg.updates_per_round))
        else:
            batches = (i for _ in range(cfg.epochs) for i in self.buffer.epoch(k, self.rng))
        for indices in batches:
            stats = self._update(indices)
            for key, value in stats.items():
                totals[key] = totals.get(key, 0.0) + value
            count += 1
        return {k: v / max(count, 1) for k, v in totals.items()}

    def _update(self, indices: np.ndarray) -> dict[str, float]:
        batch = self.buffer.batch(indices, self.device)
        dist = sequence_distribution(
            self.policy, batch.obs, batch.hidden, batch.prev_actions, batch.seq_lengths
        )
        loss, stats = distill_loss(dist, batch.targets, self.cfg.loss, self.weights)
        if not torch.isfinite(loss):
            log.warning("distill: non-finite loss %s: minibatch skipped", loss.item())
            return {"skipped": 1.0}
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        norm = nn.utils.clip_grad_norm_(self.policy.parameters(), self.cfg.max_grad_norm)
        self.optimizer.step()
        self.num_updates += 1
        return {**stats, "grad_norm": float(norm), "skipped": 0.0}

    def _scalars(self, stats: RoundStats, learn: dict, learn_s: float, sps: float) -> dict:
        out = {f"learn/{k}": v for k, v in learn.items()}
        out.update(
            {
                "distill/beta": stats.beta,
                "distill/teacher_share": stats.teacher_share,
                "distill/action_abs_diff": stats.abs_diff,
                "distill/stop_vetoes": float(stats.stop_vetoes),
                "distill/grip_vetoes": float(stats.grip_vetoes),
                "distill/buffer_steps": float(self.buffer.steps),
                "perf/sps": sps,
                "perf/collect_s": stats.seconds,
                "perf/learn_s": learn_s,
            }
        )
        return out
