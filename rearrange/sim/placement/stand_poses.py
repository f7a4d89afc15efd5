"""Stand poses in the live sim: where the robot should stand to manipulate something now.

The nav training episodes end at a pose the episode generator draws with
`RobotPlacement.spawn_close(..., yaw_noise=0)`: navigable, the target within the arm's reach
from the shoulder, facing it exactly, and the resting robot (arm, held object) touching no
wall, furniture, door, drawer or object. The HAB executor's nav goals and the base-moving
oracles' stand points must be the same kind of pose, so this module builds a
`RobotPlacement` from the sim's *current* state (`placement_now`) and checks candidate cells
with its `pose_ok` (the generator's own test). Instead of the generator's random draw it
takes the best-scoring pose: target at a comfortable reach, little driving.

`sim` is the live world, a `rearrange.sim.simulator.Simulator` (not imported here: the
protocol names this package's `Footprints`, so placement stays below it).
"""

from __future__ import annotations

import math

import numpy as np

from rearrange.sim.episode_types import ObjectPlacement
from rearrange.sim.geometry import wrap_angle
from rearrange.sim.layout_types import Articulation
from rearrange.sim.objects import OBJECT_TYPES
from rearrange.sim.placement.spawns import PlacementConfig, RobotPlacement, shoulder_reach
from rearrange.sim.placement.work_poses import articulation_work_pose

PLACEMENT = PlacementConfig()  # the episode generator's reach band and comfort reach
# m shoulder → target: the middle of the generator's [0.4, 0.85] band (the place task's
# ready-pose spawns are drawn around it, `PlacementConfig.comfort_reach`)
COMFORT_REACH = PLACEMENT.comfort_reach
MAX_CHECKS = 150  # clearance checks per approach direction (best-scoring first)
DRIVE_WEIGHT = 0.1  # score per metre of driving (geodesic) against per metre off comfort
# Approach directions tried, relative to the furniture's front (nearest turn first).
APPROACH_TURNS = (0.0, math.pi / 4, -math.pi / 4, math.pi / 2, -math.pi / 2, math.pi)
# m: extra distance out of the furniture beyond NavMap.approach_point (one grid cell).
STAND_MARGIN = 0.05


def _open_articulations(sim, force_open: tuple[str, ...] = ()) -> set[str]:
    """Articulations more than half open now (the generator knows only open / closed)."""
    names = set(force_open)
    for a in sim.layout.articulations:
        q = float(sim.articulation_pos(a.name))
        if abs(q - a.closed) > 0.5 * abs(a.open - a.closed):
            names.add(a.name)
    return names


def held_disc_now(sim, held: int) -> tuple[float, float, float, float, float]:
    """Base-frame disc (x, y, radius, z_lo, z_hi) around held object `held` where it is now
    (radius: the norm of its MuJoCo half-size)."""
    r = float(np.linalg.norm(OBJECT_TYPES[sim.episode.objects[held].obj_type].size))
    p = np.asarray(sim.to_base_frame(sim.object_pos(held)), dtype=np.float64)
    return float(p[0]), float(p[1]), r, float(p[2] - r), float(p[2] + r)


def placement_now(sim, held: int | None = None, force_open: tuple[str, ...] = ()) -> RobotPlacement:
    """A `RobotPlacement` mirroring the sim now: objects where they are, the held object in
    the gripper, articulations open or closed as they are (or `force_open`)."""
    sc = RobotPlacement(sim.layout, sim.navmap, np.random.default_rng(0), PLACEMENT, sim.footprints)
    for i, o in enumerate(sim.episode.objects):
        pos = tuple(float(v) for v in sim.object_pos(i))
        sc.objects.append(ObjectPlacement(o.obj_type, pos, o.quat, o.receptacle))
    sc.held = held
    if held is not None:  # carried where it is now (the pick oracle lifts it above rest)
        sc.held_disc = held_disc_now(sim, held)
    sc.open_articulations = _open_articulations(sim, force_open)
    if not force_open:  # doors as they are now (a forced-open drawer is not out yet)
        sc.doors_now = sim.door_footprints()
        sc.door_angles = {
            a.name: float(sim.articulation_pos(a.name)) for a in sim.layout.articulations
        }
    return sc


