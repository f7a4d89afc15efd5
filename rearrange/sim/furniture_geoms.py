"""Geometry of each furniture kind, added to an MjSpec body in the piece's local frame.

Local frame: origin at the footprint centre on the floor, +x is the front (see
`apartment.py`). Dimensions come from `apartment.py` so receptacles and handles in the
Layout match the built geometry exactly.
"""

from __future__ import annotations

import mujoco

from rearrange.sim import apartment as A
from rearrange.sim.layout_types import Furniture

# Collision bits (MuJoCo: two geoms collide iff ct1 & ca2 or ct2 & ca1). Why: the robot is
# kinematic, so a contact between it and fixed furniture cannot move anything and only
# injects huge impulses into the solve it shares with the suction welds (that threw held
# objects and stalled drawers). So the robot collides only with things that can move
# (free objects, doors, drawers); its penetration of fixed furniture is measured
# geometrically for the force penalty instead (`world.RearrangeSim._static_penetration`).
# A held body drops the robot bit: gripper and held body never push each other apart.
STATIC_BIT, ROBOT_BIT, MOVABLE_BIT, FLOOR_BIT = 1, 2, 4, 8
WORLD_CONTYPE, WORLD_CONAFFINITY = STATIC_BIT, 0  # walls, furniture carcasses
FLOOR_CONTYPE, FLOOR_CONAFFINITY = FLOOR_BIT, 0
MOVABLE_CONTYPE = MOVABLE_BIT  # objects, doors, drawers: touch everything ...
MOVABLE_CONAFFINITY = STATIC_BIT | ROBOT_BIT | MOVABLE_BIT | FLOOR_BIT
HELD_CONAFFINITY = STATIC_BIT | MOVABLE_BIT | FLOOR_BIT  # ... but the robot while held
# The fridge door and the drawers move only through their handles: to the robot they are
# like fixed furniture (no physical contact, penetration measured), to objects they are
# solid moving bodies. Why: the arm reaching round the door for the handle knocked it open,
# the arm returning to rest over an opened drawer pushed it half shut again, and a part
# swinging into a kinematic arm cannot be resolved physically anyway. Their contacts with
# their own carcass are excluded (`scene_builder._exclude_part_carcass`): the joint range
# is the stop, and a drawer rubbing its bay stalled under the suction pull.
DOOR_CONTYPE = STATIC_BIT | MOVABLE_BIT
DOOR_CONAFFINITY = STATIC_BIT | MOVABLE_BIT  # its bottom edge must not drag on the floor
DOOR_FRICTION = 2.0  # N m: a released door stays where it was left (no coasting) ...
DRAWER_FRICTION = 4.0  # N: ... and so does a drawer; the suction weld overcomes both easily
WOOD = (0.55, 0.38, 0.22, 1.0)
DARK_WOOD = (0.35, 0.24, 0.15, 1.0)
WHITE = (0.92, 0.92, 0.9, 1.0)
STEEL = (0.7, 0.72, 0.75, 1.0)
FABRIC = (0.3, 0.45, 0.6, 1.0)
COUNTER_TOP = (0.25, 0.25, 0.27, 1.0)
HANDLE = (0.15, 0.15, 0.15, 1.0)


def box(body, pos, half, rgba, name: str = "", movable: bool | str = False) -> mujoco.MjsGeom:
    """A box geom in `body`'s frame: static furniture, a drawer part (`movable`) or a
    fridge door part (`movable="door"`)."""
    g = body.add_geom(type=mujoco.mjtGeom.mjGEOM_BOX, pos=list(pos), size=list(half))
    g.rgba = list(rgba)
    if movable == "door":
        g.contype, g.conaffinity = DOOR_CONTYPE, DOOR_CONAFFINITY
    elif movable:
        g.contype, g.conaffinity = MOVABLE_CONTYPE, MOVABLE_CONAFFINITY
    else:
        g.contype, g.conaffinity = WORLD_CONTYPE, WORLD_CONAFFINITY
    if name:
        g.name = name
    return g


