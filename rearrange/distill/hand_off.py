"""A base-moving pick or place labelled by two teachers: the base-moving state skill while the
robot drives, the fixed-base one once the target is within the arm's reach
(`distill.fixed_base_teacher`).

Why: the base-moving state pick (`pick_bm.pt`, 85 % alone) bounds its depth student, which
reached 83 %, while the fixed-base state pick (`pick.pt`) grasps 99 % of its own episodes,
whose starts are the ones a drive ends in: the target 0.4-1.0 m from the shoulder, the base
facing it ± 30 degrees (`sim/placement/spawns.PlacementConfig`). So the labels are the
base-moving teacher's until the robot first stands like that, then the fixed-base teacher's
with the base still. A student does not stop where its teacher would: one that drives or turns
on out of that region (by `HAND_BACK_MARGIN` or `HAND_BACK_YAW`, nothing held) gets the
base-moving teacher's labels again, which bring it back (latched for good, the first students
turned the object 80-150 degrees off their heading and were labelled "base still" to the
step limit). The margin keeps the labels from flipping at the border. The fixed-base
teacher starts fresh at each hand-off (recurrent state zero, no previous action), as it
starts after a nav in a chain, and observes its own sensors (its checkpoint's, without the
base-movement ones); the base-moving teacher acts on every step, so its memory follows the
episode.

Picks from an open drawer are never handed off: the fixed-base pick never trained on them
(as the policy, the hand-off after the scripted drive took 32 of 50 drawer val episodes,
the base-moving state pick alone 45). Their labels are the `drawer` teacher's where one is
given (`distill.drawer_teacher`: the scripted oracle, a good driver elsewhere, took 23 of
them), else the base-moving teacher's (benchmarks/RESULTS.md, "The pick handed to the
fixed-base teacher").

Picks from the fridge's shelves are handed off like the rest, but the drive there may be
another teacher's (`distill.fridge_teacher`): traced on seed 0's val episodes, 7 of the
hand-off's 8 timeouts were fridge picks, where `pick_bm.pt` stalls 1.1-1.2 m out, or stops
beside the open fridge so that the fixed-base pick's elbow meets its side wall (as the
policy on 50 fridge picks: `pick_bm.pt` 52 %, handed off 52 %, the scripted oracle's drive
to a stand pose in front of the shelf, handed off, 76 %).
"""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np

from rearrange.skill_spec import action_layout
from rearrange.tasks.pick import pick_source

HAND_OFF_YAW = math.radians(30.0)
"""rad: the target within this bearing of the base's heading (the close spawns' yaw noise)."""
HAND_OFF_SKILLS = ("pick", "place")
HAND_BACK_MARGIN = 0.10
"""m: a handed-off episode goes back to the base-moving teacher beyond reach + this."""
HAND_BACK_YAW = math.radians(45.0)
"""rad: ... or with the target this far off the heading."""


def target_point(env: gym.Env) -> np.ndarray:
    """The point a pick or place works at: the target object (pick), the goal (place)."""
    base = env.unwrapped
    if base.task == "place":
        return np.asarray(base.target.goal_pos, np.float64)
    return np.asarray(base.sim.object_pos(base.target.obj_index), np.float64)


def in_drawer(env: gym.Env) -> bool:
    """A pick whose target lies in a drawer (its receptacle's container is one)."""
    return pick_source(env) == "drawer"


def in_fridge(env: gym.Env) -> bool:
    """A pick whose target lies on a fridge shelf."""
    return pick_source(env) == "fridge"


def within_reach(pose, point, reach: float, shoulder_x: float, yaw: float = HAND_OFF_YAW) -> bool:
    """The base at `pose` (x, y, yaw) stands with `point` at most `reach` m from its shoulder
    (`shoulder_x` ahead of the base centre) and at most `yaw` rad off its heading."""
    x, y, heading = (float(v) for v in pose)
    sx, sy = x + shoulder_x * math.cos(heading), y + shoulder_x * math.sin(heading)
    dx, dy = float(point[0]) - sx, float(point[1]) - sy
    if math.hypot(dx, dy) > reach:
        return False
    bearing = math.atan2(dy, dx) - heading
    return abs(math.atan2(math.sin(bearing), math.cos(bearing))) <= yaw


class HandOffTeacher:
    """`far` (base-moving) labels until the target is within reach, then `near` (fixed-base,
    its action widened by a still base) until it leaves the wider region; a drawer pick is
    `drawer`'s (None: `far`'s) throughout; a fridge pick's drive is `fridge`'s (None:
    `far`'s), handed off the same way."""

    def __init__(
        self, far, near, skill: str, reach: float, shoulder_x: float, drawer=None, fridge=None
    ):
        self.far, self.near, self.reach, self.shoulder_x = far, near, float(reach), shoulder_x
        self.drawer_teacher, self.fridge_teacher = drawer, fridge
        self.moving = action_layout(skill, True)
        self.fixed = action_layout(skill, False)
        self.handed = False
        self.drawer: bool | None = None
        self.driver = far  # the episode's base-moving teacher

    def reset(self) -> None:
        for teacher in (self.far, self.near, self.drawer_teacher, self.fridge_teacher):
            if teacher is not None:
                teacher.reset()
        self.handed = False
        self.drawer = None  # read at the episode's first label (its target exists then)

    def act(self, env: gym.Env, obs: dict, executed: np.ndarray | None) -> np.ndarray:
        if self.drawer is None:
            self.drawer = in_drawer(env)
            fridge = self.fridge_teacher is not None and in_fridge(env)
            self.driver = self.fridge_teacher if fridge else self.far
        if self.drawer:
            return (self.drawer_teacher or self.far).act(env, obs, executed)
        far = self.driver.act(env, obs, executed)
        pose, point = env.unwrapped.sim.base_pose(), target_point(env)
        if self.handed and not self.holding(env):
            out = HAND_BACK_MARGIN + self.reach
            self.handed = within_reach(pose, point, out, self.shoulder_x, HAND_BACK_YAW)
        if not self.handed:
            if not within_reach(pose, point, self.reach, self.shoulder_x):
                return far
            self.handed = True
            self.near.reset()
            executed = None
        if executed is not None:
            executed = self.narrow(np.asarray(executed, np.float32))
        return self.widen(self.near.act(env, obs, executed))

    @staticmethod
    def holding(env: gym.Env) -> bool:
        """The robot holds something (a pick's grasp or a place's object not yet let go):
        the hand-off holds then whatever the target's bearing."""
        return env.unwrapped.sim.held_object() is not None

    def narrow(self, moving: np.ndarray) -> np.ndarray:
        """A base-moving action in the fixed-base layout (the base dropped)."""
        out = np.zeros(self.fixed.size, np.float32)
        out[self.fixed.arm] = moving[self.moving.arm]
        out[self.fixed.grip] = moving[self.moving.grip]
        return out

    def widen(self, fixed: np.ndarray) -> np.ndarray:
        return widen(fixed, self.fixed, self.moving)


def widen(action: np.ndarray, fixed, moving) -> np.ndarray:
    """An action of the `fixed`-base layout in the base-`moving` one, the base still."""
    out = np.zeros(moving.size, np.float32)
    out[moving.arm] = action[fixed.arm]
    out[moving.grip] = action[fixed.grip]
    return out
