"""Where the robot may stand: pose validity and spawn sampling over one scene draw.

A `RobotPlacement` holds what a pose is tested against: the layout, its NavMap, the sim's
base footprints, the loose objects, a held object and the arm as it is, and which doors and
drawers stand open. `pose_ok` is the one test of a base pose: the sim accepts the base there
(`Footprints`), it lies outside an open door's swing, and the resting robot touches no wall,
furniture, door, drawer or object (`RobotClearance`). The spawn samplers draw poses that
pass it: anywhere, near a target (geodesic), within the arm's reach, a place start, an
open/close work pose. Episode generation fills a placement with objects and draws its starts
from it; the stand-pose search builds one from the live sim (`stand_poses.placement_now`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from rearrange.sim.episode_types import ObjectPlacement
from rearrange.sim.geometry import rot_z, segment_distance, segments_cross, wrap_angle
from rearrange.sim.layout_types import Articulation, Furniture, Layout
from rearrange.sim.navmap import NavMap
from rearrange.sim.objects import OBJECT_TYPES
from rearrange.sim.placement.clearance import RobotClearance, arm_discs
from rearrange.sim.placement.footprints import Footprints
from rearrange.sim.placement.work_poses import (
    DRAWER_WORK_NOISE,
    FRIDGE_WORK_NOISE,
    FRIDGE_WORK_YAW_NOISE,
    articulation_work_pose,
)

DOOR_HALF_DEPTH = 0.1
"""m: how far an open door (panel 0.05 + handle bar 0.04 + its radius) stands off the line
through its hinge and free edge, on one side: the clearance added round that line."""


class NoPlacement(Exception):
    """No pose of the asked kind in this draw (episode generation tries another scene)."""


@dataclass(frozen=True)
class PlacementConfig:
    """The robot's geometry and the spawn rules (episode generation extends it)."""

    robot_radius: float = 0.3  # NavMap inflation (m)
    spawn_max_dist: float = 2.0  # geodesic spawn radius around the target (Habitat 2.0)
    yaw_noise: float = math.radians(30)  # spawn heading noise around "facing the target"
    decimals: int = 5  # rounding of stored numbers (keeps files small, round trips exact)
    # Whole-robot clearance at spawns (clearance.py): free space kept around the arm, the
    # held object and (against doors/drawers) the base.
    robot_clearance: float = 0.03
    spawn_yaw_tries: int = 8  # heading draws per spawn cell before trying another cell
    # Close spawns (no base movement): the target's horizontal distance from the shoulder
    # (pan axis, `shoulder_x` ahead of the base centre). Kinematic IK on the MuJoCo Fetch
    # reaches >= 1.0 m at 0.5 m height and >= 1.1 m at 1.0 m height for bearings up to
    # ±90°, so 0.85 m keeps a margin and ±yaw_noise (30°) keeps the target reachable and
    # in the 90° head camera view.
    reach_min: float = 0.4
    reach_max: float = 0.85
    shoulder_x: float = 0.033
    # Place spawns like the HAB executor's stand poses (`stand_poses`, which reads these):
    # the best pose there has the target at comfort_reach from the shoulder and faces it
    # exactly, while close spawns spread over the whole band (median ~0.77 m).
    place_ready_prob: float = 0.5
    comfort_reach: float = 0.6  # m: the middle of the [reach_min, reach_max] band
    comfort_spread: float = 0.1  # m: ready-pose spawns within comfort_reach ± this
    ready_yaw_noise: float = math.radians(5)
    # the stand poses' FAR_REACH: place spawns stand back this far at most when no spawn
    # within reach_max keeps the arm and held object clear
    place_far_reach: float = 1.0
    # Open/close work spawns: the position noise around the work pose (±4 cm drawer, ±5 cm
    # fridge per axis) times this. A learned nav stops 0.1-0.3 m from the work pose, so a
    # scale > 1 trains open/close from where the nav leaves them (benchmarks/RESULTS.md).
    work_noise_scale: float = 1.0


def shoulder_reach(pose, target_xy, shoulder_x: float) -> float:
    """Horizontal distance from the shoulder of base pose (x, y, yaw) to `target_xy`; the
    shoulder (the arm's pan axis) is `shoulder_x` ahead of the base centre."""
    x, y, yaw = pose
    sx = x + shoulder_x * math.cos(yaw)
    sy = y + shoulder_x * math.sin(yaw)
    return math.hypot(float(target_xy[0]) - sx, float(target_xy[1]) - sy)


