"""`HabEnv`: the Home Assistant Benchmark composite task (Tidy House, Prepare Groceries,
Set Table) on one sim.

The evaluation executor switches skills on this env: for the running skill it calls
`observe(skill, target)` (built by the same sensor code as the skill's training env, so a
learned skill sees identical observations) and `apply_action(skill, action)` (decoded as in
the skill env). PDDL predicates (`object_at`, `robot_at`, `opened`, `closed`) use the
habitat-lab thresholds. The whole task is cut at `max_steps` (3000), and ends once the robot's
contact force passes `HabConfig.force_limit` (Habitat's force_terminate, over the episode).
"""

from __future__ import annotations

import math

import numpy as np
from gymnasium import spaces

from rearrange.sim.episode_types import HAB_SCENARIOS, SPLITS, Episode
from rearrange.sim.simulator import Simulator
from rearrange.skill_spec import SkillTarget, skill_def

from .actions import DecodedAction, action_space, decode_action
from .base import check_episodes, choose_episode, load_task_episodes, make_sim
from .config import HabConfig
from .force_limit import ForceMeter
from .sensors import articulation_target, build_observation, task_observation_space


class HabEnv:
    def __init__(
        self,
        scenario: str,
        config: HabConfig | None = None,
        split: str = "val",
        seed: int = 0,
        *,
        sim: Simulator | None = None,
        episodes: list[Episode] | None = None,
    ) -> None:
        if scenario not in HAB_SCENARIOS:
            raise ValueError(
                f"unknown HAB scenario {scenario!r}; valid: {', '.join(HAB_SCENARIOS)}"
            )
        if split not in SPLITS:
            raise ValueError(f"unknown split {split!r}; use one of {', '.join(SPLITS)}")
        self.scenario, self.split = scenario, split
        self.config = config if config is not None else HabConfig()
        if episodes is None:
            cfg = self.config
            episodes = load_task_episodes(
                scenario, cfg.episodes_path, cfg.num_episodes, split, seed
            )
        check_episodes(episodes, scenario, split)
        self.episodes = episodes
        self.sim = sim if sim is not None else make_sim(self.config)
        self._rng = np.random.default_rng(seed)
        self.episode: Episode | None = None
        self.num_steps = 0
        self.force = ForceMeter(self.config.force_limit)  # over the whole episode
        self.max_depth = 0.0  # deepest robot overlap with static geometry this episode (m)

    # --- episode -------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict | None = None) -> dict:
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        opts = options or {}
        self.episode = choose_episode(self.episodes, self._rng, opts, self.scenario, self.split)
        self.sim.reset(self.episode)
        self.num_steps = 0
        self.force.reset()
        self.max_depth = float(self.sim.static_depth)
        return {"episode_id": self.episode.episode_id, "num_targets": len(self.episode.targets)}

    @property
    def max_steps(self) -> int:
        return self.config.max_steps

    @property
    def truncated(self) -> bool:
        """The 3000-step budget of the whole task is spent."""
        return self.num_steps >= self.config.max_steps

    # --- skills --------------------------------------------------------------------------
    def skill_base_movement(self, skill_task: str) -> bool:
        """Whether the skill drives the base here: always (nav), or in its variant."""
        spec = skill_def(skill_task)
        return not spec.has_base_movement_variant or self.config.skill_base_movement

    def observation_space(self, skill_task: str, obs_preset: str | None = None) -> spaces.Dict:
        preset = obs_preset or self.config.obs_preset
        return task_observation_space(skill_task, preset, self.config.depth_size)

    def action_space(self, skill_task: str) -> spaces.Box:
        return action_space(skill_task, self.skill_base_movement(skill_task))

    def observe(self, skill_task: str, target: SkillTarget, obs_preset: str | None = None) -> dict:
        """The observation skill `skill_task` would get in its own env for `target`.

        `obs_preset` overrides the config's, for a skill trained with another preset."""
        self._require_episode()
        preset = obs_preset or self.config.obs_preset
        return build_observation(skill_task, preset, self.sim, target)

    def apply_action(self, skill_task: str, action) -> DecodedAction:
        """Decode `action` with the skill's layout, step the sim once; returns the decoding
        (its `stop` tells the executor that nav asked to stop)."""
        self._require_episode()
        decoded = decode_action(skill_task, self.config.skill_base_movement, action)
        self.sim.step(decoded.arm, decoded.grip, decoded.base)
        self.num_steps += 1
        self.force.update(self.sim.contact_force())
        self.max_depth = max(self.max_depth, float(self.sim.static_depth))
        return decoded

    @property
    def force_exceeded(self) -> bool:
        """Habitat's force_terminate: the episode's contact force passed its limit."""
        return self.force.exceeded

    # --- targets for skills --------------------------------------------------------------
    def pick_target(self, i: int) -> SkillTarget:
        t = self._target(i)
        return SkillTarget(obj_index=t.obj_index)

    def place_target(self, i: int) -> SkillTarget:
        t = self._target(i)
        return SkillTarget(obj_index=t.obj_index, goal_pos=np.asarray(t.goal_pos, dtype=float))

    @staticmethod
    def nav_target(x: float, y: float, yaw: float) -> SkillTarget:
        return SkillTarget(nav_goal=np.array([x, y, yaw], dtype=float))

    def articulation_target(self, skill_task: str, name: str) -> SkillTarget:
        value = articulation_target(skill_task, name, self.config.skill_thresholds)
        return SkillTarget(articulation=name, art_target=value)

    # --- PDDL predicates -----------------------------------------------------------------
    def object_at(self, obj_index: int, goal_pos) -> bool:
        d = np.linalg.norm(np.asarray(self.sim.object_pos(obj_index)) - np.asarray(goal_pos))
        return bool(d <= self.config.predicates.object_at)

    def target_done(self, i: int) -> bool:
        """Target i's object is at its goal and not held."""
        t = self._target(i)
        return self.sim.held_object() != t.obj_index and self.object_at(t.obj_index, t.goal_pos)

    def all_targets_done(self) -> bool:
        return all(self.target_done(i) for i in range(len(self.episode.targets)))

    def robot_at(self, xy) -> bool:
        x, y, _ = self.sim.base_pose()
        return math.hypot(x - xy[0], y - xy[1]) <= self.config.predicates.robot_at

    def opened(self, name: str) -> bool:
        p = self.config.predicates
        threshold = p.opened_fridge if name == "fridge" else p.opened_cab
        return self.sim.articulation_pos(name) >= threshold - p.open_tolerance

    def closed(self, name: str) -> bool:
        return abs(self.sim.articulation_pos(name)) <= self.config.predicates.closed

    def render(self, overlays=None, width: int = 640, height: int = 480) -> np.ndarray:
        return self.sim.render_third_person(overlays, width=width, height=height)

    def close(self) -> None:
        close = getattr(self.sim, "close", None)
        if close is not None:
            close()

    # --- helpers -------------------------------------------------------------------------
    def _require_episode(self) -> None:
        if self.episode is None:
            raise RuntimeError("call HabEnv.reset() before observe() / apply_action()")

    def _target(self, i: int):
        self._require_episode()
        n = len(self.episode.targets)
        if not 0 <= i < n:
            raise IndexError(f"target {i} out of range: episode has {n} targets")
        return self.episode.targets[i]
