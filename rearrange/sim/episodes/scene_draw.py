"""One episode draw: objects placed on the layout's receptacles, the robot's poses drawn
around them (`RobotPlacement`)."""

from __future__ import annotations

import math
from collections.abc import Callable

from rearrange.sim.episode_types import ObjectPlacement, Target
from rearrange.sim.layout_types import Receptacle
from rearrange.sim.objects import OBJECT_TYPES, ObjectType
from rearrange.sim.placement import NoPlacement, RobotPlacement

UPRIGHT = (1.0, 0.0, 0.0, 0.0)


class NoRoom(NoPlacement):
    """This scene/draw cannot host the episode's objects; try another."""


class SceneDraw(RobotPlacement):
    """One layout being filled with objects for one episode draw; its robot poses come
    from `RobotPlacement` (the same objects, held object and open articulations)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.taken: dict[str, list[tuple[float, float, float]]] = {}  # receptacle -> (x, y, r)

    # receptacles -------------------------------------------------------------------
    def receptacles(self, predicate: Callable[[Receptacle], bool]) -> list[Receptacle]:
        found = [r for r in self.layout.receptacles if predicate(r)]
        if not found:
            raise NoRoom("no receptacle of the needed kind")
        return found

    def open_receptacles(self) -> list[Receptacle]:
        return self.receptacles(lambda r: r.container is None)

    def pick_receptacle(self, options: list[Receptacle], exclude: str | None = None) -> Receptacle:
        options = [r for r in options if r.name != exclude]
        if not options:
            raise NoRoom("no other receptacle")
        return options[int(self.rng.integers(len(options)))]

    # poses on receptacles ------------------------------------------------------------
    def free_pose(
        self, obj: ObjectType, rec: Receptacle, tries: int = 40
    ) -> tuple[float, float, float]:
        """A random non-overlapping resting position for `obj` on `rec` (reserved)."""
        box, r = rec.surface, obj.footprint_radius
        hx, hy = box.half_size[0] - r, box.half_size[1] - r
        if hx < 0 or hy < 0:
            raise NoRoom(f"{obj.name} does not fit on {rec.name}")
        c, s = math.cos(box.yaw), math.sin(box.yaw)
        taken = self.taken.setdefault(rec.name, [])
        for _ in range(tries):
            u, v = self.rng.uniform(-hx, hx), self.rng.uniform(-hy, hy)
            x, y = box.center[0] + c * u - s * v, box.center[1] + s * u + c * v
            if all(
                math.hypot(x - ox, y - oy) >= r + orad + self.cfg.object_gap
                for ox, oy, orad in taken
            ):
                taken.append((x, y, r))
                return self.rounded((x, y, rec.top_z + obj.half_height + 0.002))
        raise NoRoom(f"no room left on {rec.name}")

    def add_object(self, obj: ObjectType, rec: Receptacle) -> int:
        pos = self.free_pose(obj, rec)
        self.objects.append(ObjectPlacement(obj.name, pos, UPRIGHT, rec.name))
        return len(self.objects) - 1

    def random_type(self, max_half_height: float | None = None) -> ObjectType:
        names = sorted(
            n
            for n, o in OBJECT_TYPES.items()
            if max_half_height is None or o.half_height <= max_half_height
        )
        return OBJECT_TYPES[names[int(self.rng.integers(len(names)))]]

    def add_clutter(self, total: int) -> None:
        """Fill up to `total` objects on open receptacles (skipping ones with no room)."""
        for _ in range(4 * total):
            if len(self.objects) >= total:
                return
            try:
                self.add_object(self.random_type(), self.pick_receptacle(self.open_receptacles()))
            except NoRoom:
                continue
        if len(self.objects) < self.cfg.min_objects:
            raise NoRoom("not enough room for the clutter")

    def num_objects(self) -> int:
        return int(self.rng.integers(self.cfg.min_objects, self.cfg.max_objects + 1))

    def target(self, obj_index: int, rec: Receptacle) -> Target:
        obj = OBJECT_TYPES[self.objects[obj_index].obj_type]
        return Target(obj_index, self.free_pose(obj, rec), rec.name)
