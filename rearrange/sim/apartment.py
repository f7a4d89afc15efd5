"""Procedural apartments: three rooms in a row, furniture along the walls, plain data out.

`generate_layout(seed, split)` is deterministic. The split is mixed into the RNG seed and
val seeds are shifted into a disjoint range, so train and val never share a layout.

Furniture frame convention (shared with the scene builder and the navigability map): a
piece's local +x axis is its front; `half_size` is given in that local frame and the piece
is rotated by `front_yaw` about its centre. Receptacle surfaces use the same yaw.
"""

from __future__ import annotations

import math

import numpy as np

from rearrange.sim.episode_types import SPLITS
from rearrange.sim.layout_types import Articulation, Box, Furniture, Layout, Receptacle, Room

WALL_HALF_THICKNESS = 0.05
WALL_HALF_HEIGHT = 1.25
FRONT_CLEARANCE = 0.9  # free floor kept in front of every piece (robot radius ~0.3 m)
DOOR_KEEPOUT = 1.0  # no furniture within this distance of a doorway, on either side
_VAL_SEED_OFFSET = 1_000_003  # val layouts use a disjoint internal seed range
_SPLIT_SALT = {"train": 11, "val": 29}

# --- furniture dimensions (local frame: +x front), shared with scene_builder -------------
COUNTER_HEIGHT = 0.9
TABLE_HEIGHT = 0.75
SOFA_SEAT_HEIGHT = 0.45
SOFA_BACK_DEPTH = 0.2
COFFEE_TABLE_HEIGHT = 0.45
SIDE_TABLE_HEIGHT = 0.6
SHELF_HEIGHT = 0.8

FRIDGE_HALF = (0.35, 0.4, 0.9)  # body half extents (without door)
FRIDGE_WALL = 0.04  # thickness of the cabinet walls
FRIDGE_FLOOR_TOP = 0.85  # top of the solid lower block = the shelf surface
FRIDGE_CEIL = 1.6  # bottom of the top slab
FRIDGE_DOOR_THICKNESS = 0.05
FRIDGE_HANDLE_Z = 1.0
FRIDGE_HANDLE_INSET = 0.08  # from the door's free edge
FRIDGE_HANDLE_OUT = 0.04  # handle bar centre in front of the door face

CABINET_HALF = (0.3, 0.5, 0.45)
DRAWER_BAY_Y = (-0.25, 0.25)  # drawer centres along local y
DRAWER_HALF_W = 0.22  # outer half width of a drawer
DRAWER_BOTTOM_TOP = 0.60  # inside floor of a drawer (closed)
DRAWER_TOP = 0.84  # top of the drawer walls; carcass top slab starts above
DRAWER_FRONT_THICKNESS = 0.02
DRAWER_HANDLE_Z = 0.76
DRAWER_HANDLE_OUT = 0.035

FRIDGE_OPEN = 1.2208
DRAWER_OPEN = 0.45


def _rot(yaw: float, x: float, y: float) -> tuple[float, float]:
    c, s = math.cos(yaw), math.sin(yaw)
    return c * x - s * y, s * x + c * y


def local_to_world(f: Furniture, x: float, y: float, z: float) -> tuple[float, float, float]:
    """A point in the furniture's local frame (origin at its footprint centre, z from floor)."""
    dx, dy = _rot(f.front_yaw, x, y)
    return (f.center[0] + dx, f.center[1] + dy, z)


def footprint_extent(half: tuple[float, float], yaw: float) -> tuple[float, float]:
    """World axis-aligned half extents of a local box rotated by a multiple of 90 degrees."""
    c, s = abs(math.cos(yaw)), abs(math.sin(yaw))
    return c * half[0] + s * half[1], s * half[0] + c * half[1]


# ---------------------------------------------------------------------------------------
# Rooms and walls


