"""Every fixed robot joint is held where it belongs while the robot moves (docs/DESIGN.md
§3): the fingers left free drifted open in the physics, so a finger ended deeper in a wall
than the step's blocking check predicted and the sim's reported depth was stale."""

from __future__ import annotations

import numpy as np

from rearrange.sim import robot as R
from rearrange.sim.episodes import generate_episodes


def test_fixed_joints_stay_put_and_the_reported_depth_is_the_real_one(sim):
    ep = generate_episodes("place", "val", 1, 0)[0]  # starts holding an object
    sim.reset(ep)
    adr = [sim.idx.fixed_qpos[n] for n in R.FIXED_JOINTS]
    start = sim.data.qpos[adr].copy()
    rng = np.random.default_rng(0)
    for _ in range(60):
        sim.step(arm_delta=rng.uniform(-1, 1, 7), grip=1.0, base_vel=rng.uniform(-1, 1, 2))
        reported = sim.static_depth
        assert abs(sim.static_depth_now() - reported) < 1e-6
    assert np.array_equal(sim.data.qpos[adr], start)
    fingers = [sim.idx.fixed_qpos[R.PREFIX + f"{s}_gripper_finger_joint"] for s in "rl"]
    assert np.all(sim.data.qpos[fingers] == 0.0)
