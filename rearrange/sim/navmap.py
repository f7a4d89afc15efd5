"""2-D navigability map of a Layout: occupancy grid, geodesic distances, paths.

Obstacles are the walls and the furniture footprints, inflated by the robot radius. A cell
is navigable only when the robot's centre may stand *anywhere* in the cell: every point of
a navigable cell passes the sim's exact base check (`placement.Footprints.collides` with the
robot radius), so nav goals, spawns and paths through navigable cells are always accepted
by `RearrangeSim.set_base_pose`. Geodesic distances come from
Dijkstra on a 16-connected grid (the 8 king moves plus the 8 knight moves); the knight
moves cut the worst-case over-estimate of straight paths from 8 % (8-connected) to ~3 %.
Tasks query the distance to the same goal every step, so one distance field is computed
per goal cell and cached: repeated queries to a goal are a table lookup.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Sequence
from functools import cache

import numpy as np
from scipy import ndimage, sparse
from scipy.sparse import csgraph

from rearrange.sim.layout_types import Furniture, Layout

# (drow, dcol) moves; each is used in both directions. 32 directions bound the
# over-estimate of a straight path by 1.3 % (8-connected: 8 %). A move is allowed only when
# every cell its segment touches is free (no cutting through an obstacle corner).
_MOVES: tuple[tuple[int, int], ...] = (
    (0, 1), (1, 0), (1, 1), (1, -1),
    (1, 2), (2, 1), (2, -1), (1, -2),
    (1, 3), (3, 1), (3, -1), (1, -3), (2, 3), (3, 2), (3, -2), (2, -3),
)  # fmt: skip


# Extra clearance (m) a navigable cell keeps: covers float round-off and the 5-decimal
# rounding of stored episode poses, so a point of a navigable cell never grazes an obstacle.
_MARGIN = 1e-4
_AXIS_EPS = 1e-9


@cache
def _swept_cells(dr: int, dc: int) -> tuple[tuple[int, int], ...]:
    """Cells (relative to the start cell) the centre-to-centre segment of a move touches.

    Samples the segment finely and also nudges each sample by a small epsilon both ways,
    so a segment grazing a cell corner counts both cells around it (conservative).
    """
    cells: set[tuple[int, int]] = set()
    eps = 1e-3
    for t in np.linspace(0.0, 1.0, 64 * max(abs(dr), abs(dc)) + 1):
        for er in (-eps, eps):
            for ec in (-eps, eps):
                cells.add((math.floor(t * dr + 0.5 + er), math.floor(t * dc + 0.5 + ec)))
    cells.discard((0, 0))
    cells.discard((dr, dc))
    return tuple(sorted(cells))


def furniture_footprint(f: Furniture) -> tuple[float, float, float, float, float]:
    """(cx, cy, hx, hy, yaw) of the 2-D box a piece of furniture occupies.

    Layout convention (apartment.py): half sizes are in the furniture's local frame, whose
    +x axis is its front, rotated by `front_yaw` about the centre.
    """
    return (f.center[0], f.center[1], f.half_size[0], f.half_size[1], f.front_yaw)


class NavMap:
    """Occupancy grid of a Layout with geodesic queries (see module docstring)."""

    def __init__(
        self,
        layout: Layout,
        robot_radius: float = 0.3,
        resolution: float = 0.05,
        cache_size: int = 32,
        extra_boxes: Sequence[Sequence[float]] = (),
    ) -> None:
        """`extra_boxes`: more obstacles (cx, cy, hx, hy, yaw), e.g. an open fridge door
        at its pose now (`RearrangeSim.planning_navmap`)."""
        if resolution <= 0 or robot_radius < 0:
            raise ValueError(
                f"NavMap needs resolution > 0 and robot_radius >= 0, got {resolution}, {robot_radius}"
            )
        self.layout = layout
        self.extra_boxes = [tuple(float(v) for v in b) for b in extra_boxes]
        self.robot_radius = float(robot_radius)
        self.resolution = float(resolution)
        xmin, ymin, xmax, ymax = layout.bounds
        self.origin = (float(xmin), float(ymin))
        self.shape = (
            max(1, math.ceil((ymax - ymin) / resolution - 1e-9)),
            max(1, math.ceil((xmax - xmin) / resolution - 1e-9)),
        )
        # distance from each cell (the whole square) to the nearest obstacle: exact (or a
        # lower bound) below robot_radius + resolution, an over-estimate beyond (boxes are
        # only rasterised near themselves, for speed)
        self.clearance = self._clearance_field()
        self.navigable = self.clearance >= self.robot_radius + _MARGIN
        self._node_of = np.full(self.shape, -1, dtype=np.int64)
        self._cells = np.argwhere(self.navigable)  # node id -> (row, col)
        self._node_of[self.navigable] = np.arange(len(self._cells))
        self._move_ok = {m: self._move_mask(*m) for m in _MOVES}
        self._graph = self._build_graph()
        self._main_cells = self._largest_component()
        self._cache_size = cache_size
        self._fields: OrderedDict[int, np.ndarray] = OrderedDict()
        self._near: OrderedDict[tuple[int, float], np.ndarray] = OrderedDict()
        # nearest navigable cell of every cell, for snapping
        if len(self._cells):
            _, idx = ndimage.distance_transform_edt(~self.navigable, return_indices=True)
            self._nearest = idx
        else:
            self._nearest = None

    # ------------------------------------------------------------------ grid geometry
    def cell_center(self, row: int, col: int) -> tuple[float, float]:
        r = self.resolution
        return (self.origin[0] + (col + 0.5) * r, self.origin[1] + (row + 0.5) * r)

    def _cell_of(self, x: float, y: float) -> tuple[int, int] | None:
        col = math.floor((x - self.origin[0]) / self.resolution)
        row = math.floor((y - self.origin[1]) / self.resolution)
        if 0 <= row < self.shape[0] and 0 <= col < self.shape[1]:
            return row, col
        return None

    def _clamped_cell(self, x: float, y: float) -> tuple[int, int]:
        col = math.floor((x - self.origin[0]) / self.resolution)
        row = math.floor((y - self.origin[1]) / self.resolution)
        return min(max(row, 0), self.shape[0] - 1), min(max(col, 0), self.shape[1] - 1)

    def _obstacle_boxes(self) -> list[tuple[float, float, float, float, float]]:
        boxes = [
            (w.center[0], w.center[1], w.half_size[0], w.half_size[1], w.yaw)
            for w in self.layout.walls
        ]
        boxes += [furniture_footprint(f) for f in self.layout.furniture]
        return boxes + list(self.extra_boxes)

    def _clearance_field(self) -> np.ndarray:
        """Distance (m) from each cell square to the nearest obstacle or the outer bounds."""
        ny, nx = self.shape
        xs = self.origin[0] + (np.arange(nx) + 0.5) * self.resolution
        ys = self.origin[1] + (np.arange(ny) + 0.5) * self.resolution
        xmin, ymin, xmax, ymax = self.layout.bounds
        to_bounds = np.minimum.outer(
            np.minimum(ys - ymin, ymax - ys), np.minimum(xs - xmin, xmax - xs)
        )
        clearance = np.maximum(to_bounds - 0.5 * self.resolution, 0.0)
        reach = self.robot_radius + self.resolution
        for cx, cy, hx, hy, yaw in self._obstacle_boxes():
            self._carve_box(clearance, xs, ys, (cx, cy, hx, hy, yaw), reach)
        return clearance

    def _carve_box(self, clearance, xs, ys, box, reach: float) -> None:
        """Lower `clearance` to the distance from each cell square to one rotated box.

        Axis-aligned boxes (every layout yaw is a multiple of 90 degrees): the distance
        between the square and the box is the centre's distance to the box grown by half a
        cell, exact. Other yaws: the centre's distance minus half the cell diagonal, a lower
        bound (the distance is 1-Lipschitz).
        """
        cx, cy, hx, hy, yaw = box
        c, s = math.cos(yaw), math.sin(yaw)
        wx = abs(c) * hx + abs(s) * hy  # axis-aligned half extent of the box
        wy = abs(s) * hx + abs(c) * hy
        half = 0.5 * self.resolution
        c0, c1 = np.searchsorted(xs, [cx - wx - reach - half, cx + wx + reach + half])
        r0, r1 = np.searchsorted(ys, [cy - wy - reach - half, cy + wy + reach + half])
        if c0 >= c1 or r0 >= r1:
            return
        dx = xs[None, c0:c1] - cx
        dy = ys[r0:r1, None] - cy
        if abs(math.sin(2.0 * yaw)) < _AXIS_EPS:
            lx, ly = np.abs(dx) - wx - half, np.abs(dy) - wy - half
            dist = np.hypot(np.maximum(lx, 0.0), np.maximum(ly, 0.0))
        else:
            lx = np.abs(c * dx + s * dy) - hx
            ly = np.abs(-s * dx + c * dy) - hy
            dist = np.hypot(np.maximum(lx, 0.0), np.maximum(ly, 0.0)) - math.sqrt(2.0) * half
            dist = np.maximum(dist, 0.0)
        np.minimum(clearance[r0:r1, c0:c1], dist, out=clearance[r0:r1, c0:c1])

    def _largest_component(self) -> np.ndarray:
        """(row, col) of the biggest 8-connected navigable region (pockets behind furniture
        are navigable but useless as spawn points)."""
        if len(self._cells) == 0:
            return self._cells
        _, labels = csgraph.connected_components(self._graph, directed=False)
        return self._cells[labels == np.argmax(np.bincount(labels))]

    def _shifted(self, mask: np.ndarray, dr: int, dc: int) -> np.ndarray:
        """out[r, c] = mask[r + dr, c + dc], False outside the grid."""
        out = np.zeros_like(mask)
        ny, nx = mask.shape
        rs, re = max(0, -dr), min(ny, ny - dr)
        cs, ce = max(0, -dc), min(nx, nx - dc)
        if rs < re and cs < ce:
            out[rs:re, cs:ce] = mask[rs + dr : re + dr, cs + dc : ce + dc]
        return out

    def _move_mask(self, dr: int, dc: int) -> np.ndarray:
        ok = self.navigable & self._shifted(self.navigable, dr, dc)
        for sr, sc in _swept_cells(dr, dc):
            ok &= self._shifted(self.navigable, sr, sc)
        return ok

    def _build_graph(self) -> sparse.csr_matrix:
        n = len(self._cells)
        rows, cols, costs = [], [], []
        for (dr, dc), ok in self._move_ok.items():
            r, c = np.nonzero(ok)
            rows.append(self._node_of[r, c])
            cols.append(self._node_of[r + dr, c + dc])
            costs.append(np.full(len(r), math.hypot(dr, dc) * self.resolution))
        data = np.concatenate(costs) if costs else np.zeros(0)
        i = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
        j = np.concatenate(cols) if cols else np.zeros(0, dtype=np.int64)
        # both directions stored once here: queries run directed=True, which skips scipy's
        # per-call symmetrisation of the graph
        g = sparse.csr_matrix((data, (i, j)), shape=(n, n))
        return (g + g.T).tocsr()

    # ------------------------------------------------------------------ queries
    def is_navigable(self, x: float, y: float) -> bool:
        cell = self._cell_of(x, y)
        return cell is not None and bool(self.navigable[cell])

    def _snap_cell(self, x: float, y: float) -> tuple[int, int] | None:
        if self._nearest is None:
            return None
        cell = self._cell_of(x, y)
        if cell is not None and self.navigable[cell]:
            return cell
        row, col = self._clamped_cell(x, y)
        return int(self._nearest[0, row, col]), int(self._nearest[1, row, col])

    def snap(self, x: float, y: float) -> tuple[float, float]:
        """The nearest navigable point: (x, y) itself when navigable, else a cell centre."""
        cell = self._snap_cell(x, y)
        if cell is None:
            raise ValueError(f"layout {self.layout.split}/{self.layout.seed} has no navigable cell")
        if self.is_navigable(x, y):
            return float(x), float(y)
        return self.cell_center(*cell)

    def distance_field(self, x: float, y: float) -> np.ndarray:
        """Geodesic distance (m) from every navigable node to the goal cell of (x, y)."""
        goal = self._snap_cell(x, y)
        if goal is None:
            return np.zeros(0)
        node = int(self._node_of[goal])
        field = self._fields.get(node)
        if field is None:
            field = csgraph.dijkstra(self._graph, directed=True, indices=node).astype(np.float32)
            self._fields[node] = field
            if len(self._fields) > self._cache_size:
                self._fields.popitem(last=False)
        else:
            self._fields.move_to_end(node)
        return field

    def distance_grid(self, x: float, y: float) -> np.ndarray:
        """Geodesic distance (m) of every cell centre to (x, y)'s cell; inf where blocked."""
        grid = np.full(self.shape, np.inf, dtype=np.float32)
        field = self.distance_field(x, y)
        if len(field):
            grid[self._cells[:, 0], self._cells[:, 1]] = field
        return grid

    def _snap_offset(self, x: float, y: float, cell: tuple[int, int]) -> float:
        """Extra length from a non-navigable point to the cell it snaps to."""
        if self.is_navigable(x, y):
            return 0.0
        cx, cy = self.cell_center(*cell)
        return math.hypot(x - cx, y - cy)

    def geodesic_distance(self, a_xy: Sequence[float], b_xy: Sequence[float]) -> float:
        """Shortest obstacle-free path length from a to b (inf if unreachable).

        Points off the navigable area are first snapped to the nearest navigable cell and
        the snap distance is added. The result is never below the Euclidean distance.
        """
        ax, ay = float(a_xy[0]), float(a_xy[1])
        bx, by = float(b_xy[0]), float(b_xy[1])
        a_cell, b_cell = self._snap_cell(ax, ay), self._snap_cell(bx, by)
        if a_cell is None or b_cell is None:
            return math.inf
        grid = float(self.distance_field(bx, by)[self._node_of[a_cell]])
        if not math.isfinite(grid):
            return math.inf
        grid += self._snap_offset(ax, ay, a_cell) + self._snap_offset(bx, by, b_cell)
        return max(grid, math.hypot(ax - bx, ay - by))

    def shortest_path(
        self, a_xy: Sequence[float], b_xy: Sequence[float]
    ) -> list[tuple[float, float]]:
        """Waypoints from a to b (both snapped when off the map), string-pulled; [] if none."""
        a_cell = self._snap_cell(float(a_xy[0]), float(a_xy[1]))
        b_cell = self._snap_cell(float(b_xy[0]), float(b_xy[1]))
        if a_cell is None or b_cell is None:
            return []
        field = self.distance_field(float(b_xy[0]), float(b_xy[1]))
        if not math.isfinite(field[self._node_of[a_cell]]):
            return []
        cells = self._descend(field, a_cell, b_cell)
        start = self.snap(float(a_xy[0]), float(a_xy[1]))
        end = self.snap(float(b_xy[0]), float(b_xy[1]))
        points = [start] + [self.cell_center(*c) for c in cells[1:-1]] + [end]
        return self._string_pull(points)

    def _descend(
        self, field: np.ndarray, cell: tuple[int, int], goal: tuple[int, int]
    ) -> list[tuple[int, int]]:
        """Follow the distance field downhill from `cell` to `goal` (grid cells)."""
        path = [cell]
        while cell != goal:
            best, best_val = None, math.inf
            for dr, dc in _MOVES:
                for sgn in (1, -1):
                    r0, c0 = (cell[0], cell[1]) if sgn == 1 else (cell[0] - dr, cell[1] - dc)
                    if not (0 <= r0 < self.shape[0] and 0 <= c0 < self.shape[1]):
                        continue
                    if not self._move_ok[(dr, dc)][r0, c0]:
                        continue
                    nxt = (cell[0] + sgn * dr, cell[1] + sgn * dc)
                    val = field[self._node_of[nxt]] + math.hypot(dr, dc) * self.resolution
                    if val < best_val:
                        best, best_val = nxt, val
            if best is None or field[self._node_of[best]] >= field[self._node_of[cell]]:
                break  # cannot happen on a consistent field; guards against a float tie loop
            cell = best
            path.append(cell)
        return path

    def line_of_sight(self, a: Sequence[float], b: Sequence[float]) -> bool:
        """True when the straight segment a-b stays on navigable cells."""
        length = math.hypot(b[0] - a[0], b[1] - a[1])
        steps = max(1, math.ceil(length / (0.25 * self.resolution)))
        t = np.linspace(0.0, 1.0, steps + 1)
        xs = a[0] + t * (b[0] - a[0])
        ys = a[1] + t * (b[1] - a[1])
        cols = np.floor((xs - self.origin[0]) / self.resolution).astype(np.int64)
        rows = np.floor((ys - self.origin[1]) / self.resolution).astype(np.int64)
        inside = (rows >= 0) & (rows < self.shape[0]) & (cols >= 0) & (cols < self.shape[1])
        if not inside.all():
            return False
        return bool(self.navigable[rows, cols].all())

    def _string_pull(self, points: list[tuple[float, float]]) -> list[tuple[float, float]]:
        """Greedy shortcutting: from each kept point jump to the farthest visible one."""
        if len(points) <= 2:
            return points
        out = [points[0]]
        i = 0
        while i < len(points) - 1:
            j = len(points) - 1
            while j > i + 1 and not self.line_of_sight(points[i], points[j]):
                j -= 1
            out.append(points[j])
            i = j
        return out

    def approach_point(
        self, x: float, y: float, yaw: float, max_dist: float = 2.0
    ) -> tuple[float, float] | None:
        """First navigable point walking from (x, y) along `yaw`; None within `max_dist`.

        Where a robot stands to reach something on furniture: walk out of the furniture
        along its front direction (snapping could pick a cell behind a thin wall).
        """
        step = 0.25 * self.resolution
        for d in np.arange(0.0, max_dist + step, step):
            px, py = x + d * math.cos(yaw), y + d * math.sin(yaw)
            if self.is_navigable(px, py):
                return float(px), float(py)
        return None

    def sample_navigable(
        self,
        rng: np.random.Generator,
        near: Sequence[float] | None = None,
        max_dist: float | None = None,
    ) -> tuple[float, float]:
        """A random navigable cell centre, optionally within `max_dist` (geodesic) of `near`.

        Without `near`, cells come from the largest connected region only.
        """
        candidates = self.candidates(near, max_dist)
        if len(candidates) == 0:
            where = "" if near is None else f" within {max_dist} m of {tuple(near)}"
            raise ValueError(
                f"layout {self.layout.split}/{self.layout.seed}: no navigable cell{where}"
            )
        row, col = candidates[int(rng.integers(len(candidates)))]
        return self.cell_center(int(row), int(col))

    def candidates(
        self, near: Sequence[float] | None = None, max_dist: float | None = None
    ) -> np.ndarray:
        """(row, col) of navigable cells, optionally within `max_dist` geodesic of `near`."""
        if near is None:
            return self._main_cells
        cell = self._snap_cell(float(near[0]), float(near[1]))
        if cell is None:
            return self._cells
        offset = self._snap_offset(float(near[0]), float(near[1]), cell)
        if max_dist is None:
            field = self.distance_field(float(near[0]), float(near[1]))
            return self._cells[np.isfinite(field)]
        limit = max_dist - offset
        if limit < 0:
            return self._cells[:0]
        # Dijkstra stopped at the limit explores a small neighbourhood only; the distances
        # it returns within the limit are exact, so the cells are those of the full field.
        key = (int(self._node_of[cell]), float(limit))
        found = self._near.get(key)
        if found is None:
            field = csgraph.dijkstra(self._graph, directed=True, indices=key[0], limit=limit)
            found = self._cells[np.isfinite(field) & (field <= limit)]
            self._near[key] = found
            if len(self._near) > self._cache_size:
                self._near.popitem(last=False)
        else:
            self._near.move_to_end(key)
        return found
