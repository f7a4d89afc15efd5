"""Checkpoints: one typed `SkillCheckpoint`, saved atomically and loaded with one-line errors;
RNG state and step-numbered snapshots (docs/DESIGN.md §9).

A `SkillCheckpoint` says what it is (skill, base movement, observation preset, model config,
spaces, nav success radius, step limit), holds the policy weights and, in a trainer's
checkpoint, the `TrainingState` a resume needs (learner/optimiser state, every RNG). Shipped
checkpoints carry their manifest and no training state. Files are written to a temp file in
the same directory, fsync'ed, then `os.replace`d over the target, so a crash (even SIGKILL)
leaves either the old or the new checkpoint, never a torn one. Files written before the typed
format (the shipped checkpoints, older runs) are read by `from_legacy_layout`.
"""

from __future__ import annotations

import dataclasses
import os
import random
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import gymnasium as gym
import numpy as np
import torch

from rearrange.models.config import ModelConfig
from rearrange.models.encoders import split_observation_space
from rearrange.runtime import weight_codec
from rearrange.runtime.widen import vector_positions, widen_actions, widen_observations
from rearrange.skill_spec import SCAN_SENSORS, action_layout, skill_names

LATEST = "latest.pt"
FORMAT = "rearrange.skill_checkpoint"
VERSION = 2  # version 1: the untyped dict before it, read by `from_legacy_layout`
BASE_MOVEMENT_SUFFIX = "_bm"
DEPTH_SUFFIX = "_depth"
# The trainer's dict layout before the typed format: what a file of it must hold.
LEGACY_KEYS = ("policy", "learner", "num_steps", "num_updates", "config",
               "observation_space", "action_space")  # fmt: skip


class CheckpointError(ValueError):
    """A checkpoint is unreadable or not one (one line naming the file and the fix)."""


class CheckpointNotFoundError(CheckpointError, FileNotFoundError):
    """The checkpoint file does not exist (one line naming it and the fix)."""


def checkpoint_stem(skill: str, base_movement: bool, depth: bool = False) -> str:
    """File stem of a skill's checkpoint: SKILL, SKILL_bm for its base-movement variant, and
    with `depth` (a policy on head depth, issue 29) SKILL[_bm]_depth (the shipped files and
    their .json manifests, folders of SKILL.pt files): a depth student never takes the
    name of the state skill it was distilled from."""
    stem = f"{skill}{BASE_MOVEMENT_SUFFIX}" if base_movement else skill
    return f"{stem}{DEPTH_SUFFIX}" if depth else stem


def config_base_movement(config: Mapping[str, Any]) -> bool | None:
    """The base movement a composed training config (a checkpoint's or a run's config.yaml)
    records: task.base_movement, else the top-level copy; None when it records neither."""
    task = config.get("task")
    if isinstance(task, Mapping) and task.get("base_movement") is not None:
        return bool(task["base_movement"])
    if config.get("base_movement") is not None:
        return bool(config["base_movement"])
    return None


def preset_of_space(space: gym.spaces.Dict) -> str:
    """The observation preset a policy's observation space comes from."""
    if "depth" in space.spaces:
        return "depth"
    return "state_rays" if any(k in space.spaces for k in SCAN_SENSORS) else "state"


def recorded_preset(space: gym.spaces.Dict, task_preset: str | None) -> str:
    """The preset a policy was trained with: its space's (`preset_of_space`), but
    "state_head_rays" where the run's task.obs_preset says so (same keys as "state_rays")."""
    preset = preset_of_space(space)
    return task_preset if preset == "state_rays" and task_preset == "state_head_rays" else preset


def model_config_from_dict(data: Mapping[str, Any]) -> ModelConfig:
    """A ModelConfig from stored plain data (lists for tuples): fields it does not know are
    dropped, fields it lacks (added after the file was written) keep their defaults."""
    known = ModelConfig.__dataclass_fields__
    return ModelConfig(
        **{k: tuple(v) if isinstance(v, list) else v for k, v in data.items() if k in known}
    )


def _plain_model(model: ModelConfig) -> dict[str, Any]:
    return {k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(model).items()}


