"""Third-person rendering with evaluation overlays (white boxes, ghosts, spheres, text, 2-D
markers), and the pinhole projection of MuJoCo's free cameras that places those markers."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import mujoco
import numpy as np

from rearrange.sim.objects import OBJECT_TYPES

_SHAPES = {
    "box": mujoco.mjtGeom.mjGEOM_BOX,
    "cylinder": mujoco.mjtGeom.mjGEOM_CYLINDER,
    "sphere": mujoco.mjtGeom.mjGEOM_SPHERE,
}


@dataclass
class Overlays:
    """What to draw on top of a third-person frame."""

    boxes: list[int] = field(default_factory=list)
    """Object indices drawn inside white wireframe boxes (objects to pick)."""
    ghosts: list[tuple[int, tuple[float, float, float]]] = field(default_factory=list)
    """(object index, goal position): a translucent copy of the object at its goal."""
    spheres: list[tuple[float, float]] = field(default_factory=list)
    """(x, y): grey spheres on the floor (where navigation was trained to go)."""
    text: list[str] = field(default_factory=list)
    """Lines written in the top-left corner."""
    markers: list[tuple[tuple[float, float, float], str]] = field(default_factory=list)
    """(world point, label): a ring drawn on top of the image where the point projects, so
    a place goal or pick target stays visible behind the robot's head and torso."""


@dataclass
class CameraView:
    """A free camera: looks at `lookat` from `distance`, `azimuth`/`elevation` in degrees."""

    lookat: tuple[float, float, float]
    distance: float
    azimuth: float
    elevation: float


@dataclass(frozen=True)
class PinholeCamera:
    """Where a rendered camera sits and looks: position, unit forward and up vectors (world)
    and the vertical field of view (degrees); the image centre is on the forward axis."""

    pos: tuple[float, float, float]
    forward: tuple[float, float, float]
    up: tuple[float, float, float]
    fovy: float


def free_camera(view: CameraView, fovy: float) -> PinholeCamera:
    """The pinhole camera MuJoCo renders for a free camera (`mjv_updateCamera`): forward from
    azimuth / elevation, up in the vertical plane through it, eye `distance` behind lookat."""
    az, el = math.radians(view.azimuth), math.radians(view.elevation)
    forward = np.array([math.cos(el) * math.cos(az), math.cos(el) * math.sin(az), math.sin(el)])
    up = np.array([-math.sin(el) * math.cos(az), -math.sin(el) * math.sin(az), math.cos(el)])
    pos = np.asarray(view.lookat, np.float64) - view.distance * forward
    return PinholeCamera(tuple(pos), tuple(forward), tuple(up), float(fovy))


def project(
    camera: PinholeCamera, points, width: int, height: int
) -> tuple[np.ndarray, np.ndarray]:
    """([N, 2] pixel (x right, y down; (0, 0) the top-left corner of the image), [N] in
    front of the camera) of world points; square pixels, focal length from the vertical fov."""
    p = np.atleast_2d(np.asarray(points, np.float64)) - np.asarray(camera.pos)
    forward, up = np.asarray(camera.forward), np.asarray(camera.up)
    right = np.cross(forward, up)
    depth = p @ forward
    focal = 0.5 * height / math.tan(math.radians(camera.fovy) / 2)
    safe = np.where(np.abs(depth) < 1e-9, 1e-9, depth)
    x = 0.5 * width + focal * (p @ right) / safe
    y = 0.5 * height - focal * (p @ up) / safe
    return np.stack([x, y], axis=1), depth > 1e-6


def follow_view(sim) -> CameraView:
    """Behind and above the robot; walls are cut away (`cut_away_walls`) so they never block it."""
    x, y, yaw = sim.base_pose()
    return CameraView((x, y, 0.6), 4.2, math.degrees(yaw), -58.0)


def top_view(layout) -> CameraView:
    """Whole apartment from above."""
    x0, y0, x1, y1 = layout.bounds
    span = max(x1 - x0, (y1 - y0) * 1.4)
    return CameraView(((x0 + x1) / 2, (y0 + y1) / 2, 0.0), 0.95 * span, 90.0, -89.9)


