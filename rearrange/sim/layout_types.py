"""Plain-data description of a procedural apartment.

This is the contract between the apartment generator (`apartment.py`), the MuJoCo
scene builder, the navigability map, the episode generator and the PDDL planner.
Nothing here imports MuJoCo. World frame: metres, z up, floor at z = 0.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Box:
    """An axis-aligned box in the world frame (yaw rotates it about its centre's z axis)."""

    center: tuple[float, float, float]
    half_size: tuple[float, float, float]
    yaw: float = 0.0


@dataclass(frozen=True)
class Room:
    name: str  # "kitchen", "living", "dining", "bedroom", ...
    xmin: float
    ymin: float
    xmax: float
    ymax: float


@dataclass(frozen=True)
class Furniture:
    """One piece of furniture.

    `kind` picks its detailed geometry in the scene builder: counter, table, sofa,
    coffee_table, side_table, shelf, fridge, cabinet. `footprint` is the 2-D box the
    navigability map treats as an obstacle; `front_yaw` is the direction (radians, world
    frame) its front faces, i.e. where a robot stands to use it.
    """

    name: str
    kind: str
    room: str
    center: tuple[float, float]
    half_size: tuple[float, float, float]  # x, y half extents before yaw; z = half height
    front_yaw: float


@dataclass(frozen=True)
class Receptacle:
    """A flat surface objects can rest on.

    `surface` is a thin box whose top face (center z + half z) is the support height;
    objects are placed within its x/y extent. `container` names the articulation that
    encloses it ("fridge", "drawer_0", ...) or None when it is open to the room.
    """

    name: str
    furniture: str
    surface: Box
    container: str | None = None

    @property
    def top_z(self) -> float:
        return self.surface.center[2] + self.surface.half_size[2]

    @property
    def in_drawer(self) -> bool:
        """The surface is a drawer's floor (its container is a drawer)."""
        return self.container is not None and self.container.startswith("drawer")

    @property
    def in_fridge(self) -> bool:
        """The surface is one of the fridge's shelves."""
        return self.container == "fridge"


@dataclass(frozen=True)
class Articulation:
    """A hinged door or a sliding drawer, with its joint range and handle.

    `closed` / `open` are joint values (rad for hinge, m for slide). The handle position
    here is the one at the closed state, in the world frame.
    """

    name: str  # "fridge", "drawer_0", "drawer_1"
    kind: str  # "hinge" | "slide"
    furniture: str
    closed: float
    open: float
    handle_closed_pos: tuple[float, float, float]


@dataclass
class Layout:
    seed: int
    split: str
    bounds: tuple[float, float, float, float]  # xmin, ymin, xmax, ymax of the outer walls
    rooms: list[Room] = field(default_factory=list)
    walls: list[Box] = field(default_factory=list)
    furniture: list[Furniture] = field(default_factory=list)
    receptacles: list[Receptacle] = field(default_factory=list)
    articulations: list[Articulation] = field(default_factory=list)

    def receptacle(self, name: str) -> Receptacle:
        for r in self.receptacles:
            if r.name == name:
                return r
        raise KeyError(f"layout {self.split}/{self.seed} has no receptacle {name!r}")

    def articulation(self, name: str) -> Articulation:
        for a in self.articulations:
            if a.name == name:
                return a
        raise KeyError(f"layout {self.split}/{self.seed} has no articulation {name!r}")

    def furniture_named(self, name: str) -> Furniture:
        for f in self.furniture:
            if f.name == name:
                return f
        raise KeyError(f"layout {self.split}/{self.seed} has no furniture {name!r}")