def _rooms(rng: np.random.Generator) -> tuple[list[Room], float, float]:
    depth = float(rng.uniform(5.6, 7.0))
    widths = {
        "kitchen": rng.uniform(3.8, 4.6),
        "dining": rng.uniform(3.6, 4.4),
        "living": rng.uniform(4.2, 5.2),
    }
    order = [str(n) for n in rng.permutation(["kitchen", "dining", "living"])]
    rooms, x = [], 0.0
    for name in order:
        w = float(widths[name])
        rooms.append(Room(name, x, 0.0, x + w, depth))
        x += w
    return rooms, x, depth


def _wall(x0: float, y0: float, x1: float, y1: float) -> Box:
    """A wall along an axis-aligned segment."""
    t = WALL_HALF_THICKNESS
    return Box(
        center=((x0 + x1) / 2, (y0 + y1) / 2, WALL_HALF_HEIGHT),
        half_size=(max(abs(x1 - x0) / 2, t), max(abs(y1 - y0) / 2, t), WALL_HALF_HEIGHT),
    )


def _walls(
    rng: np.random.Generator, rooms: list[Room], width: float, depth: float
) -> tuple[list[Box], list[tuple[float, float, float]]]:
    """Outer walls plus one interior wall per room boundary with a doorway gap.

    Returns the walls and the doorways as (x, y_center, gap_width).
    """
    t = WALL_HALF_THICKNESS
    walls = [
        _wall(-t, -t, width + t, -t),
        _wall(-t, depth + t, width + t, depth + t),
        _wall(-t, -t, -t, depth + t),
        _wall(width + t, -t, width + t, depth + t),
    ]
    doors = []
    for room in rooms[1:]:
        x = room.xmin
        gap = float(rng.uniform(1.1, 1.4))
        yc = float(rng.uniform(0.9 + gap / 2, depth - 0.9 - gap / 2))
        walls.append(_wall(x, 0.0, x, yc - gap / 2))
        walls.append(_wall(x, yc + gap / 2, x, depth))
        doors.append((x, yc, gap))
    return walls, doors


# ---------------------------------------------------------------------------------------
# Furniture placement

# kind -> (local half x (depth), local half y range (width), half height)
_SIZES: dict[str, tuple[float, tuple[float, float], float]] = {
    "counter": (0.3, (0.55, 0.8), COUNTER_HEIGHT / 2),
    "fridge": (FRIDGE_HALF[0] + FRIDGE_DOOR_THICKNESS / 2, (FRIDGE_HALF[1], FRIDGE_HALF[1]), 0.9),
    "cabinet": (CABINET_HALF[0], (CABINET_HALF[1], CABINET_HALF[1]), CABINET_HALF[2]),
    "table": (0.45, (0.6, 0.75), TABLE_HEIGHT / 2),
    "sofa": (0.45, (0.85, 1.05), 0.42),
    "coffee_table": (0.3, (0.45, 0.55), COFFEE_TABLE_HEIGHT / 2),
    "side_table": (0.25, (0.25, 0.3), SIDE_TABLE_HEIGHT / 2),
    "shelf": (0.2, (0.45, 0.6), SHELF_HEIGHT / 2),
}

_ROOM_ITEMS = {
    "kitchen": [
        ("fridge_0", "fridge"),
        ("cabinet_0", "cabinet"),
        ("counter_0", "counter"),
        ("counter_1", "counter"),
    ],
    "dining": [("table_0", "table"), ("shelf_0", "shelf"), ("side_table_1", "side_table")],
    "living": [
        ("sofa_0", "sofa"),
        ("coffee_table_0", "coffee_table"),
        ("side_table_0", "side_table"),
    ],
}
_FREE_STANDING = {"table", "coffee_table"}  # may stand away from the walls


def _rect(cx: float, cy: float, hx: float, hy: float) -> tuple[float, float, float, float]:
    return (cx - hx, cy - hy, cx + hx, cy + hy)


def _overlap(a: tuple, b: tuple) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _inside(a: tuple, room: tuple) -> bool:
    return a[0] >= room[0] and a[1] >= room[1] and a[2] <= room[2] and a[3] <= room[3]


