"""The place release distance (`thresholds.place_release`): the grip mask's goal distance,
set per task, recorded by a place checkpoint and applied wherever the checkpoint runs."""

from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest

from rearrange.skill_spec import SUCCESS, action_layout
from rearrange.tasks.grip_rules import PLACE_RELEASE_DIST, GripTracker

GRIP = action_layout("place", False).grip


class HeldAt:
    """A sim holding object 0 at `pos`."""

    def __init__(self, pos):
        self.pos = pos

    def held_object(self):
        return 0

    def object_pos(self, i):
        return self.pos


def _release_request() -> np.ndarray:
    a = np.zeros(action_layout("place", False).size, dtype=np.float32)
    a[GRIP] = -0.8  # the policy asks to let go
    return a


def test_the_tracker_lets_go_only_within_its_release_distance():
    target = SimpleNamespace(obj_index=0, goal_pos=(1.0, 2.0, 0.9))
    sim = HeldAt((1.0, 2.10, 0.9))  # 0.10 m from the goal
    assert PLACE_RELEASE_DIST == SUCCESS.place == SUCCESS.place_release == 0.15
    default = GripTracker("place")
    assert default.mask(_release_request(), GRIP, sim, target)[GRIP] == pytest.approx(-0.8)
    tight = GripTracker("place", release_dist=0.08)
    assert tight.mask(_release_request(), GRIP, sim, target)[GRIP] == 1.0  # kept holding
    sim.pos = (1.0, 2.07, 0.9)  # 0.07 m: inside 0.08
    assert tight.mask(_release_request(), GRIP, sim, target)[GRIP] == pytest.approx(-0.8)


def test_a_task_config_refuses_a_release_distance_that_is_not_positive():
    from rearrange.tasks import default_task_config

    with pytest.raises(ValueError, match="thresholds.place_release must be > 0"):
        default_task_config("place", thresholds=replace(SUCCESS, place_release=0.0))


def test_the_place_env_applies_its_configured_release_distance():
    """A release asked on the first step: refused at the default distance (the episode starts
    farther than 0.15 m from the goal), let through with a release distance that covers it."""
    from rearrange.tasks import default_task_config, make_env

    held = {}
    for release in (SUCCESS.place_release, 50.0):
        cfg = default_task_config(
            "place", obs_preset="state", num_episodes=1,
            thresholds=replace(SUCCESS, place_release=release),
        )  # fmt: skip
        env = make_env("place", cfg, split="val", seed=0)
        try:
            env.reset()
            dist = float(np.linalg.norm(
                np.asarray(env.sim.object_pos(env.target.obj_index)) - env.target.goal_pos
            ))  # fmt: skip
            assert dist > SUCCESS.place_release
            env.step(_release_request())
            held[release] = env.sim.held_object() is not None
        finally:
            env.close()
    assert held == {SUCCESS.place_release: True, 50.0: False}


def _place_checkpoint(thresholds: dict | None, skill: str = "place"):
    from rearrange.models.config import ModelConfig
    from rearrange.runtime.checkpoint import SkillCheckpoint

    task = {"task": skill} if thresholds is None else {"task": skill, "thresholds": thresholds}
    return SkillCheckpoint(
        skill=skill, base_movement=False, obs_preset="state", model=ModelConfig(),
        observation_space=None, action_space=None, weights={},
        config={"skill": skill, "task": task},
    )  # fmt: skip


def test_a_place_checkpoint_reports_the_release_distance_it_was_trained_with():
    assert _place_checkpoint({"place_release": 0.08}).release_dist == 0.08
    assert _place_checkpoint({"place": 0.15}).release_dist is None  # not set: the default
    assert _place_checkpoint(None).release_dist is None
    assert _place_checkpoint({"place_release": 0.08}, skill="pick").release_dist is None


def test_eval_skill_runs_a_place_at_its_trained_release_distance_unless_set():
    from rearrange.eval.one_skill import trained_release

    trained = SimpleNamespace(release_dist=0.08)
    assert trained_release(SUCCESS, trained).place_release == 0.08
    chosen = replace(SUCCESS, place_release=0.12)  # --set thresholds.place_release=0.12
    assert trained_release(chosen, trained).place_release == 0.12
    assert trained_release(SUCCESS, SimpleNamespace(release_dist=None)) == SUCCESS
    assert trained_release(SUCCESS, object()) == SUCCESS  # an oracle records none


def test_the_hab_executor_masks_a_place_at_its_trained_release_distance():
    from rearrange.eval.executor import TPSRLExecutor

    def executor(place):
        return SimpleNamespace(skills={"place": place})

    assert TPSRLExecutor.release_dist(executor(SimpleNamespace(release_dist=0.08)), "place") == 0.08
    assert TPSRLExecutor.release_dist(executor(object()), "place") == PLACE_RELEASE_DIST
    assert TPSRLExecutor.release_dist(SimpleNamespace(skills={}), "place") == PLACE_RELEASE_DIST


def test_a_distill_run_says_when_its_place_teacher_let_go_under_another_distance(tmp_path):
    from rearrange.distill.teacher_labels import release_mismatch, resolve_teacher

    shipped = resolve_teacher("place", False, None)  # trained at the default
    assert shipped.release_dist is None
    assert release_mismatch(shipped, SUCCESS.place_release) is None
    line = release_mismatch(shipped, 0.10)
    assert "let go within 0.15 m" in line and "task.thresholds.place_release=0.15" in line
    trained = _place_checkpoint({"place_release": 0.1}).release_dist  # a teacher at 0.10 m
    tight = replace(shipped, release_dist=trained)
    assert release_mismatch(tight, 0.10) is None
    assert "pass task.thresholds.place_release=0.1 " in release_mismatch(tight, 0.15)
    assert release_mismatch(resolve_teacher("pick", False, None), 0.10) is None
