"""Scripted navigation: follow NavMap.shortest_path to the goal pose precisely, then stop.

`PathFollower` is the base controller, shared with the base-moving pick/place oracles
(navigate-then-manipulate, for NoNav). The sim's base is kinematic: a velocity command moves
it exactly (unless a wall blocks it), so the follower drives to the goal point within
`pos_tol` and turns to the goal yaw within `yaw_tol` (a few cm and degrees) instead of
settling for the nav task's 1.5 m success radius: the nav goal is a pick-ready pose
(CONTRACTS §1), and stopping short leaves the target out of the arm's reach.

Driving: turn in place while the heading error to the next waypoint is large (a diff-drive
base cannot strafe, and the string-pulled path turns exactly at the inflated obstacle
boundary, so cutting a corner means touching it), else drive at full speed with a
proportional heading correction, and slow down only to land on the goal point.

Paths are planned on `planning_map`: the sim's (open doors as obstacles) with the open
drawers added (they overhang the base, which the sim lets drive under them, but not the
torso), first inflated for the resting arm (WIDE_RADIUS: it clipped door jambs), else at
the base's radius. A large in-place turn that would sweep the arm or a held object into a
loose object (`arm_sweep`) or the scene (`static_turn_clear`) goes the other way round,
or the base first backs away from the furniture.

Since issue 27 the world blocks the arm at walls, furniture, doors and drawers, and the arm
reaches ~0.7 m beyond the base disc, so every command passes `guard_base`: it is checked
against the exact clearance of the arm (and torso, head and a held object) at the pose it
leads to, and slowed, swerved, reversed or stopped when that would end closer than
BASE_GAP. Where the guard keeps overriding the path the base backs off and plans again; a
goal whose last turn is blocked both ways, or clear only the long way round (more than
`FollowerConfig.long_turn_max`, set at the base-moving skills' work poses), is entered
straight from a pre-goal point behind it (`_pre_goal`), and one that would put the arm into
a wall when driven into forward is backed into (`_arrival`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from rearrange.sim.apartment import DRAWER_HALF_W, DRAWER_HANDLE_OUT
from rearrange.sim.config import SimConfig
from rearrange.sim.geometry import wrap_angle
from rearrange.sim.simulator import Simulator
from rearrange.skills.arm_sweep import turn_clear
from rearrange.skills.base import SkillError
from rearrange.skills.oracle_common import OracleSkill


@dataclass(frozen=True)
class FollowerConfig:
    pos_tol: float = 0.03
    """m: the goal point counts as reached."""
    yaw_tol: float = math.radians(2.0)
    """rad: the goal heading counts as reached."""
    waypoint_tol: float = 0.08
    """m: an intermediate waypoint counts as passed."""
    turn_in_place: float = 0.8
    """rad: heading error above which the base only turns (below it, it arcs: the corner
    of a string-pulled path is on the inside of the turn, so arcing swings outward)."""
    reverse_dist: float = 0.6
    """m: a goal closer than this and behind the robot is reached by reversing."""
    densify: float = 0.4
    """m: max waypoint spacing, so doorways mid-segment get nudged off the walls too."""
    replan_every: int = 60
    """steps between path re-plans (also after a stuck recovery)."""
    stuck_window: int = 10
    """steps over which a driving base must move at least 1 cm."""
    backup_steps: int = 6
    """steps reversing after getting stuck."""
    sweep_turn: float = 0.3
    """rad: turns larger than this are checked for sweeping the arm into loose objects
    (`arm_sweep`); a blocked turn goes the other way round, or backs away first."""
    sweep_backup: int = 24
    """max steps reversing (at half speed) to make room for a turn."""
    blocked_yaw_ok: float = math.radians(25)
    """rad: a final turn to the goal heading that `guard_base` stops this close to it
    ends there."""
    guard_patience: int = 12
    """steps `guard_base` may override the path in a row before the base backs off and
    plans again."""
    long_turn_max: float | None = None
    """rad: the longest way round a goal's last turn may take where the short way is
    blocked; longer, the goal is entered from a pre-goal point (`_pre_goal`). None: any
    long way is turned. The base-moving manipulation skills set LONG_TURN_MAX at their work
    poses; plain nav keeps None (with the limit, 4 of 50 prepare_groceries nav legs to the
    fridge ran out of their 500 steps on the detour)."""


class PathFollower:
    """Drives the base along the NavMap's shortest path to a goal pose (x, y, yaw)."""

    def __init__(
        self,
        max_linear: float | None = None,
        max_angular: float | None = None,
        config: FollowerConfig | None = None,
    ) -> None:
        # m/s and rad/s at action 1; None reads SimConfig.base_max_linear / _angular.
        self.max_linear = max_linear
        self.max_angular = max_angular
        self.policy_dt = SimConfig().policy_dt  # s per step; command() reads the sim's
        self.cfg = config or FollowerConfig()
        self.goal = (0.0, 0.0, 0.0)
        self.reset(self.goal)

    def reset(self, goal: tuple[float, float, float]) -> None:
        self.goal = tuple(float(v) for v in goal)
        self.path: list[tuple[float, float]] = []
        self.steps = 0
        self._planned_at = 0
        self._trail: list[tuple[float, float]] = []
        self._backing = 0
        self.aligning = False
        self._turn_dir = 0.0  # sign of a committed in-place turn (0: none)
        self._no_skip_until = 0
        self._swept_back = 0
        self._arrive: str | None = None  # "forward" | "reverse": how the goal is entered
        self._guarded = 0  # consecutive steps `guard_base` overrode the path
        self._stage_goal: tuple | None = None  # the real goal while heading for a pre-goal
        self._align_flips = 0
        self._flips = 0  # turns `guard_base` reversed since the last back-off
        self._direct = False  # drive straight at the goal (after a pre-goal point)
        self._map = None  # the NavMap the current path was planned on
        self._narrow_until = 0  # plan on the base's own map until this step
        self._stalls = 0
        self._straight_in = False  # `straight_in` was asked for (`_skip_pre_goal` applies)

    ignore_parts: tuple[str, ...] = ()
    """Drawers `planning_map` leaves out (the one the skill works on)."""

    arm_at_goal = None
    """Arm joints the checks of the approach assume (`_pre_goal`, `_arrival`): None, the
    arm as it is; the base-moving skills bring it to rest while driving."""

    def straight_in(self, sim) -> None:
        """Approach the goal straight along its heading from a pre-goal point behind it
        (`_pre_goal`), when there is one: for stand poses close in front of furniture,
        where the base cannot turn (the arm would sweep into it) and a last sideways
        correction is impossible for a differential drive."""
        self._straight_in = True
        pre = self._pre_goal(sim, None)
        if pre is None or self._stage_goal is not None:
            return
        if self._can_go_straight(sim, self.goal):
            self._direct = True
            return
        self._stage_goal, self.goal = self.goal, (pre[0], pre[1], self.goal[2])

    def _can_go_straight(self, sim, goal) -> bool:
        """`drives_straight_in` from the base's pose to `goal` on the planning map."""
        pose = sim.base_pose()

        def line_clear() -> bool:
            nm = planning_map(sim, ignore=self.ignore_parts)
            return nm.line_of_sight(pose[:2], goal[:2])

        return drives_straight_in(pose, goal, line_clear)

    def _skip_pre_goal(self, sim) -> None:
        """On the way to a pre-goal point, go straight on to the real goal once the base
        faces it (`drives_straight_in`): a base that stopped 6 cm beside the pre-goal,
        facing the goal, otherwise drove a loop to enter the point exactly (seed 1's train
        fridge pick 15 did that until the step limit). Only for a `straight_in` approach
        (the fridge picks', where it was measured)."""
        if not self._straight_in or self._stage_goal is None or self._direct or self.aligning:
            return
        if self._can_go_straight(sim, self._stage_goal):
            self.goal, self._stage_goal = self._stage_goal, None
            self.path, self._direct = [], True

    def command(self, sim: Any, arm_next=None) -> np.ndarray | None:
        """The [linear, angular] base action in [-1, 1] for this step; None once at the goal.
        `arm_next`: the arm joints the same step ends at (default: where they are)."""
        self._skip_pre_goal(sim)
        cmd = self._nominal(sim)
        if cmd is None:
            return None
        safe = guard_base(sim, cmd, arm_next)
        if np.allclose(safe, cmd):
            self._guarded = 0
            return safe
        # The guard overrode the path: follow its turn from now on (else the two flip the
        # turn back and forth); overridden for long, back off and plan again. Turning to
        # the goal heading, a blocked last few degrees are given up (the arm would end in
        # the furniture the goal faces).
        if self.aligning:
            err = wrap_angle(self.goal[2] - float(sim.base_pose()[2]))
            if abs(err) < self.cfg.blocked_yaw_ok:
                if self._stage_goal is None:
                    return None
                self.goal, self._stage_goal = self._stage_goal, None  # on, straight in
                self.path, self.aligning, self._direct = [], False, True
                nxt = self._nominal(sim)
                return None if nxt is None else guard_base(sim, nxt, arm_next)
        self._guarded += 1
        if safe[1] * cmd[1] < 0:
            self._turn_dir = math.copysign(1.0, float(safe[1]))
            self._flips += 1
            if not self.aligning and self._flips > 2:  # blocked both ways round
                self._flips, self._guarded = 0, self.cfg.guard_patience + 1  # back off ...
                x, y, _ = (float(v) for v in sim.base_pose())
                near = math.hypot(self.goal[0] - x, self.goal[1] - y) < PRE_GOAL_NEAR
                pre = self._pre_goal(sim, None) if near and self._stage_goal is None else None
                if pre is not None:  # ... and come in straight from behind the goal
                    self._stage_goal, self.goal = self.goal, (pre[0], pre[1], self.goal[2])
            if self.aligning and self._stage_goal is None:
                self._align_flips += 1  # the turn to the goal heading is blocked both ways
                pre = self._pre_goal(sim, None) if self._align_flips >= 2 else None
                if pre is not None:  # turn at a pre-goal point, then drive straight in
                    self._stage_goal, self.goal = self.goal, (pre[0], pre[1], self.goal[2])
                    self.path, self.aligning, self._turn_dir = [], False, 0.0
        if self._guarded > self.cfg.guard_patience:
            self._guarded, self._turn_dir, self.path = 0, 0.0, []
            self._backing = self.cfg.backup_steps
            self._no_skip_until = self.steps + self.cfg.replan_every
            self._stalls += 1
            if self._stalls % 2 == 0:  # the wide map's path stalls too: the base's own
                self._narrow_until = self.steps + 2 * self.cfg.replan_every
        return safe

    def _nominal(self, sim: Any) -> np.ndarray | None:
        """The path-following command, before `guard_base`."""
        self.steps += 1
        if self.max_linear is None:
            self.max_linear = float(sim.config.base_max_linear)
        if self.max_angular is None:
            self.max_angular = float(sim.config.base_max_angular)
        self.policy_dt = float(sim.config.policy_dt)
        x, y, yaw = (float(v) for v in sim.base_pose())
        gx, gy, gyaw = self.goal
        dist = math.hypot(gx - x, gy - y)
        # Once aligning, a nudge of a few mm (arm contacts) must not restart the drive.
        if dist < self.cfg.pos_tol or (self.aligning and dist < 2.5 * self.cfg.pos_tol):
            self.aligning = True
            err = wrap_angle(gyaw - yaw)
            if abs(err) < self.cfg.yaw_tol:
                if self._stage_goal is not None:  # at the pre-goal: now straight in
                    self.goal, self._stage_goal = self._stage_goal, None
                    self.path, self.aligning, self._direct = [], False, True
                    return self._nominal(sim)
                return None
            err = self._clear_turn(sim, err)
            return np.array([0.0, self._turn(err if err is not None else wrap_angle(gyaw - yaw))])
        self.aligning = False
        if self._backing > 0:  # stuck recovery: reverse a little, then replan
            self._backing -= 1
            if self._backing == 0:
                self.path = []
            return np.array([-0.5, 0.0])
        if self._stuck(x, y):
            self._backing = self.cfg.backup_steps
            # a line-of-sight shortcut grazing an obstacle got it stuck: follow the
            # (nudged) grid path itself for a while
            self._no_skip_until = self.steps + self.cfg.replan_every
        if not self.path or self.steps - self._planned_at >= self.cfg.replan_every:
            self._plan(sim, x, y)
        wx, wy = self._next_waypoint(sim, x, y)
        final = len(self.path) == 1
        if final and self._arrive is None:
            self._arrive = self._arrival(sim, x, y)
        action = self._drive(x, y, yaw, wx, wy, final)
        if action[0] != 0.0 or abs(self._heading_err) < self.cfg.sweep_turn:
            self._turn_dir = 0.0
            return action
        err = self._clear_turn(sim, self._heading_err)
        if err is None:  # both ways sweep something: back away (arm first) if possible
            if self._swept_back < self.cfg.sweep_backup and self._room_behind(sim, x, y, yaw):
                self._swept_back += 1
                self.path = []  # replan from where the backing ends
                return np.array([-0.5, 0.0])
            return action
        return np.array([0.0, self._turn(err)])

    # --- keeping the arm clear of loose objects ----------------------------------------
    def _clear_turn(self, sim, err: float) -> float | None:
        """The turn to make for heading error `err`: the short way, or the long way round
        when only the short way sweeps the arm into an object; None when both do. A chosen
        direction is kept until the turn ends (else it would flip half way)."""
        if abs(err) < self.cfg.sweep_turn:
            self._turn_dir = 0.0
            return err
        if self._turn_dir:
            return err if err * self._turn_dir > 0 else err - math.copysign(2 * math.pi, err)
        long_way = err - math.copysign(2 * math.pi, err)
        # clear of walls and furniture first (the world blocks the arm there), then of
        # loose objects (it shoves them)
        static = [c for c in (err, long_way) if static_turn_clear(sim, c)]
        for cand in static or (err, long_way):
            if turn_clear(sim, cand):
                self._turn_dir = math.copysign(1.0, cand)
                return cand
        if static:
            self._turn_dir = math.copysign(1.0, static[0])
            return static[0]
        return None

    def _pre_goal(self, sim, last: tuple[float, float] | None) -> tuple[float, float] | None:
        """A waypoint PRE_GOAL behind the goal along its heading when the turn to that
        heading at the goal would sweep the arm into the scene both ways round, or the
        short way and the long way round is longer than `cfg.long_turn_max` (stand poses
        beside the open fridge): the base turns there instead and drives the last stretch
        straight in. `last`: the path point before the goal (None: needed
        anyway). None when not needed or not possible."""
        if getattr(sim, "model", None) is None or getattr(sim, "idx", None) is None:
            return None
        from rearrange.skills.oracle_motion import clearance_at

        gx, gy, gyaw = self.goal
        if last is not None:
            if math.hypot(gx - last[0], gy - last[1]) < 0.05:
                return None
            heading = math.atan2(gy - last[1], gx - last[0])
            if self._arrival(sim, last[0], last[1]) == "reverse":
                heading += math.pi
            delta = wrap_angle(gyaw - heading)
            if abs(delta) < self.cfg.sweep_turn:
                return None
            pose = (gx, gy, heading)
            long_way = delta - math.copysign(2 * math.pi, delta)
            if static_turn_clear(sim, delta, pose):
                return None
            limit = self.cfg.long_turn_max
            turnable = limit is None or abs(long_way) <= limit
            if turnable and static_turn_clear(sim, long_way, pose):
                return None
        u = (math.cos(gyaw), math.sin(gyaw))
        for d in PRE_GOAL:
            px, py = gx - d * u[0], gy - d * u[1]
            if not sim.base_fits(px, py):  # the exact base check (the grid is coarser)
                continue
            gap = clearance_at(sim, base=(px, py, gyaw), arm=self.arm_at_goal, whole_robot=False)
            if gap < BASE_GAP:
                continue
            return (px, py)
        return None

    def _arrival(self, sim, x: float, y: float) -> str:
        """How to enter the goal point: "reverse" when, driving in forward, the arm would
        end in a wall or furniture there (a goal facing away from a wall close behind it)
        and backing in leaves it clear; else "forward"."""
        if getattr(sim, "model", None) is None or getattr(sim, "idx", None) is None:
            return "forward"
        from rearrange.skills.oracle_motion import clearance_at

        gx, gy, _ = self.goal
        if math.hypot(gx - x, gy - y) < self.cfg.reverse_dist:
            return "forward"
        heading = math.atan2(gy - y, gx - x)
        margin = BASE_GAP + 0.03
        arm = self.arm_at_goal
        fwd = clearance_at(sim, (gx, gy, heading), arm, margin=margin, whole_robot=False)
        if fwd >= BASE_GAP:
            return "forward"
        rev = clearance_at(sim, (gx, gy, heading + math.pi), arm, margin=margin, whole_robot=False)
        return "reverse" if rev > fwd else "forward"

    def _room_behind(self, sim, x: float, y: float, yaw: float, step: float = 0.1) -> bool:
        return bool(
            planning_map(sim, ignore=self.ignore_parts).is_navigable(
                x - step * math.cos(yaw), y - step * math.sin(yaw)
            )
        )

    # --- path ------------------------------------------------------------------------
    def _plan(self, sim, x: float, y: float) -> None:
        self._arrive = None
        gx, gy, _ = self.goal
        if self._direct:  # from a pre-goal point: straight in, no detour round grid cells
            self.path, self._planned_at, self._arrive = [(gx, gy)], self.steps, "forward"
            return
        # On a map inflated for the arm first (it sticks out ~6 cm past the base disc on
        # the right: it clipped door jambs), on the base's own map where that finds nothing.
        nm = planning_map(sim, wide=True, ignore=self.ignore_parts)
        raw = nm.shortest_path((x, y), (gx, gy))
        if not raw or self._narrow_until > self.steps:
            nm = planning_map(sim, ignore=self.ignore_parts)
            raw = nm.shortest_path((x, y), (gx, gy)) or [(x, y), (gx, gy)]
        self._map = nm
        dense = _densify(raw, self.cfg.densify)
        inner = [_nudge(nm, p) for p in dense[1:-1]]
        # The path starts and ends at snapped cells; the real goal may sit a few cm off
        # the grid (poses come from the sim's exact footprint check).
        self.path = inner + [(gx, gy)]
        self._planned_at = self.steps
        pre = self._pre_goal(sim, inner[-1] if inner else (x, y))
        if pre is not None:
            self.path.insert(len(self.path) - 1, pre)

    def _next_waypoint(self, sim, x: float, y: float) -> tuple[float, float]:
        """Pops passed waypoints, and skips ahead when the next-but-one is in plain view
        (after a recovery or a slide along a wall the robot may be past a waypoint)."""
        nm, tol = self._map or planning_map(sim, ignore=self.ignore_parts), self.cfg.waypoint_tol
        while len(self.path) > 1:
            px, py = self.path[0]
            skip_ok = self.steps >= self._no_skip_until and nm.line_of_sight((x, y), self.path[1])
            if math.hypot(px - x, py - y) < tol or skip_ok:
                self.path.pop(0)
                continue
            break
        return self.path[0]

    def _stuck(self, x: float, y: float) -> bool:
        """True when the base barely moved over the last window of driving steps."""
        self._trail.append((x, y))
        if len(self._trail) < self.cfg.stuck_window:
            return False
        x0, y0 = self._trail.pop(0)
        if math.hypot(x - x0, y - y0) < 0.01 and self._driving:
            self._trail.clear()
            return True
        return False

    # --- control ---------------------------------------------------------------------
    def _drive(self, x, y, yaw, wx, wy, final: bool) -> np.ndarray:
        remaining = math.hypot(wx - x, wy - y)
        err = wrap_angle(math.atan2(wy - y, wx - x) - yaw)
        sign = 1.0
        backwards = self._arrive == "reverse" and remaining > self.cfg.pos_tol
        if final and (backwards or (remaining < self.cfg.reverse_dist and abs(err) > 2.0)):
            err, sign = wrap_angle(err + math.pi), -1.0  # goal just behind: back up to it
        angular = self._turn(err)
        self._heading_err = err
        if abs(err) > self.cfg.turn_in_place:
            linear = 0.0
        elif final:
            # land on the goal point: at most the remaining distance this step
            linear = min(1.0, remaining / (self.max_linear * self.policy_dt)) * math.cos(err)
        else:
            linear = math.cos(err) ** 2
        self._driving = linear > 0
        return np.array([sign * linear, angular])

    def _turn(self, err: float) -> float:
        """Angular action that turns by `err` this step, or at full speed when larger."""
        return float(np.clip(err / (self.max_angular * self.policy_dt), -1.0, 1.0))

    _driving = False
    _heading_err = 0.0


