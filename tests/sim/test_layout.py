"""Procedural apartments: determinism, splits, rooms, receptacles, doorways, clearance."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rearrange.sim.apartment import FRONT_CLEARANCE, generate_layout
from rearrange.sim.placement import Footprints


def test_same_seed_same_layout_and_splits_differ():
    assert generate_layout(3, "train") == generate_layout(3, "train")
    for s in range(5):
        assert generate_layout(s, "train").furniture != generate_layout(s, "val").furniture
    assert generate_layout(0, "train").bounds != generate_layout(1, "train").bounds


@pytest.mark.parametrize("seed,split", [(0, "train"), (1, "train"), (7, "val"), (42, "val")])
def test_rooms_receptacles_articulations(seed, split):
    lay = generate_layout(seed, split)
    assert {r.name for r in lay.rooms} >= {"kitchen", "living", "dining"}
    names = [r.name for r in lay.receptacles]
    assert len(names) >= 10 and len(set(names)) == len(names)
    assert lay.receptacle("fridge_shelf_0").container == "fridge"
    assert lay.receptacle("drawer_0_inside").container == "drawer_0"
    assert lay.receptacle("drawer_1_inside").container == "drawer_1"
    arts = {a.name: a for a in lay.articulations}
    assert arts["fridge"].kind == "hinge" and arts["fridge"].open == pytest.approx(1.2208)
    assert arts["drawer_0"].kind == "slide" and arts["drawer_1"].open == pytest.approx(0.45)


def _doorway_gaps(lay):
    """Gaps along each interior wall line x = const (outer walls excluded)."""
    x0, y0, x1, y1 = lay.bounds
    lines: dict[float, list] = {}
    for w in lay.walls:
        if w.half_size[1] > w.half_size[0] and x0 + 0.2 < w.center[0] < x1 - 0.2:
            lines.setdefault(round(w.center[0], 6), []).append(
                (w.center[1] - w.half_size[1], w.center[1] + w.half_size[1])
            )
    gaps = []
    for segs in lines.values():
        segs.sort()
        gaps += [b[0] - a[1] for a, b in zip(segs, segs[1:])]
    return gaps


@pytest.mark.parametrize("seed", range(6))
def test_doorways_wide_enough_and_fronts_clear(seed):
    lay = generate_layout(seed, "train")
    gaps = _doorway_gaps(lay)
    assert len(gaps) == len(lay.rooms) - 1 and min(gaps) >= 1.0
    fp = Footprints(lay)
    for f in lay.furniture:
        # Sample the 0.9 m strip in front of the piece: it touches nothing (radius 0 points).
        c, s = math.cos(f.front_yaw), math.sin(f.front_yaw)
        for d in np.linspace(0.05, FRONT_CLEARANCE - 0.02, 6):
            for lat in np.linspace(-f.half_size[1] + 0.02, f.half_size[1] - 0.02, 5):
                lx = f.half_size[0] + d
                x = f.center[0] + c * lx - s * lat
                y = f.center[1] + s * lx + c * lat
                assert not fp.collides(x, y, 0.0), (f.name, d, lat)


def test_bad_split_and_seed_raise_clear_errors():
    with pytest.raises(ValueError, match="unknown split"):
        generate_layout(0, "test")
    with pytest.raises(ValueError, match="non-negative"):
        generate_layout(-1, "train")


def test_articulation_lookup_by_name_and_unknown_name_error():
    layout = generate_layout(0, "train")
    for art in layout.articulations:
        assert layout.articulation(art.name) is art
    with pytest.raises(KeyError, match=r"layout train/0 has no articulation 'drawer_9'"):
        layout.articulation("drawer_9")
