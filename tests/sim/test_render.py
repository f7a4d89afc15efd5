"""Third-person frames with overlays, and the snapshot CLI."""

from __future__ import annotations

import imageio.v3 as iio
import numpy as np
from sim_helpers import episode_at

from rearrange.sim.render import Overlays, draw_text
from rearrange.sim.snapshot import main as snapshot_main


def test_third_person_overlays_change_the_frame(sim):
    sim.reset(episode_at("counter_0", [("mug", "counter_0"), ("apple", "counter_0")]))
    plain = sim.render_third_person(width=160, height=120)
    assert plain.shape == (120, 160, 3) and plain.dtype == np.uint8
    goal = tuple(sim.object_pos(1) + np.array([0.0, 0.0, 0.3]))
    x, y, _ = sim.base_pose()
    ov = Overlays(boxes=[0], ghosts=[(1, goal)], spheres=[(x + 0.8, y)], text=["pick mug"])
    framed = sim.render_third_person(ov, width=160, height=120)
    assert framed.shape == plain.shape
    assert np.abs(framed.astype(int) - plain.astype(int)).sum() > 0
    assert sim.render_rgb().shape == (128, 128, 3)


def test_draw_text_writes_white_pixels_in_corner():
    img = draw_text(np.zeros((40, 120, 3), np.uint8), ["hello"])
    assert img[:16, :60].max() > 200 and img[20:, 80:].max() == 0


def test_snapshot_cli_writes_png(tmp_path):
    out = tmp_path / "snap.png"
    snapshot_main(["--seed", "1", "--split", "val", "--out", str(out), "--size", "256"])
    img = iio.imread(out)
    assert img.shape == (256, 384 + 128, 3) and img.std() > 10
