"""Small planar-geometry helpers shared by sim, tasks, skills and eval (numpy only)."""

from __future__ import annotations

import math

import numpy as np


def wrap_angle(a: float) -> float:
    """Wrap an angle (rad) to [-pi, pi). Works on floats and numpy scalars / arrays alike."""
    return (a + math.pi) % (2.0 * math.pi) - math.pi


def rot_z(v, angle: float) -> np.ndarray:
    """`v` rotated by `angle` (rad) about the z axis: an (x, y) or an (x, y, z) (z kept)."""
    c, s = math.cos(angle), math.sin(angle)
    return np.array([c * v[0] - s * v[1], s * v[0] + c * v[1], *v[2:]])
