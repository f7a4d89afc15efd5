"""Arm clearance scan: distances from points on the arm to what blocks it (the `arm_rays`
sensor, docs/DESIGN.md §4.2).

The world blocks the arm geometrically (`SimConfig.world_blocks_robot`): a step that would
push a link more than 1 cm into a wall, furniture, the fridge body or shelf, a door or a
drawer is cut short. A state policy that sees only joints and target vectors is blind to
that geometry (a learned pick pushed into the fridge walls for most of its episode). This
scan is the arm's counterpart of nav's base range scan (`RearrangeSim.obstacle_ranges`).

Rays: from each origin in ARM_RAY_ORIGINS (the EE site, the wrist flex joint, the elbow flex
joint), along each of ARM_RAY_DIRECTIONS (+x, -x, +y, -y, +z, -z of the robot *base* frame:
x forward, y left, z up), ray `ARM_RAY_DIRECTIONS.shape[0] * origin + direction`: 18 rays.
Each is the distance (m) to the first geom in `furniture_geoms.STATIC_GROUP`, i.e. exactly
the geoms whose contype carries STATIC_BIT, the ones the blocking check measures: walls,
furniture carcasses (counters, tables, shelves, the fridge's walls, shelf and ceiling, the
cabinet), the fridge door and the drawers (the handle the gripper holds included). Not hit:
the robot's own geoms, free objects (the arm pushes them physically, they never block it;
pick sees its target in `obj_start_sensor`, and a held object would read 0 forever) and the
floor (it does not block the arm either). Capped at `max_range`: nothing within it reads
`max_range`. (MuJoCo's ray casts skip fully transparent geoms; every blocker is visible.)

A ray that starts inside a geom would read the distance to that geom's far face (MuJoCo's
ray-box test returns the exit): an origin inside a static box therefore reads 0 on all six
of its rays. The blocking check keeps the arm's surface within 1 cm of the geometry, so an
origin (inside the links) lands inside only when a door swings onto the arm, a pose is set
from outside, or the gripper sits in the handle bar it holds.
"""

from __future__ import annotations

import math

import mujoco
import numpy as np

from rearrange.sim import robot as R
from rearrange.sim.furniture_geoms import STATIC_GROUP

# (kind, name): where each group of six rays starts. The EE is the gripper's centre (the
# grasp site), the wrist the wrist-flex joint (0.33 m up the gripper/wrist-roll segment
# from the EE at rest), the elbow the elbow-flex joint (0.31 m further, the forearm's far
# end): the three knots of the chain that reaches into shelves and round doors.
ARM_RAY_ORIGINS = (
    ("site", R.EE_SITE),
    ("body", R.PREFIX + "wrist_flex_link"),
    ("body", R.PREFIX + "elbow_flex_link"),
)
ARM_RAY_DIRECTIONS = np.array(
    [[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1]], dtype=np.float64
)
ARM_RAY_COUNT = len(ARM_RAY_ORIGINS) * len(ARM_RAY_DIRECTIONS)
_GROUP_MASK = np.zeros(6, dtype=np.uint8)  # mjNGROUP
_GROUP_MASK[STATIC_GROUP] = 1


def inside_boxes(points, center, xmat, half) -> np.ndarray:
    """[p] bool: each of `points` [p, 3] lies inside any of the boxes (world `center` [n, 3],
    rotation `xmat` [n, 9] row-major as MuJoCo's geom_xmat, half extents `half` [n, 3])."""
    if len(center) == 0:
        return np.zeros(len(points), dtype=bool)
    rel = np.asarray(points)[:, None, :] - center  # [p, n, 3]
    local = np.matmul(rel[:, :, None, :], np.reshape(xmat, (-1, 3, 3)))[:, :, 0, :]  # R^T rel
    return (np.abs(local) < half).all(axis=2).any(axis=1)


class ArmScan:
    """The scan's ids for one compiled model (`RearrangeSim` keeps one per model)."""

    def __init__(self, model: mujoco.MjModel) -> None:
        self.model = model
        self._origins = [
            (kind == "site", model.site(n).id if kind == "site" else model.body(n).id)
            for kind, n in ARM_RAY_ORIGINS
        ]
        static = np.flatnonzero(model.geom_group == STATIC_GROUP)
        self._boxes = static[model.geom_type[static] == mujoco.mjtGeom.mjGEOM_BOX]
        self._half = model.geom_size[self._boxes]  # [n, 3] half extents
        n = len(ARM_RAY_DIRECTIONS)
        self._geomid = np.zeros(n, dtype=np.int32)
        self._dist = np.zeros(n, dtype=np.float64)

    def origins(self, data: mujoco.MjData) -> np.ndarray:
        """[origins, 3] world positions of the ray origins now."""
        return np.array([data.site_xpos[i] if site else data.xpos[i] for site, i in self._origins])

    def inside(self, data: mujoco.MjData, points: np.ndarray) -> np.ndarray:
        """[points] bool: the point lies inside a static box geom."""
        b = self._boxes
        return inside_boxes(points, data.geom_xpos[b], data.geom_xmat[b], self._half)

    def ranges(self, data: mujoco.MjData, yaw: float, max_range: float) -> np.ndarray:
        """[ARM_RAY_COUNT] distances (m) along the rays, capped at `max_range` (module doc)."""
        c, s = math.cos(yaw), math.sin(yaw)
        to_world = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
        vec = np.ascontiguousarray((ARM_RAY_DIRECTIONS @ to_world.T).ravel())
        points = self.origins(data)
        n = len(ARM_RAY_DIRECTIONS)
        out = np.empty((len(points), n), dtype=np.float64)
        for k, p in enumerate(points):
            mujoco.mj_multiRay(
                self.model,
                data,
                np.ascontiguousarray(p, dtype=np.float64),
                vec,
                _GROUP_MASK,
                1,  # flg_static: the world's own geoms (walls, welded furniture) count
                -1,  # bodyexclude: none (the group mask already leaves the robot out)
                self._geomid,
                self._dist,
                None,
                n,
                max_range,
            )
            out[k] = self._dist
        out[out < 0.0] = max_range  # no hit
        np.minimum(out, max_range, out=out)
        out[self.inside(data, points)] = 0.0
        return out.ravel()