@dataclass
class TrainingState:
    """What a trainer needs beside the weights to continue a run exactly."""

    learner: dict[str, Any]  # the trainer's own: VER optimiser and schedule, PQL learners
    rng: dict[str, Any]  # `rng_state()`


@dataclass
class SkillCheckpoint:
    """A trained skill policy and what it is; `save` / `load` are the only file format."""

    skill: str
    base_movement: bool  # the manipulation skill also drives the base (always False for nav)
    obs_preset: str  # "depth", "state", "state_rays" or "state_head_rays" (`recorded_preset`)
    model: ModelConfig
    observation_space: gym.spaces.Dict
    action_space: gym.spaces.Box
    weights: dict[str, torch.Tensor]  # the policy's state_dict (fp16 in shipped files)
    success_radius: float | None = None  # nav: the goal distance (m) training counted success
    step_limit: int | None = None  # the training task's max_episode_steps
    num_steps: int = 0
    num_updates: int = 0
    wall_time_s: float = 0.0
    config: dict[str, Any] = field(default_factory=dict)  # the composed config, for the record
    manifest: dict[str, Any] | None = None  # shipped checkpoints (`ship_skill export`)
    training: TrainingState | None = None  # trainer checkpoints; None in shipped ones

    @property
    def release_dist(self) -> float | None:
        """place: the goal distance (m) its training let it release within (the task's
        `thresholds.place_release`); None for other skills and runs that did not set it."""
        task = self.config.get("task") if isinstance(self.config, Mapping) else None
        thresholds = (task.get("thresholds") if isinstance(task, Mapping) else None) or {}
        value = thresholds.get("place_release") if self.skill == "place" else None
        return None if value is None else float(value)

    @property
    def file_stem(self) -> str:
        return checkpoint_stem(self.skill, self.base_movement, self.obs_preset == "depth")

    @classmethod
    def from_training(
        cls,
        config: Mapping[str, Any],
        weights: dict[str, torch.Tensor],
        observation_space: gym.spaces.Dict,
        action_space: gym.spaces.Box,
        *,
        num_steps: int,
        num_updates: int,
        wall_time_s: float,
        training: TrainingState,
    ) -> SkillCheckpoint:
        """A trainer's checkpoint, described by its composed config (`TrainConfig` as plain
        data; keys it lacks take TrainConfig's defaults, so a trainer built without one, as in
        the tests, writes the synthetic skill)."""
        skill = str(config.get("skill") or "synthetic")
        return cls(
            skill=skill,
            observation_space=observation_space,
            action_space=action_space,
            weights=weights,
            num_steps=int(num_steps),
            num_updates=int(num_updates),
            wall_time_s=float(wall_time_s),
            config=dict(config),
            training=training,
            **_described(config, skill, observation_space, action_space),
        )

    def for_shipping(self, manifest: Mapping[str, Any], precision: str = "fp16") -> SkillCheckpoint:
        """What the package ships of it: fp16 weights (or int8 / int4 codes with scales,
        `runtime/weight_codec.py`), the manifest, no training state. `load` decodes them."""
        weights = weight_codec.encode(self.weights, precision)
        return dataclasses.replace(self, weights=weights, manifest=dict(manifest), training=None)

    def save(self, path: str | Path) -> Path:
        """Write atomically (temp file + fsync + os.replace); returns the path."""
        state = {"format": FORMAT, "version": VERSION}
        for f in dataclasses.fields(self):
            state[f.name] = getattr(self, f.name)
        state["model"] = _plain_model(self.model)
        if self.training is not None:  # not asdict: it would deep-copy the optimiser state
            state["training"] = {"learner": self.training.learner, "rng": self.training.rng}
        return write_atomically(path, lambda f: torch.save(state, f))

    @classmethod
    def load(
        cls, path: str | Path, map_location: str | torch.device = "cpu", skill: str | None = None
    ) -> SkillCheckpoint:
        """Read a checkpoint of this format or of the layout before it; `skill` names the
        skill of an old file that records none. CheckpointNotFoundError / CheckpointError,
        one line naming the file and the fix, for a missing, corrupt or foreign file."""
        path = Path(path)
        if not path.is_file():
            raise CheckpointNotFoundError(
                f"checkpoint {path} not found: pass an existing checkpoint file (a training "
                "run's checkpoints/latest.pt or a shipped rearrange/skills/pretrained/SKILL.pt)"
            )
        try:
            state = torch.load(path, map_location=map_location, weights_only=False)
        except Exception as exc:  # torn, truncated or not a torch file at all
            raise CheckpointError(
                f"checkpoint {path} is corrupt ({type(exc).__name__}): delete it to start fresh "
                "or restore an earlier copy"
            ) from None
        if not isinstance(state, dict):
            raise CheckpointError(
                f"checkpoint {path} holds a {type(state).__name__}, not a rearrange checkpoint: "
                "pass a file written by rearrange.train_skill or rearrange.ship_skill"
            )
        if "format" not in state:
            return from_legacy_layout(state, path, skill)
        if state["format"] != FORMAT or state.get("version") != VERSION:
            raise CheckpointError(
                f"checkpoint {path} has format {state['format']!r} version "
                f"{state.get('version')!r}; this rearrange reads {FORMAT!r} version {VERSION} "
                "and the layout before it: load it with the rearrange that wrote it"
            )
        names = [f.name for f in dataclasses.fields(cls)]
        _require(path, state, names)
        _check_types(path, state, "weights")
        fields = {n: state[n] for n in names}
        try:  # int8 / int4 shipped weights: dense again, so every reader sees a plain state_dict
            fields["weights"] = weight_codec.decode(state["weights"])
        except ValueError as exc:
            raise CheckpointError(
                f"checkpoint {path} has damaged weights ({exc}): restore the file or export "
                "it again with rearrange.ship_skill"
            ) from None
        fields["model"] = model_config_from_dict(state["model"])
        if state["training"] is not None:
            fields["training"] = TrainingState(**state["training"])
        return cls(**fields)


