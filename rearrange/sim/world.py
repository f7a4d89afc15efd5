"""`RearrangeSim`: the embedded MuJoCo world (docs/CONTRACTS.md §2).

Control model (why): the robot is driven kinematically. Each physics substep sets the base
(x, y, yaw) and the arm joints to a linear interpolation towards the policy step's target
and sets their velocities to match, so contacts push objects realistically while the robot
tracks its commands exactly (as Habitat 2.0's kinematic Fetch). The base cannot enter walls
or furniture: moves are checked against the layout's 2-D footprints (circle vs boxes), and
against an open fridge door's panel at its current angle (`placement.SwingingParts`).

Contacts (why): the robot collides in the physics only with free objects; against walls,
fixed furniture, doors and drawers a kinematic robot can move nothing and its contacts only
inject huge impulses into the solve shared with the suction welds (a forearm 10 cm inside a
counter threw held objects out of the hold). Instead the world blocks it geometrically
(`SimConfig.world_blocks_robot`, docs/DESIGN.md §3): before the physics of a policy step,
one collision pass with the robot's static bit switched on checks the step's end pose; if
a robot link would end deeper than `block_depth` in static geometry (and deeper than it
already is), bisection finds the free fraction of the move and the arm and base stop there,
as a servoed arm stalls against a counter. The same pass gives `contact_force()`:
PENETRATION_STIFFNESS x the summed depth of those contacts, plus the solver forces of the
robot's contacts with free objects.

Speed (why): on CPU (Mesa llvmpipe) the 128x128 head depth dominated a step (2.5 of 2.9 ms).
Head cameras see low-poly arm proxies (`robot.add_head_proxies`) and coarse primitives
(`render.make_renderer`), the floor is drawn as few quads (`scene_builder.FLOOR_GRID`), and
each process uses one llvmpipe thread (`SimConfig.render_threads`). The substep loop writes
all kinematic joints with one precomputed index array. None of this changes the physics.
"""

from __future__ import annotations

import copy
import math
import os
from collections import OrderedDict
from dataclasses import dataclass

import mujoco
import numpy as np

from rearrange.sim import robot as R
from rearrange.sim.apartment import generate_layout
from rearrange.sim.arm_scan import ArmScan
from rearrange.sim.arm_slide import contact_rows, project_move
from rearrange.sim.config import SimConfig
from rearrange.sim.episode_types import SPLITS, Episode
from rearrange.sim.furniture_geoms import STATIC_BIT
from rearrange.sim.geometry import wrap_angle
from rearrange.sim.grasp import SuctionGripper
from rearrange.sim.layout_types import Layout
from rearrange.sim.objects import OBJECT_TYPES
from rearrange.sim.placement.footprints import Footprints, SwingingParts
from rearrange.sim.render import make_renderer
from rearrange.sim.scene_builder import SceneIndex, build_model

# Scenes (layout + navmap) a sim keeps for reuse; a navmap is a few MB.
SCENE_CACHE_SIZE = 32

PENETRATION_STIFFNESS = 1.0e4
"""N per metre of robot penetration into walls/fixed furniture (1 cm reads as 100 N), the
force those contacts count for in `contact_force()` (see the module doc)."""


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


