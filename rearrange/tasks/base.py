"""`SkillEnv`: the gymnasium.Env shared by all skill tasks.

A subclass provides `_reset_task()` (initialise its reward trackers) and
`_task_step(action) -> StepResult` (reward terms, success, failure). This class does the
rest: episode choice, sim reset, action decoding, success bonus, the force limit,
termination, truncation.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import gymnasium
import numpy as np

from rearrange.sim.episode_types import SPLITS, Episode
from rearrange.sim.episodes.config import EpisodeGenConfig
from rearrange.sim.simulator import Simulator
from rearrange.skill_spec import SkillTarget, action_layout, skill_def

from .actions import DecodedAction, action_space, decode_action
from .config import TaskConfig
from .force_limit import ForceMeter
from .grip_rules import GripTracker
from .sensors import (
    build_observation,
    goal_polar,
    observation_space,
    skill_target_from_episode,
)
from .stop_rule import mask_nav_stop


@dataclass
class StepResult:
    terms: dict[str, float]  # reward terms without "success"
    success: bool
    failed: bool  # a rule ended the episode without success (drop, wrong pick, ...)


def make_sim(config: TaskConfig) -> Simulator:
    """Build the MuJoCo RearrangeSim of a TaskConfig or HabConfig (its `sim`)."""
    from rearrange.sim.world import RearrangeSim

    return RearrangeSim(config.sim)


def load_task_episodes(
    task: str,
    path: str | None,
    num_episodes: int,
    split: str,
    seed: int,
    gen: EpisodeGenConfig | None = None,
) -> list[Episode]:
    """Episodes of `task` (a skill or HAB scenario) from `path`, or `num_episodes` made now
    by the generator with options `gen` (default `EpisodeGenConfig()`; a skill task's is
    `TaskConfig.episodes`)."""
    from rearrange.sim import episodes as ep_mod

    if path:
        eps = ep_mod.load_episodes(path)
    else:
        eps = ep_mod.generate_episodes(task, split, num_episodes, seed, config=gen)
    check_episodes(eps, task, split)
    return eps


def check_episodes(eps: list[Episode], task: str, split: str) -> None:
    if not eps:
        raise ValueError(f"no {task} episodes for split {split!r}; generate some first")
    bad = [e.episode_id for e in eps if e.task != task or e.split != split]
    if bad:
        raise ValueError(
            f"episode {bad[0]} is not a {task}/{split} episode "
            f"({len(bad)} such); use episodes generated for this task and split"
        )


def choose_episode(
    episodes: list[Episode], rng: np.random.Generator, options: dict, task: str, split: str
) -> Episode:
    """options["episode"] (an Episode), options["episode_index"], or a random one."""
    if "episode" in options:
        ep = options["episode"]
        check_episodes([ep], task, split)
        return ep
    if "episode_index" in options:
        i = int(options["episode_index"])
        if not 0 <= i < len(episodes):
            raise ValueError(f"episode_index {i} out of range [0, {len(episodes)})")
        return episodes[i]
    return episodes[int(rng.integers(len(episodes)))]


class SkillEnv(gymnasium.Env):
    """One Habitat-2.0-style skill task over a `Simulator` (by default a RearrangeSim)."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 30}

    def __init__(
        self,
        config: TaskConfig,
        split: str = "train",
        seed: int = 0,
        *,
        sim: Simulator | None = None,
        episodes: list[Episode] | None = None,
    ) -> None:
        if split not in SPLITS:
            raise ValueError(f"unknown split {split!r}; use one of {', '.join(SPLITS)}")
        self.config = config
        self.split = split
        self.task = config.task
        self.definition = skill_def(config.task)
        self.render_mode = "rgb_array"
        self.observation_space = observation_space(config)
        self.action_space = action_space(config.task, self._base_movement())
        self._episodes = episodes if episodes is not None else None
        if self._episodes is None:
            self._episodes = load_task_episodes(
                config.task,
                config.episodes_path,
                config.num_episodes,
                split,
                seed,
                config.episodes,
            )
        else:
            check_episodes(self._episodes, config.task, split)
        self.sim = sim if sim is not None else make_sim(config)
        self._rng = np.random.default_rng(seed)
        self.episode: Episode | None = None
        self.target = SkillTarget()
        self.num_steps = 0
        self._grip = GripTracker(
            self.task, config.thresholds.articulation, config.thresholds.place_release
        )
        self.force = ForceMeter(config.force_limit)

    def _base_movement(self) -> bool:
        return action_layout(self.task, self.config.base_movement).base is not None

    def _spawn_for_base_movement(self, episode: Episode) -> Episode:
        """Manipulation skills with base movement start farther away (≤ 2 m, the VER paper's
        "+ base movement" variants), but for a `near_start_prob` share of episodes; without
        it they start within the arm's reach."""
        far = episode.extras.get("robot_start_far")
        variant = self.config.base_movement and self.definition.has_base_movement_variant
        if not variant or far is None:
            return episode
        near = self.config.near_start_prob
        if near > 0 and self._rng.random() < near:  # TaskConfig.near_start_prob
            return episode
        return replace(episode, robot_start=tuple(far))

    @property
    def episodes(self) -> list[Episode]:
        return self._episodes

    @property
    def rng(self) -> np.random.Generator:
        """The env's own RNG (episode choice, spawn draws, start curricula): seeded by the
        constructor's seed, and again by reset(seed=...)."""
        return self._rng

    # --- gymnasium API -------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self.episode = self._spawn_for_base_movement(self._choose_episode(options or {}))
        return self.restart_episode()

    def restart_episode(self):
        """Start the current episode (its spawn already drawn) again from its first state, as
        reset() left it; draws nothing from the RNG. Returns (obs, info) as reset does."""
        if self.episode is None:
            raise RuntimeError("call reset() before restart_episode()")
        self.sim.reset(self.episode)
        self.target = skill_target_from_episode(self.task, self.episode, self.config.thresholds)
        self.num_steps = 0
        self._grip.reset()
        self.force.reset()
        self._reset_task()
        info = {"success": False, "episode_id": self.episode.episode_id}
        return self.observe(), info

    def rebase_start(self) -> None:
        """Make the current state the episode's first, after steps taken to reach it (a start
        curriculum, skills/start_curriculum.py): the step count and the force meter restart.
        The task's reward trackers stay as the last step left them: their distances were
        measured at this state, so the next step pays only its own change, and one-time
        bonuses already earned (a grasp, the joint at its target) stay earned."""
        self.num_steps = 0
        self.force.reset()

    def step(self, action):
        if self.episode is None:
            raise RuntimeError("call reset() before step()")
        decoded = self._decode(action)
        self.sim.step(decoded.arm, decoded.grip, decoded.base)
        self.num_steps += 1
        result = self._task_step(decoded)
        terms = dict(result.terms)
        success = result.success and not result.failed
        # Habitat's force_terminate (tasks/force_limit.py); a succeeding step still succeeds.
        forced = self.force.update(self.sim.contact_force()) and not success
        terms["success"] = self.config.reward.success if success else 0.0
        terms["force_end"] = -self.config.reward.force_end if forced else 0.0
        terminated = success or result.failed or decoded.stop or forced
        truncated = not terminated and self.num_steps >= self.config.max_episode_steps
        info = {
            "success": success,
            "reward_terms": terms,
            "episode_id": self.episode.episode_id,
            "num_steps": self.num_steps,
            "excessive_force": forced,
            "accum_force": self.force.accum,
            "static_depth": float(self.sim.static_depth),
        }
        reward = float(sum(terms.values()))
        return self.observe(), reward, terminated, truncated, info

    def _decode(self, action) -> DecodedAction:
        """Validate and split the action; then the skill's grip / stop rule, as at deployment."""
        decoded = decode_action(self.task, self.config.base_movement, action)
        layout = action_layout(self.task, self.config.base_movement)
        if decoded.stop and self.target.nav_goal is not None and self.config.stop_mask:
            dist = float(goal_polar(np.asarray(self.sim.base_pose()), self.target.nav_goal)[0])
            masked = mask_nav_stop(action, layout.stop, dist)
            return decode_action(self.task, self.config.base_movement, masked)
        if not self.config.grip_mask or decoded.grip is None:
            return decoded
        masked = self._grip.mask(action, layout.grip, self.sim, self.target)
        return decode_action(self.task, self.config.base_movement, masked)

    def observe(self) -> dict:
        cfg = self.config
        return build_observation(
            self.task, cfg.obs_preset, self.sim, self.target, cfg.base_movement
        )

    def render(self):
        """Third-person RGB frame marking the target (box / goal ghost / nav sphere)."""
        return self.sim.render_third_person(self._overlays())

    def _overlays(self):
        from rearrange.sim.render import Overlays

        t, ov = self.target, Overlays(text=[f"{self.task}  step {self.num_steps}"])
        if t.nav_goal is not None:
            ov.spheres.append((float(t.nav_goal[0]), float(t.nav_goal[1])))
        elif t.obj_index is not None and self.definition.starts_holding:  # where it goes
            ov.ghosts.append((t.obj_index, tuple(float(v) for v in t.goal_pos)))
        elif t.obj_index is not None:  # what to reach for
            ov.boxes.append(t.obj_index)
        return ov

    def close(self) -> None:
        close = getattr(self.sim, "close", None)
        if close is not None:
            close()

    # --- subclass hooks ------------------------------------------------------------------
    def _reset_task(self) -> None:
        raise NotImplementedError

    def _task_step(self, action: DecodedAction) -> StepResult:
        raise NotImplementedError

    def _choose_episode(self, options: dict) -> Episode:
        return choose_episode(self._episodes, self._rng, options, self.task, self.split)