def load_for_resume(
    path: Path, map_location: str | torch.device = "cpu"
) -> tuple[SkillCheckpoint, TrainingState]:
    """A run's checkpoint to continue and its training state; CheckpointError for one that
    has none (a shipped or exported checkpoint: its weights can only start a new run)."""
    ckpt = SkillCheckpoint.load(path, map_location)
    if ckpt.training is None:
        raise CheckpointError(
            f"checkpoint {path} holds no training state (a shipped or exported checkpoint): "
            "start a new run (another --run-name), with pretrained_weights= for its weights"
        )
    return ckpt, ckpt.training


def load_init_weights(
    path: Path, policy: torch.nn.Module, observation_space, action_space, device
) -> SkillCheckpoint:
    """Load another checkpoint's policy weights into `policy` (a new run fine-tuning them:
    `pretrained_weights=`; shipped fp16 weights become fp32); its spaces must be the run's,
    except that a fixed-base manipulation checkpoint may start its base-moving variant
    (`widen.widen_actions`: arm and grip as trained, the base at rest; and
    `widen.widen_observations` for the vectors that variant adds, read as zero).
    CheckpointError in one line otherwise. Returns the checkpoint read."""
    ckpt = SkillCheckpoint.load(path, map_location=device)
    weights = {k: v.float() if torch.is_floating_point(v) else v for k, v in ckpt.weights.items()}
    twin = _base_moving_twin(ckpt, action_space)
    if ckpt.observation_space != observation_space:
        if not (twin and _only_adds_vectors(ckpt.observation_space, observation_space)):
            raise CheckpointError(
                f"pretrained_weights {path}: its observation space {ckpt.observation_space} "
                f"differs from this run's {observation_space}: pass a checkpoint of the same "
                "skill, preset and base movement"
            )
        weights = _widened_observations(weights, ckpt, policy, observation_space)
    if ckpt.action_space != action_space:
        if not twin:
            raise CheckpointError(
                f"pretrained_weights {path}: its action space {ckpt.action_space} differs "
                f"from this run's {action_space}: pass a checkpoint of the same skill and "
                "base movement (or the fixed-base one of a --base-movement run)"
            )
        old, new = ckpt.action_space.shape[0], action_space.shape[0]
        weights, _ = widen_actions(weights, policy.state_dict(), old, new)
    load_weights(
        policy,
        weights,
        f"pretrained_weights {path}",
        "model",
        "use the model config it was trained with",
    )
    return ckpt


