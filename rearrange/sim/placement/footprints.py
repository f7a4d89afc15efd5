"""The base's 2-D collision check: walls and furniture as oriented boxes (`Footprints`) and
the moving parts the base can hit at their pose now (`SwingingParts`, an open fridge door).

`RearrangeSim` blocks base moves with exactly these boxes; episode generation and the
stand-pose search test candidate poses with them, so a pose they accept is one the sim
accepts. Plain numpy: nothing here imports MuJoCo (`SwingingParts` reads a compiled model's
arrays that the sim hands it).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from rearrange.sim.layout_types import Layout

if TYPE_CHECKING:
    import mujoco

    from rearrange.sim.scene_builder import SceneIndex

BASE_TOP_Z = 0.36
"""Top of the Fetch base (m; the base_link mesh spans z 0..0.359, radius 0.288). Moving parts
wholly above it (drawers, z >= 0.56) pass over the base footprint and are left to the physics
(they can still touch the torso or arm); only lower ones (the fridge door) block base moves."""
OPEN_EPS = 0.05
"""An articulation further than this from closed (rad or m) counts as open for the base check;
closed, its parts lie inside the furniture footprint."""


class Footprints:
    """Walls and furniture as oriented 2-D boxes, for the base collision check."""

    def __init__(self, layout: Layout | None = None, boxes: np.ndarray | None = None) -> None:
        """From a layout's walls + furniture, or from `boxes` rows (cx, cy, hx, hy, yaw)."""
        if boxes is None:
            rows = [
                (w.center[0], w.center[1], w.half_size[0], w.half_size[1], w.yaw)
                for w in layout.walls
            ]
            rows += [
                (f.center[0], f.center[1], f.half_size[0], f.half_size[1], f.front_yaw)
                for f in layout.furniture
            ]
            boxes = np.array(rows, dtype=np.float64)
        b = np.asarray(boxes, dtype=np.float64).reshape(-1, 5)
        self.center, self.half = b[:, :2], b[:, 2:4]
        self.cos, self.sin = np.cos(b[:, 4]), np.sin(b[:, 4])

    def _outside_sq(self, x: float, y: float) -> np.ndarray:
        """Squared distance from (x, y) to each box (0 inside)."""
        dx, dy = x - self.center[:, 0], y - self.center[:, 1]
        lx = np.abs(self.cos * dx + self.sin * dy)  # point in each box's frame
        ly = np.abs(-self.sin * dx + self.cos * dy)
        ox = np.maximum(lx - self.half[:, 0], 0.0)
        oy = np.maximum(ly - self.half[:, 1], 0.0)
        return ox * ox + oy * oy

    def collides(self, x: float, y: float, radius: float) -> bool:
        return bool(np.any(self._outside_sq(x, y) < radius * radius))

    def distance(self, x: float, y: float) -> float:
        """Distance from (x, y) to the nearest box (0 inside one; inf with no boxes)."""
        if len(self.center) == 0:
            return math.inf
        return float(np.sqrt(self._outside_sq(x, y).min()))

    def nearest_point(self, x: float, y: float) -> tuple[float, float]:
        """The point of the nearest box closest to (x, y) (itself when inside one; far away
        with no boxes)."""
        if len(self.center) == 0:
            return (math.inf, math.inf)
        i = int(np.argmin(self._outside_sq(x, y)))
        c, s = self.cos[i], self.sin[i]
        dx, dy = x - self.center[i, 0], y - self.center[i, 1]
        lx = float(np.clip(c * dx + s * dy, -self.half[i, 0], self.half[i, 0]))
        ly = float(np.clip(-s * dx + c * dy, -self.half[i, 1], self.half[i, 1]))
        return (self.center[i, 0] + c * lx - s * ly, self.center[i, 1] + s * lx + c * ly)

    def ray_distances(self, x: float, y: float, angles: np.ndarray, max_range: float) -> np.ndarray:
        """Distance from (x, y) along each world-frame heading in `angles` to the first box
        it enters, capped at `max_range` (0 when (x, y) is inside a box). Slab test of every
        ray against every box at once (rays x boxes), in each box's own frame."""
        angles = np.asarray(angles, dtype=np.float64)
        out = np.full(angles.shape, float(max_range))
        if len(self.center) == 0:
            return out
        dx, dy = np.cos(angles)[None, :], np.sin(angles)[None, :]  # [1, N]
        c, s = self.cos[:, None], self.sin[:, None]  # [B, 1]
        ox, oy = x - self.center[:, 0:1], y - self.center[:, 1:2]
        lx, ly = c * ox + s * oy, -s * ox + c * oy  # ray origin in each box's frame
        vx, vy = c * dx + s * dy, -s * dx + c * dy  # ray direction there [B, N]
        vx = np.where(np.abs(vx) < 1e-12, 1e-12, vx)  # parallel to a slab: no inf * 0
        vy = np.where(np.abs(vy) < 1e-12, 1e-12, vy)
        hx, hy = self.half[:, 0:1] + 1e-9, self.half[:, 1:2] + 1e-9  # faces grazed count
        tx0, tx1 = (-hx - lx) / vx, (hx - lx) / vx
        ty0, ty1 = (-hy - ly) / vy, (hy - ly) / vy
        t_in = np.maximum(np.minimum(tx0, tx1), np.minimum(ty0, ty1))
        t_out = np.minimum(np.maximum(tx0, tx1), np.maximum(ty0, ty1))
        hit = t_out >= np.maximum(t_in, 0.0)
        t = np.where(hit, np.maximum(t_in, 0.0), np.inf).min(axis=0)
        return np.minimum(t, out)


class SwingingParts:
    """Moving parts the base can hit (an open fridge door), as 2-D boxes at their pose now.

    Each part is the x/y bounding box of its body's box geoms in the body frame; only
    articulations whose moving body reaches below BASE_TOP_Z are kept.
    """

    def __init__(self, model: mujoco.MjModel, data: mujoco.MjData, idx: SceneIndex, layout: Layout):
        self.parts: list[tuple[int, int, float, np.ndarray]] = []  # (qpos adr, body, closed, box)
        for a in layout.articulations:
            body = idx.art_body[a.name]
            geoms = np.flatnonzero(model.geom_bodyid == body)
            lo = (model.geom_pos[geoms] - model.geom_size[geoms]).min(axis=0)
            hi = (model.geom_pos[geoms] + model.geom_size[geoms]).max(axis=0)
            if data.xpos[body][2] + lo[2] >= BASE_TOP_Z:
                continue
            local = np.array(
                [(lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, (hi[0] - lo[0]) / 2, (hi[1] - lo[1]) / 2]
            )
            self.parts.append((idx.art_qpos[a.name], body, float(a.closed), local))

    def footprints(self, data: mujoco.MjData) -> Footprints | None:
        """The open parts' boxes in the world now, or None when every part is closed."""
        rows = []
        for adr, body, closed, (cx, cy, hx, hy) in self.parts:
            if abs(data.qpos[adr] - closed) <= OPEN_EPS:
                continue
            xmat = data.xmat[body]  # row-major 3x3; bodies only yaw about z
            c, s = xmat[0], xmat[3]
            p = data.xpos[body]
            rows.append((p[0] + c * cx - s * cy, p[1] + s * cx + c * cy, hx, hy, math.atan2(s, c)))
        return Footprints(boxes=np.array(rows)) if rows else None
