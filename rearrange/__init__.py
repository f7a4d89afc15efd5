"""Fetch rearrangement skills (VER training, TP-SRL planning, HAB evaluation) on MuJoCo.

Importing the package registers the skill tasks with gymnasium ("rearrange/Pick-v0", ...;
see rearrange/gym_envs.py); it imports no simulator code.
"""

from rearrange.gym_envs import register_envs as _register_envs

_register_envs()
