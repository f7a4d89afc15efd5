"""`distill.unjam` (skills that drive: nav): where the last executed step jammed the base, the
label is to back away instead of the teacher's.

A step jams when it asked the base to move and the world stopped it: the robot's arm, or
what it carries, is against a wall or furniture (a blocked step), or the base's disc is
against a footprint its slides cannot get round (a base collision; `sim/blocked_step.py`),
and the base ends the step where it started. Traced in HAB (tidy_house, every skill on
depth, seed 0, episode 0): after a pick the depth nav drove forward-and-left with the held
object's gripper against a wall for 484 of its 500 steps, and the state nav teacher, fed the
same states, labelled every one of them with the same full forward-and-left: its 360-degree
range scan starts at the base, so the arm and the object in front of it are not in what it
learned from, and DAgger copied the teacher's jam. Nearly half of the depth chain's failed
nav legs end this way (benchmarks/RESULTS.md, "Nav unjammed"). Seed 1, episode 5 jams the
other way: the base's disc against a footprint, the student asking 0.67 forward for 496
steps without one blocked step (the footprint check counts a base collision), the teacher
asking back and turn.

The rule: when the executed step commanded a base move (|linear| or |angular| at least
`COMMAND_MIN`), the world blocked it or the base collided, and the base moved less than
`MOVED_XY` metres and `MOVED_YAW` radians, the label is full speed the other way along the
commanded line (back up after a forward jam, forward after a backward one; backward when it
only turned), no turn and no stop. The next label is the teacher's again: backing one step
frees the arm, the teacher asks its move again, and where that jams once more the robot has
turned a little further on each try (the move is cut at the contact, not refused whole, the
first time). The label depends on the last step only, so the same state always gets the
same label (a rule that held its recovery for N steps gave a standing student contradicting
labels, as the oracle's stuck recovery did: teacher_labels.OracleTeacher). The base-collision
half of the rule came after the first two runs in RESULTS; the one run with it did no better.
"""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np

from rearrange.skill_spec import ActionLayout

COMMAND_MIN = 0.2
"""A base part at least this large (|action|, of 1) is a commanded move."""
MOVED_XY = 0.005
"""m: the base moved less than this in a jammed step (a free full-speed step: ~0.065 m)."""
MOVED_YAW = 0.005
"""rad: ... and turned less than this (a free full-rate turn: ~0.083 rad)."""


def jammed(executed: np.ndarray, base: slice, moved_xy: float, moved_yaw: float) -> bool:
    """Did the executed step command a base move that left the base where it was?"""
    lin, ang = (float(v) for v in np.asarray(executed)[base])
    commanded = max(abs(lin), abs(ang)) >= COMMAND_MIN
    return commanded and moved_xy < MOVED_XY and abs(moved_yaw) < MOVED_YAW


def unjam_label(label: np.ndarray, executed: np.ndarray, layout: ActionLayout) -> np.ndarray:
    """The teacher's `label` with its base part replaced by the move away from the jam (full
    speed against the executed linear command, backward if it only turned; no turn) and its
    stop, if any, at -1."""
    out = np.array(label, dtype=np.float32, copy=True)
    lin = float(np.asarray(executed)[layout.base][0])
    out[layout.base] = (1.0 if lin <= -COMMAND_MIN else -1.0, 0.0)
    if layout.stop is not None:
        out[layout.stop] = -1.0
    return out


class UnjamTeacher:
    """Wraps a teacher (`Teacher` protocol): its label, except after a jammed step
    (`jammed`), where it is `unjam_label`. The inner teacher acts on every step, so its
    recurrent state follows the episode whichever label is kept. Needs the env's sim:
    `blocked_steps` (steps the world cut short), `collision_count` (the base's footprint
    and arm collisions) and `base_pose()` (x, y, yaw)."""

    def __init__(self, inner, layout: ActionLayout):
        if layout.base is None:
            raise ValueError("distill.unjam needs a skill that drives the base")
        self.inner, self.layout = inner, layout
        self.relabelled = 0  # labels replaced since construction (tests, diagnostics)
        self._last: tuple[int, np.ndarray] | None = None

    def reset(self) -> None:
        self.inner.reset()
        self._last = None

    def act(self, env: gym.Env, obs: dict, executed: np.ndarray | None) -> np.ndarray:
        label = self.inner.act(env, obs, executed)
        sim = env.unwrapped.sim
        stopped = int(sim.blocked_steps) + int(sim.collision_count)
        now = (stopped, np.asarray(sim.base_pose(), dtype=np.float64).copy())
        last, self._last = self._last, now
        if executed is None or last is None or now[0] <= last[0]:
            return label  # an episode's first step, or the world did not stop the last one
        moved = now[1] - last[1]
        yaw = math.remainder(float(moved[2]), 2.0 * math.pi)
        if not jammed(executed, self.layout.base, float(np.hypot(moved[0], moved[1])), yaw):
            return label
        self.relabelled += 1
        return unjam_label(label, executed, self.layout)
