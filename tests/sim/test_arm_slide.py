"""The arm slides along what blocks it (`SimConfig.arm_slide`, rearrange/sim/arm_slide.py):
the projection by hand, then an arm pushed diagonally into a wall."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rearrange.sim.arm_slide import BACK_OFF, project_move

CAP = 0.01


def test_a_move_clear_of_its_contacts_is_kept():
    rows = np.array([[1.0, 0.0]])
    move = np.array([-0.5, 2.0])  # backs out of the contact
    np.testing.assert_allclose(project_move(rows, np.array([CAP]), move, CAP), move)
    shallow = np.array([0.002, 0.0])  # 2 mm in, where 9 mm of room minus the back-off are left
    np.testing.assert_allclose(project_move(rows, np.array([0.001]), shallow, CAP), shallow)


def test_a_contact_at_the_cap_loses_its_inward_part_and_backs_off():
    rows = np.array([[1.0, 0.0]])
    out = project_move(rows, np.array([CAP]), np.array([1.0, 1.0]), CAP)
    np.testing.assert_allclose(out, [-BACK_OFF, 1.0])  # slides along, backs out a little


def test_two_contacts_each_keep_their_room():
    rows = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    depths = np.array([CAP, 0.004])
    out = project_move(rows, depths, np.array([0.3, 0.3, 0.3]), CAP)
    np.testing.assert_allclose(out, [-BACK_OFF, CAP - 0.004 - BACK_OFF, 0.3])
    assert (rows @ out <= CAP - depths - BACK_OFF + 1e-12).all()


def _push_into_wall(slide: bool):
    """A pick val episode's robot stood 0.75 m from a long wall, facing it, its EE driven
    (damped least squares) at a point 0.3 m beyond the wall and 0.3 m along it for 40 steps:
    (EE positions, per-step static depth, sim)."""
    from rearrange.sim.config import SimConfig
    from rearrange.tasks import default_task_config, make_env

    cfg = default_task_config(
        "pick", obs_preset="state", num_episodes=1, sim=SimConfig(arm_slide=slide)
    )
    env = make_env("pick", cfg, split="val", seed=0)
    env.reset(options={"episode_index": 0})
    sim = env.unwrapped.sim
    wall = next(w for w in sim.layout.walls if max(w.half_size[:2]) >= 1.5)
    hx, hy = wall.half_size[0], wall.half_size[1]
    c, s = math.cos(wall.yaw), math.sin(wall.yaw)
    along = np.array([c, s]) if hx > hy else np.array([-s, c])
    normal = np.array([-along[1], along[0]])
    for side in (1.0, -1.0):
        p = np.asarray(wall.center[:2]) + side * normal * (min(hx, hy) + 0.75)
        if sim.set_base_pose(p[0], p[1], math.atan2(-side * normal[1], -side * normal[0])):
            if sim.static_depth_now() == 0.0:
                break
    else:
        pytest.fail("no free stand facing the wall")
    into = np.append(-side * normal, 0.0)
    goal = sim.ee_pos() + 0.3 * into + 0.3 * np.append(along, 0.0)
    ees, depths = [], []
    for _ in range(40):
        jac = sim.arm_jacobian()
        dq = jac.T @ np.linalg.solve(jac @ jac.T + 1e-3 * np.eye(3), goal - sim.ee_pos())
        sim.step(np.clip(dq / sim.config.arm_delta_scale, -1, 1), None, None)
        ees.append(sim.ee_pos().copy())
        depths.append(sim.static_depth_now())
    env.close()
    return np.array(ees), np.array(depths), sim


def test_an_arm_pushed_into_a_wall_slides_along_it_and_stays_out():
    pytest.importorskip("mujoco")
    ees, depths, sim = _push_into_wall(slide=False)
    assert sim.blocked_steps > 5 and sim.arm_slid_steps == 0
    assert np.linalg.norm(ees[-1] - ees[-11]) < 1e-6  # stuck: the same move, blocked again
    ees, depths, sim = _push_into_wall(slide=True)
    assert sim.arm_slid_steps > 5
    assert np.linalg.norm(ees[-1] - ees[-11]) > 0.01  # still moving, along the wall
    assert depths.max() <= sim.config.block_depth + 1e-9
