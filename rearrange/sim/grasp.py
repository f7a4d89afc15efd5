"""Suction gripper: a weld equality per graspable body, switched on only on contact.

MuJoCo's weld error is computed as: anchor (eq_data[0:3], body2 frame) must coincide with
body1 pos + R1 @ relpos (eq_data[3:6]); body2 orientation must equal q1 * relquat
(eq_data[6:10]); eq_data[10] scales the angular error. We fill relpos/relquat from the
current poses at grasp time so the weld holds the body where it is instead of snapping it
to the model's initial offset (DESIGN §3). Handle grasps use torquescale 0: the gripper
holds the handle point, the door/drawer keeps its own joint rotation.

While something is held its geoms drop the robot collision bit (`ROBOT_BIT`): the
kinematic fingers would otherwise press into the welded body and the contact and the weld,
solved together, shoved it out of the hold (a thrown object, a drawer held shut by the
gripper pressing on its front). Release restores the bits only once no robot geom overlaps
the released body any more (`update_release`), so letting go never kicks it away.
"""

from __future__ import annotations

import mujoco
import numpy as np

from rearrange.sim.config import SimConfig
from rearrange.sim.furniture_geoms import ROBOT_BIT
from rearrange.sim.scene_builder import SceneIndex

NEAR_EE = 0.35
"""m: objects and handles whose centre is farther than this from the EE are not measured for a
grasp (none of them reaches within the grasp threshold from there)."""

RELEASE_CLEARANCE = 0.005  # m between robot and a released body before they collide again


def _quat_conj(q: np.ndarray) -> np.ndarray:
    return np.array([q[0], -q[1], -q[2], -q[3]])


