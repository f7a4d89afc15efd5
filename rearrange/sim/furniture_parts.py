"""Geometry of each furniture kind as plain data: boxes, and the doors/drawers that move.

Defined once and read by both the MuJoCo scene builder (`furniture_geoms.add_furniture`)
and the episode generator's clearance check (`placement.clearance.world_boxes`), so the
spawn checks see exactly the collision boxes the sim builds, without importing MuJoCo.

Local frame: origin at the footprint centre on the floor, +x is the front (see
`apartment.py`). Dimensions come from `apartment.py` so receptacles and handles in the
Layout match the built geometry exactly. Order matters: the builder adds the boxes and
parts in the order listed, which fixes the geom and body indices of the compiled model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from rearrange.sim import apartment as A
from rearrange.sim.layout_types import Furniture

Vec3 = tuple[float, float, float]
RGBA = tuple[float, float, float, float]
Collision = Literal["static", "door"]

DOOR_FRICTION = 2.0  # N m: a released door stays where it was left (no coasting) ...
DRAWER_FRICTION = 4.0  # N: ... and so does a drawer; the suction weld overcomes both easily
WOOD = (0.55, 0.38, 0.22, 1.0)
DARK_WOOD = (0.35, 0.24, 0.15, 1.0)
WHITE = (0.92, 0.92, 0.9, 1.0)
FABRIC = (0.3, 0.45, 0.6, 1.0)
COUNTER_TOP = (0.25, 0.25, 0.27, 1.0)
HANDLE = (0.15, 0.15, 0.15, 1.0)
FRIDGE_DOOR_RGBA = (0.85, 0.87, 0.9, 1.0)


@dataclass(frozen=True)
class Box:
    """A box in its body's frame. `collision` says what it touches (the MuJoCo side maps
    it to collision bits): "static" (fixed furniture) or "door" (a handle-driven
    door/drawer part: solid to objects, not to the robot). `mass`:
    None leaves it to the density (fixed bodies have no mass anyway)."""

    pos: Vec3
    half: Vec3
    rgba: RGBA
    name: str = ""
    collision: Collision = "static"
    mass: float | None = None


@dataclass(frozen=True)
class Joint:
    """The one joint of a moving part: a hinge (rad) or a slide (m) along `axis`."""

    name: str  # the Articulation's name: "fridge", "drawer_0", ...
    kind: Literal["hinge", "slide"]
    axis: Vec3
    range: tuple[float, float]
    damping: float
    armature: float
    frictionloss: float


@dataclass(frozen=True)
class MovingPart:
    """A door or drawer: a child body at `pos` (furniture frame) with one joint, its boxes
    and its handle sites (name -> position in the part's frame)."""

    body_name: str
    pos: Vec3
    joint: Joint
    boxes: tuple[Box, ...]
    sites: dict[str, Vec3] = field(default_factory=dict)


@dataclass(frozen=True)
class FurnitureParts:
    """A piece's fixed boxes (furniture frame) and its moving parts, in build order."""

    boxes: tuple[Box, ...]
    moving: tuple[MovingPart, ...] = ()


def _legged_table(f: Furniture, top_rgba: RGBA, leg_rgba: RGBA) -> FurnitureParts:
    hx, hy, hz = f.half_size
    h = 2 * hz
    boxes = [Box((0, 0, h - 0.02), (hx, hy, 0.02), top_rgba)]
    for sx in (-1, 1):
        for sy in (-1, 1):
            boxes.append(
                Box(
                    (sx * (hx - 0.04), sy * (hy - 0.04), (h - 0.04) / 2),
                    (0.025, 0.025, (h - 0.04) / 2),
                    leg_rgba,
                )
            )
    return FurnitureParts(tuple(boxes))


def _counter(f: Furniture) -> FurnitureParts:
    hx, hy, hz = f.half_size
    return FurnitureParts(
        (
            Box((-0.02, 0, hz - 0.02), (hx - 0.02, hy - 0.01, hz - 0.02), WHITE),
            Box((0, 0, 2 * hz - 0.02), (hx, hy, 0.02), COUNTER_TOP),
        )
    )


def _shelf(f: Furniture) -> FurnitureParts:
    hx, hy, hz = f.half_size
    h = 2 * hz
    boxes = [Box((0, sy * (hy - 0.015), hz), (hx, 0.015, hz), WOOD) for sy in (-1, 1)]
    boxes.append(Box((-hx + 0.01, 0, hz), (0.01, hy, hz), DARK_WOOD))
    boxes += [Box((0, 0, z), (hx, hy, 0.02), WOOD) for z in (0.05, h / 2, h - 0.02)]
    return FurnitureParts(tuple(boxes))


def _sofa(f: Furniture) -> FurnitureParts:
    hx, hy, _ = f.half_size
    seat = A.SOFA_SEAT_HEIGHT
    back = A.SOFA_BACK_DEPTH
    boxes = [
        Box((back / 2, 0, seat / 2), (hx - back / 2, hy, seat / 2), FABRIC),
        Box((-hx + back / 2, 0, 0.42), (back / 2, hy, 0.42), FABRIC),
    ]
    for sy in (-1, 1):
        boxes.append(
            Box((back / 2, sy * (hy - 0.06), seat + 0.1), (hx - back / 2, 0.06, 0.1), FABRIC)
        )
    return FurnitureParts(tuple(boxes))


def _fridge(f: Furniture) -> FurnitureParts:
    hx, _, _ = f.half_size
    fx, fy, fz = A.FRIDGE_HALF
    w = A.FRIDGE_WALL
    cx = -hx + fx  # body centre along local x
    boxes = [Box((cx - fx + w / 2, 0, fz), (w / 2, fy, fz), WHITE)]
    boxes += [Box((cx, sy * (fy - w / 2), fz), (fx, w / 2, fz), WHITE) for sy in (-1, 1)]
    boxes.append(Box((cx, 0, A.FRIDGE_FLOOR_TOP / 2), (fx, fy, A.FRIDGE_FLOOR_TOP / 2), WHITE))
    ceil_h = (2 * fz - A.FRIDGE_CEIL) / 2
    boxes.append(Box((cx, 0, A.FRIDGE_CEIL + ceil_h), (fx, fy, ceil_h), WHITE))
    # Door: hinge on the front edge at +y, the panel spans toward -y and swings out (+x).
    joint = Joint("fridge", "hinge", (0, 0, 1), (0.0, 1.75), 5.0, 0.05, DOOR_FRICTION)
    t = A.FRIDGE_DOOR_THICKNESS
    hxp = t + A.FRIDGE_HANDLE_OUT
    hy = -2 * fy + A.FRIDGE_HANDLE_INSET
    door = [
        Box((t / 2, -fy, fz), (t / 2, fy, fz), FRIDGE_DOOR_RGBA, collision="door", mass=5.0),
        Box(
            (hxp, hy, A.FRIDGE_HANDLE_Z),
            (0.012, 0.012, 0.14),
            HANDLE,
            "handle_fridge",
            "door",
            mass=0.2,
        ),
    ]
    for i, dz in enumerate((-0.11, 0.11)):
        door.append(
            Box(
                (t + A.FRIDGE_HANDLE_OUT / 2, hy, A.FRIDGE_HANDLE_Z + dz),
                (A.FRIDGE_HANDLE_OUT / 2, 0.008, 0.008),
                HANDLE,
                f"handle_fridge_post{i}",
                collision="door",
                mass=0.05,
            )
        )
    part = MovingPart(
        "fridge_door",
        (cx + fx, fy, 0),
        joint,
        tuple(door),
        {"handle_site_fridge": (hxp, hy, A.FRIDGE_HANDLE_Z)},
    )
    return FurnitureParts(tuple(boxes), (part,))


def _cabinet(f: Furniture) -> FurnitureParts:
    hx, hy, hz = f.half_size
    floor = A.DRAWER_BOTTOM_TOP - 0.025
    top0 = A.DRAWER_TOP + 0.02
    bay_hz = (top0 - floor) / 2
    boxes = [
        Box((0, 0, floor / 2), (hx, hy, floor / 2), WHITE),
        Box((0, 0, (top0 + 2 * hz) / 2), (hx, hy, (2 * hz - top0) / 2), COUNTER_TOP),
        Box((-hx + 0.01, 0, floor + bay_hz), (0.01, hy, bay_hz), WHITE),
    ]
    for y in (-hy + 0.01, 0.0, hy - 0.01):
        boxes.append(Box((0, y, floor + bay_hz), (hx, 0.01, bay_hz), WHITE))
    drawers = tuple(_drawer(k, hx, ly) for k, ly in enumerate(A.DRAWER_BAY_Y))
    return FurnitureParts(tuple(boxes), drawers)


def _drawer(k: int, hx: float, ly: float) -> MovingPart:
    joint = Joint(f"drawer_{k}", "slide", (1, 0, 0), (0.0, 0.5), 5.0, 0.05, DRAWER_FRICTION)
    w = A.DRAWER_HALF_W
    zb = A.DRAWER_BOTTOM_TOP
    wall_hz = (A.DRAWER_TOP - zb) / 2
    ft = A.DRAWER_FRONT_THICKNESS
    mv = "door"  # handle-driven, like the fridge door (see furniture_geoms' collision bits)
    front = (ft / 2, w + 0.005, wall_hz + 0.025)
    boxes = [
        Box((-0.02, 0, zb - 0.01), (hx - 0.04, w, 0.01), WOOD, collision=mv, mass=1.0),
        Box((hx - ft / 2, 0, zb + wall_hz + 0.005), front, DARK_WOOD, collision=mv, mass=0.5),
        Box((-hx + 0.03, 0, zb + wall_hz), (0.01, w, wall_hz), WOOD, collision=mv, mass=0.3),
    ]
    for sy in (-1, 1):
        side = (hx - 0.04, 0.01, wall_hz)
        boxes.append(
            Box((-0.02, sy * (w - 0.01), zb + wall_hz), side, WOOD, collision=mv, mass=0.3)
        )
    hxp = hx + A.DRAWER_HANDLE_OUT
    boxes.append(
        Box(
            (hxp, 0, A.DRAWER_HANDLE_Z),
            (0.012, 0.09, 0.012),
            HANDLE,
            f"handle_drawer_{k}",
            mv,
            mass=0.1,
        )
    )
    for i, sy in enumerate((-1, 1)):
        boxes.append(
            Box(
                (hx + A.DRAWER_HANDLE_OUT / 2, sy * 0.07, A.DRAWER_HANDLE_Z),
                (A.DRAWER_HANDLE_OUT / 2, 0.008, 0.008),
                HANDLE,
                f"handle_drawer_{k}_post{i}",
                collision=mv,
                mass=0.02,
            )
        )
    return MovingPart(
        f"drawer_{k}_body",
        (0, ly, 0),
        joint,
        tuple(boxes),
        {f"handle_site_drawer_{k}": (hxp, 0, A.DRAWER_HANDLE_Z)},
    )


def furniture_parts(f: Furniture) -> FurnitureParts:
    """The boxes and moving parts of `f` in its local frame (see the module doc)."""
    if f.kind in ("table", "coffee_table", "side_table"):
        return _legged_table(f, WOOD, DARK_WOOD)
    if f.kind == "counter":
        return _counter(f)
    if f.kind == "shelf":
        return _shelf(f)
    if f.kind == "sofa":
        return _sofa(f)
    if f.kind == "fridge":
        return _fridge(f)
    if f.kind == "cabinet":
        return _cabinet(f)
    raise ValueError(f"no geometry for furniture kind {f.kind!r} ({f.name})")