# Head cameras on llvmpipe are bound by vertex work, not pixels: MuJoCo's defaults draw each
# box face as 4x4 quads and spheres/cylinders with 28 slices x 16 stacks. One quad per face
# and 12 x 8 tessellation halve the head render time; depth moves by < 1 cm at silhouettes.
HEAD_QUALITY = {"numslices": 12, "numstacks": 8, "numquads": 1}
RENDER_EFFECTS_OFF = (
    mujoco.mjtRndFlag.mjRND_SHADOW,
    mujoco.mjtRndFlag.mjRND_REFLECTION,
    mujoco.mjtRndFlag.mjRND_SKYBOX,
    mujoco.mjtRndFlag.mjRND_FOG,
    mujoco.mjtRndFlag.mjRND_HAZE,
)


def make_renderer(
    model: mujoco.MjModel, width: int, height: int, cheap_primitives: bool = False
) -> mujoco.Renderer:
    """An offscreen renderer without shadows/reflections/skybox/fog.

    `cheap_primitives` builds the GL context with HEAD_QUALITY (MuJoCo tessellates its
    built-in shapes once, when the context is made, from `model.vis.quality`), then restores
    the model's quality so later renderers are unaffected.
    """
    q = model.vis.quality
    saved = {k: getattr(q, k) for k in HEAD_QUALITY}
    try:
        if cheap_primitives:
            for k, v in HEAD_QUALITY.items():
                setattr(q, k, v)
        r = mujoco.Renderer(model, height=height, width=width)
    finally:
        for k, v in saved.items():
            setattr(q, k, v)
    for flag in RENDER_EFFECTS_OFF:  # effects we never need (saves llvmpipe time)
        r.scene.flags[flag] = False
    return r


def _camera(view: CameraView) -> mujoco.MjvCamera:
    cam = mujoco.MjvCamera()
    cam.type = mujoco.mjtCamera.mjCAMERA_FREE
    cam.lookat[:] = view.lookat
    cam.distance, cam.azimuth, cam.elevation = view.distance, view.azimuth, view.elevation
    return cam


def _next_geom(scene: mujoco.MjvScene):
    if scene.ngeom >= scene.maxgeom:
        return None  # scene full: skip the overlay rather than fail the frame
    g = scene.geoms[scene.ngeom]
    scene.ngeom += 1
    return g


def _add(scene, gtype, size, pos, mat, rgba) -> None:
    g = _next_geom(scene)
    if g is not None:
        mujoco.mjv_initGeom(
            g,
            gtype,
            np.asarray(size, np.float64),
            np.asarray(pos, np.float64),
            np.asarray(mat, np.float64).reshape(9),
            np.asarray(rgba, np.float32),
        )


def _wire_box(scene, center, half, mat, rgba=(1, 1, 1, 1), width=0.006) -> None:
    """12 thin capsules along the edges of an oriented box."""
    corners = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])
    world = center + (corners * half) @ mat.T
    for a in range(8):
        for b in range(a + 1, 8):
            if np.sum(corners[a] != corners[b]) != 1:
                continue
            g = _next_geom(scene)
            if g is None:
                return
            mujoco.mjv_initGeom(
                g,
                mujoco.mjtGeom.mjGEOM_CAPSULE,
                np.zeros(3),
                np.zeros(3),
                np.eye(3).reshape(9),
                np.asarray(rgba, np.float32),
            )
            mujoco.mjv_connector(g, mujoco.mjtGeom.mjGEOM_CAPSULE, width, world[a], world[b])


def _obj_half_extent(obj_type) -> np.ndarray:
    s = obj_type.size
    if obj_type.shape == "box":
        return np.array(s[:3])
    if obj_type.shape == "cylinder":
        return np.array([s[0], s[0], s[1]])
    return np.array([s[0]] * 3)


def add_overlays(sim, scene: mujoco.MjvScene, ov: Overlays) -> None:
    d = sim.data
    for i in ov.boxes:
        body = sim.idx.obj_bodies[i]
        t = OBJECT_TYPES[sim.episode.objects[i].obj_type]
        _wire_box(scene, d.xpos[body], _obj_half_extent(t) + 0.02, d.xmat[body].reshape(3, 3))
    for i, goal in ov.ghosts:
        t = OBJECT_TYPES[sim.episode.objects[i].obj_type]
        size = list(t.size) + [0.0] * (3 - len(t.size))
        rgba = (t.rgba[0], t.rgba[1], t.rgba[2], 0.35)
        _add(scene, _SHAPES[t.shape], size, goal, np.eye(3), rgba)
    for x, y in ov.spheres:
        _add(
            scene,
            mujoco.mjtGeom.mjGEOM_SPHERE,
            (0.12, 0, 0),
            (x, y, 0.12),
            np.eye(3),
            (0.5, 0.5, 0.5, 0.8),
        )


