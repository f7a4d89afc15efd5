"""A stuck nav leg steps back: the HAB executor's recovery where a nav skill stopped moving.

Why: since issue 27 the world blocks the arm and what it holds at walls and furniture, and
the base's disc at their footprints; Habitat's navmesh slides the base and lets the arm
through. A nav policy that sees only what is ahead of its base (the state nav's range scan,
the depth nav's head camera) turns its gripper into a wall or presses its disc against a
counter and asks for the same move for the rest of its 500 steps: 6 of 50 tidy_house
episodes per seed (every skill on depth, 2026-12-06) ended in such a leg, and the state
teacher asks the same move in the same states (benchmarks/RESULTS.md, "Nav unjammed").

The rule: when the base has neither moved `STUCK_MOVE` nor turned `STUCK_TURN` over the last
`STUCK_WINDOW` steps, or has not left `SPIN_MOVE` over the last `SPIN_WINDOW` however it
turned (`StuckWatch`), the executor backs the base straight off at full speed for
`unstick_steps` steps (the fewest from `UNSTICK_MIN` after which the whole robot keeps
`UNSTICK_CLEAR` from walls and furniture, at most `UNSTICK_MAX`), turns it in place
`UNSTICK_TURN` to the side where the robot keeps more room (`unstick_turn`: a skill backed
straight off drove straight back into what held it), then hands control back to the skill,
at most `MAX_UNSTICKS` times per leg. The steps count toward the leg's step limit. A nav that
recovers itself (`recovers_itself`: the scripted path follower backs up and re-plans) is left
to it: on top of it the scripted chain lost 13 episodes and gained 6. It is not
in the VER paper (its world never holds the robot); `--no-nav-unstick` runs without it. Tidy
house, every skill on depth, seeds 0 / 1: 32 / 30 % without it, 36 / 40 % with it (docs/DESIGN.md
§6.2 and §8.4; benchmarks/RESULTS.md, "The nav unsticks").
"""

from __future__ import annotations

import math
from collections import deque

import numpy as np

from rearrange.sim.geometry import wrap_angle
from rearrange.skills.oracle_motion import clearance_at
from rearrange.skills.reset_arm import pose_behind, reverse_action, reverse_step_m

STUCK_WINDOW = 20  # steps over which a stuck base has neither moved nor turned
STUCK_MOVE = 0.05  # m: less than this from the window's last position is not moving
# (a base pressed obliquely against a wall slides ~1.5 mm a step along it)
STUCK_TURN = 0.25  # rad: ... and less than this from its last heading is not turning
SPIN_WINDOW = 60  # steps over which a base that turns but does not leave SPIN_MOVE is stuck
SPIN_MOVE = 0.10  # m (a nav blocked at the arm spins or wiggles in place: its turn is free)
UNSTICK_MIN = 0.3  # m: the least it backs off (room for the skill to turn its arm)
UNSTICK_MAX = 0.6  # m: the farthest a stuck base backs off
UNSTICK_CLEAR = 0.09  # m: the gap to walls and furniture the step back looks for
GAP_CAP = 0.15  # m: gaps are measured up to this (above UNSTICK_CLEAR)
UNSTICK_TURN = math.radians(60)  # rad: then the base turns this far to the side with more room
MAX_UNSTICKS = 4  # recoveries per leg; then the skill is left to its step limit


class StuckWatch:
    """The base poses of a leg's last steps; `update` says whether the base is stuck: over
    the last `window` steps it has neither moved `move` nor turned `turn`, or over the last
    `spin_window` it has not left `spin_move` however it turned."""

    def __init__(
        self,
        window: int = STUCK_WINDOW,
        move: float = STUCK_MOVE,
        turn: float = STUCK_TURN,
        spin_window: int = SPIN_WINDOW,
        spin_move: float = SPIN_MOVE,
    ):
        if window < 1 or spin_window < 1:
            raise ValueError(f"stuck windows must be >= 1 step, got {window}, {spin_window}")
        self.window, self.move, self.turn = window, move, turn
        self.spin_window, self.spin_move = spin_window, spin_move
        longest = max(window, spin_window) + 1
        self._poses: deque[tuple[float, float, float]] = deque(maxlen=longest)

    def clear(self) -> None:
        self._poses.clear()

    def update(self, pose) -> bool:
        """Record the pose after a step; True when the base is stuck (the class's rule)."""
        x, y, yaw = (float(v) for v in pose)
        self._poses.append((x, y, yaw))
        poses = list(self._poses)
        if len(poses) > self.window and all(
            math.hypot(px - x, py - y) < self.move and abs(wrap_angle(pyaw - yaw)) < self.turn
            for px, py, pyaw in poses[-(self.window + 1) :]
        ):
            return True
        return len(poses) > self.spin_window and all(
            math.hypot(px - x, py - y) < self.spin_move
            for px, py, _ in poses[-(self.spin_window + 1) :]
        )


