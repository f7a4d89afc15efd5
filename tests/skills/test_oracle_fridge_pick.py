"""The scripted pick reaches into the open fridge (val episodes of the pick task with the
target on the fridge shelf, fixed base, the robot spawned beside the fridge on the side the
open door leaves free): the planned reach (`OraclePick._plan_reach`) gets the gripper round
the side wall's front edge onto the object, which the step-by-step Cartesian reach did not
(both episodes timed out before it), without any link blocked or inside the scene."""

import pytest

from rearrange.skills.registry import make_oracle
from rearrange.skills.rollout import run_skill_episode

pytest.importorskip("mujoco")

MAX_DEPTH = 0.02  # m, as tests/skills/test_oracle_skills.py
EPISODES = (16, 43)  # val, seed 0, fridge_pick_prob 1: objects beside the near side wall


def test_oracle_picks_from_the_fridge_shelf_from_beside_the_fridge():
    from rearrange.sim.config import SimConfig
    from rearrange.tasks import default_task_config, make_env
    from rearrange.tasks.force_limit import ForceLimit

    cfg = default_task_config(
        "pick",
        obs_preset="state",
        num_episodes=max(EPISODES) + 1,
        fridge_pick_prob=1.0,
        sim=SimConfig(world_blocks_robot=True),
        force_limit=ForceLimit(max_accum=5000.0),
    )
    env = make_env("pick", cfg, split="val", seed=0)
    skill = make_oracle("pick")
    skill.step_limit = cfg.max_episode_steps
    try:
        for i in EPISODES:
            result = run_skill_episode(env, skill, i)
            sim = env.unwrapped.sim
            rec = sim.episode.objects[env.unwrapped.target.obj_index].receptacle
            assert rec.startswith("fridge"), rec
            assert skill.phase != "above", "the planned reach fell back to the Cartesian one"
            assert result.success, (i, result.cause)
            assert result.max_depth <= MAX_DEPTH
            assert sim.blocked_steps == 0 and result.cause != "excessive_force"
    finally:
        env.close()