class OracleNav(OracleSkill):
    name = "nav"
    # The follower backs up and re-plans where it is stuck; the HAB executor's own step back
    # (skills/nav_unstick.py) stays out of its way: on top of it, the scripted chain lost 13
    # episodes and gained 6 (seed 0, benchmarks/RESULTS.md, "The nav unsticks").
    recovers_itself = True

    def __init__(
        self,
        base_movement: bool = True,
        step_limit: int | None = None,
        max_linear: float | None = None,
        max_angular: float | None = None,
        config: FollowerConfig | None = None,
    ) -> None:
        super().__init__(base_movement=True, step_limit=step_limit)
        self.follower = PathFollower(max_linear, max_angular, config)

    @property
    def path(self) -> list[tuple[float, float]]:
        return self.follower.path

    def _reset(self) -> None:
        if self.target.nav_goal is None:
            raise SkillError("nav skill needs SkillTarget.nav_goal = (x, y, yaw)")
        self.follower.reset(self.target.nav_goal)

    def _act(self, obs: dict, sim: Any) -> np.ndarray:
        base = self.follower.command(sim)
        if base is None:
            self.phase = "stop"
            self.stop_called = True
            return self.layout.compose(base=np.zeros(2), stop=True)
        self.phase = "align" if self.follower.aligning else "drive"
        return self.layout.compose(base=base, stop=False)


