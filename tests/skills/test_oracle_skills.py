"""Oracle skills on the real MuJoCo sim and skill-task envs (val episodes).

The oracles act only through their task's action vector, so success here proves the task
is solvable with the learned policy's actions. Default tier: a few episodes per task;
the 20-episode version is marked slow.
"""

import numpy as np
import pytest

from rearrange.skill_spec import SKILL_NAMES
from rearrange.skills.ik import solve_ik
from rearrange.skills.oracle_common import base_to_world
from rearrange.skills.registry import make_oracle
from rearrange.skills.rollout import run_skill_episode

pytest.importorskip("mujoco")


def _env(task: str, n: int, base_movement: bool = False):
    from rearrange.tasks import default_task_config, make_env

    cfg = default_task_config(task, obs_preset="state", num_episodes=n, base_movement=base_movement)
    return make_env(task, cfg, split="val", seed=0), cfg


def _success_count(task: str, n: int, base_movement: bool = False) -> int:
    env, cfg = _env(task, n, base_movement)
    skill = make_oracle(task, base_movement=base_movement)
    skill.step_limit = cfg.max_episode_steps
    try:
        return sum(run_skill_episode(env, skill, i).success for i in range(n))
    finally:
        env.close()


def test_ik_reaches_a_point_in_front_of_the_robot():
    env, _ = _env("pick", 1)
    env.reset(options={"episode_index": 0})
    sim = env.unwrapped.sim
    target = base_to_world(sim, sim.rest_ee_pos_base + np.array([0.10, 0.05, -0.08]))
    ok, steps = solve_ik(sim, target, tol=0.01, max_steps=150)
    assert ok, f"EE stopped {np.linalg.norm(sim.ee_pos() - target):.3f} m from the target"
    assert np.linalg.norm(sim.to_base_frame(sim.ee_pos()) - sim.to_base_frame(target)) < 0.01
    env.close()


def test_base_to_world_inverts_to_base_frame():
    env, _ = _env("pick", 1)
    env.reset(options={"episode_index": 0})
    sim = env.unwrapped.sim
    p = np.array([1.3, -0.4, 0.8])
    np.testing.assert_allclose(base_to_world(sim, sim.to_base_frame(p)), p, atol=1e-9)
    env.close()


# (task, base_movement, minimum successes of the first 4 val episodes). Floors sit at or
# just below the oracles' measured success on 50 val episodes (benchmarks/oracle_success.py,
# benchmarks/RESULTS.md).
FEW_EPISODE_FLOORS = [
    ("nav", True, 4),
    ("pick", False, 2),
    ("place", False, 3),
    ("open_cab", False, 4),
    ("close_cab", False, 4),
    ("open_fridge", False, 4),
    ("close_fridge", False, 4),
    ("open_cab", True, 3),
]
KNOWN_BROKEN: dict[str, str] = {}
# close_fridge with base movement: below the 90 % bar (the drive sometimes ends blocked by the
# open door); it must still run cleanly within its (base-movement) step limit.
BELOW_BAR_WITH_BASE = ("close_fridge",)


@pytest.mark.parametrize("task,base_movement,floor", FEW_EPISODE_FLOORS)
def test_oracle_solves_a_few_val_episodes(task, base_movement, floor):
    assert _success_count(task, 4, base_movement) >= floor


@pytest.mark.parametrize("task", BELOW_BAR_WITH_BASE)
def test_fridge_oracles_run_through_their_episodes(task):
    """Below the bar with base movement; must still run cleanly within its step limit."""
    env, cfg = _env(task, 1, True)
    assert cfg.max_episode_steps == 300  # 200 + tasks.config.BASE_MOVEMENT_EXTRA_STEPS
    skill = make_oracle(task, base_movement=True)
    result = run_skill_episode(env, skill, 0)
    assert 0 < result.steps <= cfg.max_episode_steps
    env.close()


@pytest.mark.slow
@pytest.mark.parametrize("task", SKILL_NAMES)
def test_oracle_success_rate_20_episodes(task):
    if task in KNOWN_BROKEN:
        pytest.xfail(KNOWN_BROKEN[task])
    # The articulated tasks at their DESIGN §4 (fixed-base) setting.
    base_movement = task == "nav"
    assert _success_count(task, 20, base_movement) >= 18  # the 90 % bar
