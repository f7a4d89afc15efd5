"""The student's vector normaliser (`model.vector_norm`) set from the teacher's statistics,
or measured on the run's first steps.

A PQL teacher normalises its state inputs with running statistics of the states it trained
on (`pql.obs_norm`, buffers in its checkpoint). A new student with `model.vector_norm` takes
them key by key, so it reads the sensors it shares with the teacher on the teacher's scale
(docs/DESIGN.md §5.4). Keys the teacher does not observe get mean 0, variance 1.

With `distill.norm_warmup_steps` N > 0 the statistics are instead those of the student's
vector inputs over the run's first N collected steps (`WarmupStats`), each variance floored
at WARMUP_VAR_FLOOR so that a sensor constant over them (a flag never set yet) is not
blown up to the clip when it first moves."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np

from rearrange.distill.teacher_labels import TeacherSpec

KeyStats = dict[str, tuple[np.ndarray, np.ndarray]]
WARMUP_VAR_FLOOR = 1e-4  # a std of 1 cm (m) or 0.01 rad at the least


def teacher_key_stats(spec: TeacherSpec) -> tuple[KeyStats, int]:
    """({key: (mean, var)}, count) of the teacher's observation normaliser; ({}, 0) when it
    has none (a VER teacher, the scripted reach teacher, a PQL run with obs_norm off)."""
    if spec.path is None:
        return {}, 0
    from rearrange.skills.learned import build_policy_from_checkpoint

    policy, ckpt = build_policy_from_checkpoint(Path(spec.path), spec.skill, "cpu")
    norm = getattr(policy, "obs_norm", None)
    count = int(norm.count) if norm is not None else 0
    if count == 0:
        return {}, 0
    mean = norm.mean.double().numpy()
    var = norm.var.double().numpy()
    stats, lo = {}, 0
    for key in policy.layout.vector_keys:
        dim = int(np.prod(ckpt.observation_space[key].shape))
        stats[key] = (mean[lo : lo + dim], var[lo : lo + dim])
        lo += dim
    return stats, count


def set_student_norm(
    policy, obs_space: gym.spaces.Dict, stats: KeyStats, count: int, source: str = "teacher"
) -> str:
    """Load `stats` into the student's vector normaliser; returns a log line ('' when the
    student has no normaliser). `source`: "teacher" (the teacher's checkpoint) or "warmup"
    (the run's first steps, `WarmupStats`)."""
    norm = student_norm(policy)
    if norm is None:
        return ""
    if count == 0:
        return "student vector inputs raw: model.vector_norm, but the teacher has no normaliser"
    means, variances, own = [], [], []
    for key in policy.layout.vector_keys:
        dim = int(np.prod(obs_space[key].shape))
        if key in stats and stats[key][0].size == dim:
            means.append(stats[key][0])
            variances.append(stats[key][1])
        else:
            means.append(np.zeros(dim))
            variances.append(np.ones(dim))
            own.append(key)
    norm.set_mean_var(np.concatenate(means), np.concatenate(variances), count)
    if source == "warmup":
        return (
            f"student vector inputs normalised with their statistics over its first {count} steps"
        )
    line = f"student vector inputs normalised with the teacher's statistics ({count} states)"
    return line + (f"; not observed by the teacher, left raw: {', '.join(own)}" if own else "")


def student_norm(policy):
    """The student's vector normaliser (`model.vector_norm`), None without one."""
    return getattr(getattr(policy, "encoder", None), "vector_norm", None)


class WarmupStats:
    """Mean and variance, key by key, of the student's vector inputs over the first collected
    rounds (`distill.norm_warmup_steps`); `add` takes a round's [T, N, ...] arrays."""

    def __init__(self, keys: tuple[str, ...], steps: int):
        self.keys, self.steps, self.count = keys, steps, 0
        self._rows: dict[str, list[np.ndarray]] = {k: [] for k in keys}

    @property
    def done(self) -> bool:
        return self.count >= self.steps

    def add(self, obs: dict[str, np.ndarray]) -> None:
        for key in self.keys:
            array = np.asarray(obs[key], np.float64)
            rows = array.reshape(array.shape[0] * array.shape[1], -1)
            self._rows[key].append(rows)
        self.count += len(rows)

    def stats(self) -> KeyStats:
        out = {}
        for key, rows in self._rows.items():
            values = np.concatenate(rows)
            out[key] = (values.mean(0), np.maximum(values.var(0), WARMUP_VAR_FLOOR))
        return out
