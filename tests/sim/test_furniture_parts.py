"""The backend-neutral furniture description, the MuJoCo build of it and the clearance
check's reading of it (which must not need MuJoCo)."""

from __future__ import annotations

import math
import subprocess
import sys
import textwrap

import mujoco
import numpy as np
import pytest

from rearrange.sim import apartment as A
from rearrange.sim.furniture_geoms import DOOR_CONAFFINITY, DOOR_CONTYPE, add_furniture
from rearrange.sim.furniture_parts import furniture_parts
from rearrange.sim.layout_types import Articulation, Furniture, Layout
from rearrange.sim.placement.clearance import world_boxes

FRIDGE = Furniture(
    "fridge_0",
    "fridge",
    "kitchen",
    (1.0, 2.0),
    (A.FRIDGE_HALF[0] + A.FRIDGE_DOOR_THICKNESS / 2, A.FRIDGE_HALF[1], A.FRIDGE_HALF[2]),
    0.0,
)
CABINET = Furniture("cabinet_0", "cabinet", "kitchen", (3.0, 1.0), A.CABINET_HALF, math.pi / 2)
KINDS = ("table", "coffee_table", "side_table", "counter", "shelf", "sofa", "fridge", "cabinet")


def _cabinet_layout() -> Layout:
    arts = [
        Articulation(f"drawer_{k}", "slide", CABINET.name, 0.0, A.DRAWER_OPEN, (0.0, 0.0, 0.0))
        for k in range(len(A.DRAWER_BAY_Y))
    ]
    return Layout(0, "train", (0.0, 0.0, 6.0, 4.0), furniture=[CABINET], articulations=arts)


def test_fridge_has_one_hinged_door_with_its_handle():
    parts = furniture_parts(FRIDGE)
    assert len(parts.moving) == 1
    door = parts.moving[0]
    assert door.body_name == "fridge_door"
    assert (door.joint.name, door.joint.kind, door.joint.range) == ("fridge", "hinge", (0.0, 1.75))
    assert tuple(door.joint.axis) == (0, 0, 1)
    names = [b.name for b in door.boxes if b.name]
    assert names == ["handle_fridge", "handle_fridge_post0", "handle_fridge_post1"]
    assert list(door.sites) == ["handle_site_fridge"]
    assert all(b.collision == "door" and b.mass for b in door.boxes)
    assert all(b.collision == "static" and b.mass is None for b in parts.boxes)


def test_cabinet_drawers_slide_forward():
    drawers = furniture_parts(CABINET).moving
    assert [d.joint.name for d in drawers] == [f"drawer_{k}" for k in range(len(A.DRAWER_BAY_Y))]
    for k, d in enumerate(drawers):
        assert (d.joint.kind, tuple(d.joint.axis), d.joint.range) == ("slide", (1, 0, 0), (0, 0.5))
        assert d.body_name == f"drawer_{k}_body"
        assert tuple(d.pos) == (0, A.DRAWER_BAY_Y[k], 0)
        assert list(d.sites) == [f"handle_site_drawer_{k}"]


def test_unknown_kind_raises():
    with pytest.raises(ValueError, match="no geometry for furniture kind 'bathtub'"):
        furniture_parts(Furniture("tub_0", "bathtub", "bath", (0.0, 0.0), (0.5, 0.5, 0.3), 0.0))


def test_open_drawer_boxes_move_along_the_front():
    """drawer_0 at 0.3 m: its boxes and handle move 0.3 m along the front (+y here, the
    cabinet faces pi/2); nothing else moves."""
    layout = _cabinet_layout()
    shut, out = world_boxes(layout, {}), world_boxes(layout, {"drawer_0": 0.3})
    n_static = len(furniture_parts(CABINET).boxes)
    n_drawer = len(furniture_parts(CABINET).moving[0].boxes)
    moved = np.flatnonzero(np.any(np.abs(out.center - shut.center) > 1e-12, axis=1))
    assert list(moved) == list(range(n_static, n_static + n_drawer))
    assert shut.moving[moved].all() and not shut.moving[:n_static].any()
    shift = out.center[moved] - shut.center[moved]
    np.testing.assert_allclose(shift, [[0.0, 0.3]] * n_drawer, atol=1e-12)
    np.testing.assert_array_equal(out.half, shut.half)
    np.testing.assert_array_equal(out.yaw, shut.yaw)
    np.testing.assert_array_equal(out.z, shut.z)
    # Handle, by hand: local (hx + handle out + q, bay y, handle z), yawed by pi/2.
    x = A.CABINET_HALF[0] + A.DRAWER_HANDLE_OUT + 0.3
    want = (3.0 - A.DRAWER_BAY_Y[0], 1.0 + x, A.DRAWER_HANDLE_Z)
    np.testing.assert_allclose(out.handles["drawer_0"], want, atol=1e-12)
    np.testing.assert_array_equal(out.handles["drawer_1"], shut.handles["drawer_1"])


def test_open_fridge_door_yaws_by_the_joint_value():
    layout = Layout(0, "train", (0.0, 0.0, 6.0, 4.0), furniture=[FRIDGE])
    b = world_boxes(layout, {"fridge": 1.2})
    assert b.moving.sum() == len(furniture_parts(FRIDGE).moving[0].boxes)
    np.testing.assert_allclose(b.yaw[b.moving], 1.2)
    np.testing.assert_allclose(b.yaw[~b.moving], 0.0)


@pytest.mark.parametrize("kind", KINDS)
def test_mujoco_build_matches_the_description(kind):
    f = CABINET if kind == "cabinet" else FRIDGE if kind == "fridge" else None
    f = f or Furniture(f"{kind}_0", kind, "living", (0.0, 0.0), (0.4, 0.6, 0.4), 0.0)
    parts = furniture_parts(f)
    spec = mujoco.MjSpec()
    add_furniture(spec.worldbody.add_body(name=f.name), f)
    m = spec.compile()
    boxes = list(parts.boxes) + [b for p in parts.moving for b in p.boxes]
    assert m.ngeom == len(boxes)
    np.testing.assert_allclose(m.geom_size, [b.half for b in boxes])
    door = np.array([b.collision == "door" for b in boxes])
    assert (m.geom_contype[door] == DOOR_CONTYPE).all()
    assert (m.geom_conaffinity[door] == DOOR_CONAFFINITY).all()
    assert [m.joint(i).name for i in range(m.njnt)] == [p.joint.name for p in parts.moving]


def test_world_boxes_needs_no_mujoco():
    code = textwrap.dedent(
        """
        import sys
        sys.modules["mujoco"] = None  # any `import mujoco` now raises ImportError
        from rearrange.sim.layout_types import Articulation, Furniture, Layout
        from rearrange.sim.placement.clearance import world_boxes
        f = Furniture("cabinet_0", "cabinet", "kitchen", (3.0, 1.0), (0.3, 0.5, 0.45), 0.0)
        g = Furniture("fridge_0", "fridge", "kitchen", (1.0, 2.0), (0.37, 0.4, 0.9), 0.0)
        a = Articulation("drawer_0", "slide", "cabinet_0", 0.0, 0.4, (0.0, 0.0, 0.0))
        layout = Layout(0, "train", (0.0, 0.0, 6.0, 4.0), furniture=[f, g], articulations=[a])
        b = world_boxes(layout, {"drawer_0": 0.3, "fridge": 1.0})
        print(len(b.center), sorted(b.handles))
        """
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "['drawer_0', 'drawer_1', 'fridge']" in r.stdout
