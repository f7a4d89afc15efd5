"""Single-threaded torch: the tiny networks here gain nothing from intra-op threads, and on a
busy 2-core machine spinning OpenMP threads slow them down by orders of magnitude. And the nav
env the teacher tests label (4 val episodes of seed 1, 32² depth)."""

import os

import pytest
import torch

torch.set_num_threads(1)
os.environ.setdefault("MUJOCO_GL", "egl")


@pytest.fixture(scope="module")
def nav_env():
    from rearrange.tasks import default_task_config, make_env

    cfg = default_task_config("nav", obs_preset="depth", depth_size=32, num_episodes=4)
    env = make_env("nav", cfg, "val", 1)
    yield env
    env.close()
