"""Hand-made Layouts for the navmap and episode tests (no dependency on apartment.py).

Furniture follows the layout convention: half sizes in the local frame whose +x axis is
the front, rotated by `front_yaw`; receptacle surfaces share the furniture's yaw.
"""

from __future__ import annotations

import math

from rearrange.sim.layout_types import Articulation, Box, Furniture, Layout, Receptacle, Room

WALL_T = 0.05  # wall half thickness
UP, RIGHT, LEFT, DOWN = math.pi / 2, 0.0, math.pi, -math.pi / 2


def _wall(cx: float, cy: float, hx: float, hy: float) -> Box:
    return Box((cx, cy, 1.25), (hx, hy, 1.25))


def two_rooms(door: tuple[float, float] | None = (4.0, 5.2)) -> Layout:
    """8 x 6 m interior split by a wall at x = 4 with one doorway (y from door[0] to door[1])."""
    t = WALL_T
    walls = [
        _wall(4.0, -t, 4.0 + 2 * t, t),
        _wall(4.0, 6.0 + t, 4.0 + 2 * t, t),
        _wall(-t, 3.0, t, 3.0 + 2 * t),
        _wall(8.0 + t, 3.0, t, 3.0 + 2 * t),
    ]
    if door is None:
        walls.append(_wall(4.0, 3.0, t, 3.0))
    else:
        lo, hi = door
        walls.append(_wall(4.0, lo / 2, t, lo / 2))
        walls.append(_wall(4.0, (hi + 6.0) / 2, t, (6.0 - hi) / 2))
    rooms = [Room("kitchen", 0, 0, 4, 6), Room("living", 4, 0, 8, 6)]
    return Layout(seed=0, split="train", bounds=(0.0, 0.0, 8.0, 6.0), rooms=rooms, walls=walls)


def _furn(name, kind, room, center, depth, width, height, yaw) -> Furniture:
    return Furniture(name, kind, room, center, (depth, width, height / 2), yaw)


def _top(f: Furniture, top_z: float, margin: float = 0.04, dx: float = 0.0) -> Box:
    """Surface box on top of (or inside) `f`, shrunk by `margin`, shifted `dx` along front."""
    cx = f.center[0] + dx * math.cos(f.front_yaw)
    cy = f.center[1] + dx * math.sin(f.front_yaw)
    half = (f.half_size[0] - margin, f.half_size[1] - margin, 0.01)
    return Box((cx, cy, top_z - 0.01), half, f.front_yaw)


def small_apartment(seed: int = 0, split: str = "train") -> Layout:
    """Two rooms with every receptacle and articulation kind the tasks use."""
    layout = two_rooms(door=(2.4, 3.6))
    layout.seed, layout.split = seed, split
    counter = _furn("counter_0", "counter", "kitchen", (1.6, 0.32), 0.3, 1.0, 0.9, UP)
    fridge = _furn("fridge_0", "fridge", "kitchen", (3.4, 0.4), 0.38, 0.4, 1.8, UP)
    cabinet = _furn("cabinet_0", "cabinet", "kitchen", (0.32, 4.5), 0.3, 0.5, 0.9, RIGHT)
    table = _furn("table_0", "table", "living", (6.0, 1.8), 0.45, 0.7, 0.75, UP)
    sofa = _furn("sofa_0", "sofa", "living", (6.0, 5.5), 0.45, 1.0, 0.84, DOWN)
    shelf = _furn("shelf_0", "shelf", "living", (7.78, 3.8), 0.2, 0.5, 0.8, LEFT)
    layout.furniture = [counter, fridge, cabinet, table, sofa, shelf]
    drawer_box = Box((0.3, 4.25, 0.59), (0.18, 0.15, 0.01), RIGHT)
    layout.receptacles = [
        Receptacle("counter_0", "counter_0", _top(counter, 0.9)),
        Receptacle("table_0", "table_0", _top(table, 0.75)),
        Receptacle("sofa_0", "sofa_0", _top(sofa, 0.45, margin=0.15)),
        Receptacle("shelf_0", "shelf_0", _top(shelf, 0.8)),
        Receptacle("fridge_shelf_0", "fridge_0", _top(fridge, 0.85, margin=0.1), "fridge"),
        Receptacle("drawer_0_inside", "cabinet_0", drawer_box, "drawer_0"),
        Receptacle(
            "drawer_1_inside",
            "cabinet_0",
            Box((0.3, 4.75, 0.59), (0.18, 0.15, 0.01), RIGHT),
            "drawer_1",
        ),
    ]
    layout.articulations = [
        Articulation("fridge", "hinge", "fridge_0", 0.0, 1.2208, (3.1, 0.82, 1.1)),
        Articulation("drawer_0", "slide", "cabinet_0", 0.0, 0.45, (0.66, 4.25, 0.76)),
        Articulation("drawer_1", "slide", "cabinet_0", 0.0, 0.45, (0.66, 4.75, 0.76)),
    ]
    return layout


def table_room(seed: int, width: float = 6.0, height: float = 4.0, table=(4.0, 2.0, 0.45, 0.6)):
    """A `width` x `height` m room with one table (centre x, y, half x, half y; a legged
    table 0.75 m high). `seed` must be one no generated layout uses: the sim's and the scene
    builder's caches key on it."""
    t = WALL_T
    walls = [
        _wall(width / 2, -t, width / 2 + 2 * t, t),
        _wall(width / 2, height + t, width / 2 + 2 * t, t),
        _wall(-t, height / 2, t, height / 2),
        _wall(width + t, height / 2, t, height / 2),
    ]
    top = Furniture("table_0", "table", "room", table[:2], (table[2], table[3], 0.375), 0.0)
    return Layout(seed, "train", (0.0, 0.0, width, height), walls=walls, furniture=[top])
