"""Fixtures for the simulator tests."""

from __future__ import annotations

import os

os.environ.setdefault("MUJOCO_GL", "egl")

import pytest  # noqa: E402

from rearrange.sim.world import RearrangeSim  # noqa: E402


@pytest.fixture
def sim():
    s = RearrangeSim()
    yield s
    s.close()