def _gap(sim, pose: tuple[float, float, float], cap: float = GAP_CAP) -> float:
    """The robot's gap (m) to walls and furniture with the base at `pose`: its arm, gripper
    and what it holds (`clearance_at`, measured up to `cap`) and its base disc (footprints)."""
    arm = clearance_at(sim, base=pose, margin=cap)
    disc = float(sim.footprints.distance(pose[0], pose[1])) - float(sim.config.robot_radius)
    return min(arm, disc)


def unstick_steps(
    sim, clear: float = UNSTICK_CLEAR, nearest: float = UNSTICK_MIN, farthest: float = UNSTICK_MAX
) -> int:
    """Full-speed reverse steps that take a stuck base off what holds it: the fewest from
    `nearest` up to `farthest` after which the robot keeps `clear`; where none does, the one
    with the largest gap past `nearest` (`nearest`'s steps where no pose has one). The sim
    cuts short what the way back runs into."""
    step = reverse_step_m(sim)
    least = max(1, int(math.ceil(nearest / step - 1e-9)))
    most = max(least, int(farthest / step + 1e-9))
    best_n, best_gap = least, 0.0
    for n in range(least, most + 1):
        gap = _gap(sim, pose_behind(sim, n))
        if gap >= clear:
            return n
        if gap > best_gap:
            best_n, best_gap = n, gap
    return best_n


def turn_step_rad(sim) -> float:
    """How far one full-speed turn step turns the base (rad)."""
    return float(sim.config.base_max_angular * sim.config.policy_dt)


def unstick_turn(sim, back: int, angle: float = UNSTICK_TURN) -> int:
    """Signed full-speed turn steps after `back` reverse steps (+ left, - right): `angle`
    toward the side where the turned robot keeps the larger gap, left on a tie; 0 where
    neither turned pose keeps any."""
    n = max(1, round(angle / turn_step_rad(sim)))
    bx, by, yaw = pose_behind(sim, back)
    turn = n * turn_step_rad(sim)
    left, right = _gap(sim, (bx, by, yaw + turn)), _gap(sim, (bx, by, yaw - turn))
    if max(left, right) <= 0.0:
        return 0
    return n if left >= right else -n


def turn_action(layout, left: bool) -> np.ndarray:
    """A full-speed turn in place in a nav layout, no stop."""
    return layout.compose(base=np.array([0.0, 1.0 if left else -1.0]))


def unstick_moves(sim, layout) -> list[np.ndarray]:
    """The recovery's actions in a nav `layout`: `unstick_steps` full-speed reverse steps,
    then `unstick_turn`'s turn steps in place."""
    back = unstick_steps(sim)
    turn = unstick_turn(sim, back)
    return [reverse_action(layout)] * back + [turn_action(layout, turn > 0)] * abs(turn)


class UnstickingNav:
    """A nav skill with the HAB executor's recovery, for the skill's own episodes
    (`eval_skill nav --unstick`): the nav as the HAB chain runs it. After each of the
    skill's steps the base pose goes to a `StuckWatch`; when it says stuck (at most
    `max_unsticks` times an episode) the next actions are `unstick_moves`, during which the
    skill is not asked (its memory skips them, as in the executor), then the skill acts again.
    Any other attribute is the skill's."""

    def __init__(self, skill, layout, max_unsticks: int = MAX_UNSTICKS) -> None:
        if layout.stop is None or layout.base is None:
            raise ValueError("the nav unstick needs a nav layout (a base and a stop)")
        self.skill, self.layout, self.max_unsticks = skill, layout, max_unsticks
        self.watch = StuckWatch()
        self.unsticks = 0  # recoveries this episode
        self._moves: list[np.ndarray] = []
        self._skill_stepped = False

    def __getattr__(self, name: str):
        return getattr(self.skill, name)

    def reset(self, target, sim) -> None:
        self.skill.reset(target, sim)
        self.watch.clear()
        self.unsticks, self._moves, self._skill_stepped = 0, [], False

    def act(self, obs: dict, sim) -> np.ndarray:
        if self._skill_stepped:  # the pose after the skill's last step
            self._skill_stepped = False
            if self.watch.update(sim.base_pose()) and self.unsticks < self.max_unsticks:
                self._moves = unstick_moves(sim, self.layout)
                self.unsticks += 1
                self.watch.clear()
        if self._moves:
            return self._moves.pop(0)
        self._skill_stepped = True
        return self.skill.act(obs, sim)

    def is_done(self, obs: dict, sim) -> bool:
        return self.skill.is_done(obs, sim)


__all__ = [
    "MAX_UNSTICKS",
    "SPIN_WINDOW",
    "STUCK_WINDOW",
    "StuckWatch",
    "UNSTICK_CLEAR",
    "UNSTICK_MAX",
    "UnstickingNav",
    "turn_action",
    "turn_step_rad",
    "unstick_steps",
    "unstick_moves",
    "unstick_turn",
]
