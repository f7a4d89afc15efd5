"""How an evaluation-video frame is laid out: the third-person view on the left with the head
depth inset in its bottom-left corner, the arm view in a square panel on its right (a dark
placeholder while no arm skill runs, so every frame of the mp4 has one size)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from rearrange.sim.render import draw_text
from rearrange.tasks.sensors import DEPTH_MAX

DEPTH_LABEL = "head depth (policy camera)"
PANEL_IDLE_TEXT = ["arm view", "(while pick, place,", "open or close runs)"]
PANEL_GREY = 40
LABEL_HEIGHT = 16  # pixels of the label band above the depth inset


@dataclass(frozen=True)
class FrameLayout:
    """Sizes of the parts of a video frame (pixels)."""

    main: tuple[int, int] = (480, 360)
    """Width, height of the third-person view."""
    arm_panel: bool = True
    """A square arm-view panel (side = the main view's height) right of the main view."""
    depth_inset: bool = True
    """The head depth inset in the main view's bottom-left corner."""
    depth_size: int = 64
    """Pixels the head depth is rendered at (square)."""
    depth_scale: int = 2
    """Nearest-neighbour upscaling of the depth inset (64 px -> 128 px on the frame)."""
    margin: int = 6
    """Gap between the depth inset and the frame's edges (pixels)."""

    def __post_init__(self):
        top, _, side = self.depth_box()
        if self.depth_inset and (top < LABEL_HEIGHT or side + 2 * self.margin > self.main[0]):
            raise ValueError(
                f"a {side}-pixel depth inset does not fit a {self.main[0]}x{self.main[1]} main "
                "view; lower depth_scale or use FrameLayout.fit"
            )

    @classmethod
    def fit(
        cls,
        main: tuple[int, int],
        arm_panel: bool = True,
        depth_inset: bool = True,
        depth_size: int | None = None,
    ):
        """The default layout for a main view of `main` (width, height): the depth inset
        (`depth_size` pixels, default 64; a depth policy's run shows its own input size)
        upscaled 2x when it then takes at most half the main view's height, else 1x, and
        left out when even 1x does not fit."""
        size, margin = depth_size or cls.depth_size, cls.margin
        w, h = main
        scale = 2 if 2 * size + margin + LABEL_HEIGHT <= h // 2 else 1
        fits = size + 2 * margin <= w and size + margin + LABEL_HEIGHT <= h
        return cls((w, h), arm_panel, depth_inset and fits, size, scale, margin)

    @property
    def panel_side(self) -> int:
        return self.main[1] if self.arm_panel else 0

    @property
    def size(self) -> tuple[int, int]:
        """Width, height of every frame of the video."""
        return self.main[0] + self.panel_side, self.main[1]

    def depth_box(self) -> tuple[int, int, int]:
        """(top, left, side) of the depth inset on the main view."""
        side = self.depth_size * self.depth_scale
        return self.main[1] - self.margin - side, self.margin, side


# viridis at 0, 1/4, 1/2, 3/4, 1: dark purple (near) to yellow (far), readable in grey too
_ANCHORS = np.array(
    [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]], np.float32
)
DEPTH_LUT = np.stack(
    [np.interp(np.linspace(0, 1, 256), np.linspace(0, 1, 5), _ANCHORS[:, c]) for c in range(3)],
    axis=1,
).astype(np.uint8)
"""256 RGB colours, index 0 at 0 m."""


def depth_to_rgb(depth: np.ndarray, depth_max: float = DEPTH_MAX) -> np.ndarray:
    """[H, W, 3] uint8 of depth in metres: `DEPTH_LUT` at sqrt(depth / depth_max) (the
    sensor's clip), so the 0.5-4 m the robot works in spans most of the colours."""
    d = np.asarray(depth, np.float32).reshape(depth.shape[0], depth.shape[1])
    v = np.sqrt(np.clip(d / depth_max, 0.0, 1.0))
    return DEPTH_LUT[np.round(255.0 * v).astype(np.uint8)]


def upscale(img: np.ndarray, k: int) -> np.ndarray:
    """Nearest-neighbour k-times upscaling (each pixel becomes a k x k block)."""
    return np.repeat(np.repeat(img, k, axis=0), k, axis=1)


def paste_depth_inset(main: np.ndarray, depth: np.ndarray, layout: FrameLayout) -> np.ndarray:
    """`main` with the colour-mapped depth (`depth_to_rgb`), upscaled by `layout.depth_scale`,
    framed in white in the bottom-left corner and labelled above it; the depth must be
    `depth_size` square."""
    n = layout.depth_size
    if depth.shape[:2] != (n, n):
        raise ValueError(
            f"depth inset is {depth.shape[:2]}, the layout expects ({n}, {n}); render it at "
            "FrameLayout.depth_size"
        )
    top, left, side = layout.depth_box()
    out = main.copy()
    out[top - 1 : top + side + 1, left - 1 : left + side + 1] = 255  # 1-pixel white frame
    out[top : top + side, left : left + side] = upscale(depth_to_rgb(depth), layout.depth_scale)
    band = _label_band(DEPTH_LABEL)
    label_top = max(0, top - 1 - band.shape[0])
    width = min(band.shape[1], out.shape[1] - left + 1)
    out[label_top : top - 1, left - 1 : left - 1 + width] = band[-(top - 1 - label_top) :, :width]
    return out


@lru_cache(maxsize=8)
def _label_band(text: str) -> np.ndarray:
    """White text on a black band (drawn once: PIL text costs ~0.3 ms a line per frame)."""
    band = draw_text(np.zeros((15, 7 * len(text) + 9, 3), np.uint8), [text])
    band.flags.writeable = False  # shared by every frame
    return band


@lru_cache(maxsize=4)
def _idle_panel(side: int) -> np.ndarray:
    panel = draw_text(np.full((side, side, 3), PANEL_GREY, np.uint8), PANEL_IDLE_TEXT)
    panel.flags.writeable = False  # shared by every frame
    return panel


def arm_panel(view: np.ndarray | None, layout: FrameLayout, label: str = "") -> np.ndarray:
    """The square right-hand panel: the arm view with its label, or the idle placeholder."""
    side = layout.panel_side
    if view is None:
        return _idle_panel(side)
    if view.shape[:2] != (side, side):
        raise ValueError(
            f"arm view is {view.shape[:2]}, the panel is ({side}, {side}); render it at "
            "FrameLayout.panel_side"
        )
    return draw_text(np.ascontiguousarray(view), [label] if label else [])


def compose(
    main: np.ndarray,
    layout: FrameLayout,
    arm_view: np.ndarray | None = None,
    arm_label: str = "",
    depth: np.ndarray | None = None,
) -> np.ndarray:
    """One video frame of `layout.size`: main view (+ depth inset) | arm panel."""
    w, h = layout.main
    if main.shape[:2] != (h, w):
        raise ValueError(f"main view is {main.shape[:2]}, the layout expects ({h}, {w})")
    if layout.depth_inset and depth is not None:
        main = paste_depth_inset(main, depth, layout)
    if not layout.arm_panel:
        return main
    return np.concatenate([main, arm_panel(arm_view, layout, arm_label)], axis=1)
