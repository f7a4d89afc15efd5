"""The frames of one episode's evaluation video: the third-person follow view with the
overlays, the head depth inset the policy's camera sees, the arm view while an arm skill
runs (`frame_layout` places them), and the end card held for about a second."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from rearrange.eval.end_card import draw_end_card, end_card_lines
from rearrange.eval.frame_layout import FrameLayout, compose
from rearrange.eval.overlays import arm_target, episode_overlays
from rearrange.eval.report import EpisodeRecord
from rearrange.sim.arm_camera import arm_view, arm_view_side, render_head_depth
from rearrange.sim.render import render_view


class EpisodeFilm:
    """Renders video frames of a HAB episode from the env and the executor's progress."""

    def __init__(self, layout: FrameLayout | None = None, end_card_frames: int = 15):
        self.layout = layout or FrameLayout()
        self.end_card_frames = end_card_frames
        self._sides: dict[tuple[str, int], int] = {}  # one camera side per plan step
        self.card_lines: list[str] = []
        """The text of the last end card drawn."""

    def frame(self, env: Any, progress: Any) -> np.ndarray:
        """The frame of the env's current state, `layout.size` whatever skill runs."""
        lay = self.layout
        overlays = episode_overlays(env, progress)
        w, h = lay.main
        main = env.render(overlays, width=w, height=h)
        depth = render_head_depth(env.sim, lay.depth_size) if lay.depth_inset else None
        view, label = None, ""
        target = arm_target(env, progress) if lay.arm_panel else None
        if target is not None:
            view = self._arm_view(env, progress, target[1], replace(overlays, text=[]))
            label = f"arm view: {progress.plan[progress.step_index]}"
        return compose(main, lay, view, label, depth)

    def _arm_view(self, env: Any, progress: Any, point, overlays) -> np.ndarray:
        sim = env.sim
        key = (env.episode.episode_id, progress.step_index)
        if key not in self._sides:  # chosen once per step: the camera must not jump sides
            self._sides[key] = arm_view_side(sim, point)
        side = self.layout.panel_side
        camera = arm_view(sim, point, self._sides[key])
        return render_view(sim, sim.renderer(side, side), camera, overlays)

    def end_card(self, env: Any, progress: Any, record: EpisodeRecord) -> list[np.ndarray]:
        """`end_card_frames` copies of the final state's frame under the outcome card."""
        if self.end_card_frames <= 0:
            return []
        last = self.frame(env, progress)
        self.card_lines = end_card_lines(record, progress.num_stages, env.scenario)
        return [draw_end_card(last, self.card_lines, record.success)] * self.end_card_frames
