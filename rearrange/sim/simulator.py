"""`Simulator`: what the tasks, skills and evaluation need from the world (docs/CONTRACTS.md §2).

`rearrange.sim.world.RearrangeSim` (MuJoCo) implements it, and so does the tests' fake sim.
It is the seam where another physics backend (habitat-sim, say) would plug in: implement
these members over that backend, give the skill envs and `HabEnv` an instance (`sim=`), and
the tasks, skills, planner executor and evaluation run unchanged. Poses are world-frame
(x, y, yaw) of the base; "base frame" is the robot base's frame; arm joints are the Fetch's 7.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

if TYPE_CHECKING:
    from rearrange.sim.config import SimConfig
    from rearrange.sim.episode_types import Episode
    from rearrange.sim.layout_types import Layout
    from rearrange.sim.navmap import NavMap
    from rearrange.sim.placement.footprints import Footprints


@runtime_checkable
class Simulator(Protocol):
    config: SimConfig  # speeds, step sizes, camera sizes (backend-independent fields)
    layout: Layout  # the apartment of the current episode
    episode: Episode  # the current episode (after `reset`)
    rest_ee_pos_base: np.ndarray  # [3] EE resting position, base frame
    collision_count: int  # base/arm collisions since reset
    static_depth: float  # deepest robot overlap with walls/furniture/doors after the last step (m)
    footprints: Footprints  # walls and furniture as 2-D boxes: the base collision check

    # ---------------------------------------------------------------- episode and control
    def reset(self, episode: Episode) -> None:
        """Build (or reuse) the scene, set robot, objects and articulations."""

    def step(self, arm_delta: Any = None, grip: float | None = None, base_vel: Any = None) -> None:
        """One policy step: arm joint deltas [7] in [-1, 1], grip >= 0 grasp (only on
        contact) / < 0 release, base [linear, angular] in [-1, 1] (x the max speeds)."""

    def close(self) -> None: ...

    # ---------------------------------------------------------------- robot
    def base_pose(self) -> np.ndarray:
        """[3] x, y, yaw (world)."""

    def set_base_pose(self, x: float, y: float, yaw: float) -> bool:
        """Place the base; False (pose unchanged) where it would collide."""

    def arm_joint_pos(self) -> np.ndarray: ...

    def set_arm_joint_pos(self, q: Any) -> None: ...

    def arm_joint_range(self) -> np.ndarray:
        """[7, 2] joint limits (unlimited joints: +-2 pi)."""

    def ee_pos(self, frame: str = "world") -> np.ndarray:
        """[3] end-effector position, "world" or "base" frame."""

    def arm_jacobian(self, frame: str = "world") -> np.ndarray:
        """[3, 7] d(EE position) / d(arm joints)."""

    def to_base_frame(self, p_world: Any) -> np.ndarray: ...

    # ---------------------------------------------------------------- grasping
    def held_object(self) -> int | None:
        """Episode object index the suction gripper holds."""

    def held_articulation(self) -> str | None:
        """Articulation whose handle the suction gripper holds."""

    def hold_point(self) -> np.ndarray | None:
        """World point the suction hold pulls the held thing's anchor to (None: nothing
        held); it turns with the gripper."""

    def grasp_violated(self) -> bool:
        """The last step pulled the hold apart (and released it)."""

    def gripper_object_dist(self, i: int, limit: float) -> float:
        """m from the gripper's surface to object `i`'s (capped at `limit`): a grip command
        grasps the nearest object within `SimConfig.grasp_threshold` of it."""

    def gripper_object_dists(self, limit: float, within: float) -> np.ndarray:
        """[num_objects] `gripper_object_dist` of every object, those whose centre is farther
        than `within` from the EE left unmeasured (`limit`): the scan a grasp makes."""

    def contact_force(self) -> float:
        """Robot <-> world contact force of the last step (N)."""

    # ---------------------------------------------------------------- objects, articulations
    @property
    def num_objects(self) -> int: ...

    def object_pos(self, i: int) -> np.ndarray: ...

    def object_quat(self, i: int) -> np.ndarray: ...

    def articulation_pos(self, name: str) -> float: ...

    def set_articulation_pos(self, name: str, value: float) -> None: ...

    def handle_pos(self, name: str) -> np.ndarray:
        """World position of an articulation's handle now."""

    # ---------------------------------------------------------------- navigation
    @property
    def navmap(self) -> NavMap:
        """Occupancy map and geodesic distances of the layout (closed furniture)."""

    def planning_navmap(self) -> NavMap:
        """`navmap` with the open doors that block the base as extra obstacles."""

    def base_fits(self, x: float, y: float) -> bool:
        """The base at (x, y) overlaps no wall, furniture or open door (set_base_pose's test)."""

    def door_footprints(self) -> Footprints | None:
        """The open door/drawer panels that block the base, where they are now (None when
        doors do not block it)."""

    def obstacle_ranges(self, angles: Any, max_range: float) -> np.ndarray:
        """Range scan (m) from the base centre along base-frame headings to the first wall,
        furniture footprint or open door, capped at max_range."""

    def arm_clearance(self, max_range: float) -> np.ndarray:
        """[18] distances (m) from the EE, the wrist and the elbow along +-x, +-y, +-z of the
        base frame to the first geometry that blocks the arm, capped at max_range."""

    # ---------------------------------------------------------------- sensors
    def render_depth(self) -> np.ndarray:
        """[H, W, 1] float32 head-camera depth (m), clipped to [0, 10]."""

    def render_rgb(self) -> np.ndarray:
        """[H, W, 3] uint8 head-camera image."""

    def render_third_person(
        self, overlays: Any = None, width: int | None = None, height: int | None = None
    ) -> np.ndarray:
        """[H, W, 3] uint8 third-person frame with evaluation overlays."""
