"""Third-person views draw walls as stubs so the camera is never blocked."""

from __future__ import annotations

import mujoco
from sim_helpers import episode_at

from rearrange.sim.render import WALL_STUB_HALF_HEIGHT, cut_away_walls


def test_walls_are_cut_to_stubs_in_third_person_scenes(sim):
    sim.reset(episode_at("counter_0", [("mug", "counter_0")]))
    renderer = mujoco.Renderer(sim.model, 60, 80)
    renderer.update_scene(sim.data)
    walls = [
        i
        for i in range(renderer.scene.ngeom)
        if renderer.scene.geoms[i].objtype == mujoco.mjtObj.mjOBJ_GEOM
        and sim.model.geom(renderer.scene.geoms[i].objid).name.startswith("wall_")
    ]
    assert walls, "the scene should contain walls"
    assert all(renderer.scene.geoms[i].size[2] > 1.0 for i in walls)  # full 2.5 m walls
    cut_away_walls(sim.model, renderer.scene)
    for i in walls:
        g = renderer.scene.geoms[i]
        assert g.size[2] == WALL_STUB_HALF_HEIGHT and g.pos[2] == WALL_STUB_HALF_HEIGHT
    renderer.close()
