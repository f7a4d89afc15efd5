"""The fast paths keep results: footprint distances, cheap head renders, the benchmark CLI."""

from __future__ import annotations

import math

import mujoco
import numpy as np
import pytest
from sim_helpers import episode_at

from rearrange.sim.config import SimConfig
from rearrange.sim.placement import Footprints
from rearrange.sim.render import HEAD_QUALITY, make_renderer
from rearrange.sim.world import RearrangeSim


def test_footprint_distance_hand_computed():
    fp = Footprints(boxes=np.array([[0.0, 0.0, 1.0, 0.5, 0.0], [10.0, 0.0, 1.0, 0.5, math.pi / 2]]))
    assert fp.distance(2.0, 0.0) == pytest.approx(1.0)
    assert fp.distance(2.0, 1.5) == pytest.approx(math.sqrt(2.0))
    assert fp.distance(0.3, 0.2) == 0.0
    assert fp.distance(10.0, 3.0) == pytest.approx(2.0)  # rotated: long side along y
    assert fp.collides(2.0, 0.0, 1.01) and not fp.collides(2.0, 0.0, 0.99)
    assert Footprints(boxes=np.zeros((0, 5))).distance(0.0, 0.0) == math.inf


def test_cheap_head_depth_matches_full_quality():
    ep = episode_at("counter_0", [("apple", "counter_0"), ("mug", "counter_0")])
    depths = []
    for cheap in (True, False):
        sim = RearrangeSim(SimConfig(head_cheap_primitives=cheap))
        sim.reset(ep)
        depths.append(sim.render_depth())
        sim.close()
    diff = np.abs(depths[0] - depths[1])
    assert (diff > 0.01).mean() < 0.005  # only silhouette pixels of round objects change


def test_make_renderer_restores_model_quality(sim):
    sim.reset(episode_at("counter_0", []))
    q = sim.model.vis.quality
    before = [getattr(q, k) for k in HEAD_QUALITY]
    r = make_renderer(sim.model, 32, 32, cheap_primitives=True)
    assert [getattr(q, k) for k in HEAD_QUALITY] == before
    assert not r.scene.flags[mujoco.mjtRndFlag.mjRND_SHADOW]
    r.close()


def test_depth_is_a_fresh_array_each_call(sim):
    sim.reset(episode_at("counter_0", []))
    a = sim.render_depth()
    b = sim.render_depth()
    assert a is not b and np.array_equal(a, b)
    a[:] = -1.0  # a caller writing into its observation must not change the next one
    assert sim.render_depth().min() >= 0.0


def test_benchmark_cli_prints_markdown_table(capsys):
    from benchmarks.sim_throughput import main

    main(["--steps", "3", "--repeats", "2", "--objects", "2"])
    out = capsys.readouterr().out
    assert "| mode | median steps/s |" in out
    assert out.count("| interact + depth 128x128 |") == 1
    with pytest.raises(SystemExit):
        main(["--repeats", "0"])


def test_cluster_decimate_merges_cells_and_drops_degenerate_triangles():
    from rearrange.sim.robot import cluster_decimate

    square = np.array(
        [[[0, 0, 0], [1, 0, 0], [1, 1, 0]], [[0, 0, 0], [1, 1, 0], [0, 1, 0]]], dtype=float
    )
    sliver = np.array([[[0.01, 0.01, 0], [0.02, 0.01, 0], [0.02, 0.02, 0]]])  # one 0.1 m cell
    verts, faces = cluster_decimate(np.concatenate([square, square, sliver]), 0.1)
    assert faces.shape == (2, 3)  # duplicate dropped, sliver collapsed
    assert len(verts) == 4
    # The origin's cell holds 4 copies of (0, 0, 0) and the sliver's 3 vertices: their mean.
    corner = verts[np.argmin(np.linalg.norm(verts, axis=1))]
    assert np.allclose(corner, [0.05 / 7, 0.04 / 7, 0.0])
    assert np.all(np.isin(np.arange(4), faces))


def test_head_proxies_are_render_only_and_physics_is_unchanged():
    from rearrange.sim import robot as R

    ep = episode_at("counter_0", [("apple", "counter_0")])
    traj = []
    for lowpoly in (True, False):
        sim = RearrangeSim(SimConfig(head_lowpoly_robot=lowpoly))
        sim.reset(ep)
        m = sim.model
        proxies = [i for i in range(m.ngeom) if m.geom(i).name.endswith("_lowpoly")]
        if lowpoly:
            assert len(proxies) >= 8  # the arm links and the gripper
            assert all(m.geom_group[i] == R.HEAD_PROXY_GROUP for i in proxies)
            assert not m.geom_contype[proxies].any() and not m.geom_conaffinity[proxies].any()
            orig = m.geom("robot0:gripper_link").id
            assert m.geom_group[orig] == R.HEAD_HIDDEN_GROUP
            assert m.mesh_facenum[m.geom_dataid[proxies]].sum() < 0.3 * 8208
        else:
            assert not proxies
        rng = np.random.default_rng(1)
        for _ in range(10):
            sim.step(rng.uniform(-1, 1, 7), rng.uniform(-1, 1), rng.uniform(-1, 1, 2))
        traj.append((sim.arm_joint_pos(), sim.base_pose(), sim.object_pos(0), sim.ee_pos()))
        sim.close()
    for a, b in zip(*traj):
        assert np.allclose(a, b, atol=1e-9)


def test_bad_render_threads_is_a_clear_error():
    with pytest.raises(ValueError, match="render_threads must be >= 1"):
        SimConfig(render_threads=0)