def _legged_table(body, f: Furniture, top_rgba, leg_rgba) -> None:
    hx, hy, hz = f.half_size
    h = 2 * hz
    box(body, (0, 0, h - 0.02), (hx, hy, 0.02), top_rgba)
    for sx in (-1, 1):
        for sy in (-1, 1):
            box(
                body,
                (sx * (hx - 0.04), sy * (hy - 0.04), (h - 0.04) / 2),
                (0.025, 0.025, (h - 0.04) / 2),
                leg_rgba,
            )


def _counter(body, f: Furniture) -> None:
    hx, hy, hz = f.half_size
    box(body, (-0.02, 0, hz - 0.02), (hx - 0.02, hy - 0.01, hz - 0.02), WHITE)
    box(body, (0, 0, 2 * hz - 0.02), (hx, hy, 0.02), COUNTER_TOP)


def _shelf(body, f: Furniture) -> None:
    hx, hy, hz = f.half_size
    h = 2 * hz
    for sy in (-1, 1):
        box(body, (0, sy * (hy - 0.015), hz), (hx, 0.015, hz), WOOD)
    box(body, (-hx + 0.01, 0, hz), (0.01, hy, hz), DARK_WOOD)
    for z in (0.05, h / 2, h - 0.02):
        box(body, (0, 0, z), (hx, hy, 0.02), WOOD)


def _sofa(body, f: Furniture) -> None:
    hx, hy, _ = f.half_size
    seat = A.SOFA_SEAT_HEIGHT
    back = A.SOFA_BACK_DEPTH
    box(body, (back / 2, 0, seat / 2), (hx - back / 2, hy, seat / 2), FABRIC)
    box(body, (-hx + back / 2, 0, 0.42), (back / 2, hy, 0.42), FABRIC)
    for sy in (-1, 1):
        box(body, (back / 2, sy * (hy - 0.06), seat + 0.1), (hx - back / 2, 0.06, 0.1), FABRIC)


def _fridge(spec_body, f: Furniture) -> None:
    hx, _, _ = f.half_size
    fx, fy, fz = A.FRIDGE_HALF
    w = A.FRIDGE_WALL
    cx = -hx + fx  # body centre along local x
    box(spec_body, (cx - fx + w / 2, 0, fz), (w / 2, fy, fz), WHITE)
    for sy in (-1, 1):
        box(spec_body, (cx, sy * (fy - w / 2), fz), (fx, w / 2, fz), WHITE)
    box(spec_body, (cx, 0, A.FRIDGE_FLOOR_TOP / 2), (fx, fy, A.FRIDGE_FLOOR_TOP / 2), WHITE)
    ceil_h = (2 * fz - A.FRIDGE_CEIL) / 2
    box(spec_body, (cx, 0, A.FRIDGE_CEIL + ceil_h), (fx, fy, ceil_h), WHITE)
    # Door: hinge on the front edge at +y, the panel spans toward -y and swings out (+x).
    door = spec_body.add_body(name="fridge_door", pos=[cx + fx, fy, 0])
    door.add_joint(
        name="fridge",
        type=mujoco.mjtJoint.mjJNT_HINGE,
        axis=[0, 0, 1],
        range=[0.0, 1.75],
        damping=5.0,
        armature=0.05,
        frictionloss=DOOR_FRICTION,
    )
    t = A.FRIDGE_DOOR_THICKNESS
    box(door, (t / 2, -fy, fz), (t / 2, fy, fz), (0.85, 0.87, 0.9, 1.0), movable="door").mass = 5.0
    hxp = t + A.FRIDGE_HANDLE_OUT
    hy = -2 * fy + A.FRIDGE_HANDLE_INSET
    box(
        door, (hxp, hy, A.FRIDGE_HANDLE_Z), (0.012, 0.012, 0.14), HANDLE, "handle_fridge", "door"
    ).mass = 0.2
    for dz in (-0.11, 0.11):
        box(
            door,
            (t + A.FRIDGE_HANDLE_OUT / 2, hy, A.FRIDGE_HANDLE_Z + dz),
            (A.FRIDGE_HANDLE_OUT / 2, 0.008, 0.008),
            HANDLE,
            movable="door",
        ).mass = 0.05
    door.add_site(name="handle_site_fridge", pos=[hxp, hy, A.FRIDGE_HANDLE_Z], rgba=[0, 0, 0, 0])


