"""Evaluation-video frames: the end card's text, one frame size whether or not the arm view
shows, the head depth inset's place and scale, and the frames an executor run records."""

import dataclasses

import numpy as np
import pytest

from rearrange.eval.end_card import draw_end_card, end_card_lines
from rearrange.eval.executor import ExecutorConfig, TPSRLExecutor
from rearrange.eval.frame_layout import (
    DEPTH_LUT,
    FrameLayout,
    compose,
    depth_to_rgb,
    paste_depth_inset,
)
from rearrange.eval.report import EpisodeRecord


def _record(**kw) -> EpisodeRecord:
    base = dict(episode_id="tidy_house-val-0000", stages_completed=10, success=True, steps=1738)
    return EpisodeRecord(**{**base, **kw})


def test_end_card_of_a_completed_episode_reads_n_of_n():
    lines = end_card_lines(_record(), 10, "tidy_house")
    assert lines[0] == "SUCCESS"
    assert "stages 10/10 completed, 1738 steps" in lines
    assert not any(line.startswith(("failed", "cause")) for line in lines)


def test_end_card_of_a_failure_names_the_step_and_the_recorded_cause():
    reason = "object_at failed: obj_4 0.42 m from goal and still held"
    record = _record(
        stages_completed=9,
        success=False,
        failed_skill="place(obj_4, shelf_0)",
        failure_reason=reason,
    )
    lines = end_card_lines(record, 10, "tidy_house")
    assert lines[0] == "FAILURE" and "stages 9/10 completed, 1738 steps" in lines
    assert "failed: place(obj_4, shelf_0)" in lines
    cause = " ".join(line.strip() for line in lines if not line.startswith(("F", "t", "s", "f")))
    assert cause == f"cause: {reason}"  # wrapped over lines, nothing lost


def test_end_card_keeps_the_frame_size_and_colours_the_outcome():
    frame = np.full((360, 840, 3), 200, np.uint8)
    ok = draw_end_card(frame, end_card_lines(_record(), 10), success=True)
    bad = draw_end_card(frame, end_card_lines(_record(success=False), 10), success=False)
    assert ok.shape == bad.shape == frame.shape
    assert ok[0, 0].max() < 100  # the rest of the frame is dimmed
    green = (ok[..., 1].astype(int) - ok[..., 0]) > 80
    red = (bad[..., 0].astype(int) - bad[..., 1]) > 80
    green_bad = (bad[..., 1].astype(int) - bad[..., 0]) > 80
    red_ok = (ok[..., 0].astype(int) - ok[..., 1]) > 80
    assert green.sum() > 50 and red.sum() > 50 and not green_bad.any() and not red_ok.any()


def test_frame_size_is_the_same_with_and_without_the_arm_view():
    layout = FrameLayout(main=(160, 120), depth_size=16, depth_scale=2)
    main = np.zeros((120, 160, 3), np.uint8)
    depth = np.ones((16, 16), np.float32)
    idle = compose(main, layout, None, depth=depth)
    arm = compose(main, layout, np.full((120, 120, 3), 255, np.uint8), "arm view: pick", depth)
    assert idle.shape == arm.shape == (120, 280, 3) and layout.size == (280, 120)
    assert arm[60:, 160:].min() == 255 and idle[60:, 160:].max() < 100  # view vs placeholder
    with pytest.raises(ValueError, match="panel_side"):
        compose(main, layout, np.zeros((100, 100, 3), np.uint8))
    flat = FrameLayout(main=(160, 120), arm_panel=False, depth_size=16)
    assert compose(main, flat, None).shape == (120, 160, 3) and flat.size == (160, 120)


def test_depth_inset_sits_bottom_left_upscaled_by_its_scale():
    layout = FrameLayout(main=(480, 360), depth_size=64, depth_scale=2, margin=6)
    assert layout.depth_box() == (226, 6, 128)  # 360 - 6 - 2 * 64
    depth = np.tile(np.linspace(0.0, 10.0, 64, dtype=np.float32), (64, 1))  # far to the right
    depth[5, 7] = 0.0
    main = np.full((360, 480, 3), 7, np.uint8)
    out = paste_depth_inset(main, depth, layout)
    inset = out[226 : 226 + 128, 6 : 6 + 128]
    assert (inset[10:12, 14:16] == DEPTH_LUT[0]).all()  # depth pixel (5, 7): a 2x2 block
    assert (inset[:, :2] == DEPTH_LUT[0]).all() and (inset[:, -2:] == DEPTH_LUT[255]).all()
    assert (inset[::2, ::2] == depth_to_rgb(depth)).all()
    assert (inset[1::2, 1::2] == depth_to_rgb(depth)).all()
    assert (out[225, 5 : 6 + 129] == 255).all() and (out[226 + 128, 5 : 6 + 129] == 255).all()
    assert (out[:200, 200:] == 7).all() and (out[226:, 140:] == 7).all()  # nothing else drawn
    assert out[212:224, 6:120].max() > 200  # the label above the inset
    with pytest.raises(ValueError, match="depth_size"):
        paste_depth_inset(main, np.zeros((128, 128), np.float32), layout)


