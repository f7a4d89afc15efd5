"""Evaluation videos: frames streamed to an mp4 (ffmpeg ships inside imageio-ffmpeg)."""

from __future__ import annotations

from pathlib import Path

import numpy as np


class VideoRecorder:
    """Appends RGB frames to an mp4; writes to a temp name and renames on close."""

    def __init__(self, path: Path, fps: int = 30):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._tmp = self.path.with_name(self.path.stem + ".partial.mp4")
        self._fps = fps
        self._writer = None
        self.num_frames = 0

    def add(self, frame: np.ndarray) -> None:
        if self._writer is None:
            import imageio.v2 as imageio

            # macro_block_size=1 keeps odd sizes; quality 7 is small and readable.
            self._writer = imageio.get_writer(
                self._tmp, fps=self._fps, codec="libx264", quality=7, macro_block_size=1
            )
        self._writer.append_data(np.ascontiguousarray(frame, dtype=np.uint8))
        self.num_frames += 1

    def close(self) -> Path | None:
        if self._writer is None:
            return None
        self._writer.close()
        self._writer = None
        self._tmp.replace(self.path)
        return self.path
