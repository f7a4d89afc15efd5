"""Generated start poses are clear of static geometry in the real scene (docs/DESIGN.md
§8.2): the generator measures each start in MuJoCo and redraws one deeper than the sim's
block depth; the check draws nothing, so episodes that pass are unchanged."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from rearrange.sim.episodes import default_layout_fn, generate_episodes
from rearrange.sim.episodes import generation as G
from rearrange.sim.episodes.start_check import StartCheck, start_check
from rearrange.sim.world import RearrangeSim


def _pushed_in(check: StartCheck, episode, layout, min_depth: float = 0.03):
    """`episode` with its base moved straight ahead until the robot is at least
    `min_depth` inside the furniture it faces (no far start)."""
    extras = {k: v for k, v in episode.extras.items() if k != "robot_start_far"}
    x, y, yaw = episode.robot_start
    for s in np.arange(0.05, 1.5, 0.05):
        pose = (x + s * math.cos(yaw), y + s * math.sin(yaw), yaw)
        ep = replace(episode, robot_start=pose, extras=extras)
        if check.depths(ep, layout)[0].robot >= min_depth:
            return ep
    raise AssertionError("nothing ahead of the start")


def test_generated_pick_and_place_starts_are_clear_in_the_sim():
    sim = RearrangeSim()
    try:
        for task in ("pick", "place"):
            for ep in generate_episodes(task, "val", 6, 0):
                for start in (ep.robot_start, ep.extras["robot_start_far"]):
                    sim.reset(replace(ep, robot_start=tuple(start)))
                    assert sim.static_depth_now() <= sim.config.block_depth, ep.episode_id
    finally:
        sim.close()


def test_the_check_draws_nothing_from_the_episode_rng():
    checked = generate_episodes("place", "val", 5, 1)
    assert checked == generate_episodes("place", "val", 5, 1, check_starts=False)
    assert checked == generate_episodes("place", "val", 5, 1)  # deterministic


def test_a_start_with_the_robot_inside_a_counter_is_rejected():
    check = start_check()
    ep = generate_episodes("pick", "val", 1, 0)[0]
    layout = default_layout_fn(ep.scene_seed, "val")
    assert check.problem(ep, layout) == ""
    bad = _pushed_in(check, ep, layout)
    assert check.problem(bad, layout).startswith("robot_start puts the robot")


def test_a_start_with_the_held_object_in_the_floor_is_rejected():
    check = start_check()
    ep = generate_episodes("place", "val", 1, 0)[0]
    layout = default_layout_fn(ep.scene_seed, "val")
    assert check.problem(ep, layout) == ""
    check.depths(ep, layout)  # the sim now holds the episode's start
    sim = check.sim
    g_pos = sim.data.xpos[sim.idx.gripper_body].copy()
    g_rot = sim.data.xmat[sim.idx.gripper_body].reshape(3, 3)
    below = g_rot.T @ (np.array([g_pos[0], g_pos[1], 0.0]) - g_pos)  # centre at floor level
    pose = [*below.tolist(), *ep.extras["held_pose"][3:]]
    bad = replace(ep, extras={**ep.extras, "held_pose": pose})
    depth = check.depths(bad, layout)[0]
    assert depth.robot <= check.limit < depth.held
    assert "held object" in check.problem(bad, layout)


def test_generation_redraws_a_start_inside_furniture(monkeypatch):
    plain = generate_episodes("pick", "val", 1, 0)[0]
    build = G.BUILDERS["pick"]
    calls = []

    def first_start_pushed_in(sc, task):
        start, targets, extras = build(sc, task)
        calls.append(start)
        if len(calls) == 1:  # the first draw's robot starts inside what it faces
            ep = replace(plain, scene_seed=sc.layout.seed, robot_start=start, extras=extras)
            start = _pushed_in(start_check(), ep, sc.layout).robot_start
        return start, targets, extras

    monkeypatch.setattr(G, "BUILDERS", {"pick": first_start_pushed_in})
    redrawn = generate_episodes("pick", "val", 1, 0)[0]
    assert len(calls) >= 2
    assert redrawn.robot_start != plain.robot_start
    layout = default_layout_fn(redrawn.scene_seed, "val")
    assert start_check().problem(redrawn, layout) == ""
