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


def _cross(o: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """z of (a - o) x (b - o), row-wise over whichever of o, a, b has rows."""
    return (a[..., 0] - o[..., 0]) * (b[..., 1] - o[..., 1]) - (a[..., 1] - o[..., 1]) * (
        b[..., 0] - o[..., 0]
    )


def segment_distance(points: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """[N] distance from each point to the segment a -> b (2-D)."""
    p, a, b = (np.asarray(v, np.float64) for v in (points, a, b))
    ab = b - a
    t = np.clip(((p - a) @ ab) / max(float(ab @ ab), 1e-12), 0.0, 1.0)
    return np.hypot(*(p - (a + t[:, None] * ab)).T)


def segments_cross(points: np.ndarray, target: np.ndarray, a: np.ndarray, b: np.ndarray):
    """[N] bool: segment points[i] -> target properly crosses segment a -> b (2-D)."""
    p, t = np.asarray(points, np.float64), np.asarray(target, np.float64)
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    d1, d2 = _cross(p, t, a), _cross(p, t, b)  # a, b on either side of the line p-t
    d3, d4 = _cross(a, b, p), _cross(a, b, t)  # p, t on either side of the line a-b
    return (d1 * d2 < 0) & (d3 * d4 < 0)