BASE_GAP = 0.02
"""m: the clearance the arm (and a held object) keeps to the scene while the base moves
(`guard_base`)."""
BODY_GAP = 0.01
"""m: the clearance the torso and head keep (to an open drawer the base may drive under)."""


TURN_SAMPLE = 0.12  # rad between the headings `static_turn_clear` checks
PRE_GOAL = (0.5, 0.6, 0.4, 0.7, 0.35)  # m behind the goal a pre-goal waypoint may stand
PRE_GOAL_NEAR = 0.8  # m: blocked turns this close to the goal switch to a pre-goal approach
DIRECT_MAX = 1.0  # m: `drives_straight_in` only this close to the goal point
DIRECT_YAW = math.radians(40.0)  # rad: ... facing the goal point and its heading this well


def drives_straight_in(pose, goal, line_clear) -> bool:
    """The base at `pose` can take the last stretch to `goal` straight: within DIRECT_MAX of
    the goal point, facing it and the goal heading within DIRECT_YAW, with `line_clear()`
    (the straight segment there navigable; asked last, it is the costly test). Why: a
    base-moving pick spawned in front of an open fridge was sent to the pre-goal point
    behind its stand pose first, and the turns on the way (between a wall and the door,
    seed 1's fridge val pick 27) or at the pre-goal could not clear the door: it turned on
    the spot to the step limit where driving on would have done."""
    x, y, yaw = (float(v) for v in pose)
    gx, gy, gyaw = (float(v) for v in goal)
    if math.hypot(gx - x, gy - y) > DIRECT_MAX:
        return False
    to_goal = math.atan2(gy - y, gx - x)
    if abs(wrap_angle(to_goal - yaw)) > DIRECT_YAW or abs(wrap_angle(gyaw - yaw)) > DIRECT_YAW:
        return False
    return bool(line_clear())


