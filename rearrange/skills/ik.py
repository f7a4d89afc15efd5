"""Damped-least-squares inverse kinematics on the sim's EE position Jacobian.

The oracle arm skills move the end effector through the same action the learned policy
uses: 7 joint deltas in [-1, 1] × 0.0125 rad per policy step. DLS stays well behaved near
singular arm poses, where the plain pseudo-inverse would ask for huge joint steps.
"""

from __future__ import annotations

import numpy as np

from rearrange.sim.config import SimConfig


def dls_joint_step(
    jac: np.ndarray, err: np.ndarray, damping: float = 0.05, weights: np.ndarray | None = None
) -> np.ndarray:
    """dq = W⁻¹Jᵀ (J W⁻¹Jᵀ + λ² I)⁻¹ e: the joint step that best moves the EE by `err` (m).

    `weights` (one per joint, default 1) make a joint costlier to move.
    """
    j = np.asarray(jac, dtype=np.float64)
    e = np.asarray(err, dtype=np.float64)
    w_inv = np.ones(j.shape[1]) if weights is None else 1.0 / np.asarray(weights, dtype=np.float64)
    jw = j * w_inv  # J W⁻¹
    jjt = jw @ j.T + (damping**2) * np.eye(j.shape[0])
    return jw.T @ np.linalg.solve(jjt, e)


def nullspace_step(jac: np.ndarray, q: np.ndarray, q_pref: np.ndarray, gain: float) -> np.ndarray:
    """A joint step toward a preferred posture that (to first order) leaves the EE still."""
    j = np.asarray(jac, dtype=np.float64)
    proj = np.eye(j.shape[1]) - np.linalg.pinv(j) @ j
    return gain * proj @ (np.asarray(q_pref, dtype=np.float64) - np.asarray(q, dtype=np.float64))


def joint_delta_action(
    dq: np.ndarray, max_delta: float = SimConfig.arm_delta_scale, full_speed: bool = False
) -> np.ndarray:
    """Joint step (rad) → arm action in [-1, 1], scaled as a whole so its direction is kept.

    `full_speed` stretches the step so its largest joint moves at the limit (far targets).
    """
    a = np.asarray(dq, dtype=np.float64) / max_delta
    peak = float(np.max(np.abs(a))) if a.size else 0.0
    if peak > 1.0 or (full_speed and peak > 1e-9):
        a = a / peak
    return a.astype(np.float32)


def ik_arm_action(
    sim,
    target_world: np.ndarray,
    damping: float = 0.05,
    max_step: float = 0.05,
    q_pref: np.ndarray | None = None,
    posture_gain: float = 0.0,
    weights: np.ndarray | None = None,
) -> np.ndarray:
    """Arm action moving the EE toward `target_world` (the EE error is capped at `max_step` m).

    Farther than `max_step` the arm moves at full joint speed in the DLS direction.
    """
    err = np.asarray(target_world, dtype=np.float64) - sim.ee_pos("world")
    norm = float(np.linalg.norm(err))
    far = norm > max_step
    if far:
        err = err * (max_step / norm)
    jac = sim.arm_jacobian()
    dq = dls_joint_step(jac, err, damping, weights)
    if q_pref is not None and posture_gain > 0:
        dq = dq + nullspace_step(jac, sim.arm_joint_pos(), q_pref, posture_gain)
    return joint_delta_action(dq, full_speed=far)


def solve_ik(
    sim,
    target_world: np.ndarray,
    tol: float = 0.02,
    max_steps: int = 200,
) -> tuple[bool, int]:
    """Steps the sim with IK arm actions until the EE is within `tol` of the target.

    Returns (converged, steps taken). Used by tests and debugging; the skills call
    `ik_arm_action` once per policy step instead.
    """
    target = np.asarray(target_world, dtype=np.float64)
    for step in range(max_steps):
        if np.linalg.norm(target - sim.ee_pos("world")) < tol:
            return True, step
        sim.step(ik_arm_action(sim, target), None, None)
    return bool(np.linalg.norm(target - sim.ee_pos("world")) < tol), max_steps
