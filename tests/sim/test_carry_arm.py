"""Carrying nav starts put the arm where the HAB arm reset leaves it (`carry_arm`)."""

import numpy as np

from rearrange.sim.episodes.arm_starts import arm_kinematics, carry_arm, carry_joints
from rearrange.sim.episodes.config import EpisodeGenConfig
from rearrange.sim.robot import CARRY_EE_OFFSET, RESET_JOINT_TOL
from rearrange.skills import reset_arm


def test_carry_arm_is_the_reset_end_within_its_joint_tolerance():
    kin = arm_kinematics()
    rng = np.random.default_rng(0)
    canon = carry_joints()
    draws = np.array([carry_arm(rng, EpisodeGenConfig(), kin) for _ in range(50)])
    off = draws - canon
    # every joint inside the reset's own end test (skills/reset_arm.py uses the same bound)
    assert reset_arm.JOINT_TOL == RESET_JOINT_TOL
    assert np.abs(off).max() <= RESET_JOINT_TOL + 1e-12
    # ... and spread over it, not one pose: uniform on [-0.02, 0.02] has std 0.0115; the
    # shoulder lift's canonical value is its lower limit, so it spreads upward only
    lo, hi = kin.arm_range[:, 0], kin.arm_range[:, 1]
    assert np.all(draws >= lo) and np.all(draws <= hi)
    free = (canon - lo > RESET_JOINT_TOL) & (hi - canon > RESET_JOINT_TOL)
    assert free.sum() == 6 and not free[1]
    assert np.all(off[:, free].std(axis=0) > 0.008), off.std(axis=0)
    assert 0.2 < np.mean(draws[:, 1] > lo[1]) < 0.8  # about half the draws above the limit
    # the kinematics are left at the last draw, its EE near rest + CARRY_EE_OFFSET
    assert np.allclose(kin.data.qpos[kin.arm_adr], draws[-1])
    assert np.linalg.norm(kin.ee() - kin.rest_ee - np.asarray(CARRY_EE_OFFSET)) < 0.03
    # the canonical joints themselves reach the carry pose
    kin.set_arm(canon)
    assert np.linalg.norm(kin.ee() - kin.rest_ee - np.asarray(CARRY_EE_OFFSET)) < 0.01
    kin.set_arm(kin.rest)


def test_carry_arm_is_seeded():
    kin = arm_kinematics()
    a = carry_arm(np.random.default_rng(3), EpisodeGenConfig(), kin)
    b = carry_arm(np.random.default_rng(3), EpisodeGenConfig(), kin)
    c = carry_arm(np.random.default_rng(4), EpisodeGenConfig(), kin)
    kin.set_arm(kin.rest)
    assert np.array_equal(a, b) and not np.array_equal(a, c)
