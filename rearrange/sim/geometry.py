"""Small planar-geometry helpers shared by sim, tasks, skills and eval (no dependencies)."""

from __future__ import annotations

import math


def wrap_angle(a: float) -> float:
    """Wrap an angle (rad) to [-pi, pi). Works on floats and numpy scalars / arrays alike."""
    return (a + math.pi) % (2.0 * math.pi) - math.pi
