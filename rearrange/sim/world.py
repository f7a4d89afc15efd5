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

import mujoco
import numpy as np

from rearrange.sim import robot as R
from rearrange.sim.apartment import generate_layout
from rearrange.sim.arm_scan import ArmScan
from rearrange.sim.blocked_step import BlockedStep
from rearrange.sim.config import SimConfig
from rearrange.sim.episode_types import SPLITS, Episode
from rearrange.sim.geometry import wrap_angle
from rearrange.sim.grasp import SuctionGripper
from rearrange.sim.layout_types import Layout
from rearrange.sim.objects import OBJECT_TYPES
from rearrange.sim.placement.footprints import Footprints, SwingingParts
from rearrange.sim.render import make_renderer
from rearrange.sim.scene_builder import SceneIndex, build_model

# Scenes (layout + navmap) a sim keeps for reuse; a navmap is a few MB.
SCENE_CACHE_SIZE = 32


class RearrangeSim(BlockedStep):
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

    def gripper_object_dist(self, i: int, limit: float) -> float:
        self._obj_adr(i)  # IndexError for an object the episode does not have
        return float(self.gripper.surface_dist(int(self.idx.obj_geoms[i]), float(limit)))

    def gripper_object_dists(self, limit: float, within: float) -> np.ndarray:
        return self.gripper.object_dists(float(limit), float(within))

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
