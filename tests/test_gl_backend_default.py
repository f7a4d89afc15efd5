"""Importing rearrange picks MuJoCo's headless EGL backend when nothing else is chosen."""

import os
import subprocess
import sys

import pytest

PROBE = "import os, rearrange; print(os.environ.get('MUJOCO_GL'))"


def _gl_after_import(**env_changes) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("MUJOCO_GL", "DISPLAY")}
    env.update(env_changes)
    out = subprocess.run(
        [sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True
    )
    return out.stdout.strip()


def test_headless_without_a_choice_gets_egl():
    assert _gl_after_import() == "egl"


@pytest.mark.parametrize("choice", ["osmesa", "glfw"])
def test_a_users_choice_stays(choice):
    assert _gl_after_import(MUJOCO_GL=choice) == choice


def test_with_a_display_mujoco_chooses():
    assert _gl_after_import(DISPLAY=":0") == "None"
