"""MuJoCo side of the furniture: collision bits, and `add_furniture`, which turns the
backend-neutral description (`furniture_parts.furniture_parts`) into MjSpec geoms, bodies,
joints and sites in the piece's local frame (see `furniture_parts` for the frame).
"""

from __future__ import annotations

import mujoco

from rearrange.sim.furniture_parts import Box, Collision, MovingPart, furniture_parts
from rearrange.sim.layout_types import Furniture

# Collision bits (MuJoCo: two geoms collide iff ct1 & ca2 or ct2 & ca1). Why: the robot is
# kinematic, so a contact between it and fixed furniture cannot move anything and only
# injects huge impulses into the solve it shares with the suction welds (that threw held
# objects and stalled drawers). So the robot collides only with things that can move
# (free objects, doors, drawers); its penetration of fixed furniture is measured
# geometrically for the force penalty instead (`blocked_step.BlockedStep._static_depths`).
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
# Geom group of everything that blocks the robot (walls, furniture carcasses, doors,
# drawers: contype with STATIC_BIT), so a ray cast can select exactly it
# (`arm_scan.ArmScan`, mj_multiRay's geomgroup mask). The robot's geoms are in groups 0
# (two), 3 and 4 (`robot.HEAD_HIDDEN_GROUP`, `HEAD_PROXY_GROUP`), objects and the floor in
# 0. Rendering is unchanged: MuJoCo shows groups 0-2 by default and no scene option here
# hides group 2.
STATIC_GROUP = 2
_BITS = {
    "static": (WORLD_CONTYPE, WORLD_CONAFFINITY),
    "door": (DOOR_CONTYPE, DOOR_CONAFFINITY),
}
_JOINT_TYPES = {"hinge": mujoco.mjtJoint.mjJNT_HINGE, "slide": mujoco.mjtJoint.mjJNT_SLIDE}


def box(body, pos, half, rgba, name: str = "", collision: Collision = "static") -> mujoco.MjsGeom:
    """A box geom in `body`'s frame with the collision bits of `collision` (see above)."""
    g = body.add_geom(type=mujoco.mjtGeom.mjGEOM_BOX, pos=list(pos), size=list(half))
    g.rgba = list(rgba)
    g.contype, g.conaffinity = _BITS[collision]
    if g.contype & STATIC_BIT:
        g.group = STATIC_GROUP
    if name:
        g.name = name
    return g


def _add_box(body, b: Box) -> None:
    g = box(body, b.pos, b.half, b.rgba, b.name, b.collision)
    if b.mass is not None:
        g.mass = b.mass


def _add_part(body, part: MovingPart) -> None:
    child = body.add_body(name=part.body_name, pos=list(part.pos))
    j = part.joint
    child.add_joint(
        name=j.name,
        type=_JOINT_TYPES[j.kind],
        axis=list(j.axis),
        range=list(j.range),
        damping=j.damping,
        armature=j.armature,
        frictionloss=j.frictionloss,
    )
    for b in part.boxes:
        _add_box(child, b)
    for name, pos in part.sites.items():
        child.add_site(name=name, pos=list(pos), rgba=[0, 0, 0, 0])  # invisible handle marker


def add_furniture(body, f: Furniture) -> None:
    """Add the geometry of `f` to `body` (a body placed at the footprint centre, yawed)."""
    parts = furniture_parts(f)
    for b in parts.boxes:
        _add_box(body, b)
    for part in parts.moving:
        _add_part(body, part)