def _clear_zone(cx, cy, hx_w, hy_w, yaw) -> tuple[float, float, float, float]:
    """World rect of the free strip in front of a piece (front along yaw)."""
    fx, fy = round(math.cos(yaw)), round(math.sin(yaw))
    if fx != 0:
        x_edge = cx + fx * hx_w
        x_far = x_edge + fx * FRONT_CLEARANCE
        return (min(x_edge, x_far), cy - hy_w, max(x_edge, x_far), cy + hy_w)
    y_edge = cy + fy * hy_w
    y_far = y_edge + fy * FRONT_CLEARANCE
    return (cx - hx_w, min(y_edge, y_far), cx + hx_w, max(y_edge, y_far))


def _propose(rng, kind, room_rect, half_x, half_y):
    """Random pose for a piece: against a wall facing in, or free-standing."""
    x0, y0, x1, y1 = room_rect
    if kind in _FREE_STANDING and rng.random() < 0.5:
        yaw = float(rng.choice([0, 0.5, 1, 1.5])) * math.pi
        hx_w, hy_w = footprint_extent((half_x, half_y), yaw)
        cx = float(rng.uniform(x0 + hx_w + 0.5, x1 - hx_w - 0.5))
        cy = float(rng.uniform(y0 + hy_w + 0.5, y1 - hy_w - 0.5))
        return cx, cy, yaw
    side = int(rng.integers(4))  # which wall the back touches: S, N, W, E
    yaw = (0.5 * math.pi, -0.5 * math.pi, 0.0, math.pi)[side]
    hx_w, hy_w = footprint_extent((half_x, half_y), yaw)
    gap = 0.02
    if side < 2:
        cx = float(rng.uniform(x0 + hx_w, x1 - hx_w))
        cy = y0 + hy_w + gap if side == 0 else y1 - hy_w - gap
    else:
        cy = float(rng.uniform(y0 + hy_w, y1 - hy_w))
        cx = x0 + hx_w + gap if side == 2 else x1 - hx_w - gap
    return cx, cy, yaw


def _place_room(rng, room: Room, doors, tries: int = 200) -> list[Furniture]:
    """Rejection-sample every item of the room; raises if the room cannot hold them."""
    t = WALL_HALF_THICKNESS
    room_rect = (room.xmin + t, room.ymin + t, room.xmax - t, room.ymax - t)
    keepouts = [_rect(x, yc, DOOR_KEEPOUT, gap / 2 + 0.1) for x, yc, gap in doors]
    placed: list[Furniture] = []
    solids: list[tuple] = []  # footprints
    zones: list[tuple] = []  # clearance strips
    for name, kind in _ROOM_ITEMS[room.name]:
        half_x, hy_range, half_z = _SIZES[kind]
        half_y = float(rng.uniform(*hy_range))
        for _ in range(tries):
            cx, cy, yaw = _propose(rng, kind, room_rect, half_x, half_y)
            hx_w, hy_w = footprint_extent((half_x, half_y), yaw)
            foot = _rect(cx, cy, hx_w + 0.01, hy_w + 0.01)
            zone = _clear_zone(cx, cy, hx_w, hy_w, yaw)
            if not (_inside(foot, room_rect) and _inside(zone, room_rect)):
                continue
            if any(_overlap(foot, o) for o in solids + zones + keepouts):
                continue
            if any(_overlap(zone, o) for o in solids):
                continue
            solids.append(foot)
            zones.append(zone)
            placed.append(Furniture(name, kind, room.name, (cx, cy), (half_x, half_y, half_z), yaw))
            break
        else:
            raise RuntimeError(f"could not place {name} in {room.name}")
    return placed


# ---------------------------------------------------------------------------------------
# Receptacles and articulations