class RearrangeSim:
    """The MuJoCo world; implements `rearrange.sim.simulator.Simulator`."""

    def __init__(self, config: SimConfig | None = None) -> None:
        self.config = config or SimConfig()
        self.layout: Layout | None = None
        self.episode: Episode | None = None
        self.model: mujoco.MjModel | None = None
        self.data: mujoco.MjData | None = None
        self.idx: SceneIndex | None = None
        self.gripper: SuctionGripper | None = None
        self._model_key = None
        # Recently used scenes (layout + lazily built navmap), least recently used evicted:
        # skill envs cycle through a few dozen episodes over a handful of scenes, and
        # rebuilding the navmap on every scene change cost ~30 ms per reset (nav resets
        # often while its stop is still random).
        self._scenes: OrderedDict[tuple[int, str], dict] = OrderedDict()
        self._renderers: dict[tuple[str, int, int], mujoco.Renderer] = {}
        self._depth_buf: np.ndarray | None = None
        self._scene: dict = {"layout": None, "navmap": None}
        self.swinging: SwingingParts | None = None
        self.footprints: Footprints | None = None
        self.collision_count = 0
        self.blocked_steps = 0
        self.held_part_blocked_steps = 0
        self.free_part_stopped_steps = 0
        self._grip_allowance = 0.0  # _grip_depth_now() at the last handle grasp
        self._bar_entry = 0.0  # the held bar's own entry depth beyond it (_free_goal)
        self.static_depth = 0.0
        self._start_depth: tuple[float, float] | None = None
        self._entry_depth = 0.0
        self.rest_ee_pos_base = np.zeros(3)
        self._arm_scan: ArmScan | None = None  # arm_clearance's ids, for self.model
        # Head camera: no hidden robot parts, low-poly arm proxies; third person: the reverse.
        self.head_vopt = mujoco.MjvOption()
        self.head_vopt.geomgroup[R.HEAD_HIDDEN_GROUP] = 0
        self.head_vopt.geomgroup[R.HEAD_PROXY_GROUP] = 1
        self.third_person_vopt = mujoco.MjvOption()
        self.third_person_vopt.geomgroup[R.HEAD_HIDDEN_GROUP] = 1
        self.third_person_vopt.geomgroup[R.HEAD_PROXY_GROUP] = 0

    # ------------------------------------------------------------------ reset
    def _check_episode(self, ep: Episode) -> None:
        if ep.split not in SPLITS:
            raise ValueError(f"episode {ep.episode_id}: unknown split {ep.split!r}; use {SPLITS}")
        for o in ep.objects:
            if o.obj_type not in OBJECT_TYPES:
                raise ValueError(
                    f"episode {ep.episode_id}: unknown object type {o.obj_type!r}; "
                    f"known: {', '.join(sorted(OBJECT_TYPES))}"
                )

    def register_layout(self, layout: Layout) -> None:
        """Use `layout` for episodes with its (seed, split) instead of generating one
        (hand-built test rooms, layouts edited on the fly)."""
        self._scenes[(layout.seed, layout.split)] = {"layout": layout, "navmap": None}
        while len(self._scenes) > SCENE_CACHE_SIZE:
            self._scenes.popitem(last=False)

    def _load(self, ep: Episode) -> None:
        key = (ep.scene_seed, ep.split)
        scene = self._scenes.get(key)
        if scene is None:
            scene = {"layout": generate_layout(ep.scene_seed, ep.split), "navmap": None}
            self._scenes[key] = scene
            while len(self._scenes) > SCENE_CACHE_SIZE:
                self._scenes.popitem(last=False)
        self._scenes.move_to_end(key)
        layout = scene["layout"]
        types = tuple(o.obj_type for o in ep.objects)
        model_key = (key, types)
        if model_key != self._model_key:
            base_model, self.idx = build_model(layout, types, self.config)
            self.model = copy.copy(base_model)  # own copy: grasps edit eq_data
            self.data = mujoco.MjData(self.model)
            self.close_renderers()
            self._model_key = model_key
        self._scene = scene
        self.layout = layout
        self.footprints = Footprints(layout)
        self._index_kinematic_joints()

    def _index_kinematic_joints(self) -> None:
        """qpos addresses written every substep: arm (7), base (3) and every fixed joint
        (`robot.FIXED_JOINTS`: torso lift and head tilt at their config values, the rest at
        the model's qpos0, fingers closed). Why the fingers too: left free, the physics
        drifted them open (up to 4 cm over a few hundred steps), so a finger ended deeper in
        a wall than the step's blocking check had predicted (docs/DESIGN.md §3)."""
        idx, f = self.idx, self.idx.fixed_qpos
        fixed = [f[n] for n in R.FIXED_JOINTS]
        self._kin_qpos = np.concatenate([idx.arm_qpos, idx.base_qpos, fixed]).astype(np.intp)
        self._kin_yaw = len(idx.arm_qpos) + 2  # base yaw's position in that vector
        values = {
            R.PREFIX + "torso_lift_joint": self.config.torso_lift,
            R.PREFIX + "head_tilt_joint": self.config.head_tilt,
        }
        self._kin_fixed = np.array(
            [values.get(n, float(self.model.qpos0[f[n]])) for n in R.FIXED_JOINTS]
        )
        pos = {int(dof): k for k, dof in enumerate(idx.robot_dof)}
        self._arm_in_robot = np.array([pos[int(v)] for v in idx.arm_dof])
        self._base_in_robot = np.array([pos[int(v)] for v in idx.base_dof])
        self._robot_vel = np.zeros(len(idx.robot_dof))
        self._art_names = list(idx.art_qpos)
        self._art_qpos = np.array([idx.art_qpos[a] for a in self._art_names], dtype=np.intp)
        self._art_dof = np.array([idx.art_dof[a] for a in self._art_names], dtype=np.intp)
        n = self.config.substeps
        self._alphas = (np.arange(n, dtype=np.float64) / n)[:, None]

    def reset(self, episode: Episode) -> None:
        """Build (or reuse) the scene and set robot, objects and articulations."""
        self._check_episode(episode)
        self._load(episode)
        self.episode = episode
        m, d, idx = self.model, self.data, self.idx
        mujoco.mj_resetData(m, d)
        self._set_fixed_joints()
        x, y, yaw = episode.robot_start
        d.qpos[idx.base_qpos] = (x, y, wrap_angle(yaw))
        d.qpos[idx.arm_qpos] = R.REST_ARM_QPOS
        self.arm_target = np.array(R.REST_ARM_QPOS, dtype=np.float64)
        for a in self.layout.articulations:
            d.qpos[idx.art_qpos[a.name]] = episode.articulations.get(a.name, a.closed)
        for i, o in enumerate(episode.objects):
            adr = idx.obj_qpos[i]
            d.qpos[adr : adr + 3] = o.pos
            d.qpos[adr + 3 : adr + 7] = o.quat
        mujoco.mj_forward(m, d)
        self.swinging = SwingingParts(m, d, idx, self.layout)
        self.rest_ee_pos_base = self.to_base_frame(d.site_xpos[idx.ee_site])
        self.gripper = SuctionGripper(m, d, idx, self.config)
        for i in range(m.neq):
            d.eq_active[i] = 0
        if episode.extras.get("arm_start") is not None:  # after rest_ee_pos_base
            self._set_arm_start(episode.extras["arm_start"])
        if "holding" in episode.extras and episode.extras["holding"] is not None:
            self.start_holding(int(episode.extras["holding"]))
        self.collision_count = 0
        self.blocked_steps = 0  # policy steps the world cut short (world_blocks_robot)
        self.held_part_blocked_steps = 0  # of those, undone for the held door (_check_held_part)
        self.free_part_stopped_steps = 0  # steps a loose door/drawer stopped at the robot
        self.arm_slid_steps = 0  # of the blocked steps, those whose arm slid (arm_slide)
        self._grip_allowance = 0.0
        self._bar_entry = 0.0
        self.static_depth = 0.0  # deepest robot overlap with static geometry after the step
        self._start_depth = None  # (deepest, summed) static depth of the pose now
        self._entry_depth = 0.0  # depth of a pose placed inside static geometry (_depth_cap)
        self._contact_force = 0.0
        self._violated = False

    def _set_fixed_joints(self) -> None:
        self.data.qpos[self._kin_qpos[-len(self._kin_fixed) :]] = self._kin_fixed

    def _set_arm_start(self, q) -> None:
        """Start the arm at joint values `q` (extras["arm_start"]: where the previous skill
        left it, docs/DESIGN.md §8.2)."""
        q = np.asarray(q, dtype=np.float64).reshape(7)
        q = np.clip(q, self.idx.arm_range[:, 0], self.idx.arm_range[:, 1])
        self.data.qpos[self.idx.arm_qpos] = q
        self.arm_target = q.copy()
        self._start_depth = None
        mujoco.mj_forward(self.model, self.data)

    def start_holding(self, obj: int) -> None:
        """Put object `obj` against the gripper and weld it (episode starts holding): at
        extras["held_pose"] ([x, y, z, qw, qx, qy, qz] in the gripper body frame, the
        grasp a pick left) if given, else along the gripper axis ahead of the fingertips."""
        if not 0 <= obj < self.num_objects:
            raise ValueError(f"episode extras['holding']={obj} is not an object index")
        d, idx = self.data, self.idx
        t = OBJECT_TYPES[self.episode.objects[obj].obj_type]
        xmat = d.xmat[idx.gripper_body].reshape(3, 3)
        adr = idx.obj_qpos[obj]
        pose = self.episode.extras.get("held_pose")
        if pose is not None:
            pose = np.asarray(pose, dtype=np.float64).reshape(7)
            quat = np.zeros(4)
            mujoco.mju_mulQuat(quat, d.xquat[idx.gripper_body], pose[3:] / np.linalg.norm(pose[3:]))
            d.qpos[adr : adr + 3] = d.xpos[idx.gripper_body] + xmat @ pose[:3]
            d.qpos[adr + 3 : adr + 7] = quat
        else:
            reach = 0.045 + max(t.size)  # fingertips end ~0.04 m ahead of the gripper origin
            d.qpos[adr : adr + 3] = d.xpos[idx.gripper_body] + xmat[:, 0] * reach
            d.qpos[adr + 3 : adr + 7] = d.xquat[idx.gripper_body]
        mujoco.mj_forward(self.model, d)
        self.gripper.grasp_object_now(obj)

    # ------------------------------------------------------------------ step
    def step(self, arm_delta=None, grip=None, base_vel=None) -> None:
        """One policy step: apply grip, then `substeps` physics steps towards the targets."""
        cfg, d, idx = self.config, self.data, self.idx
        if d is None:
            raise RuntimeError("RearrangeSim.step called before reset(episode)")
        arm_start = d.qpos[idx.arm_qpos].copy()
        if arm_delta is not None:
            delta = np.clip(np.asarray(arm_delta, dtype=np.float64).reshape(7), -1, 1)
            self.arm_target = np.clip(
                self.arm_target + delta * cfg.arm_delta_scale,
                idx.arm_range[:, 0],
                idx.arm_range[:, 1],
            )
        base_start = d.qpos[idx.base_qpos].copy()
        base_goal = base_start if base_vel is None else self._base_goal(base_start, base_vel)
        if grip is not None:
            held = self.gripper.held_articulation
            if grip >= 0:
                self.gripper.try_grasp()
            else:
                self.gripper.release()
            if self.gripper.held_articulation != held:  # a door counts (or not) from now
                self._start_depth = None
                self._grip_allowance = self._grip_depth_now()
                self._bar_entry = 0.0
        if cfg.world_blocks_robot:
            base_goal = self._free_goal(arm_start, base_start, base_goal)
        self._physics(arm_start, base_start, base_goal)
        self._violated = self.gripper.check_violation()
        self.gripper.update_release()

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

    # ------------------------------------------------------------------ robot state
    def base_pose(self) -> np.ndarray:
        return self.data.qpos[self.idx.base_qpos].copy()

    def base_fits(self, x: float, y: float) -> bool:
        """The base disc at (x, y) overlaps no wall, furniture or open door panel."""
        r = self.config.robot_radius
        doors = self.door_footprints()
        return not self.footprints.collides(x, y, r) and (
            doors is None or not doors.collides(x, y, r)
        )

    def set_base_pose(self, x: float, y: float, yaw: float) -> bool:
        if not self.base_fits(x, y):
            return False
        self.data.qpos[self.idx.base_qpos] = (x, y, wrap_angle(yaw))
        self._start_depth = None
        mujoco.mj_forward(self.model, self.data)
        return True

    def obstacle_ranges(self, angles, max_range: float) -> np.ndarray:
        """Egocentric 2-D range scan of what blocks the base: from the base centre along each
        heading in `angles` (rad, base frame, counter-clockwise from forward) to the first
        wall / furniture footprint or open door panel (`SwingingParts`, when
        `door_blocks_base`), capped at `max_range` (m). The robot and free objects are not
        in these boxes, so they are never seen. Why footprints and not MuJoCo rays against
        the meshes: these boxes are exactly what the base collides with, while a horizontal
        ray at any one height passes between the legs of tables (their tops are at 0.41-0.75
        m) that still block the base (benchmarks/nav_sensing.py measures it)."""
        x, y, yaw = self.data.qpos[self.idx.base_qpos]
        world = yaw + np.asarray(angles, dtype=np.float64)
        ranges = self.footprints.ray_distances(x, y, world, max_range)
        doors = self.door_footprints()
        if doors is not None:
            ranges = np.minimum(ranges, doors.ray_distances(x, y, world, max_range))
        return ranges

    def arm_clearance(self, max_range: float) -> np.ndarray:
        """Arm clearance scan (`arm_scan`, the `arm_rays` sensor): [18] distances (m) from
        the EE, the wrist and the elbow along +-x, +-y, +-z of the base frame (6 per origin,
        in that order) to the first wall, furniture, door or drawer geom, i.e. what blocks
        the arm; not the robot, free objects or the floor. Capped at `max_range`; 0 for
        the six rays of an origin that is inside such a geom."""
        if self._arm_scan is None or self._arm_scan.model is not self.model:
            self._arm_scan = ArmScan(self.model)
        yaw = float(self.data.qpos[self.idx.base_qpos[2]])
        return self._arm_scan.ranges(self.data, yaw, max_range)

    def arm_joint_pos(self) -> np.ndarray:
        return self.data.qpos[self.idx.arm_qpos].copy()

    def set_arm_joint_pos(self, q) -> None:
        q = np.asarray(q, dtype=np.float64).reshape(7)
        self.arm_target = np.clip(q, self.idx.arm_range[:, 0], self.idx.arm_range[:, 1])
        self.data.qpos[self.idx.arm_qpos] = self.arm_target
        self._start_depth = None
        mujoco.mj_forward(self.model, self.data)

    def to_base_frame(self, p_world) -> np.ndarray:
        x, y, yaw = self.data.qpos[self.idx.base_qpos]
        dx, dy = p_world[0] - x, p_world[1] - y
        c, s = math.cos(yaw), math.sin(yaw)
        return np.array([c * dx + s * dy, -s * dx + c * dy, p_world[2]])

    def ee_pos(self, frame: str = "world") -> np.ndarray:
        p = self.data.site_xpos[self.idx.ee_site].copy()
        if frame == "world":
            return p
        if frame == "base":
            return self.to_base_frame(p)
        raise ValueError(f"ee_pos frame must be 'world' or 'base', got {frame!r}")

    def arm_joint_range(self) -> np.ndarray:
        """[7, 2] joint limits (unlimited joints: +-2 pi)."""
        return self.idx.arm_range.copy()

    def arm_jacobian(self, frame: str = "world") -> np.ndarray:
        """d(EE position)/d(arm joints), [3, 7]; `frame` 'world' or 'base' (rotated by yaw)."""
        jacp = np.zeros((3, self.model.nv))
        mujoco.mj_jacSite(self.model, self.data, jacp, None, self.idx.ee_site)
        jac = jacp[:, self.idx.arm_dof]
        if frame == "base":
            yaw = self.data.qpos[self.idx.base_qpos[2]]
            c, s = math.cos(yaw), math.sin(yaw)
            jac = np.array([[c, s, 0], [-s, c, 0], [0, 0, 1]]) @ jac
        elif frame != "world":
            raise ValueError(f"arm_jacobian frame must be 'world' or 'base', got {frame!r}")
        return jac

    def held_object(self) -> int | None:
        return self.gripper.held_object

    def held_articulation(self) -> str | None:
        """Name of the articulation whose handle is held, if any."""
        return self.gripper.held_articulation

    def hold_point(self) -> np.ndarray | None:
        """World point the suction weld pulls the held anchor to (`SuctionGripper.hold_target`)."""
        return self.gripper.hold_target()

    def grasp_violated(self) -> bool:
        return self._violated

    def contact_force(self) -> float:
        return self._contact_force

    # ------------------------------------------------------------------ objects
    @property
    def num_objects(self) -> int:
        return len(self.idx.obj_bodies)

    def _obj_adr(self, i: int) -> int:
        if not 0 <= i < self.num_objects:
            raise IndexError(f"object index {i} out of range (episode has {self.num_objects})")
        return int(self.idx.obj_qpos[i])

    def object_pos(self, i: int) -> np.ndarray:
        a = self._obj_adr(i)
        return self.data.qpos[a : a + 3].copy()

    def object_quat(self, i: int) -> np.ndarray:
        a = self._obj_adr(i)
        return self.data.qpos[a + 3 : a + 7].copy()

    # ------------------------------------------------------------------ articulations
    def _art(self, name: str) -> int:
        if name not in self.idx.art_qpos:
            raise KeyError(f"no articulation {name!r}; have {sorted(self.idx.art_qpos)}")
        return self.idx.art_qpos[name]

    def articulation_pos(self, name: str) -> float:
        return float(self.data.qpos[self._art(name)])

    def set_articulation_pos(self, name: str, value: float) -> None:
        self.data.qpos[self._art(name)] = value
        self.data.qvel[self.idx.art_dof[name]] = 0.0
        self._start_depth = None
        mujoco.mj_forward(self.model, self.data)

    def handle_pos(self, name: str) -> np.ndarray:
        self._art(name)
        return self.data.site_xpos[self.idx.art_handle_site[name]].copy()

    # ------------------------------------------------------------------ navmap
    @property
    def navmap(self):
        if self.layout is None:
            raise RuntimeError("sim.navmap: call reset(episode) first")
        if self._scene["navmap"] is None:
            from rearrange.sim.navmap import NavMap

            self._scene["navmap"] = NavMap(self.layout, robot_radius=self.config.robot_radius)
        return self._scene["navmap"]

    def door_footprints(self) -> Footprints | None:
        """The open door and drawer panels that block the base, where they are now (None
        when doors do not block it: `SimConfig.door_blocks_base` off)."""
        return self.swinging.footprints(self.data) if self.config.door_blocks_base else None

    def planning_navmap(self):
        """The NavMap with the open doors/drawers that block the base (`SwingingParts`) at
        their pose now as extra obstacles: the static `navmap` ignores them, and its paths
        run into an open fridge door. Built once per distinct door state (rounded to 1 cm /
        0.01 rad) and cached; `navmap` itself when everything is closed."""
        doors = self.door_footprints()
        if doors is None:
            return self.navmap
        yaw = np.arctan2(doors.sin, doors.cos)
        boxes = np.column_stack([doors.center, doors.half, yaw])
        key = tuple(np.round(boxes, 2).ravel().tolist())
        cache = self.__dict__.setdefault("_planning_maps", {})
        hit = cache.get(key)
        if hit is None or hit.layout is not self.layout:
            from rearrange.sim.navmap import NavMap

            if len(cache) > 8:
                cache.clear()
            hit = NavMap(
                self.layout, robot_radius=self.config.robot_radius, extra_boxes=boxes.tolist()
            )
            cache[key] = hit
        return hit

    # ------------------------------------------------------------------ sensors
    def renderer(self, width: int, height: int, head: bool = False) -> mujoco.Renderer:
        """A cached renderer; `head` ones draw coarse primitives (SimConfig.head_cheap_primitives)."""
        key = ("head" if head else "view", width, height)
        if key not in self._renderers:
            # Mesa reads LP_NUM_THREADS when the first EGL display is made: set it before that.
            os.environ.setdefault("LP_NUM_THREADS", str(self.config.render_threads))
            cheap = head and self.config.head_cheap_primitives
            self._renderers[key] = make_renderer(self.model, width, height, cheap)
        return self._renderers[key]

    def render_depth(self) -> np.ndarray:
        cfg = self.config
        r = self.renderer(cfg.depth_width, cfg.depth_height, head=True)
        if self._depth_buf is None or self._depth_buf.shape != (r.height, r.width):
            self._depth_buf = np.empty((r.height, r.width), np.float32)
        r.enable_depth_rendering()
        r.update_scene(self.data, camera=self.idx.head_camera, scene_option=self.head_vopt)
        depth = r.render(out=self._depth_buf)
        r.disable_depth_rendering()
        out = np.empty((r.height, r.width, 1), np.float32)  # new array: callers may keep it
        np.clip(depth, 0.0, cfg.camera_far, out=out[..., 0])
        return out

    def render_rgb(self) -> np.ndarray:
        cfg = self.config
        r = self.renderer(cfg.rgb_width, cfg.rgb_height, head=True)
        r.update_scene(self.data, camera=self.idx.head_camera, scene_option=self.head_vopt)
        return r.render().copy()

    def render_third_person(
        self, overlays=None, width: int | None = None, height: int | None = None
    ) -> np.ndarray:
        from rearrange.sim.render import render_third_person

        w = width or self.config.third_person_width
        h = height or self.config.third_person_height
        return render_third_person(self, self.renderer(w, h), overlays)

    def close_renderers(self) -> None:
        for r in self._renderers.values():
            r.close()
        self._renderers = {}

    def close(self) -> None:
        self.close_renderers()
