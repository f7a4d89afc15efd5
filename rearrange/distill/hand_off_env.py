"""Training a base-moving pick or place as the driver of a hand-off (`task.hand_off_to`): the
agent drives until the target first stands within reach and ahead of the base (the rule the
labels of `distill/hand_off.py` hand off by), then the fixed-base checkpoint finishes the
episode with the base still, and the agent's step that handed off ends its episode with the
rest's discounted return as its reward.

Why: the base-moving state picks, trained to pick themselves, are used as the drive of a
hand-off teacher (`distill.fixed_base_teacher` with `distill.fridge_teacher`); traced on seed 1's
fridge-shelf val picks, 5 of the 14 failures of the best such drive (`pql_bm_fridge_v1`,
450k) were hand-offs beside the open fridge, where the fixed-base pick's arm then met the
fridge's side wall, and 8 were drives that stalled 1-1.4 m out (benchmarks/RESULTS.md,
"A fridge drive trained for the hand-off"). A drive trained this way is paid for
where the fixed-base pick succeeds from, and its episodes are as short as the drive.
Measured so far (same RESULTS section): without `approach`, or with 2.0, the drive traded
the bad hand-offs for stalls behind the open door and stayed below that best drive; with 5.0
it took 76-80 % of those picks from 200k (that drive 74 %), 66 % of seed 0's (as that drive).

`approach` > 0 (`task.hand_off_approach`) adds, on a fridge pick's agent steps, that many
reward units per metre the base comes nearer its stand pose in front of the opening (the
scripted pick's, `oracle_manip.container_stand`), measured along the map with the open
doors as obstacles (`planning_navmap`): the way to the front of an open fridge may first
lead away from the target round its door, which the pick's own reward (the gripper's
distance to the target) pays against. An episode with no such stand pose gets none.

The continuation is one transition of the agent's: `terminated` (nothing to bootstrap: the
rest was played), whatever ended the fixed-base part, and its `info` is the episode's last
step's, with `reward_terms` summed over the steps the agent's step stood for and
`handed_off_steps` the fixed-base part's length. Drawer picks are never handed off, as in the
labels. The fixed-base checkpoint acts on its own observation of the sim
(`CheckpointTeacher`), deterministically, afresh at each hand-off.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np

from rearrange.distill.hand_off import (
    in_drawer,
    in_fridge,
    target_point,
    widen,
    within_reach,
)
from rearrange.skill_spec import action_layout
from rearrange.tasks.pick import pick_receptacle

APPROACH = "approach"
"""The reward term of `approach` (absent without it)."""
HANDED_OFF_STEPS = "handed_off_steps"
"""The info key of the fixed-base part's length on the step that handed off."""


class HandOffWrapper(gym.Wrapper):
    """A base-moving pick or place env whose agent hands off to `near` (module doc)."""

    def __init__(
        self,
        env: gym.Env,
        near,
        reach: float,
        shoulder_x: float,
        gamma: float,
        approach: float = 0.0,
    ):
        super().__init__(env)
        base = env.unwrapped
        if not base.config.base_movement:
            raise ValueError("task.hand_off_to needs a base-moving env (--base-movement)")
        self.near, self.reach, self.shoulder_x = near, float(reach), float(shoulder_x)
        self.gamma, self.approach = float(gamma), float(approach)
        self._drawer = False  # this episode's pick is from a drawer (never handed off)
        self._stand: tuple[float, float] | None = None  # this episode's shaping goal
        self._stand_dist = 0.0
        self.moving = action_layout(base.task, True)
        self.fixed = action_layout(base.task, False)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        obs, info = self.env.reset(seed=seed, options=options)
        self._drawer = in_drawer(self.env)
        self._stand = None
        if self.approach > 0 and in_fridge(self.env):
            from rearrange.skills.oracle_manip import container_stand

            base = self.env.unwrapped
            rec = pick_receptacle(self.env)
            stand = container_stand(base.sim, target_point(self.env)[:2], rec.furniture)
            if stand is not None:
                self._stand = (stand[0], stand[1])
                self._stand_dist = self._to_stand()
        return obs, info

    def _to_stand(self) -> float:
        """m from the base to this episode's stand pose, round the open doors."""
        sim = self.env.unwrapped.sim
        x, y, _ = sim.base_pose()
        d = sim.planning_navmap().geodesic_distance((float(x), float(y)), self._stand)
        return d if math.isfinite(d) else math.dist((float(x), float(y)), self._stand)

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        if self._stand is not None:
            dist = self._to_stand()
            shaped = self.approach * (self._stand_dist - dist)
            self._stand_dist = dist
            reward = float(reward) + shaped
            info = {**info, "reward_terms": {**info.get("reward_terms", {}), APPROACH: shaped}}
        if terminated or truncated or not self._hands_off():
            return obs, reward, terminated, truncated, info
        terms = dict(info.get("reward_terms", {}))
        total, discount, steps, executed = float(reward), 1.0, 0, None
        self.near.reset()
        done = False
        while not done:
            executed = np.asarray(self.near.act(self.env, obs, executed), np.float32)
            obs, r, term, trunc, info = self.env.step(widen(executed, self.fixed, self.moving))
            discount *= self.gamma
            total += discount * float(r)
            steps += 1
            for key, value in info.get("reward_terms", {}).items():
                terms[key] = terms.get(key, 0.0) + float(value)
            done = term or trunc
        info = {**info, "reward_terms": terms, HANDED_OFF_STEPS: steps}
        return obs, total, True, False, info

    def _hands_off(self) -> bool:
        if self._drawer:
            return False
        env = self.env
        pose = env.unwrapped.sim.base_pose()
        return within_reach(pose, target_point(env), self.reach, self.shoulder_x)


@dataclass
class HandOffEnvFactory:
    """The trainers' env factory with `task.hand_off_to` (`trainers.run_setup`): `inner`'s
    envs, each wrapped with the fixed-base checkpoint `fixed_base` (absolute) loaded in its
    worker; picklable, as the env workers need."""

    inner: Any
    fixed_base: str
    reach: float
    gamma: float
    approach: float = 0.0

    def __call__(self, index: int) -> gym.Env:
        from rearrange.distill.teacher_labels import CheckpointTeacher, TeacherSpec
        from rearrange.sim.placement.spawns import PlacementConfig

        env = self.inner(index)
        skill = env.unwrapped.task
        near = CheckpointTeacher(TeacherSpec(skill, self.fixed_base), False)
        shoulder = PlacementConfig().shoulder_x
        return HandOffWrapper(env, near, self.reach, shoulder, self.gamma, self.approach)


__all__ = ["APPROACH", "HANDED_OFF_STEPS", "HandOffEnvFactory", "HandOffWrapper"]