def draw_text(img: np.ndarray, lines: list[str]) -> np.ndarray:
    """Write lines in the top-left corner (PIL's built-in bitmap font, on a dark band)."""
    if not lines:
        return img
    from PIL import Image, ImageDraw

    pil = Image.fromarray(img)
    draw = ImageDraw.Draw(pil)
    draw.rectangle([0, 0, 8 + 7 * max(len(s) for s in lines), 6 + 14 * len(lines)], fill=(0, 0, 0))
    for k, line in enumerate(lines):
        draw.text((4, 3 + 14 * k), line, fill=(255, 255, 255))
    return np.asarray(pil).copy()


MARKER_RGB = (255, 214, 0)  # yellow: stands out against the floor, furniture and robot


def draw_markers(
    img: np.ndarray, camera: PinholeCamera, markers: list, radius: int = 11
) -> np.ndarray:
    """A ring with a centre dot and its label where each (world point, label) projects;
    points behind the camera or outside the image are skipped."""
    if not markers:
        return img
    from PIL import Image, ImageDraw

    h, w = img.shape[:2]
    pixels, ahead = project(camera, [m[0] for m in markers], w, h)
    pil = Image.fromarray(img)
    draw = ImageDraw.Draw(pil)
    for (x, y), front, (_, label) in zip(pixels, ahead, markers):
        if not front or not (0 <= x < w and 0 <= y < h):
            continue
        for r, colour in ((radius + 1, (0, 0, 0)), (radius, MARKER_RGB)):
            draw.ellipse([x - r, y - r, x + r, y + r], outline=colour, width=3 if r > radius else 2)
        draw.ellipse([x - 2, y - 2, x + 2, y + 2], fill=MARKER_RGB)
        if label:
            tx, ty = x + radius + 4, y - 7
            draw.rectangle([tx - 2, ty - 1, tx + 6 * len(label) + 2, ty + 12], fill=(0, 0, 0))
            draw.text((tx, ty), label, fill=MARKER_RGB)
    return np.asarray(pil).copy()


WALL_STUB_HALF_HEIGHT = 0.15


def _wall_geom_ids(model: mujoco.MjModel) -> frozenset[int]:
    ids = _WALL_IDS.get(id(model))
    if ids is None:
        names = (model.geom(i).name for i in range(model.ngeom))
        ids = frozenset(i for i, n in enumerate(names) if n.startswith("wall_"))
        _WALL_IDS[id(model)] = ids
    return ids


_WALL_IDS: dict[int, frozenset[int]] = {}


def cut_away_walls(model: mujoco.MjModel, scene: mujoco.MjvScene) -> None:
    """Draw walls as 30 cm stubs (a doll-house cutaway) so a third-person camera above and
    behind the robot is never blocked by a wall; the floor plan stays readable."""
    walls = _wall_geom_ids(model)
    for i in range(scene.ngeom):
        g = scene.geoms[i]
        if g.objtype == mujoco.mjtObj.mjOBJ_GEOM and g.objid in walls:
            g.size[2] = WALL_STUB_HALF_HEIGHT
            g.pos[2] = WALL_STUB_HALF_HEIGHT


def render_view(
    sim, renderer: mujoco.Renderer, view: CameraView, overlays: Overlays | None = None
) -> np.ndarray:
    renderer.update_scene(sim.data, camera=_camera(view), scene_option=sim.third_person_vopt)
    cut_away_walls(sim.model, renderer.scene)
    if overlays is not None:
        add_overlays(sim, renderer.scene, overlays)
    img = renderer.render().copy()
    if overlays is not None:
        camera = free_camera(view, sim.model.vis.global_.fovy)
        img = draw_text(draw_markers(img, camera, overlays.markers), overlays.text)
    return img


def render_third_person(sim, renderer: mujoco.Renderer, overlays: Overlays | None = None):
    return render_view(sim, renderer, follow_view(sim), overlays)
