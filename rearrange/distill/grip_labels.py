"""Grip labels that keep the pick from grasping a neighbour (`distill.grip_clear=R`,
`distill.grip_near=R`, pick).

Why: the suction grip grasps the nearest object within `SimConfig.grasp_threshold` (2 cm)
of the gripper whenever it is commanded on (`sim/grasp.py`), as Habitat's magic grasp does,
and a wrong object ends a pick as a failure. The state pick teachers learned to command the
grip on from their first steps: without a neighbour in reach that costs nothing, and their
observations show the target alone, not what stands beside it. Traced on the base-moving
pick's 100 val episodes of seed 0 (benchmarks/RESULTS.md, "The grip and the neighbours"):
the shipped `pick_bm.pt` ended 5 episodes and its depth student 8 by grasping a neighbour
0.12-0.30 m from the target, 6-183 steps in. The depth student sees the neighbours.

Two rules, each on while nothing is held (holding, the grip rule keeps the grip on anyway):
- `grip_clear=R`: the grip label is open (-1) while another object's surface is within R of
  the gripper's and nearer than the target's: the teacher's "on" stays everywhere else, so
  the student still grasps the target the step it touches it;
- `grip_near=R`: the grip label is open until the gripper is within R of the target's
  surface. Tried first (R = 0.03 m): the wrong picks went, but the student, whose "close"
  now had to fall in a 3 cm shell, hovered at the target with the grip open and timed out
  three times as often (RESULTS). At 0.1 m, with grip_clear at 0.1 m beside it, the shell
  is wide enough to close in, and most of a student's wrong picks are closes on a neighbour
  more than 0.1 m short of the target: the shipped base-moving depth pick learned it
  (`distill_bm_grip1`, RESULTS "The grip labelled open until 10 cm from the target").
The other dimensions are the teacher's, and the teacher acts on every step, so its
recurrent state follows the episode.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np

from rearrange.skill_spec import ActionLayout

OPEN = -1.0
"""The grip command that grasps nothing (`tasks/actions.py`: < 0 releases)."""
FAR = 0.35
"""m: objects whose centre is farther than this plus R from the gripper are not measured."""


def nearest_other(sim, obj_index: int, limit: float) -> float:
    """m from the gripper's surface to the nearest object other than `obj_index` (capped at
    `limit`), from the sim's own scan of the objects near the gripper."""
    dists = np.array(sim.gripper_object_dists(limit, FAR + limit), dtype=float)
    dists[obj_index] = limit
    return float(min(limit, dists.min(initial=limit)))


def describe(near: float, clear: float) -> str:
    """The rules in words, as a teacher's name and the run's banner end with them."""
    words = f", the grip open until {near:g} m from the target" if near else ""
    if clear:
        words += f", the grip open within {clear:g} m of another object"
    return words


def wants_open(sim, obj_index: int, near: float = 0.0, clear: float = 0.0) -> bool:
    """Nothing held, and the gripper farther than `near` m from object `obj_index` (when
    `near` > 0) or another object within `clear` m of it and nearer than `obj_index` (when
    `clear` > 0)."""
    if sim.held_object() is not None:
        return False
    reach = max(near, clear) + 1e-3
    target = sim.gripper_object_dist(obj_index, reach)
    if near > 0 and target > near:
        return True
    if clear > 0:
        other = nearest_other(sim, obj_index, reach)
        return other <= clear and other < target
    return False


class GripLabelTeacher:
    """Wraps a teacher (`Teacher` protocol): its label with the grip open while
    `wants_open` (the env's sim and its target object)."""

    def __init__(self, inner, layout: ActionLayout, near: float = 0.0, clear: float = 0.0):
        if layout.grip is None:
            raise ValueError("distill.grip_near / grip_clear need a skill with a grip")
        if near < 0 or clear < 0 or not (near > 0 or clear > 0):
            raise ValueError(f"grip_near={near}, grip_clear={clear}: give metres > 0 for one")
        self.inner, self.layout = inner, layout
        self.near, self.clear = float(near), float(clear)
        self.relabelled = 0  # grip labels turned to open since construction (tests, diagnostics)

    def reset(self) -> None:
        self.inner.reset()

    def act(self, env: gym.Env, obs: dict, executed: np.ndarray | None) -> np.ndarray:
        label = self.inner.act(env, obs, executed)
        base = env.unwrapped
        if not wants_open(base.sim, int(base.target.obj_index), self.near, self.clear):
            return label
        out = np.array(label, dtype=np.float32, copy=True)
        if out[self.layout.grip] > OPEN:
            self.relabelled += 1
        out[self.layout.grip] = OPEN
        return out
