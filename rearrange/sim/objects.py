"""YCB-like object catalogue: shapes, sizes (metres) and masses (kg).

Sizes follow the YCB object set's published dimensions, rounded. `shape` is a MuJoCo
primitive: box (half sizes x, y, z), cylinder (radius, half height), sphere (radius).
Objects rest on receptacles with their local z axis up.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ObjectType:
    name: str
    shape: str  # "box" | "cylinder" | "sphere"
    size: tuple[float, ...]  # MuJoCo geom size for that shape
    mass: float
    rgba: tuple[float, float, float, float]

    @property
    def half_height(self) -> float:
        """Distance from the object's centre to the surface it rests on."""
        if self.shape == "box":
            return self.size[2]
        if self.shape == "cylinder":
            return self.size[1]
        return self.size[0]

    @property
    def footprint_radius(self) -> float:
        """Radius of a circle that covers the object's footprint on its support."""
        if self.shape == "box":
            return (self.size[0] ** 2 + self.size[1] ** 2) ** 0.5
        return self.size[0]


OBJECT_TYPES: dict[str, ObjectType] = {
    o.name: o
    for o in (
        ObjectType("cracker_box", "box", (0.030, 0.080, 0.105), 0.411, (0.85, 0.15, 0.10, 1)),
        ObjectType("sugar_box", "box", (0.019, 0.046, 0.088), 0.514, (0.95, 0.90, 0.55, 1)),
        ObjectType("pudding_box", "box", (0.045, 0.055, 0.018), 0.187, (0.55, 0.35, 0.20, 1)),
        ObjectType("gelatin_box", "box", (0.036, 0.044, 0.014), 0.097, (0.90, 0.20, 0.30, 1)),
        ObjectType("tomato_soup_can", "cylinder", (0.033, 0.051), 0.349, (0.80, 0.10, 0.10, 1)),
        ObjectType("tuna_fish_can", "cylinder", (0.043, 0.017), 0.171, (0.20, 0.40, 0.75, 1)),
        ObjectType("master_chef_can", "cylinder", (0.051, 0.070), 0.414, (0.15, 0.30, 0.70, 1)),
        ObjectType("mustard_bottle", "box", (0.030, 0.048, 0.095), 0.603, (0.95, 0.80, 0.10, 1)),
        ObjectType("bleach_cleanser", "box", (0.033, 0.049, 0.125), 1.131, (0.30, 0.55, 0.90, 1)),
        ObjectType("bowl", "cylinder", (0.080, 0.027), 0.147, (0.80, 0.20, 0.20, 1)),
        ObjectType("mug", "cylinder", (0.040, 0.041), 0.118, (0.70, 0.10, 0.10, 1)),
        ObjectType("apple", "sphere", (0.037,), 0.068, (0.75, 0.05, 0.05, 1)),
        ObjectType("orange", "sphere", (0.036,), 0.047, (0.98, 0.55, 0.05, 1)),
        ObjectType("lemon", "sphere", (0.027,), 0.029, (0.98, 0.92, 0.20, 1)),
    )
}


def object_type(name: str) -> ObjectType:
    try:
        return OBJECT_TYPES[name]
    except KeyError:
        raise KeyError(
            f"unknown object type {name!r}; known types: {', '.join(sorted(OBJECT_TYPES))}"
        ) from None
