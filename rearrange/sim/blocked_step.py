"""How a policy step ends where the world stops the robot (`SimConfig.world_blocks_robot`,
docs/DESIGN.md §3): the part of `RearrangeSim` that resolves a step's move against walls,
furniture, doors and drawers before the physics, and re-measures what moved after it.

Why geometric blocking and not contacts: the module doc of `rearrange.sim.world`. Here:
the base's footprint check and tangent slide (`_base_goal`), the end-pose collision pass
and the bisection for the free fraction of the arm and base move (`_free_goal`, with the
arm and base slides of `SimConfig.arm_slide` / `robot_slide`), the substep loop
(`_physics`), the held door's re-measure (`_check_held_part`), loose parts stopped at the
robot (`_stop_free_parts`) and the static depths and contact force the task reads.
`BlockedStep` is a mixin: its methods read the sim's model, data and config.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import mujoco
import numpy as np

from rearrange.sim.arm_slide import contact_rows, project_move
from rearrange.sim.furniture_geoms import STATIC_BIT
from rearrange.sim.geometry import wrap_angle
from rearrange.sim.placement.footprints import Footprints

PENETRATION_STIFFNESS = 1.0e4
"""N per metre of robot penetration into walls/fixed furniture (1 cm reads as 100 N), the
force those contacts count for in `contact_force()` (`rearrange.sim.world`'s module doc)."""


# m or rad: a loose door or drawer that moved more than this in a step is re-measured
# against the robot (`_stop_free_parts`); below it, solver jitter of parts at rest
FREE_PART_MOVED = 1e-6
# rad: an arm move the slide cut to less than this (every joint) is no move (arm_slide);
# m or rad: a base part (robot_slide) smaller than this is none (with arm_slide_with_base)
SLIDE_MIN_MOVE = 1e-4


@dataclass(frozen=True)
class _StepStart:
    """A step's starting state, kept while a door or drawer is held (`_held_part_guard`)."""

    qpos: np.ndarray
    qvel: np.ndarray
    act: np.ndarray
    qacc_warmstart: np.ndarray
    depth: tuple[float, float] | None


class BlockedStep:
    """`RearrangeSim`'s step resolution against the static world (module doc)."""

    def _base_goal(self, start: np.ndarray, base_vel) -> np.ndarray:
        cfg = self.config
        v = np.clip(np.asarray(base_vel, dtype=np.float64).reshape(2), -1, 1)
        yaw = start[2] + v[1] * cfg.base_max_angular * cfg.policy_dt
        mid = start[2] + 0.5 * (yaw - start[2])  # midpoint heading: straighter arcs
        dist = v[0] * cfg.base_max_linear * cfg.policy_dt
        x, y = start[0] + dist * math.cos(mid), start[1] + dist * math.sin(mid)
        doors = self.door_footprints()
        if not self._blocked(x, y, start, doors):
            return np.array([x, y, yaw])
        self.collision_count += 1
        if cfg.base_slide:
            for cx, cy in (self._tangent_slide(start, x, y, doors), (x, start[1]), (start[0], y)):
                moves = (cx, cy) != (start[0], start[1])
                if moves and not self._blocked(cx, cy, start, doors):
                    return np.array([cx, cy, yaw])
        return np.array([start[0], start[1], yaw])

    def _tangent_slide(self, start, x: float, y: float, doors) -> tuple[float, float]:
        """The move start -> (x, y) less its component into the nearest wall, furniture or
        door box (along the normal from the box's closest point to the base centre)."""
        sx, sy = float(start[0]), float(start[1])
        nearest = [self.footprints.nearest_point(sx, sy)]
        if doors is not None:
            nearest.append(doors.nearest_point(sx, sy))
        px, py = min(nearest, key=lambda p: math.hypot(sx - p[0], sy - p[1]))
        nx, ny = sx - px, sy - py
        norm = math.hypot(nx, ny)
        mx, my = x - sx, y - sy
        into = (mx * nx + my * ny) / norm if 1e-9 < norm < math.inf else 0.0
        if into >= 0.0:
            return x, y
        return sx + mx - into * nx / norm, sy + my - into * ny / norm

    def _blocked(self, x: float, y: float, start: np.ndarray, doors: Footprints | None) -> bool:
        """Walls/furniture block any overlap. A door blocks only moves that go deeper into it:
        a door swung into the robot (by the arm, or set open at reset) must not trap it."""
        r = self.config.robot_radius
        if self.footprints.collides(x, y, r):
            return True
        if doors is None:
            return False
        depth = r - doors.distance(x, y)
        return depth > 0 and depth > r - doors.distance(start[0], start[1]) + 1e-9

    def _free_goal(self, arm_start, base_start, base_goal) -> np.ndarray:
        """Cut this step's move (arm_start -> arm_target, base_start -> base_goal) short where
        its end pose would put the robot into static geometry: the largest fraction (by
        bisection) whose pose is no deeper than `_depth_cap()`. Sets `arm_target` and the end
        pose's depths (`_end_depth`); returns the base goal."""
        arm_move, base_move = self.arm_target - arm_start, base_goal - base_start
        start = self._depth_now(arm_start, base_start)
        if not (arm_move.any() or base_move.any()):
            self._end_depth = start
            return base_goal
        cap = self._depth_cap()
        end = self._depth_at(self.arm_target, base_goal)
        if end[0] <= cap:
            self._end_depth = end
            self._note_depth(end[0])
            return base_goal
        lo, lo_depth = self._free_fraction(arm_start, arm_move, base_start, base_move, cap, start)
        if lo == 0.0 and self._entry_depth == 0.0:
            # Stuck at the start: was it put into the geometry behind our back (a door that
            # swung into the arm)? Then it may leave as from a placed pose. The held
            # handle's bar alone (the re-measure after the physics lets the door turn it
            # into the fingers) gets an entry of its own (`_bar_entry`): an entry depth
            # taken from it raised the cap for every part, and a learned open_fridge's
            # held panel went 4.4 cm into the gripper.
            fresh = self._depth_at(arm_start, base_start)
            if fresh[0] > self.config.block_depth:
                if self._depth_pair()[0] > self.config.block_depth:  # not the bar alone
                    self._start_depth, self._entry_depth = fresh, fresh[0]
                    return self._free_goal(arm_start, base_start, base_goal)
                if self._bar_entry == 0.0:  # the bar alone: it may leave, the rest may not
                    self._bar_entry = self._bar_depth_in_contacts() - self._grip_allowance
                    self._start_depth = self._depth_at(arm_start, base_start)
                    return self._free_goal(arm_start, base_start, base_goal)
        self.blocked_steps += 1
        cfg = self.config
        if lo == 0.0 and base_move.any() and cfg.robot_slide:
            part = self._free_base_part(arm_start, base_start, base_move, cap)
            if part is not None:
                # ... and the arm slides from the base part's pose (`SimConfig.arm_slide`):
                # the base part alone (often a sliver of a turn) left the arm where it was,
                # and a deterministic policy froze asking for the same step again
                slid = None
                if arm_move.any() and cfg.arm_slide and cfg.arm_slide_with_base:
                    slid = self._slid_arm_move(arm_start, part[0], arm_move, cap)
                return self._take_slide(arm_start, part[0], part[1], slid)
        if lo == 0.0 and arm_move.any() and cfg.arm_slide:
            slid = self._slid_arm_move(arm_start, base_start, arm_move, cap)
            if slid is not None:
                return self._take_slide(arm_start, base_start.copy(), None, slid)
        self.arm_target = arm_start + lo * arm_move
        self._end_depth = lo_depth
        self._note_depth(lo_depth[0])
        return base_start + lo * base_move

    def _take_slide(self, arm_start, base_goal, base_depth, slid) -> np.ndarray:
        """End a wholly blocked step on a slide: the arm at `arm_start` plus the slid move
        (`_slid_arm_move`'s (move, end depths)), or held there when `slid` is None with the
        end depths `base_depth` of the base part alone; returns the base goal."""
        if slid is None:
            self.arm_target, self._end_depth = arm_start.copy(), base_depth
        else:
            self.arm_target, self._end_depth = arm_start + slid[0], slid[1]
            self.arm_slid_steps += 1
        self._note_depth(self._end_depth[0])
        return base_goal

    def _slid_arm_move(self, arm_start, base_start, arm_move, cap):
        """A wholly blocked step's arm move less what drives into the contacts of the start
        pose (`arm_slide.project_move`), the base still, cut short like any move: (move,
        end depths), or None when nothing of it is free (`SimConfig.arm_slide`)."""
        m, d, idx = self.model, self.data, self.idx
        self._depth_at(arm_start, base_start)  # the start pose's contacts in data.contact
        mujoco.mj_comPos(m, d)  # for mj_jac
        held = self.gripper.held_articulation
        skip = self.idx.art_grip_geoms[held] if held is not None else np.zeros(0, dtype=int)
        static = (m.geom_contype & STATIC_BIT).astype(bool)
        rows, depths = contact_rows(m, d, idx.robot_geoms, static, idx.arm_dof, skip)
        move = project_move(rows, depths, arm_move, cap)
        if np.abs(move).max() < SLIDE_MIN_MOVE:
            return None
        end = self._depth_at(arm_start + move, base_start)
        if end[0] <= cap:
            return move, end
        still = np.zeros_like(base_start)
        lo, lo_depth = self._free_fraction(arm_start, move, base_start, still, cap, None)
        return (lo * move, lo_depth) if lo > 0.0 else None

    def _free_fraction(self, arm_start, arm_move, base_start, base_move, cap, start_depth):
        """(fraction, its depths): the largest fraction of the move, by bisection
        (`block_search_steps`), whose pose is no deeper than `cap`; (0, start_depth) if none."""
        lo, lo_depth, hi = 0.0, start_depth, 1.0
        for _ in range(self.config.block_search_steps):
            mid = 0.5 * (lo + hi)
            depth = self._depth_at(arm_start + mid * arm_move, base_start + mid * base_move)
            if depth[0] <= cap:
                lo, lo_depth = mid, depth
            else:
                hi = mid
        return lo, lo_depth

    def _free_base_part(self, arm_start, base_start, base_move, cap):
        """A base move the whole robot could not start (what it carries, the arm or a held
        object, is against something): its first part that is free with the arm where it is,
        of the turn alone, the translation alone, then its x-only and y-only parts
        (`SimConfig.robot_slide`). (base goal, its depths), or None."""
        dx, dy, dyaw = (float(v) for v in base_move)
        doors = self.door_footprints()
        least = SLIDE_MIN_MOVE if self.config.arm_slide_with_base else 0.0
        for part in ((0.0, 0.0, dyaw), (dx, dy, 0.0), (dx, 0.0, 0.0), (0.0, dy, 0.0)):
            if max(abs(v) for v in part) <= least:
                continue  # nothing, or a sliver (a turn asked as 0.0 in float32)
            goal = base_start + np.asarray(part)
            if (part[0] or part[1]) and self._blocked(goal[0], goal[1], base_start, doors):
                continue
            depth = self._depth_at(arm_start, goal)
            if depth[0] <= cap:
                return goal, depth
        return None

    def _depth_cap(self) -> float:
        """Deepest overlap a step may end in: `block_depth`; from a pose placed inside the
        geometry (reset, a set_* call, a door swung into it) its depth then plus
        `block_depth`, so the arm can leave along paths that are briefly deeper (the overlap
        depth is the shortest way out, which jumps as the way out changes) but never
        ratchets in."""
        return self.config.block_depth + self._entry_depth

    def _note_depth(self, depth: float) -> None:
        if depth <= self.config.block_depth:
            self._entry_depth = 0.0  # out: the normal cap again

    def _depth_now(self, arm_q, base_q) -> tuple[float, float]:
        """(deepest, summed) static depth of the pose the robot is in (cached per pose; a pose
        set from outside that overlaps deeper than `block_depth` becomes the entry depth)."""
        if self._start_depth is None:
            self._start_depth = self._depth_at(arm_q, base_q)
            deep = self._start_depth[0] > self.config.block_depth
            self._entry_depth = self._start_depth[0] if deep else 0.0
        return self._start_depth

    def _depth_at(self, arm_q, base_q) -> tuple[float, float]:
        """(deepest, summed) depth of the robot's overlaps with static geometry with the arm
        at `arm_q` and the base at `base_q` (kinematics only: nothing else moves)."""
        d, idx = self.data, self.idx
        d.qpos[idx.arm_qpos] = arm_q
        d.qpos[idx.base_qpos] = base_q
        mujoco.mj_kinematics(self.model, d)
        return self._depth_pair(self._grip_allowance + self._bar_entry)

    def _physics(self, arm_start, base_start, base_goal) -> None:
        m, d, idx, cfg = self.model, self.data, self.idx, self.config
        n = cfg.substeps
        vel = self._robot_vel  # robot dofs: zero except the driven arm and base joints
        vel[self._arm_in_robot] = (self.arm_target - arm_start) / cfg.policy_dt
        vel[self._base_in_robot] = (base_goal - base_start) / cfg.policy_dt
        start = np.concatenate([arm_start, base_start, self._kin_fixed])
        goal = np.concatenate([self.arm_target, base_goal, self._kin_fixed])
        path = start + self._alphas * (goal - start)  # [substeps, joints]: linear interpolation
        kin, dofs = self._kin_qpos, idx.robot_dof
        before = self._held_part_guard(arm_start, base_start)
        art_start = d.qpos[self._art_qpos]
        force = 0.0
        for k in range(n):
            d.qpos[kin] = path[k]
            d.qvel[dofs] = vel
            mujoco.mj_step(m, d)
            force += self._robot_contact_force()
        # Land exactly on the targets; update poses (no collision pass: contacts are fresh).
        goal[self._kin_yaw] = wrap_angle(goal[self._kin_yaw])
        d.qpos[kin] = goal
        d.qvel[dofs] = 0.0
        self._refresh_poses()
        if self.config.world_blocks_robot:
            # The end pose's depths came from _free_goal's pass; only a door or drawer that
            # moved during the step can differ, and the one the gripper holds is re-measured.
            self._start_depth = self._end_depth
            if self.config.stop_loose_parts:
                self._stop_free_parts(art_start)
            if before is not None:
                self._check_held_part(before, arm_start)
        else:
            self._start_depth = self._depth_pair()
        self.static_depth = self._start_depth[0]
        self._contact_force = force / n + PENETRATION_STIFFNESS * self._start_depth[1]
        if self._contact_force > 0:
            self.collision_count += 1

    def _grip_depth_now(self) -> float:
        """How far the gripper may sit in the bar and posts of the handle it has just
        grasped: its overlap with them now, at least `block_depth`. The step's blocking check
        counts the held handle beyond it, so the arm cannot push the gripper on through the
        bar (a policy that did, and let go, was left 4 cm inside it); the physics' own
        motion of the held door is not checked against the handle (the hold lags the
        gripper, which then sits a little deeper while it pushes). 0 when none is held."""
        if self.gripper.held_articulation is None:
            return 0.0
        self.collide_with_static()
        return max(self._bar_depth_in_contacts(), self.config.block_depth)

    def _bar_depth_in_contacts(self) -> float:
        """Deepest robot overlap with the held handle's bar and posts in `data.contact` (the
        last collision pass); 0 when nothing articulated is held."""
        held, d = self.gripper.held_articulation, self.data
        if held is None or d.ncon == 0:
            return 0.0
        g = d.contact.geom[: d.ncon]
        robot = self.idx.robot_geoms[g].any(axis=1)
        on_handle = np.isin(g, self.idx.art_grip_geoms[held]).any(axis=1)
        depth = -d.contact.dist[: d.ncon][robot & on_handle]
        return float(depth.max()) if depth.size else 0.0

    def _held_part_guard(self, arm_start, base_start) -> _StepStart | None:
        """The state to return to if the held door or drawer ends this step inside the robot
        (`_check_held_part`); None when nothing articulated is held or the world does not
        block the robot."""
        if not self.config.world_blocks_robot or self.gripper.held_articulation is None:
            return None
        d, idx = self.data, self.idx
        qpos = d.qpos.copy()  # _free_goal's probes left trial poses in the robot's joints
        qpos[idx.arm_qpos] = arm_start
        qpos[idx.base_qpos] = base_start
        return _StepStart(
            qpos, d.qvel.copy(), d.act.copy(), d.qacc_warmstart.copy(), self._start_depth
        )

    def _check_held_part(self, before: _StepStart, arm_start) -> None:
        """The robot blocks the door it holds, as the world blocks the robot. The suction
        weld holds the handle point only (the door keeps its own rotation), so a door that
        follows the gripper round its hinge turns its panel relative to the wrist: the
        blocking check, made before the physics with the door where it was, cannot see the
        panel swing into the gripper (a policy learned to open the fridge with its wrist
        5 cm inside the panel). Re-measured after the physics: if the held part now
        overlaps the robot deeper than `_depth_cap()`, the whole step is undone (robot,
        door and everything else back to where they were; a blocked step). With
        `block_held_handle` the held handle's bar counts too, beyond the grasp's overlap."""
        end = self._depth_pair(self._grip_allowance if self.config.block_held_handle else None)
        if self._bar_entry and self._bar_depth_in_contacts() <= (
            self._grip_allowance + self.config.block_depth
        ):
            self._bar_entry = 0.0  # the bar is back within the grasp: its normal cap again
        if end[0] <= self._depth_cap():
            self._start_depth = end
            return
        d = self.data
        d.qpos[:] = before.qpos
        d.qvel[:] = before.qvel
        d.act[:] = before.act
        d.qacc_warmstart[:] = before.qacc_warmstart
        self._refresh_poses()
        self.arm_target = np.array(arm_start, dtype=np.float64)
        self._start_depth = before.depth
        self.blocked_steps += 1
        self.held_part_blocked_steps += 1

    def _stop_free_parts(self, art_start: np.ndarray) -> None:
        """The robot stops a door or drawer that nothing holds, as it blocks the one it
        holds. Let go while it moves, a door coasts on (damping and friction slow it over a
        few steps) and the blocking check, made before the physics with the door where it
        was, cannot see it swing into the arm (a learned open_fridge let go at 0.5 rad and
        the panel went 5.5 cm into the gripper the next step, unmeasured). When a loose one
        moved during the step, the robot's depth is re-measured; if it is now deeper than
        `_depth_cap()`, every loose part that moved is put back where the step found it,
        at rest (it met the kinematic robot and stopped), which restores the depth the
        blocking check measured."""
        d, held = self.data, self.gripper.held_articulation
        moved = np.abs(d.qpos[self._art_qpos] - art_start) > FREE_PART_MOVED
        if held is not None:
            moved &= np.array([a != held for a in self._art_names])
        if not moved.any():
            return
        end = self._depth_pair()
        self._start_depth = end
        if end[0] <= self._depth_cap():
            return
        d.qpos[self._art_qpos[moved]] = art_start[moved]
        d.qvel[self._art_dof[moved]] = 0.0
        self._refresh_poses()
        self._start_depth = self._depth_pair()
        self.free_part_stopped_steps += 1

    def _refresh_poses(self) -> None:
        """Body, centre-of-mass, camera and light poses from qpos, as after a physics step
        (no collision pass): after qpos was written by hand."""
        m, d = self.model, self.data
        mujoco.mj_kinematics(m, d)
        mujoco.mj_comPos(m, d)
        mujoco.mj_camlight(m, d)

    def collide_with_static(self) -> None:
        """One collision pass at the current kinematics with the robot's static bit switched
        on: `data.contact` then also holds the robot's overlaps with walls, furniture, doors
        and drawers. Those contacts never reach the solver; the next mj_step rebuilds the
        list. The blocking check and `benchmarks/penetration.py` read it."""
        m = self.model
        robot = self.idx.robot_collision_geoms
        saved = m.geom_conaffinity[robot].copy()
        m.geom_conaffinity[robot] = saved | STATIC_BIT
        try:
            mujoco.mj_collision(m, self.data)
        finally:
            m.geom_conaffinity[robot] = saved

    def static_depth_now(self) -> float:
        """Deepest robot overlap (m) with walls, furniture, doors and drawers in the pose the
        robot is in now: one collision pass (`collide_with_static`), whose contacts
        `data.contact` then holds. The episode generator checks start poses with it."""
        return self._depth_pair()[0]

    def _depth_pair(self, handle_allowance: float | None = None) -> tuple[float, float]:
        """(deepest, summed) depth of the robot's overlaps now (`_static_depths`)."""
        depth = self._static_depths(handle_allowance)
        return (float(depth.max()), float(depth.sum())) if depth.size else (0.0, 0.0)

    def _static_depths(self, handle_allowance: float | None = None) -> np.ndarray:
        """Depth (m) of each robot-geom pair's overlap with walls, fixed furniture, doors and
        drawers at the current kinematics (the deepest of the pair's contact points; a box
        pair gives up to 4), but for the handle the gripper holds: one collision pass with
        the robot's static bit switched on (those contacts never reach the solver; the next
        mj_step rebuilds the contact list). The held door's panel counts: a wrist that the
        swinging door sweeps into is in it."""
        m, d = self.model, self.data
        self.collide_with_static()
        if d.ncon == 0:
            return np.zeros(0)
        g = d.contact.geom[: d.ncon]
        is_robot = self.idx.robot_geoms[g]
        static = (m.geom_contype[g] & STATIC_BIT).astype(bool)
        pairs = (is_robot[:, 0] & static[:, 1]) | (is_robot[:, 1] & static[:, 0])
        held = self.gripper.held_articulation
        if held is not None and handle_allowance is None:  # the gripper is on the handle
            pairs &= ~np.isin(g, self.idx.art_grip_geoms[held]).any(axis=1)
        depth = np.maximum(-d.contact.dist[: d.ncon][pairs], 0.0)
        if held is not None and handle_allowance is not None:  # only beyond the allowance
            on_handle = np.isin(g[pairs], self.idx.art_grip_geoms[held]).any(axis=1)
            depth[on_handle] = np.maximum(depth[on_handle] - handle_allowance, 0.0)
        if depth.size <= 1:
            return depth
        key = g[pairs, 0].astype(np.int64) * m.ngeom + g[pairs, 1]
        _, pair = np.unique(key, return_inverse=True)
        deepest = np.zeros(int(pair.max()) + 1)
        np.maximum.at(deepest, pair, depth)
        return deepest

    def _robot_contact_force(self) -> float:
        d, idx = self.data, self.idx
        if d.ncon == 0:
            return 0.0
        g = d.contact.geom[: d.ncon]
        robot = idx.robot_geoms[g]
        hits = np.flatnonzero(robot[:, 0] ^ robot[:, 1])
        if hits.size == 0:
            return 0.0
        held = self.gripper.held_object
        held_geom = -1 if held is None else int(idx.obj_geoms[held])
        total, f6 = 0.0, np.zeros(6)
        for c in hits:
            if held_geom in (g[c, 0], g[c, 1]):
                continue  # the suction contact is not a collision
            mujoco.mj_contactForce(self.model, d, int(c), f6)
            total += abs(f6[0])
        return total