# rad: the base-moving manipulation skills' `FollowerConfig.long_turn_max` at their work
# poses. A 290-degree turn at the open fridge took 60 of close_fridge --base-movement's
# 300 steps.
LONG_TURN_MAX = math.radians(200)


def static_turn_clear(sim, delta: float, pose=None) -> bool:
    """Whether turning in place by `delta` rad (from `pose`, default the base's) keeps the
    arm (and a held object) BASE_GAP clear of walls, furniture, doors and drawers at every
    TURN_SAMPLE of the turn (the arm as it is now). True for sims without a MuJoCo model."""
    if getattr(sim, "model", None) is None or getattr(sim, "idx", None) is None:
        return True
    from rearrange.skills.oracle_motion import clearance_at

    x, y, yaw = (float(v) for v in (sim.base_pose() if pose is None else pose))
    n = max(1, math.ceil(abs(delta) / TURN_SAMPLE))
    margin = BASE_GAP + 0.01
    for k in range(1, n + 1):
        pose = (x, y, yaw + delta * k / n)
        if clearance_at(sim, base=pose, margin=margin, whole_robot=False) < BASE_GAP:
            return False
    return True


def base_step(sim, pose, cmd) -> np.ndarray:
    """The base pose one step of `cmd` leads to (the sim's unobstructed base motion:
    `RearrangeSim._base_goal`, midpoint heading)."""
    cfg = sim.config
    v = np.clip(np.asarray(cmd, dtype=np.float64), -1.0, 1.0)
    x, y, yaw = (float(p) for p in pose)
    new_yaw = yaw + v[1] * cfg.base_max_angular * cfg.policy_dt
    mid = 0.5 * (yaw + new_yaw)
    dist = v[0] * cfg.base_max_linear * cfg.policy_dt
    return np.array([x + dist * math.cos(mid), y + dist * math.sin(mid), new_yaw])