def _base_moving_twin(ckpt: SkillCheckpoint, action_space) -> bool:
    """Is `action_space` the base-moving variant of fixed-base `ckpt`'s actions? (A
    manipulation skill's base dims come last: `skill_spec.action_layout`.)"""
    if ckpt.base_movement or ckpt.skill not in skill_names() or ckpt.skill == "nav":
        return False
    fixed, moving = action_layout(ckpt.skill, False).size, action_layout(ckpt.skill, True).size
    shapes = (tuple(ckpt.action_space.shape), tuple(action_space.shape))
    if shapes != ((fixed,), (moving,)):
        return False
    lows, highs = np.asarray(action_space.low), np.asarray(action_space.high)
    return bool(
        np.array_equal(lows[:fixed], ckpt.action_space.low)
        and np.array_equal(highs[:fixed], ckpt.action_space.high)
    )


def _only_adds_vectors(old: gym.spaces.Dict, new: gym.spaces.Dict) -> bool:
    """Does `new` hold every observation of `old`, unchanged, plus only vectors (the
    base-moving articulated tasks add `art_joint_to_target`)?"""
    if any(k not in new.spaces or new[k] != space for k, space in old.spaces.items()):
        return False
    return all(len(new[k].shape) == 1 for k in new.spaces if k not in old.spaces)


def _widened_observations(weights, ckpt: SkillCheckpoint, policy, observation_space):
    """`weights` with the input layer and vector normaliser fitted to the observations the
    base-moving variant adds (`widen.widen_observations`)."""

    def sizes(space, keys):
        return [int(np.prod(space[k].shape)) for k in keys]

    old = split_observation_space(ckpt.observation_space, ckpt.model)
    new = split_observation_space(observation_space, ckpt.model)
    positions = vector_positions(
        old.vector_keys, sizes(ckpt.observation_space, old.vector_keys),
        new.vector_keys, sizes(observation_space, new.vector_keys),
    )  # fmt: skip
    visual = getattr(getattr(policy, "encoder", None), "visual", None)
    offset = int(getattr(visual, "output_size", 0))
    out, _ = widen_observations(weights, policy.state_dict(), positions, new.vector_size, offset)
    return out


def require_algo(path: Path, training: TrainingState, key: str, fix: str) -> None:
    """CheckpointError unless the checkpoint's learner state was written by the trainer
    marked `key` (its learner dict's "algo"); `fix` says what to do instead."""
    if training.learner.get("algo") != key:
        raise CheckpointError(f"checkpoint {path} was not written by --algo {key}: {fix}")


def load_weights(
    module: torch.nn.Module, weights: Mapping[str, Any], what: str, role: str, fix: str
) -> None:
    """`module.load_state_dict(weights)`, or one CheckpointError line: "`what` does not fit
    this run's `role` (the error's last line): `fix`"."""
    try:
        module.load_state_dict(weights)
    except (RuntimeError, ValueError, KeyError) as exc:
        first = str(exc).strip().splitlines()[-1].strip()
        raise CheckpointError(f"{what} does not fit this run's {role} ({first}): {fix}") from None


def _described(
    config: Mapping[str, Any],
    skill: str,
    observation_space: gym.spaces.Dict,
    action_space: gym.spaces.Box,
) -> dict[str, Any]:
    """The fields a training config describes; base movement recorded, else (old configs)
    the action width: a manipulation skill whose actions include the two base dimensions."""
    task = config.get("task")
    task = task if isinstance(task, Mapping) else {}
    base_movement = config_base_movement(config)
    if base_movement is None:
        width = int(np.prod(action_space.shape))
        known = skill in skill_names()  # not the trainer tests' "synthetic" skill
        base_movement = known and skill != "nav" and width == action_layout(skill, True).size
    radius = (task.get("thresholds") or {}).get("nav_dist") if skill == "nav" else None
    limit = task.get("max_episode_steps")
    return {
        "base_movement": bool(base_movement),
        "obs_preset": recorded_preset(observation_space, task.get("obs_preset")),
        "model": model_config_from_dict(config.get("model") or {}),
        "success_radius": None if radius is None else float(radius),
        "step_limit": None if limit is None else int(limit),
    }


