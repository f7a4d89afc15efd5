"""LearnedSkill error paths: a missing or corrupt checkpoint gives one clear line."""

import numpy as np
import pytest

from rearrange.skills import SkillError, make_skill
from rearrange.skills.learned import LearnedSkill


def test_missing_checkpoint_names_file_and_fix(tmp_path):
    path = tmp_path / "pick.pt"
    with pytest.raises(SkillError) as err:
        LearnedSkill(path)
    msg = str(err.value)
    assert "\n" not in msg
    assert str(path) in msg
    assert "python -m rearrange.train_skill pick" in msg and "--skills oracle" in msg


def test_corrupt_checkpoint_names_file_and_fix(tmp_path):
    path = tmp_path / "place.pt"
    path.write_bytes(b"not a torch checkpoint \x00\x01\x02")
    with pytest.raises(SkillError) as err:
        LearnedSkill(path)
    msg = str(err.value)
    assert "\n" not in msg
    assert str(path) in msg and "unreadable" in msg
    assert "python -m rearrange.train_skill place" in msg


def test_registry_learned_without_checkpoint_dir_entry(tmp_path):
    with pytest.raises(SkillError, match="no checkpoint for skill 'nav'"):
        make_skill("nav", kind="learned", checkpoint_dir=tmp_path)


def test_registry_rejects_unknown_names():
    with pytest.raises(SkillError, match="unknown skill 'fly'"):
        make_skill("fly")
    with pytest.raises(SkillError, match="unknown skill kind"):
        make_skill("pick", kind="magic")


def test_registry_builds_every_oracle():
    for name in ("nav", "pick", "place", "open_fridge", "close_fridge", "open_cab", "close_cab"):
        skill = make_skill(name)
        assert skill.name == name and skill.task == name


