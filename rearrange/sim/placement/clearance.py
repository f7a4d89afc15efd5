"""Whole-robot clearance checks for episode spawns (cheap geometry, no physics).

`NavMap` keeps the base *circle* off walls and furniture footprints, exactly as the sim's
`Footprints` does. Two more things can touch the world at a spawn:
- the resting arm, which reaches ~0.68 m ahead of the base at 1.0-1.4 m height (over
  counters, into fridges, into walls);
- the moving parts (an open fridge door, an open drawer), which the footprints ignore.

Both are checked here against the *real* collision boxes of the scene: the furniture boxes
come from `furniture_parts` (the description the MuJoCo scene builder builds, read here
without MuJoCo) with each door/drawer at its episode joint value, plus the walls and the
episode objects.
The arm is a handful of discs (base frame x, y, radius, z range) measured from the MuJoCo
Fetch model at its resting pose, so they follow any change of the model or rest pose.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cache

import numpy as np

from rearrange.sim.furniture_parts import furniture_parts
from rearrange.sim.geometry import rot_z
from rearrange.sim.layout_types import Layout

# ---------------------------------------------------------------------------------- arm


@cache
def arm_discs(slice_len: float = 0.06, base_radius: float = 0.3) -> np.ndarray:
    """[K, 5] discs (x, y, radius, z_lo, z_hi) in the base frame covering every vertex of
    the resting robot outside the base circle (i.e. the arm), in x slices of `slice_len`.

    The rest of the robot lies inside the base circle, which the NavMap / sim footprint
    check already keeps off walls and furniture.
    """
    return vertex_discs(rest_robot_vertices(), slice_len, base_radius)


def vertex_discs(verts: np.ndarray, slice_len: float, base_radius: float) -> np.ndarray:
    """[K, 5] discs (x, y, radius, z_lo, z_hi) covering the base-frame vertices outside the
    base circle, one per x slice of `slice_len`."""
    verts = verts[np.hypot(verts[:, 0], verts[:, 1]) > base_radius]
    discs = []
    for x0 in np.arange(verts[:, 0].min(), verts[:, 0].max() + 1e-9, slice_len):
        s = verts[(verts[:, 0] >= x0) & (verts[:, 0] < x0 + slice_len + 1e-9)]
        if len(s) == 0:
            continue
        cx = 0.5 * (s[:, 0].min() + s[:, 0].max())
        cy = 0.5 * (s[:, 1].min() + s[:, 1].max())
        r = float(np.hypot(s[:, 0] - cx, s[:, 1] - cy).max())
        discs.append((cx, cy, r, s[:, 2].min(), s[:, 2].max()))
    return np.array(discs, dtype=np.float64)


def _rest_pose() -> tuple:
    """(model, data) of the bare robot at its resting pose, kinematics run."""
    import mujoco

    from rearrange.sim import robot as R
    from rearrange.sim.config import SimConfig

    cfg = SimConfig()
    model = R.fetch_spec(cfg).compile()
    data = mujoco.MjData(model)
    for name, value in zip(R.ARM_JOINTS, R.REST_ARM_QPOS):
        data.qpos[model.joint(name).qposadr[0]] = value
    data.qpos[model.joint(R.PREFIX + "torso_lift_joint").qposadr[0]] = cfg.torso_lift
    mujoco.mj_kinematics(model, data)
    return model, data


@cache
def rest_robot_vertices() -> np.ndarray:
    """[N, 3] collision-geom vertices of the robot at its resting pose, base frame."""
    model, data = _rest_pose()
    return collision_vertices(model, data, range(model.ngeom))


def collision_vertices(model, data, geoms) -> np.ndarray:
    """[N, 3] vertices of the collision geoms among `geoms` (visual-only ones skipped) at
    their pose in `data`: a mesh's vertices, a primitive's bounding-box corners."""
    import mujoco

    out = []
    for g in geoms:
        if model.geom_contype[g] == 0 and model.geom_conaffinity[g] == 0:
            continue  # visual only
        if model.geom_type[g] == mujoco.mjtGeom.mjGEOM_MESH:
            mid = model.geom_dataid[g]
            adr, n = model.mesh_vertadr[mid], model.mesh_vertnum[mid]
            local = model.mesh_vert[adr : adr + n].astype(np.float64)
        else:  # primitive: its bounding box corners
            h = model.geom_size[g]
            local = np.array(
                [[a * h[0], b * h[1], c * h[2]] for a in (-1, 1) for b in (-1, 1) for c in (-1, 1)]
            )
        out.append(local @ data.geom_xmat[g].reshape(3, 3).T + data.geom_xpos[g])
    return np.concatenate(out)


# ---------------------------------------------------------------------------------- world


@dataclass
class WorldBoxes:
    """Oriented boxes: centre xy, half xy, yaw, z range; `moving` marks doors/drawers."""

    center: np.ndarray = field(default_factory=lambda: np.zeros((0, 2)))
    half: np.ndarray = field(default_factory=lambda: np.zeros((0, 2)))
    yaw: np.ndarray = field(default_factory=lambda: np.zeros(0))
    z: np.ndarray = field(default_factory=lambda: np.zeros((0, 2)))
    moving: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    handles: dict[str, np.ndarray] = field(default_factory=dict)  # articulation -> world xyz


def world_boxes(layout: Layout, articulations: dict[str, float]) -> WorldBoxes:
    """Walls and every furniture collision box, doors/drawers at the given joint values
    (missing ones closed): a hinge yaws its part about the part's z axis, a slide moves it
    along the joint axis."""
    rows: list[tuple] = [
        (w.center[0], w.center[1], w.half_size[0], w.half_size[1], w.yaw,
         w.center[2] - w.half_size[2], w.center[2] + w.half_size[2], False)
        for w in layout.walls
    ]  # fmt: skip
    handles: dict[str, np.ndarray] = {}
    closed = {a.name: a.closed for a in layout.articulations}
    for f in layout.furniture:
        fp = furniture_parts(f)
        origin = np.array([f.center[0], f.center[1], 0.0])
        parts = [(fp.boxes, np.zeros(3), 0.0, False)]
        for part in fp.moving:  # a door (hinge) or a drawer (slide)
            j = part.joint
            q = float(articulations.get(j.name, closed.get(j.name, 0.0)))
            offset = np.array(part.pos, dtype=np.float64)
            if j.kind == "hinge":
                if tuple(j.axis) != (0, 0, 1):
                    raise ValueError(f"clearance check handles z hinges only ({j.name})")
                yaw = q
            else:
                offset, yaw = offset + q * np.array(j.axis, dtype=np.float64), 0.0
            parts.append((part.boxes, offset, yaw, True))
            for spos in part.sites.values():
                p = offset + rot_z(np.array(spos, dtype=np.float64), yaw)
                handles[j.name] = origin + rot_z(p, f.front_yaw)
        for boxes, offset, yaw, moving in parts:
            for b in boxes:
                c = origin + rot_z(
                    offset + rot_z(np.array(b.pos, dtype=np.float64), yaw), f.front_yaw
                )
                h = b.half
                rows.append(
                    (c[0], c[1], h[0], h[1], f.front_yaw + yaw, c[2] - h[2], c[2] + h[2], moving)
                )
    a = np.array([r[:7] for r in rows], dtype=np.float64).reshape(-1, 7)
    return WorldBoxes(
        a[:, :2], a[:, 2:4], a[:, 4], a[:, 5:7], np.array([r[7] for r in rows], bool), handles
    )


def points_box_dist(px, py, boxes_c, boxes_h, boxes_yaw) -> np.ndarray:
    """[P, B] distance from points to oriented rectangles (0 inside)."""
    c, s = np.cos(boxes_yaw), np.sin(boxes_yaw)
    dx = px[:, None] - boxes_c[None, :, 0]
    dy = py[:, None] - boxes_c[None, :, 1]
    lx = np.abs(c * dx + s * dy) - boxes_h[None, :, 0]
    ly = np.abs(-s * dx + c * dy) - boxes_h[None, :, 1]
    return np.hypot(np.maximum(lx, 0.0), np.maximum(ly, 0.0))


class RobotClearance:
    """Does the resting robot at base pose (x, y, yaw) touch the scene? (see module doc)"""

    def __init__(
        self,
        layout: Layout,
        articulations: dict[str, float],
        objects: list[tuple[float, float, float, float, float]] = (),
        base_radius: float = 0.3,
        margin: float = 0.03,
        held_size: tuple[float, ...] | None = None,
        held_disc: tuple[float, float, float, float, float] | None = None,
    ) -> None:
        """`objects`: (x, y, footprint radius, z_lo, z_hi) of loose objects; `held_size`:
        the MuJoCo size of an object held in the gripper at the resting pose (checked like
        the arm); `held_disc`: the held object's base-frame disc, overriding `held_size`."""
        self.boxes = world_boxes(layout, articulations)
        self.base_radius, self.margin = base_radius, margin
        self.discs = arm_discs(base_radius=base_radius)
        if held_disc is not None:  # where a held object really is (carried above rest)
            self.discs = np.vstack([self.discs, np.asarray(held_disc, dtype=np.float64)])
        elif held_size is not None:
            self.discs = np.vstack([self.discs, held_object_disc(tuple(held_size))])
        self.objects = np.array(list(objects), dtype=np.float64).reshape(-1, 5)

    def handle_pos(self, name: str) -> np.ndarray:
        """World position of articulation `name`'s handle at the episode's joint value."""
        return self.boxes.handles[name]

    def arm_free(self, x: float, y: float, yaw: float) -> bool:
        d, b, m = self.discs, self.boxes, self.margin
        c, s = math.cos(yaw), math.sin(yaw)
        px = x + c * d[:, 0] - s * d[:, 1]
        py = y + s * d[:, 0] + c * d[:, 1]
        z_hit = (b.z[None, :, 0] < d[:, 4:5] + m) & (b.z[None, :, 1] > d[:, 3:4] - m)
        dist = points_box_dist(px, py, b.center, b.half, b.yaw)
        if np.any(z_hit & (dist < d[:, 2:3] + m)):
            return False
        if len(self.objects):
            o = self.objects
            oz = (o[None, :, 3] < d[:, 4:5] + m) & (o[None, :, 4] > d[:, 3:4] - m)
            od = np.hypot(px[:, None] - o[None, :, 0], py[:, None] - o[None, :, 1])
            if np.any(oz & (od < d[:, 2:3] + o[None, :, 2] + m)):
                return False
        return True

    def base_free(self, x: float, y: float) -> bool:
        """The base circle clears the moving parts (static ones are the NavMap's job)."""
        b = self.boxes
        if not b.moving.any():
            return True
        dist = points_box_dist(
            np.array([x]), np.array([y]), b.center[b.moving], b.half[b.moving], b.yaw[b.moving]
        )
        return bool(np.all(dist >= self.base_radius + self.margin))

    def robot_free(self, x: float, y: float, yaw: float) -> bool:
        return self.base_free(x, y) and self.arm_free(x, y, yaw)


@cache
def rest_gripper_frame() -> tuple[np.ndarray, np.ndarray]:
    """(position, x axis) of the gripper body at the resting pose, base frame: a held
    object sits along that axis (`RearrangeSim.start_holding`)."""
    from rearrange.sim import robot as R

    model, data = _rest_pose()
    body = model.body(R.GRIPPER_BODY).id
    return data.xpos[body].copy(), data.xmat[body].reshape(3, 3)[:, 0].copy()


def held_object_disc(size: tuple[float, ...]) -> tuple[float, float, float, float, float]:
    """A disc (x, y, r, z_lo, z_hi) in the base frame covering an object held at rest."""
    pos, axis = rest_gripper_frame()
    extent = max(size)
    centre = pos + axis * (0.045 + extent)  # as RearrangeSim.start_holding places it
    r = float(np.linalg.norm(size)) if len(size) > 1 else float(size[0])
    return (float(centre[0]), float(centre[1]), r, float(centre[2] - r), float(centre[2] + r))