def guard_base(sim, cmd: np.ndarray, arm_next=None) -> np.ndarray:
    """`cmd`, or the nearest of a few slower or different base commands, such that the
    arm and a held object end the step clear of walls, furniture, doors and drawers.

    Why: the world blocks the arm there (issue 27), and the arm reaches ~0.7 m beyond the
    0.3 m base disc that the NavMap and the sim's 2-D base check cover, so turning beside
    a wall or the fridge swept the gripper into it and held it there at 100-350 N a step.
    Loose objects count too (the arm swept the target off the counter while the base
    turned to it), and the torso and head (an open drawer overhangs the base's footprint,
    which the sim's 2-D check lets the base drive under: the torso met its handle). A command that would end closer than BASE_GAP and closer than now is
    replaced by, in
    order: the same at half and quarter speed, its turn alone, its drive alone, a
    reverse (the arm is in front: backing off opens the gap), the other turn; else a
    stop. Sims without a MuJoCo model (test doubles) pass `cmd` through."""
    if getattr(sim, "model", None) is None or getattr(sim, "idx", None) is None:
        return cmd
    from rearrange.skills.oracle_motion import clearance_at, scene_geoms

    cmd = np.asarray(cmd, dtype=np.float64)
    pose = np.asarray(sim.base_pose(), dtype=np.float64)
    margin = BASE_GAP + 0.05
    sg = scene_geoms(sim)

    def clear(base) -> float:
        """The arm's gap, less the torso and head's shortfall from BODY_GAP (they sit
        within the base disc: only an overhang, an open drawer, comes near them)."""
        arm = clearance_at(sim, base, arm_next, margin, objects=True, geoms=sg.arm)
        body = clearance_at(sim, base, None, margin, geoms=sg.body)
        return min(arm, body - BODY_GAP + BASE_GAP)

    def gap(c) -> float:
        return clear(base_step(sim, pose, c))

    g = gap(cmd)
    if g >= BASE_GAP:
        return cmd
    now = clear(None)
    if g > now + 1e-3:  # opening the gap: fine
        return cmd
    lin, ang = float(cmd[0]), float(cmd[1])
    turn = math.copysign(1.0, ang) if abs(ang) > 1e-6 else 1.0
    options = [cmd * 0.5, cmd * 0.25, np.array([0.0, ang]), np.array([lin, 0.0])]
    if lin > 0:  # swerve: a drive past a door jamb or a corner clears with a slight turn
        options += [np.array([0.5 * lin, s * 0.6]) for s in (1.0, -1.0)]
    options += [np.array([0.0, -turn])]
    if now < BASE_GAP:  # already too close: back off (the arm is in front)
        options += [np.array([-0.5, 0.0]), np.array([-0.5, 0.5 * ang]), np.array([-0.25, 0.0])]
    for c in options:
        if not np.any(c):
            continue
        g = gap(c)
        if g >= BASE_GAP or g > now + 1e-3:
            return c
    return np.zeros(2)


