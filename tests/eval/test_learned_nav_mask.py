"""Stop-masking applies to a learned nav skill run by the HRL executor: an always-stop nav
far from its goal runs to its step limit when masked and stops at once when not, and the
record says where the leg left the base."""

import dataclasses
import math

import pytest

from rearrange.eval.executor import ExecutorConfig, TPSRLExecutor, nav_goal
from rearrange.planner import make_plan
from rearrange.skills.learned import LearnedSkill
from rearrange.tasks import HabConfig, HabEnv
from rearrange.tasks.base import load_task_episodes


def _always_stop_nav_checkpoint(path):
    """A real nav policy whose deterministic stop output is +1 everywhere (mean prior)."""
    import torch

    from rearrange.models import ModelConfig, build_policy
    from rearrange.runtime.checkpoint import SkillCheckpoint
    from rearrange.tasks import task_observation_space
    from rearrange.tasks.actions import action_space

    obs_space, act_space = task_observation_space("nav", "state"), action_space("nav", True)
    model = ModelConfig(
        backbone="none", rnn_hidden_size=16, state_mlp_hidden=(16,), action_mean_init=[0, 0, 1]
    )
    torch.manual_seed(0)
    policy = build_policy(obs_space, act_space, model)
    SkillCheckpoint(
        skill="nav",
        base_movement=False,
        obs_preset="state",
        model=model,
        observation_space=obs_space,
        action_space=act_space,
        weights=policy.state_dict(),
    ).save(path)


@pytest.mark.parametrize("masked, steps", [(True, 12), (False, 1)])
def test_executor_masks_a_learned_nav_stop_far_from_the_goal(tmp_path, masked, steps):
    ep = load_task_episodes("tidy_house", None, 1, "val", 0)[0]
    ep = dataclasses.replace(ep, targets=ep.targets[:1])
    env = HabEnv(ep.task, HabConfig(obs_preset="state"), split="val", episodes=[ep])
    env.reset()
    plan = make_plan(env.sim.layout, env.episode)[:1]
    assert math.dist(env.sim.base_pose()[:2], nav_goal(env, plan[0])[:2]) > 2.0
    _always_stop_nav_checkpoint(tmp_path / "nav.pt")
    nav = LearnedSkill(tmp_path / "nav.pt")
    config = ExecutorConfig(step_limits={"nav": 12}, mask_nav_stop=masked)
    record = TPSRLExecutor(env, {"nav": nav}, config).run_episode(plan)
    # masked: every stop ignored, the leg runs to its 12-step limit; unmasked: stops at once
    assert record.steps == steps and record.stages_completed == 0
    # where the leg left the base: distance and heading error to its goal pose, by hand
    goal = nav_goal(env, plan[0])
    x, y, yaw = env.sim.base_pose()
    heading = abs(math.remainder(goal[2] - yaw, 2 * math.pi))
    assert record.skill_runs == [
        {
            "skill": "nav",
            "ok": False,
            "steps": steps,
            "ended_by": "step_limit" if masked else "stop",
            "blocked_steps": 0,  # 12 steps of drifting in open floor: nothing cut short
            "blocked_at_end": 0,
            "end_dist_m": pytest.approx(math.hypot(goal[0] - x, goal[1] - y), abs=1e-3),
            "end_heading_deg": pytest.approx(math.degrees(heading), abs=0.1),
        }
    ]
    assert record.skill_runs[0]["end_dist_m"] > 2.0  # 12 steps of a drifting policy: still far
