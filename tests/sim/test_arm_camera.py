"""Video cameras: the free-camera pinhole projection (hand-computed and against a render),
the arm view beside the robot, and the low-resolution head depth."""

from __future__ import annotations

import math

import mujoco
import numpy as np
import pytest
from sim_helpers import episode_at

from rearrange.sim.arm_camera import arm_view, arm_view_side, render_head_depth
from rearrange.sim.render import (
    CameraView,
    Overlays,
    PinholeCamera,
    _add,
    _camera,
    draw_markers,
    free_camera,
    project,
)


def test_projection_of_known_points_is_the_hand_computed_pixel():
    # at the origin looking along +x, up +z, 90° vertical fov, 100x80: focal = 40 / tan 45° = 40
    cam = PinholeCamera((0.0, 0.0, 0.0), (1.0, 0.0, 0.0), (0.0, 0.0, 1.0), 90.0)
    pts = [(2.0, 0.0, 0.0), (2.0, -1.0, 0.5), (4.0, 1.0, -1.0), (-1.0, 0.0, 0.0)]
    px, ahead = project(cam, pts, 100, 80)
    # right = forward x up = -y: x = 50 + 40 * right / depth, y = 40 - 40 * up / depth
    np.testing.assert_allclose(px[:3], [[50, 40], [70, 30], [40, 50]], atol=1e-9)
    assert ahead.tolist() == [True, True, True, False]


def test_free_camera_sits_distance_behind_lookat_along_azimuth_and_elevation():
    cam = free_camera(CameraView((1.0, 2.0, 3.0), 2.0, 90.0, 0.0), 45.0)
    np.testing.assert_allclose(cam.forward, (0, 1, 0), atol=1e-12)  # azimuth 90°: along +y
    np.testing.assert_allclose(cam.pos, (1, 0, 3), atol=1e-12)
    np.testing.assert_allclose(cam.up, (0, 0, 1), atol=1e-12)
    down = free_camera(CameraView((0.0, 0.0, 0.0), 1.0, 0.0, -30.0), 45.0)
    np.testing.assert_allclose(down.pos, (-math.cos(math.pi / 6), 0, 0.5), atol=1e-12)
    np.testing.assert_allclose(down.up, (0.5, 0, math.cos(math.pi / 6)), atol=1e-12)


def test_projection_matches_where_mujoco_draws_a_point(sim):
    sim.reset(episode_at("counter_0", [("mug", "counter_0")]))
    yaw = math.degrees(sim.base_pose()[2])  # from behind the robot, which faces the counter
    view = CameraView(tuple(sim.object_pos(0) + [0.1, -0.2, 0.1]), 1.5, yaw + 20.0, -35.0)
    point = np.array(view.lookat) + [0.15, 0.25, -0.05]  # off-centre on both axes
    w, h = 160, 120
    r = sim.renderer(w, h)

    def render(with_ball: bool) -> np.ndarray:
        r.update_scene(sim.data, camera=_camera(view), scene_option=sim.third_person_vopt)
        if with_ball:
            _add(
                r.scene, mujoco.mjtGeom.mjGEOM_SPHERE, (0.015, 0, 0), point, np.eye(3), (1, 0, 1, 1)
            )
        return r.render().astype(int)

    changed = np.abs(render(True) - render(False)).sum(axis=2) > 30
    ys, xs = np.nonzero(changed)
    assert len(xs) > 3
    drawn = (xs.mean() + 0.5, ys.mean() + 0.5)  # pixel centres
    (expected,), _ = project(free_camera(view, sim.model.vis.global_.fovy), [point], w, h)
    assert math.dist(drawn, expected) < 1.0, (drawn, expected)


def test_marker_ring_is_drawn_around_the_projected_point():
    cam = PinholeCamera((0.0, 0.0, 0.0), (1.0, 0.0, 0.0), (0.0, 0.0, 1.0), 90.0)
    img = draw_markers(np.zeros((80, 100, 3), np.uint8), cam, [((2.0, -1.0, 0.5), "")], radius=8)
    ys, xs = np.nonzero(img[..., 0] > 200)  # yellow ring + dot around pixel (70, 30)
    assert abs(xs.mean() - 70) < 1 and abs(ys.mean() - 30) < 1 and xs.max() - xs.min() >= 16
    behind = draw_markers(np.zeros((80, 100, 3), np.uint8), cam, [((-2.0, 0.0, 0.0), "x")])
    assert behind.max() == 0


class _Base:
    """The sim calls arm_view / arm_view_side make: base pose and the range scan."""

    def __init__(self, pose, left=2.0, right=2.0):
        self.pose, self.ranges = np.array(pose), (left, right)

    def base_pose(self):
        return self.pose

    def obstacle_ranges(self, angles, max_range):
        assert angles[0] > math.pi / 2 and angles[1] < -math.pi / 2  # behind the shoulders
        return np.minimum(np.array(self.ranges), max_range)


@pytest.mark.parametrize("yaw", [0.0, 2.0])
def test_arm_view_stands_beside_the_robot_and_sees_the_target(yaw):
    base = _Base((1.0, -1.0, yaw))
    heading = np.array([math.cos(yaw), math.sin(yaw)])
    target = np.array([1.0, -1.0, 0.9]) + 0.7 * np.append(heading, 0.0)  # 0.7 m ahead
    left_of = np.array([-heading[1], heading[0]])
    for side in (1, -1):
        cam = free_camera(arm_view(base, target, side), 45.0)
        rel = np.asarray(cam.pos[:2]) - base.pose[:2]
        assert side * rel @ left_of > 1.0  # on the requested side of the robot
        assert cam.pos[2] > target[2] + 0.5  # looking down
        (px,), ahead = project(cam, [target], 360, 360)
        assert ahead[0] and 60 < px[0] < 300 and 60 < px[1] < 300


def test_arm_view_side_is_the_freer_one():
    assert arm_view_side(_Base((0, 0, 0), left=0.4, right=1.5), None) == -1
    assert arm_view_side(_Base((0, 0, 0), left=1.5, right=0.4), None) == 1
    assert arm_view_side(_Base((0, 0, 0)), None) == 1  # tie: left


def test_head_depth_inset_is_the_policy_camera_at_low_resolution(sim):
    sim.reset(episode_at("counter_0", [("mug", "counter_0")]))
    small = render_head_depth(sim, 64)
    full = sim.render_depth()[..., 0]
    assert small.shape == (64, 64) and small.dtype == np.float32
    assert 0.0 <= small.min() and small.max() <= sim.config.camera_far
    pooled = full.reshape(64, 2, 64, 2).mean(axis=(1, 3))  # the same camera, 2x2 pixels
    assert np.median(np.abs(small - pooled)) < 0.05
    flipped = np.abs(small - pooled[::-1]).mean()  # an upside-down image would not match
    assert flipped > 5 * np.median(np.abs(small - pooled))


def test_overlay_markers_change_the_rendered_frame(sim):
    sim.reset(episode_at("counter_0", [("mug", "counter_0")]))
    plain = sim.render_third_person(Overlays(), width=160, height=120)
    marked = sim.render_third_person(
        Overlays(markers=[(tuple(sim.object_pos(0)), "pick")]), width=160, height=120
    )
    yellow = (marked[..., 0] > 200) & (marked[..., 1] > 170) & (marked[..., 2] < 80)
    assert yellow.sum() > 20 and not ((plain[..., 0] > 200) & (plain[..., 2] < 80) & yellow).all()
