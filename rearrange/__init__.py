"""Fetch rearrangement skills (VER training, TP-SRL planning, HAB evaluation) on MuJoCo.

Importing the package registers the skill tasks with gymnasium ("rearrange/Pick-v0", ...;
see rearrange/gym_envs.py); it imports no simulator code.
"""

import os as _os

# MuJoCo picks its GL backend when it is imported. Without a display its default (GLFW)
# cannot render, and the first depth or video frame died deep inside MuJoCo ("an OpenGL
# platform library has not been loaded"); headless EGL (installed by scripts/install.sh)
# can. MUJOCO_GL set by the user, or a DISPLAY, leave the choice to MuJoCo.
if "MUJOCO_GL" not in _os.environ and not _os.environ.get("DISPLAY"):
    _os.environ["MUJOCO_GL"] = "egl"

from rearrange.gym_envs import register_envs as _register_envs  # noqa: E402

_register_envs()