def _candidates(sc: RobotPlacement, target_xy, approach_yaw: float, reach_max: float) -> np.ndarray:
    """Cells around the approach point whose centre could have the target in reach."""
    nm, cfg = sc.navmap, sc.cfg
    tx, ty = float(target_xy[0]), float(target_xy[1])
    stand = nm.approach_point(tx, ty, approach_yaw)
    if stand is None:
        return np.zeros((0, 2))
    xy = sc.cells_xy(nm.candidates(near=stand, max_dist=2 * reach_max))
    d = np.hypot(xy[:, 0] - tx, xy[:, 1] - ty)
    lo, hi = cfg.reach_min - cfg.shoulder_x, reach_max + cfg.shoulder_x
    return xy[(d >= lo) & (d <= hi)]


def ready_pose(
    sim,
    target_xy,
    approach_yaw: float,
    held: int | None = None,
    from_xy=None,
    force_open: tuple[str, ...] = (),
    turns: tuple[float, ...] = APPROACH_TURNS,
    reach_max: float | None = None,
    comfort: float = COMFORT_REACH,
) -> tuple[float, float, float] | None:
    """The best pick-ready pose (x, y, yaw) facing `target_xy`, or None if none exists.

    Candidates come from the approach directions `approach_yaw + turns` in order; the
    first direction with a valid pose wins, and within it the pose with the target
    nearest the `comfort` reach and the shortest drive from `from_xy` (default: the base).
    `reach_max` widens the generator's reach band (default `PlacementConfig.reach_max`).
    """
    hi = PLACEMENT.reach_max if reach_max is None else reach_max
    sc = placement_now(sim, held, force_open)
    here = tuple(float(v) for v in (from_xy if from_xy is not None else sim.base_pose()[:2]))
    dist_grid = sc.navmap.distance_grid(*here)
    tx, ty = float(target_xy[0]), float(target_xy[1])
    for turn in turns:
        xy = _candidates(sc, target_xy, approach_yaw + turn, hi)
        if not len(xy):
            continue
        yaw = np.arctan2(ty - xy[:, 1], tx - xy[:, 0])
        reach = np.hypot(
            tx - (xy[:, 0] + PLACEMENT.shoulder_x * np.cos(yaw)),
            ty - (xy[:, 1] + PLACEMENT.shoulder_x * np.sin(yaw)),
        )
        ok = (reach >= PLACEMENT.reach_min) & (reach <= hi)
        ok &= ~sc.reach_blocked(xy, (tx, ty))  # not behind or beside an open door
        drive = _grid_lookup(sc.navmap, dist_grid, xy)
        ok &= np.isfinite(drive)
        score = np.abs(reach - comfort) + DRIVE_WEIGHT * np.where(ok, drive, 0.0)
        for i in np.argsort(np.where(ok, score, np.inf))[: int(ok.sum())][:MAX_CHECKS]:
            x, y, a = float(xy[i, 0]), float(xy[i, 1]), float(yaw[i])
            if sc.pose_ok(x, y, a):
                return x, y, a
    return None


def _grid_lookup(nm, grid: np.ndarray, xy: np.ndarray) -> np.ndarray:
    """Values of a per-cell grid (NavMap.distance_grid) at cell-centre points."""
    res, (x0, y0) = nm.resolution, nm.origin
    cols = np.floor((xy[:, 0] - x0) / res).astype(np.int64)
    rows = np.floor((xy[:, 1] - y0) / res).astype(np.int64)
    return grid[rows, cols]


def in_ready_pose(
    sim,
    target_xy,
    max_bearing: float = math.radians(30),
    reach_max: float | None = None,
) -> bool:
    """Whether the base already stands like a close spawn: target within reach, facing it."""
    x, y, yaw = (float(v) for v in sim.base_pose())
    d = shoulder_reach((x, y, yaw), target_xy, PLACEMENT.shoulder_x)
    hi = PLACEMENT.reach_max if reach_max is None else reach_max
    bearing = math.atan2(float(target_xy[1]) - y, float(target_xy[0]) - x) - yaw
    bearing = wrap_angle(bearing)
    return PLACEMENT.reach_min <= d <= hi and abs(bearing) <= max_bearing


# Relaxations tried in order when the generator's own pose test finds nothing:
# - an object in the middle of a deep table lies beyond the generator's 0.85 m band
#   from every navigable cell (HAB scenarios pick any clutter object); the arm reaches
#   >= 1.0 m at 0.5-1.0 m height (`PlacementConfig` notes), so widen the band;
# - holding an object, the resting arm carries it at 0.76-1.03 m height ~0.8 m ahead of
#   the base, so over a 0.9 m counter no strict pose exists: stand back and reach farther,
#   else ignore the held object, at the normal reach before FAR_REACH (the learned place
#   succeeds far less often from FAR_REACH; benchmarks/RESULTS.md).
FAR_REACH = PLACEMENT.place_far_reach  # place episodes stand back this far too