DRAWER_OPEN_MIN = 0.03  # m: a drawer out further than this is an obstacle to plan round
WIDE_RADIUS = 0.38  # m: the base disc (0.3) plus the resting forearm's overhang
_DRAWER_MAPS: dict = {}


def planning_map(sim: Simulator, wide: bool = False, ignore: tuple[str, ...] = ()):
    """The NavMap paths are planned on: the sim's (open doors as obstacles), plus the part
    of every open drawer that sticks out of its cabinet. Why the drawers: they overhang
    the base (their bottom is 0.6 m up), so the sim's base check lets the base under them,
    but the torso (0.36-1.18 m, 0.28 m radius) meets their front and handle; a nav leg past
    the drawer that set_table leaves open drove into it and spun there. `wide`: obstacles
    inflated by WIDE_RADIUS instead of the base's radius (`PathFollower._plan`). `ignore`:
    drawers left out (the one a skill is about to close: its work pose is in front of it)."""
    nm = sim.planning_navmap()
    layout = getattr(sim, "layout", None)
    if layout is None or not hasattr(sim, "articulation_pos"):
        return nm
    boxes = []
    for art in layout.articulations:
        if art.kind != "slide" or art.name in ignore:
            continue
        q = float(sim.articulation_pos(art.name)) - art.closed
        if q < DRAWER_OPEN_MIN:
            continue
        f = layout.furniture_named(art.furniture)
        front = np.array([math.cos(f.front_yaw), math.sin(f.front_yaw)])
        handle = np.asarray(art.handle_closed_pos[:2], dtype=np.float64)
        centre = handle + front * (0.5 * q - DRAWER_HANDLE_OUT)
        boxes.append((*centre, 0.5 * q + DRAWER_HANDLE_OUT, DRAWER_HALF_W, f.front_yaw))
    if not boxes and not wide:
        return nm
    key = (id(nm), wide, tuple(np.round(np.asarray(boxes), 2).ravel().tolist()))
    hit = _DRAWER_MAPS.get(key)
    if hit is None:
        from rearrange.sim.navmap import NavMap

        extra = list(getattr(nm, "extra_boxes", ())) + boxes
        radius = WIDE_RADIUS if wide else nm.robot_radius
        hit = NavMap(layout, robot_radius=radius, extra_boxes=extra)
        if len(_DRAWER_MAPS) > 8:
            _DRAWER_MAPS.clear()
        _DRAWER_MAPS[key] = hit
    return hit