def test_layout_fits_the_depth_inset_to_the_main_view():
    assert FrameLayout.fit((480, 360)).depth_box() == (226, 6, 128)  # 2x: under half of 360
    small = FrameLayout.fit((160, 120))
    assert small.depth_inset and small.depth_box() == (50, 6, 64)  # 1x
    assert not FrameLayout.fit((64, 48)).depth_inset  # does not fit at all
    # A depth policy's 128x128 input: 1x (2x would take 256 of 360 rows), 360 - 6 - 128 = 226
    paper = FrameLayout.fit((480, 360), depth_size=128)
    assert (paper.depth_size, paper.depth_scale, paper.depth_box()) == (128, 1, (226, 6, 128))
    with pytest.raises(ValueError, match="does not fit"):
        FrameLayout(main=(160, 120), depth_scale=2)


def test_depth_colours_run_from_near_to_far():
    rgb = depth_to_rgb(np.array([[0.0, 1.0, 4.0, 10.0, 30.0]], np.float32))
    lum = rgb[0].astype(int).sum(axis=1)
    assert (np.diff(lum[:4]) > 0).all() and (rgb[0, 3] == rgb[0, 4]).all()  # clipped at 10 m


# --- an executor run with a frame sink ----------------------------------------------------
class TeleportNav:
    """Jumps to its goal pose, then stops (public sim API)."""

    name = task = "nav"
    step_limit = 10

    def reset(self, target, sim=None):
        assert sim.set_base_pose(*target.nav_goal)

    def act(self, obs, sim):
        from rearrange.skills import action_layout

        return action_layout("nav").compose(base=np.zeros(2), stop=True)


class TeleportPick:
    """Puts its target object in the gripper at once."""

    name = task = "pick"
    step_limit = 10

    def reset(self, target, sim=None):
        self.obj = target.obj_index
        sim.start_holding(self.obj)

    def act(self, obs, sim):
        from rearrange.skills import action_layout

        return action_layout("pick").compose(arm=np.zeros(7), grip=1.0)

    def is_done(self, obs, sim):
        return sim.held_object() == self.obj


@pytest.fixture(scope="module")
def pick_run():
    """Tidy House val episode 0, first target: teleport nav, then teleport pick, filmed."""
    pytest.importorskip("mujoco")
    from rearrange.planner import make_plan
    from rearrange.tasks import HabConfig, HabEnv
    from rearrange.tasks.base import load_task_episodes

    ep = load_task_episodes("tidy_house", None, 1, "val", 0)[0]
    ep = dataclasses.replace(ep, targets=ep.targets[:1])
    env = HabEnv("tidy_house", HabConfig(obs_preset="state"), split="val", episodes=[ep])
    env.reset()
    plan = make_plan(env.sim.layout, env.episode)[:2]  # nav, pick
    config = ExecutorConfig(frame_every=1, frame_size=(160, 120), end_card_frames=3)
    executor = TPSRLExecutor(env, {"nav": TeleportNav(), "pick": TeleportPick()}, config)
    film = executor.film()
    executor.film = lambda: film  # keep the film to read its end card
    frames = []
    record = executor.run_episode(plan, frame_sink=frames.append)
    yield record, frames, film
    env.close()


def test_executor_frames_keep_one_size_and_show_the_arm_view_only_during_pick(pick_run):
    record, frames, _ = pick_run
    assert record.video_frames == len(frames) == 1 + 1 + 3  # nav step, pick step, end card
    assert {f.shape for f in frames} == {(120, 160 + 120, 3)}
    panel_std = [float(f[60:, 160:].std()) for f in frames]  # below the idle text
    assert panel_std[0] < 5 and panel_std[1] > 20  # idle placeholder, then the arm view
    assert all((f == frames[-1]).all() for f in frames[-3:])  # the card is held


def test_executor_end_card_counts_the_last_completed_stage(pick_run):
    record, _, film = pick_run
    # the plan's only stage (pick) completed: the card reads 1/1, not the 0/1 shown while it ran
    assert record.stages_completed == 1
    lines = film.card_lines
    assert "stages 1/1 completed, 2 steps" in lines
    assert lines[0] == "FAILURE" and lines[-1].endswith("not every object is at its goal")


@pytest.mark.parametrize("preset,size,inset", [("depth", 128, 128), ("state", 128, 64)])
def test_the_film_shows_a_depth_policys_input_at_its_size(preset, size, inset):
    from rearrange.eval.executor import TPSRLExecutor
    from rearrange.tasks import HabConfig, HabEnv
    from rearrange.tasks.base import load_task_episodes

    episodes = load_task_episodes("tidy_house", None, 1, "val", 0)
    env = HabEnv("tidy_house", HabConfig(obs_preset=preset, depth_size=size), episodes=episodes)
    try:
        assert TPSRLExecutor(env, {}).film().layout.depth_size == inset
    finally:
        env.close()