def _tiny_checkpoint(path, task="pick", width_with_base=False):
    """A real (untrained) state-only policy checkpoint of an old trainer: the dict layout
    before the typed format, recording its model config only (no skill, no task)."""
    from dataclasses import asdict

    import torch

    from rearrange.models import ModelConfig, build_policy
    from rearrange.tasks import task_observation_space
    from rearrange.tasks.actions import action_space

    obs_space = task_observation_space(task, "state")
    act_space = action_space(task, task == "nav" or width_with_base)
    model = ModelConfig(backbone="none", rnn_hidden_size=16, state_mlp_hidden=(16,))
    policy = build_policy(obs_space, act_space, model)
    config = {
        "model": {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(model).items()}
    }
    state = {
        "policy": policy.state_dict(),
        "learner": {},
        "num_steps": 0,
        "num_updates": 0,
        "config": config,
        "observation_space": obs_space,
        "action_space": act_space,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(state, path)
    return obs_space


def test_learned_skill_loads_a_trainer_checkpoint_and_acts(tmp_path):
    import numpy as np

    from rearrange.skills import SkillTarget

    obs_space = _tiny_checkpoint(tmp_path / "pick" / "run1" / "checkpoints" / "latest.pt")
    skill = make_skill("pick", kind="learned", checkpoint_dir=tmp_path)
    assert skill.name == "pick" and skill.layout.size == 8
    skill.reset(SkillTarget(obj_index=0))
    obs = {k: np.full(s.shape, 0.5, dtype=np.float32) for k, s in obs_space.spaces.items()}
    a1 = skill.act(obs, None)
    a2 = skill.act(obs, None)
    assert a1.shape == (8,) and np.all(np.abs(a1) <= 1.0)
    assert not np.allclose(a1, a2)  # the recurrent state (and previous action) is carried
    assert skill.steps == 2 and not skill.is_done(obs, None)
    skill.reset(SkillTarget(obj_index=0))  # a new target starts from a zero state
    assert skill.steps == 0
    np.testing.assert_array_equal(skill.act(obs, None), a1)
    with pytest.raises(SkillError, match="needs observations"):
        skill.act({}, None)


def test_learned_nav_returns_the_policy_stop_and_leaves_masking_to_the_caller(tmp_path):
    import numpy as np

    from rearrange.skills import SkillTarget

    obs_space = _tiny_checkpoint(tmp_path / "nav.pt", task="nav")
    skill = LearnedSkill(tmp_path / "nav.pt")
    skill.reset(SkillTarget(nav_goal=(1.0, 2.0, 0.0)))
    obs = {k: np.zeros(s.shape, dtype=np.float32) for k, s in obs_space.spaces.items()}
    obs["goal_polar"] = np.array([5.0, 0.0], dtype=np.float32)
    with torch_no_grad():
        expected = _deterministic_action(skill, obs)
    a = skill.act(obs, None)
    # the untrained policy's own stop value, not a masked -1: the env (training, eval_skill)
    # or the executor (HAB) masks it, once (tests/eval/test_learned_nav_mask.py)
    assert a[2] == pytest.approx(expected[2], abs=1e-6) and a[2] != -1.0
    assert not skill.is_done(obs, None)


def torch_no_grad():
    import torch

    return torch.no_grad()


def _deterministic_action(skill, obs):
    """What the skill's policy outputs for `obs` from a fresh state (the skill is not stepped)."""
    import numpy as np
    import torch

    h = torch.zeros(1, skill.policy.num_recurrent_layers, skill.policy.hidden_size)
    prev = torch.zeros(1, skill.layout.size)
    t = {k: torch.as_tensor(np.asarray(v), dtype=torch.float32)[None] for k, v in obs.items()}
    _, action, _, _ = skill.policy.act(
        t, h, prev, torch.zeros(1, dtype=torch.bool), deterministic=True
    )
    return np.clip(action[0].numpy(), -1.0, 1.0)


def test_base_movement_comes_from_the_recorded_config_else_the_action_width(tmp_path):
    from skills_testlib import train_ckpt

    train_ckpt(tmp_path / "pick_bm.pt", base_movement=True)
    skill = LearnedSkill(tmp_path / "pick_bm.pt", skill_name="pick")
    assert skill.base_movement and skill.layout.base == slice(8, 10)
    # older checkpoints record no task config: 10 wide moves the base, 8 wide does not
    _tiny_checkpoint(tmp_path / "pick.pt")
    assert not LearnedSkill(tmp_path / "pick.pt").base_movement
    _tiny_checkpoint(tmp_path / "place.pt", task="place", width_with_base=True)
    assert LearnedSkill(tmp_path / "place.pt").base_movement
    _tiny_checkpoint(tmp_path / "nav.pt", task="nav")
    assert not LearnedSkill(tmp_path / "nav.pt").base_movement


def test_a_checkpoint_of_another_skill_is_refused_in_one_line(tmp_path):
    from skills_testlib import train_ckpt

    train_ckpt(tmp_path / "pick.pt")
    assert LearnedSkill(tmp_path / "pick.pt").name == "pick"  # the skill it records
    with pytest.raises(SkillError) as err:
        LearnedSkill(tmp_path / "pick.pt", skill_name="place")
    msg = str(err.value)
    assert "\n" not in msg and str(tmp_path / "pick.pt") in msg
    assert "is a 'pick' checkpoint, not one of 'place'" in msg


def test_follow_feeds_the_executed_action_as_the_previous_one():
    """`LearnedSkill.follow(a)`: the next act sees `a` as its previous action (a teacher
    beside another policy, benchmarks/leg_trace), whatever it output itself."""
    import torch

    from rearrange.skill_spec import SkillTarget

    path = "rearrange/skills/pretrained/nav.pt"
    mine, other = LearnedSkill(path, skill_name="nav"), LearnedSkill(path, skill_name="nav")
    spaces = mine.observation_space.spaces
    obs = {k: np.full(s.shape, 0.3, np.float32) for k, s in spaces.items()}
    target = SkillTarget(nav_goal=(1.0, 0.0, 0.0))
    for skill in (mine, other):
        skill.reset(target)
        skill.act(obs, None)
    executed = np.array([-1.0, 0.5, -1.0], np.float32)
    other.follow(executed)
    followed = other.act(obs, None)
    hidden = mine._hidden.clone()
    with torch.no_grad():  # the same step computed by hand with that previous action
        _, want, _, _ = mine.policy.act(
            mine._obs_tensors(obs), hidden, torch.as_tensor(executed)[None],
            torch.ones(1, dtype=torch.bool), deterministic=True,
        )  # fmt: skip
    np.testing.assert_allclose(followed, np.clip(want[0].numpy(), -1, 1), atol=1e-6)
    assert not np.allclose(mine.act(obs, None), followed, atol=1e-3)  # its own history differs