_RING = [(math.cos(a), math.sin(a)) for a in np.linspace(0, 2 * math.pi, 16, endpoint=False)]


def _nudge(navmap, p: tuple[float, float], probe: float = 0.15, shift: float = 0.1):
    """Moves a path corner away from nearby obstacles.

    String-pulled paths turn exactly at the inflated obstacle boundary, and the grid's
    discretisation leaves the real footprint a few cm short of it there (doorways).
    """
    px, py = float(p[0]), float(p[1])
    away = np.zeros(2)
    for dx, dy in _RING:
        if not navmap.is_navigable(px + probe * dx, py + probe * dy):
            away -= (dx, dy)
    norm = float(np.linalg.norm(away))
    if norm < 1e-9:
        return px, py
    for scale in (1.0, 0.5):
        q = (px + shift * scale * away[0] / norm, py + shift * scale * away[1] / norm)
        if navmap.is_navigable(*q):
            return q
    return px, py


def _densify(path, spacing: float) -> list[tuple[float, float]]:
    """Inserts points so consecutive waypoints are at most `spacing` apart."""
    out = [(float(path[0][0]), float(path[0][1]))]
    for a, b in zip(path[:-1], path[1:]):
        n = max(1, math.ceil(math.hypot(b[0] - a[0], b[1] - a[1]) / spacing))
        for k in range(1, n + 1):
            out.append((a[0] + (b[0] - a[0]) * k / n, a[1] + (b[1] - a[1]) * k / n))
    return out
