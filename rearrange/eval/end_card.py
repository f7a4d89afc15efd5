"""The card an evaluation video ends on: the outcome, the stages completed out of the plan's
(a completed 10-stage episode reads 10/10) and, on a failure, the plan step that failed and
the cause the executor recorded (`EpisodeRecord.failed_skill` / `failure_reason`)."""

from __future__ import annotations

import textwrap

import numpy as np

from rearrange.eval.report import EpisodeRecord

SUCCESS_RGB = (80, 220, 100)
FAILURE_RGB = (255, 90, 80)
TEXT_RGB = (255, 255, 255)
WRAP = 56  # characters per line of the failure cause at the card's font size


def end_card_lines(record: EpisodeRecord, num_stages: int, scenario: str = "") -> list[str]:
    """The card's text, first line the outcome."""
    lines = [
        "SUCCESS" if record.success else "FAILURE",
        f"{scenario} {record.episode_id}".strip(),
        f"stages {record.stages_completed}/{num_stages} completed, {record.steps} steps",
    ]
    if not record.success:
        if record.failed_skill:
            lines.append(f"failed: {record.failed_skill}")
        cause = record.failure_reason or "not recorded"
        lines += textwrap.wrap(f"cause: {cause}", WRAP, subsequent_indent="  ")
    return lines


def _font(size: int):
    from PIL import ImageFont

    try:
        return ImageFont.load_default(size=size)  # scalable with FreeType (Pillow >= 10.1)
    except (TypeError, OSError):
        return ImageFont.load_default()


def draw_end_card(frame: np.ndarray, lines: list[str], success: bool) -> np.ndarray:
    """`frame` darkened, with `lines` centred on a black box, the outcome line coloured."""
    from PIL import Image, ImageDraw

    dim = (frame.astype(np.float32) * 0.35).astype(np.uint8)
    pil = Image.fromarray(dim)
    draw = ImageDraw.Draw(pil)
    big, small = _font(30), _font(16)
    fonts = [big] + [small] * (len(lines) - 1)
    boxes = [draw.textbbox((0, 0), line, font=f) for line, f in zip(lines, fonts)]
    heights = [b[3] - b[1] + 8 for b in boxes]
    width = max(b[2] - b[0] for b in boxes)
    h, w = frame.shape[:2]
    x0, y0 = (w - width) // 2, (h - sum(heights)) // 2
    draw.rectangle([x0 - 16, y0 - 14, x0 + width + 16, y0 + sum(heights) + 10], fill=(0, 0, 0))
    y = y0
    for k, (line, font, box, dy) in enumerate(zip(lines, fonts, boxes, heights)):
        colour = (SUCCESS_RGB if success else FAILURE_RGB) if k == 0 else TEXT_RGB
        draw.text((x0 - box[0], y - box[1]), line, fill=colour, font=font)
        y += dy
    return np.asarray(pil).copy()
