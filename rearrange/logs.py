"""Logging setup for the command-line tools: the project's INFO lines, no third-party chatter.

MuJoCo's EGL backend imports PyOpenGL, which logs "No OpenGL_accelerate module loaded" at
INFO on its `OpenGL` logger; with the root logger at INFO that line would open every
training log. `configure_logging` keeps the root at the requested level and raises only the
listed third-party loggers to WARNING, so their warnings and errors still show.
(gymnasium-robotics prints its notice straight to stderr when imported; the sim locates the
Fetch assets without importing it, see rearrange/sim/robot.py.)
"""

from __future__ import annotations

import logging

# Third-party loggers that emit INFO (or DEBUG) chatter during training or evaluation.
THIRD_PARTY_LOGGERS = ("OpenGL", "matplotlib", "PIL", "imageio", "imageio_ffmpeg", "h5py")


def quiet_third_party_loggers(level: int = logging.WARNING) -> None:
    """Raise the third-party loggers to `level` (the project's own loggers are untouched)."""
    for name in THIRD_PARTY_LOGGERS:
        logging.getLogger(name).setLevel(level)


def configure_logging(level: int = logging.INFO, fmt: str = "%(asctime)s %(message)s") -> None:
    """`logging.basicConfig(level, fmt)` plus `quiet_third_party_loggers()`."""
    logging.basicConfig(level=level, format=fmt)
    quiet_third_party_loggers()
