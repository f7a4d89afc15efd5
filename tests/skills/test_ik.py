"""Damped-least-squares IK: hand-computed steps on a toy Jacobian, limit scaling."""

import numpy as np
import pytest

from rearrange.sim.config import SimConfig
from rearrange.skills import ik


def test_dls_on_identity_jacobian_shrinks_by_damping():
    jac = np.hstack([np.eye(3), np.zeros((3, 4))])
    dq = ik.dls_joint_step(jac, np.array([0.1, 0.0, -0.2]), damping=0.1)
    # Jᵀ (I + 0.01 I)⁻¹ e = e / 1.01 on the first three joints, zero elsewhere.
    np.testing.assert_allclose(dq, [0.1 / 1.01, 0.0, -0.2 / 1.01, 0, 0, 0, 0], rtol=1e-9)


def test_joint_delta_action_keeps_direction_within_limits():
    a = ik.joint_delta_action(np.array([0.025, -0.0125, 0.0, 0, 0, 0, 0]))
    np.testing.assert_allclose(a, [1.0, -0.5, 0, 0, 0, 0, 0], rtol=1e-6)
    small = ik.joint_delta_action(np.array([0.00625, 0, 0, 0, 0, 0, 0]))
    assert small[0] == pytest.approx(0.5)


class _PlanarArm:
    """A 7-joint arm whose EE moves linearly in the joints: ee = A q (Jacobian A)."""

    def __init__(self):
        rng = np.random.default_rng(0)
        self.A = rng.normal(size=(3, 7)) * 0.3
        self.q = np.zeros(7)

    def ee_pos(self, frame="world"):
        return self.A @ self.q

    def arm_jacobian(self):
        return self.A

    def arm_joint_pos(self):
        return self.q.copy()

    def step(self, arm, grip, base):
        self.q = self.q + np.clip(arm, -1, 1) * SimConfig.arm_delta_scale


def test_solve_ik_converges_on_linear_arm_with_limited_steps():
    arm = _PlanarArm()
    target = np.array([0.05, -0.04, 0.03])
    ok, steps = ik.solve_ik(arm, target, tol=0.002, max_steps=400)
    assert ok and steps > 1
    assert np.linalg.norm(arm.ee_pos() - target) < 0.002