def _surface(f: Furniture, lx: float, ly: float, top: float, hx: float, hy: float) -> Box:
    cx, cy, _ = local_to_world(f, lx, ly, 0.0)
    return Box(center=(cx, cy, top - 0.01), half_size=(hx, hy, 0.01), yaw=f.front_yaw)


def _receptacles(f: Furniture) -> list[Receptacle]:
    hx, hy, _ = f.half_size
    if f.kind in ("counter", "table", "coffee_table", "side_table", "shelf"):
        top = 2 * f.half_size[2]
        return [Receptacle(f.name, f.name, _surface(f, 0.0, 0.0, top, hx - 0.06, hy - 0.06))]
    if f.kind == "sofa":
        seat_hx = hx - SOFA_BACK_DEPTH / 2
        box = _surface(f, SOFA_BACK_DEPTH / 2, 0.0, SOFA_SEAT_HEIGHT, seat_hx - 0.08, hy - 0.2)
        return [Receptacle(f.name, f.name, box)]
    if f.kind == "fridge":
        fx, fy, _ = FRIDGE_HALF
        back = -hx  # fridge body back face, local x
        lx = back + fx  # body centre
        box = _surface(
            f, lx, 0.0, FRIDGE_FLOOR_TOP, fx - FRIDGE_WALL - 0.06, fy - FRIDGE_WALL - 0.06
        )
        return [Receptacle("fridge_shelf_0", f.name, box, container="fridge")]
    if f.kind == "cabinet":
        out = []
        for k, ly in enumerate(DRAWER_BAY_Y):
            box = _surface(f, -0.02, ly, DRAWER_BOTTOM_TOP, hx - 0.12, DRAWER_HALF_W - 0.07)
            out.append(Receptacle(f"drawer_{k}_inside", f.name, box, container=f"drawer_{k}"))
        return out
    raise ValueError(f"unknown furniture kind {f.kind!r}")


def _articulations(f: Furniture) -> list[Articulation]:
    hx, hy, _ = f.half_size
    if f.kind == "fridge":
        # Door hinge at local (front, +y); the door spans toward -y, handle near its free edge.
        front = -hx + 2 * FRIDGE_HALF[0] + FRIDGE_DOOR_THICKNESS
        handle = local_to_world(
            f, front + FRIDGE_HANDLE_OUT, -FRIDGE_HALF[1] + FRIDGE_HANDLE_INSET, FRIDGE_HANDLE_Z
        )
        return [Articulation("fridge", "hinge", f.name, 0.0, FRIDGE_OPEN, handle)]
    if f.kind == "cabinet":
        out = []
        for k, ly in enumerate(DRAWER_BAY_Y):
            handle = local_to_world(f, hx + DRAWER_HANDLE_OUT, ly, DRAWER_HANDLE_Z)
            out.append(Articulation(f"drawer_{k}", "slide", f.name, 0.0, DRAWER_OPEN, handle))
        return out
    return []


def generate_layout(seed: int, split: str) -> Layout:
    """Deterministic apartment for (seed, split)."""
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; use one of {SPLITS}")
    if not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"layout seed must be a non-negative int, got {seed!r}")
    internal = int(seed) + (_VAL_SEED_OFFSET if split == "val" else 0)
    for attempt in range(50):
        rng = np.random.default_rng([_SPLIT_SALT[split], internal, attempt])
        rooms, width, depth = _rooms(rng)
        walls, doors = _walls(rng, rooms, width, depth)
        try:
            furniture = [f for room in rooms for f in _place_room(rng, room, doors)]
        except RuntimeError:
            continue  # resample the whole apartment
        layout = Layout(seed=int(seed), split=split, bounds=(0.0, 0.0, width, depth))
        layout.rooms, layout.walls, layout.furniture = rooms, walls, furniture
        layout.receptacles = [r for f in furniture for r in _receptacles(f)]
        layout.articulations = [a for f in furniture for a in _articulations(f)]
        return layout
    raise RuntimeError(f"apartment generator failed for seed {seed} ({split})")