def _cabinet(body, f: Furniture) -> None:
    hx, hy, hz = f.half_size
    floor = A.DRAWER_BOTTOM_TOP - 0.025
    top0 = A.DRAWER_TOP + 0.02
    box(body, (0, 0, floor / 2), (hx, hy, floor / 2), WHITE)
    box(body, (0, 0, (top0 + 2 * hz) / 2), (hx, hy, (2 * hz - top0) / 2), COUNTER_TOP)
    bay_hz = (top0 - floor) / 2
    box(body, (-hx + 0.01, 0, floor + bay_hz), (0.01, hy, bay_hz), WHITE)
    for y in (-hy + 0.01, 0.0, hy - 0.01):
        box(body, (0, y, floor + bay_hz), (hx, 0.01, bay_hz), WHITE)
    for k, ly in enumerate(A.DRAWER_BAY_Y):
        _drawer(body, k, hx, ly)


def _drawer(body, k: int, hx: float, ly: float) -> None:
    d = body.add_body(name=f"drawer_{k}_body", pos=[0, ly, 0])
    d.add_joint(
        name=f"drawer_{k}",
        type=mujoco.mjtJoint.mjJNT_SLIDE,
        axis=[1, 0, 0],
        range=[0.0, 0.5],
        damping=5.0,
        armature=0.05,
        frictionloss=DRAWER_FRICTION,
    )
    w = A.DRAWER_HALF_W
    zb = A.DRAWER_BOTTOM_TOP
    wall_hz = (A.DRAWER_TOP - zb) / 2
    ft = A.DRAWER_FRONT_THICKNESS
    mv = {"movable": "door"}  # handle-driven, like the fridge door (see the bits above)
    box(d, (-0.02, 0, zb - 0.01), (hx - 0.04, w, 0.01), WOOD, **mv).mass = 1.0
    front = (ft / 2, w + 0.005, wall_hz + 0.025)
    box(d, (hx - ft / 2, 0, zb + wall_hz + 0.005), front, DARK_WOOD, **mv).mass = 0.5
    box(d, (-hx + 0.03, 0, zb + wall_hz), (0.01, w, wall_hz), WOOD, **mv).mass = 0.3
    for sy in (-1, 1):
        side = (hx - 0.04, 0.01, wall_hz)
        box(d, (-0.02, sy * (w - 0.01), zb + wall_hz), side, WOOD, **mv).mass = 0.3
    hxp = hx + A.DRAWER_HANDLE_OUT
    box(
        d, (hxp, 0, A.DRAWER_HANDLE_Z), (0.012, 0.09, 0.012), HANDLE, f"handle_drawer_{k}", "door"
    ).mass = 0.1
    for sy in (-1, 1):
        box(
            d,
            (hx + A.DRAWER_HANDLE_OUT / 2, sy * 0.07, A.DRAWER_HANDLE_Z),
            (A.DRAWER_HANDLE_OUT / 2, 0.008, 0.008),
            HANDLE,
            movable="door",
        ).mass = 0.02
    d.add_site(name=f"handle_site_drawer_{k}", pos=[hxp, 0, A.DRAWER_HANDLE_Z], rgba=[0, 0, 0, 0])


def add_furniture(body, f: Furniture) -> None:
    """Add the geometry of `f` to `body` (a body placed at the footprint centre, yawed)."""
    if f.kind in ("table", "coffee_table", "side_table"):
        _legged_table(body, f, WOOD, DARK_WOOD)
    elif f.kind == "counter":
        _counter(body, f)
    elif f.kind == "shelf":
        _shelf(body, f)
    elif f.kind == "sofa":
        _sofa(body, f)
    elif f.kind == "fridge":
        _fridge(body, f)
    elif f.kind == "cabinet":
        _cabinet(body, f)
    else:
        raise ValueError(f"no geometry for furniture kind {f.kind!r} ({f.name})")