class RobotPlacement:
    """Robot poses in one layout with these objects, this held object and these open
    articulations (see the module doc)."""

    def __init__(
        self,
        layout: Layout,
        navmap: NavMap,
        rng: np.random.Generator,
        cfg: PlacementConfig,
        footprints: Footprints | None = None,
    ):
        self.layout, self.navmap, self.rng, self.cfg = layout, navmap, rng, cfg
        self.footprints = footprints or Footprints(layout)  # the sim's exact base check
        self._clearance: RobotClearance | None = None
        self.held: int | None = None  # object index starting in the gripper (place)
        # base-frame disc of the held object when not at the resting grasp (stand poses)
        self.held_disc: tuple[float, float, float, float, float] | None = None
        # base-frame arm discs when the arm does not start at rest (place starts)
        self.arm_discs: np.ndarray | None = None
        self.objects: list[ObjectPlacement] = []
        self.open_articulations: set[str] = set()
        # joint values other than fully open for some of open_articulations (a drawer
        # pulled part way out)
        self.articulation_override: dict[str, float] = {}
        # Run time (`placement_now`): the sim's open door/drawer panels where they are now
        # (`Simulator.door_footprints`). Then a door blocks the base only where its panel
        # is, as in the sim; without it (episode generation) an open door blocks its whole
        # sweep.
        self.doors_now: Footprints | None = None
        # Run time: each hinged door's joint position now (`placement_now`); None: open
        # doors stand at their open angle, as the episode generator sets them.
        self.door_angles: dict[str, float] | None = None
        # Episode generation for a task whose doors stay as they start (pick, place, nav):
        # an open door then blocks only where its panel stands, as at run time; otherwise
        # (open/close tasks, HAB starts) its whole sweep, which the door will pass through.
        self.static_doors = False

    def rounded(self, p) -> tuple[float, float, float]:
        d = self.cfg.decimals
        return (round(float(p[0]), d), round(float(p[1]), d), round(float(p[2]), d))

    def articulation_values(self) -> dict[str, float]:
        values = {
            a.name: float(a.open if a.name in self.open_articulations else a.closed)
            for a in self.layout.articulations
        }
        return {**values, **self.articulation_override}

    def _blocked_by_door(self, cells_xy: np.ndarray, margin: float) -> np.ndarray:
        """Points within `margin` of an open hinged door's sweep (the NavMap only knows
        closed furniture), or of a door panel where it is now (`doors_now`)."""
        if self.doors_now is not None:
            return np.array([self.doors_now.distance(x, y) < margin for x, y in cells_xy], bool)
        if self.static_doors:
            xy = np.asarray(cells_xy, dtype=np.float64).reshape(-1, 2)
            blocked = np.zeros(len(xy), dtype=bool)
            for _, hinge, edge in self.open_doors():
                blocked |= segment_distance(xy, hinge, edge) < margin + DOOR_HALF_DEPTH
            return blocked
        blocked = np.zeros(len(cells_xy), dtype=bool)
        for art in self.layout.articulations:
            if art.kind != "hinge" or art.name not in self.open_articulations:
                continue
            hinge, front, width = _door_geometry(self.layout, art)
            rel = cells_xy - hinge
            reach = width + margin
            blocked |= (np.hypot(rel[:, 0], rel[:, 1]) < reach) & (rel @ front > -0.05)
        return blocked

    def open_doors(self) -> list[tuple[Furniture, np.ndarray, np.ndarray]]:
        """(furniture, hinge, free edge) of every open hinged door, the panel's ends in xy:
        at its open angle, or where it is now (`door_angles`). The panel turns about the
        hinge as the handle does (`oracle_articulated`: handle(q) = hinge +
        rot_z(handle_closed - hinge, q - closed))."""
        doors = []
        for art in self.layout.articulations:
            if art.kind != "hinge":
                continue
            if self.door_angles is not None:
                q = self.door_angles.get(art.name, art.closed)
            elif art.name in self.open_articulations:
                q = art.open
            else:
                continue
            if abs(q - art.closed) < 1e-3:
                continue
            furniture = self.layout.furniture_named(art.furniture)
            hinge, front, _ = _door_geometry(self.layout, art)
            # the closed panel runs from the hinge across the front face, through its middle
            middle = np.array(furniture.center[:2]) + furniture.half_size[0] * front
            closed = 2.0 * (middle - hinge)  # hinge -> free edge, a door width long
            doors.append((furniture, hinge, hinge + rot_z(closed, q - art.closed)))
        return doors

    def reach_blocked(self, cells_xy: np.ndarray, target_xy) -> np.ndarray:
        """Cells from which the arm cannot reach the target straight through an open door:
        the line to it crosses the door's panel (standing behind the door), or the target
        is inside the furniture and the line does not enter by its open front (standing
        beside it, the arm would have to wrap round the side wall and the door's free
        edge: for the fridge at 70 deg a 2.1-2.5 m way round, against the arm's ~1 m)."""
        xy = np.asarray(cells_xy, dtype=np.float64).reshape(-1, 2)
        out = np.zeros(len(xy), dtype=bool)
        t = np.asarray(target_xy, dtype=np.float64)[:2]
        for f, hinge, edge in self.open_doors():
            out |= segments_cross(xy, t, hinge, edge)
            front = np.array([math.cos(f.front_yaw), math.sin(f.front_yaw)])
            side = np.array([-front[1], front[0]])
            rel = t - np.array(f.center[:2])
            if abs(rel @ front) <= f.half_size[0] and abs(rel @ side) <= f.half_size[1]:
                face = np.array(f.center[:2]) + f.half_size[0] * front
                left, right = face + f.half_size[1] * side, face - f.half_size[1] * side
                out |= ~segments_cross(xy, t, left, right)
        return out

    def cells_xy(self, cells: np.ndarray) -> np.ndarray:
        res, (x0, y0) = self.navmap.resolution, self.navmap.origin
        return np.stack([x0 + (cells[:, 1] + 0.5) * res, y0 + (cells[:, 0] + 0.5) * res], axis=1)

    def clearance(self) -> RobotClearance:
        """Whole-robot check against this draw's articulations and objects (built lazily:
        spawns are drawn after every object is placed)."""
        if self._clearance is None:
            held = self.held if self.held is not None else -1
            objs = []
            for i, o in enumerate(self.objects):
                if i == held:
                    continue  # it is in the gripper, not on its receptacle
                t = OBJECT_TYPES[o.obj_type]
                z = o.pos[2]
                objs.append(
                    (o.pos[0], o.pos[1], t.footprint_radius, z - t.half_height, z + t.half_height)
                )
            held_size = (
                None if self.held is None else OBJECT_TYPES[self.objects[self.held].obj_type].size
            )
            self._clearance = RobotClearance(
                self.layout,
                self.articulation_values(),
                objs,
                base_radius=self.cfg.robot_radius,
                margin=self.cfg.robot_clearance,
                held_size=held_size,
                held_disc=self.held_disc,
            )
            if self.arm_discs is not None:  # the arm as it starts, not at rest
                rc = self._clearance
                extra = rc.discs[len(arm_discs(base_radius=self.cfg.robot_radius)) :]
                rc.discs = np.vstack([self.arm_discs, extra])
        return self._clearance

    def pose_ok(self, x: float, y: float, yaw: float) -> bool:
        """The sim accepts the base there and the resting robot touches nothing."""
        if self.footprints.collides(x, y, self.cfg.robot_radius):
            return False
        if self._blocked_by_door(np.array([[x, y]]), self.cfg.robot_radius + 0.05)[0]:
            return False
        return self.clearance().robot_free(x, y, yaw)

    def _free_pose(self, x: float, y: float, yaw_center: float, yaw_spread: float):
        """A pose at (x, y) with heading yaw_center ± yaw_spread that passes `pose_ok`."""
        for _ in range(self.cfg.spawn_yaw_tries if yaw_spread > 0 else 1):
            yaw = yaw_center + (
                self.rng.uniform(-yaw_spread, yaw_spread) if yaw_spread > 0 else 0.0
            )
            pose = self._pose(x, y, yaw)
            if self.pose_ok(*pose):
                return pose
        return None

    def spawn_anywhere(
        self, away_from=None, min_dist: float = 0.0, max_dist: float = math.inf
    ) -> tuple[float, float, float]:
        """A random pose in the main navigable region, any heading (optionally with a
        geodesic distance from a point in [min_dist, max_dist))."""
        cells = self.navmap.candidates()
        xy = self.cells_xy(cells)
        keep = ~self._blocked_by_door(xy, self.navmap.robot_radius + 0.05)
        if away_from is not None:
            dist = self.navmap.distance_grid(float(away_from[0]), float(away_from[1]))
            far = dist[cells[:, 0], cells[:, 1]]
            keep &= np.isfinite(far) & (far >= min_dist) & (far < max_dist)
        xy = xy[keep]
        for i in self.rng.integers(len(xy), size=20) if len(xy) else []:
            x, y = (float(v) for v in xy[i])
            pose = self._free_pose(x, y, 0.0, math.pi)
            if pose is not None:
                return pose
        raise NoPlacement("no free spawn cell")

    def _stand(self, target_xy, approach_yaw: float) -> tuple[float, float]:
        stand = self.navmap.approach_point(float(target_xy[0]), float(target_xy[1]), approach_yaw)
        if stand is None:
            raise NoPlacement("target not reachable from the floor")
        return stand

    def spawn_near(self, target_xy, approach_yaw: float) -> tuple[float, float, float]:
        """Far spawn: navigable, within spawn_max_dist (geodesic) of target_xy, facing it ±
        yaw noise."""
        tx, ty = float(target_xy[0]), float(target_xy[1])
        stand = self._stand(target_xy, approach_yaw)
        # within the radius both via the approach point and by the NavMap's own snapping
        # (less a hair, so float32 distance fields read back <= spawn_max_dist too)
        radius = self.cfg.spawn_max_dist - 1e-4
        budget = radius - math.hypot(stand[0] - tx, stand[1] - ty)
        mask = np.zeros(self.navmap.shape, dtype=bool)
        direct = self.navmap.candidates(near=(tx, ty), max_dist=radius)
        mask[direct[:, 0], direct[:, 1]] = True
        cells = self.navmap.candidates(near=stand, max_dist=budget)
        cells = cells[mask[cells[:, 0], cells[:, 1]]]
        xy = self.cells_xy(cells)
        xy = xy[~self._blocked_by_door(xy, self.navmap.robot_radius + 0.05)]
        for i in self.rng.permutation(len(xy))[:50]:
            x, y = (float(v) for v in xy[i])
            pose = self._free_pose(x, y, math.atan2(ty - y, tx - x), self.cfg.yaw_noise)
            if pose is not None:
                return pose
        raise NoPlacement("no spawn cell near the target")

    def _in_reach(self, pose, target_xy, band: tuple[float, float] | None = None) -> bool:
        d = shoulder_reach(pose, target_xy, self.cfg.shoulder_x)
        lo, hi = band or (self.cfg.reach_min, self.cfg.reach_max)
        return lo <= d <= hi

    def spawn_close(
        self,
        target_xy,
        approach_yaw: float,
        yaw_noise: float | None = None,
        band: tuple[float, float] | None = None,
    ) -> tuple[float, float, float]:
        """Close spawn: the target within the arm's reach from the shoulder without moving
        the base; heading facing it ± yaw_noise (default cfg.yaw_noise; 0: exactly).
        `band` replaces the shoulder-to-target reach band (cfg.reach_min, cfg.reach_max)."""
        noise = self.cfg.yaw_noise if yaw_noise is None else yaw_noise
        lo, hi = band or (self.cfg.reach_min, self.cfg.reach_max)
        tx, ty = float(target_xy[0]), float(target_xy[1])
        stand = self._stand(target_xy, approach_yaw)
        cells = self.navmap.candidates(near=stand, max_dist=2 * hi)
        xy = self.cells_xy(cells)
        d = np.hypot(xy[:, 0] - tx, xy[:, 1] - ty)
        xy = xy[(d <= hi + self.cfg.shoulder_x) & (d >= lo - self.cfg.shoulder_x)]
        xy = xy[~self._blocked_by_door(xy, self.navmap.robot_radius + 0.05)]
        xy = xy[~self.reach_blocked(xy, (tx, ty))]
        for i in self.rng.permutation(len(xy))[:60]:
            x, y = (float(v) for v in xy[i])
            pose = self._free_pose(x, y, math.atan2(ty - y, tx - x), noise)
            if pose is not None and self._in_reach(pose, (tx, ty), (lo, hi)):
                return pose
        raise NoPlacement("no spawn cell within arm's reach of the target")

    def spawn_nav_stop(
        self,
        target_xy,
        approach_yaw: float,
        stand_band: tuple[float, float],
        offset: tuple[float, float],
        yaw_noise: float,
        band: tuple[float, float],
        tries: int = 40,
    ) -> tuple[float, float, float]:
        """Where a learned nav leaves the robot before a manipulation: a nav goal (a close
        spawn with the target `stand_band` from the shoulder, facing it exactly, as the
        executor's stand poses) moved `offset` metres (uniform in the range) in a uniform
        direction, its heading kept ± `yaw_noise`; the target still within `band` of the
        shoulder and not behind an open door's panel, the robot clear (`pose_ok`)."""
        gx, gy, gyaw = self.spawn_close(target_xy, approach_yaw, 0.0, stand_band)
        tx, ty = float(target_xy[0]), float(target_xy[1])
        for _ in range(tries):
            r = self.rng.uniform(*offset)
            a = self.rng.uniform(-math.pi, math.pi)
            x, y = gx + r * math.cos(a), gy + r * math.sin(a)
            if self.reach_blocked(np.array([[x, y]]), (tx, ty))[0]:
                continue
            pose = self._free_pose(x, y, gyaw, yaw_noise)
            if pose is not None and self._in_reach(pose, (tx, ty), band):
                return pose
        raise NoPlacement("no pose off the stand pose within the arm's reach of the target")

    def spawn_place(self, target_xy, approach_yaw: float) -> tuple[float, float, float]:
        """A place start: with `place_ready_prob` like the HAB executor's stand pose
        (`skills.stand_pose.ready_pose`: target near the comfortable reach, facing it),
        else a close spawn; where the arm or held object hangs over the receptacle from
        every such cell, standing back up to `place_far_reach` (the executor's relaxed
        stand pose)."""
        cfg = self.cfg
        if self.rng.random() < cfg.place_ready_prob:
            band = (cfg.comfort_reach - cfg.comfort_spread, cfg.comfort_reach + cfg.comfort_spread)
            try:
                return self.spawn_close(target_xy, approach_yaw, cfg.ready_yaw_noise, band)
            except NoPlacement:
                pass
        try:
            return self.spawn_close(target_xy, approach_yaw)
        except NoPlacement:
            band = (cfg.reach_min, cfg.place_far_reach)
            return self.spawn_close(target_xy, approach_yaw, band=band)

    def _pose(self, x: float, y: float, yaw: float) -> tuple[float, float, float]:
        yaw = wrap_angle(yaw)
        return self.rounded((x, y, yaw))

    def front_yaw(self, furniture: str) -> float:
        return self.layout.furniture_named(furniture).front_yaw

    def spawn_work(self, art: Articulation, handle) -> tuple[float, float, float]:
        """Close spawn for the open/close tasks (Habitat 2.0 style: a fixed region in front of
        the furniture): the work pose (`articulation_work_pose`) ± the position noise, its
        heading ± the yaw noise, turned toward the current handle as far as the contract's
        ±30° facing rule needs; handle within reach, robot clear. From there the handle's whole
        travel is in reach (a spawn facing only the current handle left a drawer's closed end
        out of reach: close_cab stalled with the arm straight)."""
        x0, y0, yaw0 = articulation_work_pose(
            self.layout, art, footprints=self.footprints, robot_radius=self.cfg.robot_radius
        )
        hinge = art.kind == "hinge"
        n = (FRIDGE_WORK_NOISE if hinge else DRAWER_WORK_NOISE) * self.cfg.work_noise_scale
        yn = FRIDGE_WORK_YAW_NOISE
        turn = self.cfg.yaw_noise - yn - 0.01  # keeps the handle within the contract's ±30°
        for k in range(60):  # widen the region when the work pose is blocked (a wall, a table)
            r = n * (1 + k // 15)
            x, y = x0 + self.rng.uniform(-r, r), y0 + self.rng.uniform(-r, r)
            to_handle = math.atan2(handle[1] - y, handle[0] - x)
            toward_work = float(np.clip(wrap_angle(yaw0 - to_handle), -turn, turn))
            noise = self.rng.uniform(-yn, yn)
            for f in (1.0, 0.5, 0.0):  # the work heading if the resting arm is clear there
                pose = self._pose(x, y, to_handle + f * toward_work + noise)
                if self._in_reach(pose, handle[:2]) and self.pose_ok(*pose):
                    return pose
        # Blocked (furniture squeezed into a corner): any close spawn facing the handle.
        return self.spawn_close(handle[:2], self.front_yaw(art.furniture))


def _door_geometry(layout: Layout, art: Articulation) -> tuple[np.ndarray, np.ndarray, float]:
    """Hinge (x, y), front direction and door width of a hinged door on its furniture.

    The hinge is on the front face, on the side opposite the handle (the handle sits near
    the door's free edge); the door is as wide as the furniture.
    """
    f = layout.furniture_named(art.furniture)
    front = np.array([math.cos(f.front_yaw), math.sin(f.front_yaw)])
    side = np.array([-front[1], front[0]])
    center = np.array(f.center)
    handle_side = float((np.array(art.handle_closed_pos[:2]) - center) @ side)
    hinge = center + f.half_size[0] * front - math.copysign(f.half_size[1], handle_side) * side
    return hinge, front, 2.0 * f.half_size[1]
