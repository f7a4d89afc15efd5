"""Single-threaded torch: the tiny networks here gain nothing from intra-op threads, and on a
busy 2-core machine spinning OpenMP threads slow them down by orders of magnitude."""

import os

import torch

torch.set_num_threads(1)
os.environ.setdefault("MUJOCO_GL", "egl")
