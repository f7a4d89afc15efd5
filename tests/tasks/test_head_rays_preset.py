"""The `state_head_rays` obs preset: nav's range scan cut to the head camera's field of view
(a teacher that sees what the depth student sees). The mask by hand, the observation on the
real sim in the skill env and the HAB env, the checkpoint recording the preset, and the
distillation teacher observing it."""

from __future__ import annotations

import os
from dataclasses import asdict

os.environ.setdefault("MUJOCO_GL", "egl")
os.environ.setdefault("LP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from rearrange.sim.world import RearrangeSim  # noqa: E402
from rearrange.tasks import HabConfig, HabEnv, default_task_config, make_env  # noqa: E402
from rearrange.tasks.sensors import (  # noqa: E402
    HEAD_RAY_MASK,
    RAY_ANGLES,
    RAY_COUNT,
    RAY_MAX_RANGE,
    head_rays,
    task_observation_space,
)


@pytest.fixture(scope="module")
def sim():
    s = RearrangeSim()
    yield s
    s.close()


def _nav_env(sim, preset):
    config = default_task_config("nav", obs_preset=preset, num_episodes=2)
    return make_env("nav", config, "train", 0, sim=sim)


def test_the_mask_keeps_the_rays_within_45_degrees_of_forward():
    # 64 rays 5.625 degrees apart: 0..45 degrees are rays 0..8, -45..-5.625 are rays 56..63.
    assert RAY_COUNT == 64
    assert np.flatnonzero(HEAD_RAY_MASK).tolist() == [*range(0, 9), *range(56, 64)]
    assert np.degrees(RAY_ANGLES[8]) == pytest.approx(45.0)
    scan = np.linspace(0.1, 0.9, RAY_COUNT)
    cut = head_rays(scan)
    assert cut[8] == pytest.approx(scan[8]) and cut[56] == pytest.approx(scan[56])
    assert cut[9] == 1.0 and cut[32] == 1.0 and cut[55] == 1.0  # 50.6, 180, -50.6 degrees
    assert (cut[HEAD_RAY_MASK] == scan[HEAD_RAY_MASK]).all()


def test_same_space_as_state_rays_so_a_state_rays_nav_fine_tunes_into_it():
    head, full = (task_observation_space("nav", p) for p in ("state_head_rays", "state_rays"))
    assert head == full
    for task in ("pick", "open_fridge"):  # the arm scan is not cut
        assert task_observation_space(task, "state_head_rays") == task_observation_space(
            task, "state_rays"
        )


def test_nav_sees_the_scan_in_front_and_free_space_behind(sim):
    env = _nav_env(sim, "state_head_rays")
    obs, _ = env.reset(seed=0)
    rng = np.random.default_rng(1)
    for _ in range(8):
        assert env.observation_space.contains(obs)
        full = sim.obstacle_ranges(RAY_ANGLES, RAY_MAX_RANGE) / RAY_MAX_RANGE
        assert obs["rays"][HEAD_RAY_MASK] == pytest.approx(full[HEAD_RAY_MASK].astype(np.float32))
        assert (obs["rays"][~HEAD_RAY_MASK] == 1.0).all()
        obs, *_ = env.step(np.array([rng.uniform(0.3, 1.0), rng.uniform(-1, 1), -1.0]))
    # Somewhere behind or beside the robot is nearer than 5 m: the cut hides something.
    full = sim.obstacle_ranges(RAY_ANGLES, RAY_MAX_RANGE) / RAY_MAX_RANGE
    assert full[~HEAD_RAY_MASK].min() < 1.0


def test_hab_env_gives_a_head_rays_skill_its_cut_scan(sim):
    hab = HabEnv("tidy_house", HabConfig(obs_preset="state_rays", num_episodes=1), "val", 0,
                 sim=sim)  # fmt: skip
    hab.reset(seed=0)
    x, y, _ = sim.base_pose()
    target = hab.nav_target(x + 3.0, y - 1.0, 0.7)
    full = hab.observe("nav", target)
    head = hab.observe("nav", target, obs_preset="state_head_rays")
    assert head.keys() == full.keys()
    np.testing.assert_array_equal(head["rays"], head_rays(full["rays"]).astype(np.float32))
    for key in set(full) - {"rays"}:
        np.testing.assert_array_equal(head[key], full[key], err_msg=key)


def _nav_checkpoint(preset: str):
    from rearrange.models import ModelConfig, build_policy
    from rearrange.runtime.checkpoint import SkillCheckpoint, TrainingState, rng_state
    from rearrange.tasks.actions import action_space

    obs_space, act_space = task_observation_space("nav", preset), action_space("nav", True)
    model = ModelConfig(backbone="none", rnn_hidden_size=16, state_mlp_hidden=(16,))
    policy = build_policy(obs_space, act_space, model)
    plain = {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(model).items()}
    task = {"task": "nav", "obs_preset": preset}
    config = {"skill": "nav", "algo": "ver", "model": plain, "task": task}
    return SkillCheckpoint.from_training(
        config, policy.state_dict(), obs_space, act_space, num_steps=8, num_updates=1,
        wall_time_s=1.0, training=TrainingState({}, rng_state()),
    )  # fmt: skip


def test_the_checkpoint_records_the_preset_and_reads_it_back(tmp_path):
    from rearrange.runtime.checkpoint import SkillCheckpoint

    for preset in ("state_head_rays", "state_rays"):
        ckpt = _nav_checkpoint(preset)
        assert ckpt.obs_preset == preset and ckpt.file_stem == "nav"
        back = SkillCheckpoint.load(ckpt.save(tmp_path / preset / "latest.pt"))
        assert back.obs_preset == preset


def test_a_head_rays_teacher_observes_the_cut_scan(sim, tmp_path):
    from rearrange.distill.teacher_labels import CheckpointTeacher, TeacherSpec, check_teacher

    path = _nav_checkpoint("state_head_rays").save(tmp_path / "teacher.pt")
    check_teacher(path, "nav", False)  # accepted as a teacher
    teacher = CheckpointTeacher(TeacherSpec("nav", str(path), False, "state_head_rays"))
    assert teacher.preset == "state_head_rays"
    env = _nav_env(sim, "state_rays")
    env.reset(seed=0)
    seen = teacher.observation(env)
    full = sim.obstacle_ranges(RAY_ANGLES, RAY_MAX_RANGE) / RAY_MAX_RANGE
    np.testing.assert_allclose(seen["rays"], head_rays(full), rtol=1e-6)
    action = teacher.act(env, seen, None)
    assert action.shape == (3,) and np.isfinite(action).all()