class SuctionGripper:
    def __init__(
        self, model: mujoco.MjModel, data: mujoco.MjData, index: SceneIndex, config: SimConfig
    ) -> None:
        self.m, self.d, self.idx, self.cfg = model, data, index, config
        self.held_object: int | None = None
        self.held_articulation: str | None = None
        self._eq: int | None = None
        self._body2: int = -1
        self._anchor = np.zeros(3)
        self._held_geoms = np.zeros(0, dtype=int)
        self._releasing = np.zeros(0, dtype=int)  # released, still overlapping the robot
        # The model outlives episodes: undo any hold a previous episode left behind.
        model.geom_conaffinity[:] = index.default_conaffinity

    # ------------------------------------------------------------------ queries
    @property
    def holding(self) -> bool:
        return self._eq is not None

    def surface_dist(self, geom: int, limit: float) -> float:
        """Smallest distance between the gripper geoms and `geom` (capped at `limit`)."""
        best = limit
        for g in self.idx.gripper_geoms:
            best = min(best, mujoco.mj_geomDistance(self.m, self.d, int(g), geom, limit, None))
        return best

    def object_dists(self, limit: float, within: float = NEAR_EE) -> np.ndarray:
        """[num objects] the gripper's surface distance to each object's, capped at `limit`;
        objects whose centre is farther than `within` from the EE are not measured (`limit`)."""
        ee = self.d.site_xpos[self.idx.ee_site]
        out = np.full(len(self.idx.obj_bodies), float(limit))
        for i, body in enumerate(self.idx.obj_bodies):
            if np.linalg.norm(self.d.xpos[body] - ee) <= within:  # else skip the exact query
                out[i] = self.surface_dist(int(self.idx.obj_geoms[i]), limit)
        return out

    def candidates(self) -> tuple[int | None, str | None]:
        """The object (or articulation handle) the gripper touches, if any."""
        ee = self.d.site_xpos[self.idx.ee_site]
        limit = self.cfg.grasp_threshold + 1e-3
        best, best_obj, best_art = limit, None, None
        dists = self.object_dists(limit)
        if dists.size and dists.min() < best:
            best_obj = int(np.argmin(dists))  # the first of equals, as a scan in order
            best = float(dists[best_obj])
        for name, geom in self.idx.art_handle_geom.items():
            if np.linalg.norm(self.d.geom_xpos[geom] - ee) > NEAR_EE:
                continue
            dist = self.surface_dist(geom, limit)
            if dist < best:
                best, best_obj, best_art = dist, None, name
        if best > self.cfg.grasp_threshold:
            return None, None
        return best_obj, best_art

    # ------------------------------------------------------------------ actions
    def try_grasp(self) -> bool:
        """Grasp whatever is in contact; returns True if now holding something."""
        if self.holding:
            return True
        obj, art = self.candidates()
        if obj is not None:
            self._hold_object(obj)
        elif art is not None:
            site = self.idx.art_handle_site[art]
            self._activate(
                self.idx.art_eq[art], self.idx.art_body[art], self.m.site_pos[site].copy(), 0.0
            )
            self.held_articulation = art
            self._set_held_geoms(self.idx.art_geoms[art])
        return self.holding

    def grasp_object_now(self, obj: int) -> None:
        """Weld `obj` where it is, without the contact test (episode start 'holding')."""
        self.release()
        self._hold_object(obj)

    def _hold_object(self, obj: int) -> None:
        self._activate(int(self.idx.obj_eq[obj]), int(self.idx.obj_bodies[obj]), None, 1.0)
        self.held_object = obj
        self._set_held_geoms(np.array([self.idx.obj_geoms[obj]]))

    def _set_held_geoms(self, geoms: np.ndarray) -> None:
        self._held_geoms = np.asarray(geoms, dtype=int)
        default = self.idx.default_conaffinity[self._held_geoms]
        self.m.geom_conaffinity[self._held_geoms] = default & ~ROBOT_BIT

    def _activate(self, eq: int, body2: int, anchor: np.ndarray | None, torquescale: float) -> None:
        d, b1 = self.d, self.idx.gripper_body
        anchor = np.zeros(3) if anchor is None else anchor
        anchor_world = d.xpos[body2] + d.xmat[body2].reshape(3, 3) @ anchor
        r1 = d.xmat[b1].reshape(3, 3)
        relpos = r1.T @ (anchor_world - d.xpos[b1])
        relquat = np.zeros(4)
        mujoco.mju_mulQuat(relquat, _quat_conj(d.xquat[b1]), d.xquat[body2])
        eq_data = self.m.eq_data[eq]
        eq_data[0:3] = anchor
        eq_data[3:6] = relpos
        eq_data[6:10] = relquat
        eq_data[10] = torquescale
        d.eq_active[eq] = 1
        self._eq, self._body2, self._anchor = eq, body2, anchor

    def release(self) -> None:
        if self._eq is not None:
            self.d.eq_active[self._eq] = 0
        self._releasing = np.union1d(self._releasing, self._held_geoms).astype(int)
        self._held_geoms = np.zeros(0, dtype=int)
        self._eq, self._body2 = None, -1
        self.held_object = None
        self.held_articulation = None

    def update_release(self) -> None:
        """Give released bodies their robot contacts back once the robot is clear of them."""
        if self._releasing.size == 0:
            return
        m, d = self.m, self.d
        robot = self.idx.robot_collision_geoms
        gap = np.linalg.norm(
            d.geom_xpos[robot][:, None, :] - d.geom_xpos[self._releasing][None, :, :], axis=2
        ) - (m.geom_rbound[robot][:, None] + m.geom_rbound[self._releasing][None, :])
        for i, j in zip(*np.nonzero(gap < RELEASE_CLEARANCE)):  # bounding spheres overlap
            g1, g2 = int(robot[i]), int(self._releasing[j])
            if mujoco.mj_geomDistance(m, d, g1, g2, RELEASE_CLEARANCE, None) < RELEASE_CLEARANCE:
                return  # still touching: keep the grace
        m.geom_conaffinity[self._releasing] = self.idx.default_conaffinity[self._releasing]
        self._releasing = np.zeros(0, dtype=int)

    def hold_target(self) -> np.ndarray | None:
        """World point where the weld pulls the held anchor (None: nothing held). It turns
        with the gripper, so a scripted arm steers this point, not the EE, along a handle's
        path (steering the EE let a turning wrist pull the door radially: it stalled)."""
        if self._eq is None:
            return None
        d, b1 = self.d, self.idx.gripper_body
        return d.xpos[b1] + d.xmat[b1].reshape(3, 3) @ self.m.eq_data[self._eq][3:6]

    def hold_error(self) -> float:
        """Distance between where the weld wants the held anchor and where it is (m)."""
        if self._eq is None:
            return 0.0
        d, want = self.d, self.hold_target()
        have = d.xpos[self._body2] + d.xmat[self._body2].reshape(3, 3) @ self._anchor
        return float(np.linalg.norm(want - have))

    def check_violation(self) -> bool:
        """Release and report True when the hold was pulled apart beyond the threshold."""
        if self._eq is not None and self.hold_error() > self.cfg.grasp_violation_dist:
            self.release()
            return True
        return False