def best_ready_pose(
    sim, target_xy, approach_yaw: float, held: int | None = None, from_xy=None, **kw
) -> tuple[float, float, float] | None:
    """`ready_pose`, relaxed step by step (see FAR_REACH) when no strict pose exists."""
    tries: list[dict] = [{"held": held}, {"held": held, "reach_max": FAR_REACH}]
    if held is not None:
        tries += [{"held": None}, {"held": None, "reach_max": FAR_REACH}]
    for t in tries:
        pose = ready_pose(sim, target_xy, approach_yaw, from_xy=from_xy, **t, **kw)
        if pose is not None:
            return pose
    return None


# ---------------------------------------------------------------------------------- nav goals


def nav_goal_pose(
    sim,
    target_xy,
    front_yaw: float,
    held: int | None = None,
    articulation: Articulation | None = None,
    comfort: float = COMFORT_REACH,
) -> tuple[float, float, float]:
    """(x, y, yaw) to drive to before working on something at `target_xy` on furniture
    facing `front_yaw`: a pick-ready pose, the same kind of pose the nav skill's training
    episodes end at (navigable, the target within the arm's reach, facing it, the resting
    robot and the `held` object touching nothing). For a fridge door or a drawer
    (`articulation`) its work pose, where the open/close skills' episodes start, if the
    sim accepts the base there now (`Simulator.base_fits`); else a pick-ready pose clear of
    the drawer pulled out. Falls back to the point in front of the furniture when no such pose
    exists. `comfort` is the shoulder-to-target reach the pose aims at. (Why the work pose:
    the open/close skills train from it, and a drawer's pick-ready pose stands too close
    and to the side for them.)"""
    travel = 0.0
    if articulation is not None and articulation.kind == "slide":
        travel = abs(articulation.open - articulation.closed)
    force_open = (articulation.name,) if travel else ()
    if articulation is not None:
        # the sim's footprints: the same base check the generator's work poses were made
        # with. Taken whenever the sim accepts the base there, though the resting arm may
        # touch something: a drawer left open beside the fridge (set_table) overlaps the
        # resting arm's discs at the fridge's work pose, but the fallback pick-ready pose
        # faces the fridge ~37° off, where the learned open_fridge stalls; from the work
        # pose it opens the door with the arm brushing the open drawer.
        work = articulation_work_pose(sim.layout, articulation, footprints=sim.footprints)
        if sim.base_fits(work[0], work[1]):
            return work
    kw = {"comfort": comfort}
    pose = best_ready_pose(sim, target_xy, front_yaw, held=held, force_open=force_open, **kw)
    if pose is None and force_open:  # no pose clear of the open drawer: as it is now
        pose = best_ready_pose(sim, target_xy, front_yaw, **kw)
    return pose if pose is not None else front_pose(sim, target_xy, front_yaw, travel)


def front_pose(sim, target_xy, front_yaw: float, extra: float = 0.0):
    """The point just in front of the furniture (first approach direction reachable from
    the base), facing `target_xy`; `extra` more out of the way (a drawer's travel)."""
    nm = sim.navmap
    x, y = float(target_xy[0]), float(target_xy[1])
    here = tuple(float(v) for v in sim.base_pose()[:2])
    stand = None
    for turn in APPROACH_TURNS if not extra else (0.0,):
        cand = _stand_point(nm, x, y, front_yaw + turn, extra)
        if cand is not None and math.isfinite(nm.geodesic_distance(here, cand)):
            stand = cand
            break
    if stand is None:
        stand = _stand_point(nm, x, y, front_yaw) or tuple(float(v) for v in nm.snap(x, y))
    sx, sy = stand
    dist = math.hypot(x - sx, y - sy)
    face = math.atan2(y - sy, x - sx) if dist > 1e-6 else front_yaw + math.pi
    return sx, sy, face


def _stand_point(nm, x: float, y: float, yaw: float, extra: float = 0.0):
    stand = nm.approach_point(x, y, yaw)
    if stand is None:
        return None
    sx, sy = float(stand[0]), float(stand[1])
    # approach_point returns the first navigable grid cell's point, which can sit up to
    # half a cell inside the inflated obstacle; step out a little so the base fits there
    # (and, in front of a drawer, out of the way of the opening drawer).
    out = STAND_MARGIN + extra
    mx, my = sx + out * math.cos(yaw), sy + out * math.sin(yaw)
    return (mx, my) if nm.is_navigable(mx, my) else (sx, sy)
