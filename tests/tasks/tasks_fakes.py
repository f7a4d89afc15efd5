"""A FakeSim implementing the `rearrange.sim.simulator.Simulator` protocol without physics.

State is set directly by the test (EE position, held object or handle, joint values,
forces); `step` only records the action and runs an optional `on_step(sim)` hook, and
`reset` ends with an optional `on_reset(sim)` hook (a starting state), so a test can
construct any transition and check the reward terms against hand-computed values.
"""

from __future__ import annotations

import math

import numpy as np

from rearrange.sim.config import SimConfig
from rearrange.sim.episode_types import Episode, ObjectPlacement, Target
from rearrange.sim.layout_types import Layout
from rearrange.sim.placement import Footprints


class FakeNavMap:
    def geodesic_distance(self, a, b) -> float:
        return math.dist(a, b)

    def snap(self, x, y):
        return float(x), float(y)

    def is_navigable(self, x, y) -> bool:
        return True


class FakeSim:
    """An open floor: no walls or furniture, every point navigable."""

    def __init__(self, depth_size: int = 128) -> None:
        self.config = SimConfig()
        self.depth_size = depth_size
        self.navmap = FakeNavMap()
        self.layout = Layout(seed=0, split="train", bounds=(-10.0, -10.0, 10.0, 10.0))
        self.footprints = Footprints(boxes=np.zeros((0, 5)))
        self.rest_ee_pos_base = np.array([0.5, 0.0, 1.0])
        self.on_step = None
        self.on_reset = None
        self.last_action = None
        self.handles = {"fridge": np.array([2.0, 0.0, 1.0]), "drawer_0": np.array([2.0, 1.0, 0.5])}
        self.reset(None)

    def reset(self, episode: Episode | None) -> None:
        self.episode = episode
        self.base = np.array(episode.robot_start if episode else (0.0, 0.0, 0.0), dtype=float)
        self.q = np.zeros(7)
        self.ee_base = self.rest_ee_pos_base.copy()
        objs = episode.objects if episode else []
        self.objects = [np.array(o.pos, dtype=float) for o in objs]
        self.arts = {"fridge": 0.0, "drawer_0": 0.0, "drawer_1": 0.0}
        self.arts.update(episode.articulations if episode else {})
        self.held = episode.extras.get("holding") if episode else None
        self.handle_held: str | None = None
        self.force = 0.0
        self.violated = False
        self.collision_count = 0
        self.static_depth = 0.0
        if self.on_reset is not None:
            self.on_reset(self)

    def step(self, arm_delta, grip, base_vel) -> None:
        self.last_action = (arm_delta, grip, base_vel)
        if self.on_step is not None:
            self.on_step(self)

    # --- state ---------------------------------------------------------------------------
    @property
    def num_objects(self) -> int:
        return len(self.objects)

    def close(self) -> None:
        pass

    def base_pose(self) -> np.ndarray:
        return self.base.copy()

    def set_base_pose(self, x, y, yaw) -> bool:
        self.base = np.array([x, y, yaw], dtype=float)
        return True

    def arm_joint_pos(self) -> np.ndarray:
        return self.q.copy()

    def set_arm_joint_pos(self, q) -> None:
        self.q = np.asarray(q, dtype=float).copy()

    def arm_joint_range(self) -> np.ndarray:
        return np.tile([-2 * math.pi, 2 * math.pi], (7, 1))

    def arm_jacobian(self, frame: str = "world") -> np.ndarray:
        return np.zeros((3, 7))

    def _rot(self) -> np.ndarray:
        c, s = math.cos(self.base[2]), math.sin(self.base[2])
        return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])

    def to_base_frame(self, p_world) -> np.ndarray:
        d = np.asarray(p_world, dtype=float) - np.array([self.base[0], self.base[1], 0.0])
        return self._rot().T @ d

    def from_base_frame(self, p_base) -> np.ndarray:
        return self._rot() @ np.asarray(p_base, dtype=float) + np.array([*self.base[:2], 0.0])

    def ee_pos(self, frame: str = "world") -> np.ndarray:
        return self.ee_base.copy() if frame == "base" else self.from_base_frame(self.ee_base)

    def set_ee_world(self, p_world) -> None:
        self.ee_base = self.to_base_frame(p_world)

    def held_object(self):
        return self.held

    def held_articulation(self):
        return self.handle_held

    def hold_point(self):
        return None if self.held is None and self.handle_held is None else self.ee_pos()

    def grasp_violated(self) -> bool:
        return self.violated

    def gripper_object_dist(self, i: int, limit: float) -> float:
        """The EE point to the object's centre (the fake has no surfaces), capped."""
        return min(float(np.linalg.norm(self.ee_pos() - self.object_pos(i))), float(limit))

    def gripper_object_dists(self, limit: float, within: float) -> np.ndarray:
        dists = [self.gripper_object_dist(i, limit) for i in range(self.num_objects)]
        return np.array([d if d <= within else float(limit) for d in dists])

    def object_pos(self, i: int) -> np.ndarray:
        return self.objects[i].copy()

    def object_quat(self, i: int) -> np.ndarray:
        return np.array([1.0, 0.0, 0.0, 0.0])

    def articulation_pos(self, name: str) -> float:
        return self.arts[name]

    def set_articulation_pos(self, name: str, value: float) -> None:
        self.arts[name] = value

    def handle_pos(self, name: str) -> np.ndarray:
        return self.handles[name].copy()

    def contact_force(self) -> float:
        return self.force

    def planning_navmap(self) -> FakeNavMap:
        return self.navmap

    def door_footprints(self):
        return None  # no doors

    def base_fits(self, x: float, y: float) -> bool:
        return True  # open floor

    def obstacle_ranges(self, angles, max_range: float) -> np.ndarray:
        return np.full(np.shape(angles), float(max_range))

    def arm_clearance(self, max_range: float) -> np.ndarray:
        return np.full(18, float(max_range))  # nothing blocks the arm

    def render_depth(self) -> np.ndarray:
        return np.ones((self.depth_size, self.depth_size, 1), dtype=np.float32)

    def render_rgb(self) -> np.ndarray:
        return np.zeros((self.depth_size, self.depth_size, 3), dtype=np.uint8)

    def render_third_person(self, overlays=None, width=64, height=48) -> np.ndarray:
        return np.zeros((height, width, 3), dtype=np.uint8)


def make_episode(task: str, **kw) -> Episode:
    """A one-target episode: object 0 at (1, 0, 1) going to (1, 1, 1); robot at the origin."""
    ep = Episode(
        episode_id=kw.pop("episode_id", f"{task}-0"),
        task=task,
        split="train",
        scene_seed=0,
        robot_start=kw.pop("robot_start", (0.0, 0.0, 0.0)),
        objects=[
            ObjectPlacement("apple", (1.0, 0.0, 1.0), (1, 0, 0, 0), "counter_0"),
            ObjectPlacement("lemon", (1.0, 0.5, 1.0), (1, 0, 0, 0), "counter_0"),
        ],
        targets=[Target(0, (1.0, 1.0, 1.0), "table_0")],
    )
    if task == "nav":
        ep.extras["nav_goal"] = [5.0, 0.0, 0.0]
    if task == "place":
        ep.extras["holding"] = 0
    if task.endswith("cab"):
        ep.extras["articulation"] = "drawer_0"
    for k, v in kw.items():
        setattr(ep, k, v)
    return ep
