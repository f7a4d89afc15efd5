"""Open doors as obstacles in path planning (`RearrangeSim.planning_navmap`, NavMap overlay)."""

from __future__ import annotations

import numpy as np
from sim_helpers import episode_at

from rearrange.sim.navmap import NavMap

OPEN = 1.2208


def test_extra_box_blocks_cells_the_static_map_allows(sim):
    sim.reset(episode_at("fridge_0", []))
    static = sim.navmap
    x, y = (float(v) for v in sim.base_pose()[:2])
    assert static.is_navigable(x, y)
    overlay = NavMap(sim.layout, robot_radius=0.3, extra_boxes=[(x, y, 0.2, 0.2, 0.0)])
    # inside the box and within robot radius of it: blocked; 1 m away: untouched
    assert not overlay.is_navigable(x, y)
    assert not overlay.is_navigable(x + 0.45, y)
    for dx, dy in ((1.0, 0.0), (-1.0, 0.0), (0.0, 1.0), (0.0, -1.0)):
        if static.is_navigable(x + dx, y + dy):
            assert overlay.is_navigable(x + dx, y + dy)


def test_planning_navmap_is_static_when_closed_and_avoids_the_open_door(sim):
    sim.reset(episode_at("fridge_0", []))
    assert sim.planning_navmap() is sim.navmap
    sim.reset(episode_at("fridge_0", [], articulations={"fridge": OPEN}))
    nm = sim.planning_navmap()
    assert nm is not sim.navmap
    assert nm is sim.planning_navmap()  # cached for the same door state
    doors = sim.swinging.footprints(sim.data)
    cx, cy = (float(v) for v in doors.center[0])
    # the door panel's centre: an obstacle in the planning map
    assert not nm.is_navigable(cx, cy)
    # the open door only removes cells
    assert not np.any(nm.navigable & ~sim.navmap.navigable)
    assert np.count_nonzero(sim.navmap.navigable & ~nm.navigable) > 50
