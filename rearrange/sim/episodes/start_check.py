"""Episode start poses checked in the real scene (docs/DESIGN.md §8.2).

The spawn samplers keep the robot clear with cheap geometry (`placement.clearance`: the base
circle against footprints, the arm and a held object as base-frame discs). This module is
the exact test behind them: every start pose of a generated episode (`robot_start`, and
`extras["robot_start_far"]` where there is one) is put into the MuJoCo scene as the sim
resets it (the arm at `extras["arm_start"]`, the held object at `extras["held_pose"]`),
and one collision pass measures how deep the robot, and the object it holds, overlap walls,
furniture, doors and drawers (the held object: the floor too). A start deeper than
`SimConfig.block_depth` is rejected: the world blocks the robot at that depth
(docs/DESIGN.md §3), and a pose placed deeper may go a further `block_depth` in on its way
out.

The check draws nothing from the episode's RNG, so an episode that passes is the one the
generator drew before the check existed.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from dataclasses import dataclass, replace

from rearrange.sim.episode_types import Episode, ObjectPlacement
from rearrange.sim.layout_types import Layout
from rearrange.sim.objects import OBJECT_TYPES

_LAYOUTS_KEPT = 64  # as the generator's scene cache


@dataclass(frozen=True)
class StartDepth:
    """One start pose's overlaps with static geometry (m)."""

    pose: str  # "robot_start" | "robot_start_far"
    robot: float  # deepest robot link
    held: float  # deepest point of the held object, floor included (0: nothing held)


class StartCheck:
    """Measures an episode's start poses in a RearrangeSim of its scene (built lazily; the
    scene models come from the sim's model cache)."""

    def __init__(self, sim_config=None) -> None:
        self._config = sim_config
        self._sim = None
        # id(layout) -> (layout, its probe copy); the layout is kept so its id stays unique
        self._layouts: OrderedDict[int, tuple[Layout, Layout]] = OrderedDict()

    @property
    def sim(self):
        if self._sim is None:
            from rearrange.sim.world import RearrangeSim

            self._sim = RearrangeSim(self._config)
        return self._sim

    @property
    def limit(self) -> float:
        """The deepest overlap a start may have: the sim's `block_depth`."""
        return float(self.sim.config.block_depth)

    def depths(self, episode: Episode, layout: Layout) -> list[StartDepth]:
        """Each start pose's overlaps, the scene being `layout` (episode.scene_seed's)."""
        sim = self.sim
        scene = self._probe_layout(layout)
        sim.register_layout(scene)
        probe = replace(_probe_episode(episode), scene_seed=scene.seed)
        poses = [("robot_start", tuple(episode.robot_start))]
        far = episode.extras.get("robot_start_far")
        if far is not None:
            poses.append(("robot_start_far", tuple(far)))
        out = []
        for name, pose in poses:
            sim.reset(replace(probe, robot_start=pose))
            robot = sim.static_depth_now()  # leaves the pass's contacts in sim.data
            held = probe.extras.get("holding")
            out.append(StartDepth(name, robot, 0.0 if held is None else self._held_depth(held)))
        return out

    def _probe_layout(self, layout: Layout) -> Layout:
        """`layout` under a seed of its own, from its content: the sim's and the scene
        builder's model caches are keyed by (seed, split), and hand-made layouts (tests)
        reuse generated layouts' seeds."""
        key = id(layout)
        if key in self._layouts:
            self._layouts.move_to_end(key)
        else:
            digest = hashlib.sha1(repr(layout).encode()).hexdigest()
            probe = replace(layout, seed=-1 - int(digest[:12], 16))
            self._layouts[key] = (layout, probe)
            if len(self._layouts) > _LAYOUTS_KEPT:
                self._layouts.popitem(last=False)
        return self._layouts[key][1]

    def problem(self, episode: Episode, layout: Layout) -> str:
        """Why the episode's starts are rejected ("" when every start is clear)."""
        limit = self.limit
        for d in self.depths(episode, layout):
            if d.robot > limit:
                return f"{d.pose} puts the robot {100 * d.robot:.1f} cm inside static geometry"
            if d.held > limit:
                return f"{d.pose} puts the held object {100 * d.held:.1f} cm inside the scene"
        return ""

    def _held_depth(self, obj: int) -> float:
        """Deepest overlap of object `obj` with static geometry or the floor among the
        contacts of the collision pass just run."""
        from rearrange.sim.furniture_geoms import FLOOR_BIT, STATIC_BIT

        m, d = self.sim.model, self.sim.data
        if d.ncon == 0:
            return 0.0
        g = d.contact.geom[: d.ncon]
        held = int(self.sim.idx.obj_geoms[obj])
        static = (m.geom_contype[g] & (STATIC_BIT | FLOOR_BIT)).astype(bool)
        pairs = ((g[:, 0] == held) & static[:, 1]) | ((g[:, 1] == held) & static[:, 0])
        depth = -d.contact.dist[: d.ncon][pairs]
        return float(max(depth.max(), 0.0)) if depth.size else 0.0


def _probe_episode(episode: Episode) -> Episode:
    """The episode with only what the check needs, in one MuJoCo model per scene: one
    object of every type, parked apart high above the scene, the held one (if any) in the
    gripper. The episode's own objects are free bodies, not static geometry, and every
    object set would compile a model of its own."""
    extras = dict(episode.extras)
    held = extras.get("holding")
    if held is not None:
        extras["holding"] = PROBE_TYPES.index(episode.objects[int(held)].obj_type)
    return replace(episode, objects=list(_PARKED), targets=[], extras=extras)


PROBE_TYPES = tuple(sorted(OBJECT_TYPES))
_PARKED = tuple(
    ObjectPlacement(t, (0.0, 0.0, 20.0 + i), (1.0, 0.0, 0.0, 0.0), "")
    for i, t in enumerate(PROBE_TYPES)
)


_CHECK: list[StartCheck] = []


def start_check() -> StartCheck:
    """The process's shared check (one RearrangeSim with the default SimConfig)."""
    if not _CHECK:
        _CHECK.append(StartCheck())
    return _CHECK[0]


__all__ = ["StartCheck", "StartDepth", "start_check"]
