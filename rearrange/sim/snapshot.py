"""Snapshot of a generated apartment: top-down view + head camera view in one PNG.

    python -m rearrange.sim.snapshot --seed 0 --split train --out snap.png

Also provides `demo_episode`, a hand-built episode (robot in front of a receptacle, objects
resting on receptacles) used by the benchmark and tests before real episodes exist.
"""

from __future__ import annotations

import argparse
import math
import os

import numpy as np

from rearrange.sim.apartment import generate_layout
from rearrange.sim.episode_types import Episode, ObjectPlacement
from rearrange.sim.layout_types import Layout, Receptacle
from rearrange.sim.objects import OBJECT_TYPES


def place_on(rec: Receptacle, obj_type: str, u: float = 0.0, v: float = 0.0):
    """Resting pose on `rec`: (u, v) in [-1, 1] across its surface, z = top + half height."""
    s = rec.surface
    t = OBJECT_TYPES[obj_type]
    margin = t.footprint_radius
    lx = u * max(s.half_size[0] - margin, 0.0)
    ly = v * max(s.half_size[1] - margin, 0.0)
    c, sn = math.cos(s.yaw), math.sin(s.yaw)
    x = s.center[0] + c * lx - sn * ly
    y = s.center[1] + sn * lx + c * ly
    quat = (math.cos(s.yaw / 2), 0.0, 0.0, math.sin(s.yaw / 2))
    return (x, y, rec.top_z + t.half_height), quat


def stand_in_front(layout: Layout, furniture: str, dist: float = 0.6) -> tuple[float, float, float]:
    """Robot pose `dist` m in front of a piece's front face, facing it."""
    f = layout.furniture_named(furniture)
    reach = f.half_size[0] + dist
    x = f.center[0] + reach * math.cos(f.front_yaw)
    y = f.center[1] + reach * math.sin(f.front_yaw)
    return (x, y, math.atan2(-math.sin(f.front_yaw), -math.cos(f.front_yaw)))


def demo_episode(
    seed: int = 0, split: str = "train", n_objects: int = 6, facing: str = "counter_0"
) -> Episode:
    """Objects spread over the open receptacles; the robot faces `facing`."""
    layout = generate_layout(seed, split)
    rng = np.random.default_rng(seed)
    names = sorted(OBJECT_TYPES)
    recs = [r for r in layout.receptacles if r.container is None]
    objects = []
    for i in range(n_objects):
        rec = recs[i % len(recs)]
        obj = names[int(rng.integers(len(names)))]
        slot = (i // len(recs)) % 3 - 1  # spread objects sharing a receptacle along y
        pos, quat = place_on(rec, obj, float(rng.uniform(-0.5, 0.5)), 0.8 * slot)
        objects.append(ObjectPlacement(obj, pos, quat, rec.name))
    return Episode(
        episode_id=f"demo_{split}_{seed}",
        task="pick",
        split=split,
        scene_seed=seed,
        robot_start=stand_in_front(layout, facing),
        objects=objects,
    )


def snapshot(seed: int, split: str, size: int = 512) -> np.ndarray:
    from rearrange.sim.render import render_view, top_view
    from rearrange.sim.world import RearrangeSim

    sim = RearrangeSim()
    sim.reset(demo_episode(seed, split))
    top = render_view(sim, sim.renderer(int(size * 1.5), size), top_view(sim.layout))
    head = sim.render_rgb()
    depth = sim.render_depth()[..., 0]
    scale = max(1, size // 2 // head.shape[0])
    head_big = np.kron(head, np.ones((scale, scale, 1), np.uint8))
    depth_img = (255 * np.clip(depth / 5.0, 0, 1)).astype(np.uint8)
    depth_big = np.kron(np.repeat(depth_img[..., None], 3, 2), np.ones((scale, scale, 1), np.uint8))
    side = np.zeros((size, head_big.shape[1], 3), np.uint8)
    side[: head_big.shape[0]] = head_big
    side[size - depth_big.shape[0] :] = depth_big
    sim.close()
    return np.concatenate([top, side], axis=1)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--split", default="train", choices=["train", "val"])
    p.add_argument("--out", default="snap.png")
    p.add_argument("--size", type=int, default=512)
    a = p.parse_args(argv)
    os.environ.setdefault("MUJOCO_GL", "egl")
    import imageio.v3 as iio

    iio.imwrite(a.out, snapshot(a.seed, a.split, a.size))
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
