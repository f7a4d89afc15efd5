"""Which GPU a process renders on with MuJoCo's headless EGL backend.

MuJoCo's EGL backend reads `MUJOCO_EGL_DEVICE_ID` once per process, when it creates its EGL
display (the first `mujoco.Renderer`), and takes it as a CUDA device index where the driver
says which CUDA device backs each EGL device (it also honours CUDA_VISIBLE_DEVICES then), else
as an index into EGL's own device list. Setting it to the index of the trainer's torch device
makes an env worker render on the GPU that runs its rank's inference and learning, so several
ranks on a multi-GPU machine spread their rendering instead of all drawing on GPU 0.

Only the environment variable is touched: nothing here imports torch or initialises CUDA
(env workers must not open a CUDA context of their own; they only render).
"""

from __future__ import annotations

import logging
import os
import re
import sys
from collections.abc import MutableMapping

EGL_DEVICE_VAR = "MUJOCO_EGL_DEVICE_ID"

log = logging.getLogger(__name__)

_DEVICE = re.compile(r"^(cpu|cuda)(?::(\d+))?$")


def cuda_index(device: object) -> int | None:
    """The CUDA index of a torch device or its string ('cuda:1' → 1, 'cuda' → 0, 'cpu' or
    None → None)."""
    if device is None:
        return None
    match = _DEVICE.match(str(device).strip())
    if match is None:
        raise ValueError(
            f"render device {str(device)!r} is not a torch device: use 'cpu', 'cuda' or 'cuda:N'"
        )
    kind, index = match.groups()
    if kind == "cpu":
        return None
    return int(index) if index is not None else 0


def select_egl_device(
    device: object, environ: MutableMapping[str, str] | None = None
) -> int | None:
    """Make this process render on `device`'s GPU: set MUJOCO_EGL_DEVICE_ID to its CUDA index.

    No effect (returns None) for a CPU device, None, or when MUJOCO_GL is not 'egl' (another
    backend, or MuJoCo's own choice on a machine with a display). Call it before the process
    creates its first renderer: MuJoCo reads the variable only then. Returns the index set."""
    environ = os.environ if environ is None else environ
    index = cuda_index(device)
    if index is None or environ.get("MUJOCO_GL", "").lower() != "egl":
        return None
    value = str(index)
    if environ is os.environ and _display_made_elsewhere(value):
        log.warning(
            "%s=%s set after this process opened its EGL display on device %s: rendering "
            "stays there; select the device before the first renderer",
            EGL_DEVICE_VAR,
            value,
            os.environ.get(EGL_DEVICE_VAR),
        )
    environ[EGL_DEVICE_VAR] = value
    return index


def _display_made_elsewhere(value: str) -> bool:
    """True when MuJoCo already opened this process's EGL display with another device id."""
    egl = sys.modules.get("mujoco.egl")
    opened = getattr(egl, "EGL_DISPLAY", None) is not None
    return opened and os.environ.get(EGL_DEVICE_VAR) != value
