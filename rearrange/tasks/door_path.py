"""The EE's way back to rest round an open door (the open/close tasks' `ee_dist` term).

Opening the fridge leaves the gripper on the door's outer face, round its free edge from the
robot: the straight line from the EE to its resting point runs through the panel, which the
world blocks (issue 27). Rewarding the change of the straight distance (Habitat's
`ee_dist`) then pays the arm to press into the panel, a local optimum: the shipped
open_fridge opened the door in 22 of its 23 failed val episodes (seed 1) and stayed pressed
against the panel's outer face, 0.2-0.5 m from rest, until its step limit. The distance is
measured round the door instead, as nav measures a geodesic round furniture: while the
straight line crosses the panel (extended `EDGE_MARGIN` past its free edge), it is the way
through that extended edge. Where the line is clear the two are the same, and they meet
continuously where the line passes the edge, so the reward is still the change of one
potential (docs/DESIGN.md §4).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from rearrange.sim import apartment as A
from rearrange.sim.geometry import rot_z
from rearrange.sim.placement import fridge_hinge

from .rewards import ee_to_rest

EDGE_MARGIN = 0.12  # m past the free edge the way round goes (the gripper's half-width and more)
DOOR_WIDTH = 2 * A.FRIDGE_HALF[1]


def door_segment(sim: Any, art_name: str) -> tuple[np.ndarray, np.ndarray]:
    """World (x, y) of a hinged door's hinge axis and of its free edge extended by
    `EDGE_MARGIN`, at the door's angle now."""
    art = sim.layout.articulation(art_name)
    yaw = sim.layout.furniture_named(art.furniture).front_yaw
    hinge = fridge_hinge(art.handle_closed_pos, yaw)
    left = np.array([-math.sin(yaw), math.cos(yaw), 0.0])
    along = rot_z(-left, sim.articulation_pos(art_name) - art.closed)
    tip = hinge + along * (DOOR_WIDTH + EDGE_MARGIN)
    return hinge[:2].copy(), tip[:2].copy()


def _cross(o: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    return float((a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]))


def segments_cross(p: np.ndarray, q: np.ndarray, a: np.ndarray, b: np.ndarray) -> bool:
    """Whether the 2-D segments p-q and a-b cross (touching at an end point does not count)."""
    d1, d2 = _cross(a, b, p), _cross(a, b, q)
    d3, d4 = _cross(p, q, a), _cross(p, q, b)
    return d1 * d2 < 0 and d3 * d4 < 0


def distance_round(p: np.ndarray, q: np.ndarray, hinge: np.ndarray, tip: np.ndarray) -> float:
    """Length of the way from 3-D point p to q that does not cross the vertical wall from
    `hinge` to `tip` ((x, y); the hinge end is closed by the carcass, so the way goes round
    the tip): the horizontal part round the tip, the height change spread along it."""
    p, q = np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64)
    if not segments_cross(p[:2], q[:2], hinge, tip):
        return float(np.linalg.norm(q - p))
    horizontal = float(np.linalg.norm(tip - p[:2]) + np.linalg.norm(q[:2] - tip))
    return math.hypot(horizontal, float(q[2] - p[2]))


def ee_to_rest_round_door(sim: Any, art_name: str) -> float:
    """EE->rest distance (m) the way round the hinged door `art_name` (`distance_round`);
    the straight distance for a drawer."""
    if sim.layout.articulation(art_name).kind != "hinge":
        return ee_to_rest(sim)
    ee = np.asarray(sim.ee_pos("base"), dtype=np.float64)  # the task's own frame
    rest = np.asarray(sim.rest_ee_pos_base, dtype=np.float64)
    hinge, tip = (sim.to_base_frame([x, y, 0.0])[:2] for x, y in door_segment(sim, art_name))
    return distance_round(ee, rest, hinge, tip)


__all__ = [
    "DOOR_WIDTH",
    "EDGE_MARGIN",
    "distance_round",
    "door_segment",
    "ee_to_rest_round_door",
    "segments_cross",
]