def from_legacy_layout(
    state: dict[str, Any], path: Path, skill: str | None = None
) -> SkillCheckpoint:
    """A checkpoint of the dict layout before the typed format (the shipped checkpoints, runs
    trained before it): "policy" weights, "learner" state, counters, the composed "config" and
    the spaces; training state when it has its RNG states. Its skill is the config's, else
    `skill`; where the config lacks a field the skill spec's default applies."""
    _require(path, state, LEGACY_KEYS)
    _check_types(path, state, "policy")
    config = state["config"] if isinstance(state["config"], dict) else {}
    skill = config.get("skill") or skill
    if not skill:
        raise CheckpointError(
            f"checkpoint {path} does not record its skill: load it as a named skill "
            f"(python -m rearrange.eval_skill SKILL --checkpoints {path})"
        )
    return SkillCheckpoint(
        skill=str(skill),
        observation_space=state["observation_space"],
        action_space=state["action_space"],
        weights=state["policy"],
        num_steps=int(state["num_steps"]),
        num_updates=int(state["num_updates"]),
        wall_time_s=float(state.get("wall_time_s", 0.0)),
        config=config,
        manifest=state.get("manifest"),
        training=TrainingState(state["learner"], state["rng"]) if "rng" in state else None,
        **_described(config, str(skill), state["observation_space"], state["action_space"]),
    )


def _require(path: Path, state: Mapping[str, Any], keys: tuple[str, ...] | list[str]) -> None:
    missing = [k for k in keys if k not in state]
    if missing:
        raise CheckpointError(
            f"checkpoint {path} lacks {missing}: it was not written by rearrange.train_skill "
            "or rearrange.ship_skill; pass the right file"
        )


def _check_types(path: Path, state: Mapping[str, Any], weights_key: str) -> None:
    expected = (
        ("observation_space", gym.spaces.Dict),
        ("action_space", gym.spaces.Box),
        (weights_key, dict),
    )
    problems = [key for key, kind in expected if not isinstance(state[key], kind)]
    if problems:
        raise CheckpointError(
            f"checkpoint {path} has an unusable {', '.join(problems)}: it was not written by "
            "rearrange.train_skill or rearrange.ship_skill; pass the right file"
        )


def rng_state() -> dict[str, Any]:
    state = {
        "python": random.getstate(),
        "numpy": np.random.get_state(),
        "torch": torch.get_rng_state(),
    }
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict[str, Any]) -> None:
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def find_latest(checkpoint_dir: str | Path) -> Path | None:
    path = Path(checkpoint_dir) / LATEST
    return path if path.exists() else None


def keep_snapshot(latest: Path, num_steps: int, keep: int) -> None:
    """Copy latest.pt to ckpt_<steps>.pt (hard link when possible) and keep the newest `keep`."""
    if keep <= 0:
        return
    snap = latest.with_name(f"ckpt_{num_steps:010d}.pt")
    if not snap.exists():
        try:
            os.link(latest, snap)
        except OSError:
            shutil.copyfile(latest, snap)
    for old in sorted(latest.parent.glob("ckpt_*.pt"))[:-keep]:
        old.unlink()


def write_atomically(path: str | Path, write: Callable[[BinaryIO], None]) -> Path:
    """Write a file atomically (temp file in the same directory, fsync, `os.replace`), with `write(f)` filling the open binary file: a SIGKILL mid-write leaves the
    previous file, never a torn one. Used for checkpoints and the files saved beside them (PQL's replay)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        with open(tmp, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    _fsync_dir(path.parent)
    return path
