"""Graceful stop on SIGINT/SIGTERM for the training loops (VER and PQL)."""

from __future__ import annotations

import signal
import threading

from rearrange.runtime.logging_utils import log


class StopFlag:
    """First SIGINT/SIGTERM: finish the current `unit` (an update, a step), checkpoint, exit.
    Second: interrupt."""

    def __init__(self, unit: str = "update"):
        self.stop = False
        self.unit = unit
        self._saved = {}

    def install(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        for sig in (signal.SIGINT, signal.SIGTERM):
            self._saved[sig] = signal.signal(sig, self._handle)

    def _handle(self, signum, frame):
        if self.stop:
            raise KeyboardInterrupt
        self.stop = True
        log.warning("signal %d: stopping after this %s (again to abort)", signum, self.unit)

    def restore(self) -> None:
        for sig, handler in self._saved.items():
            signal.signal(sig, handler)
