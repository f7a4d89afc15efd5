"""How a shipped checkpoint stores its policy weights: fp16 (the state skills), int8 with one
fp32 scale per output row, or int4 with one fp16 scale per group of 32 weights of a row (the
depth students: the paper's ResNet18 + LSTM is 9M parameters, 17 MB in fp16, ~9 MB in int8,
~5 MB in int4; docs/DESIGN.md §9).

Both integer codes are symmetric and quantise the large matrices only (at least
`INT8_MIN_NUMEL` elements, two or more dims); biases, norms and the action head's log-std stay
fp16, a negligible share of the bytes. A row is dim 0: a conv's output channel, a linear's or
an LSTM gate's output unit; its other dims are flattened in memory order.
- int8: w ≈ q * scale, q in [-127, 127], scale = max|w_row| / 127.
- int4: the row is cut into groups of `INT4_GROUP` (the last one zero-padded); w ≈ q * scale,
  q in [-7, 7], scale = max|w_group| / 7 stored as fp16; two codes per byte (q + 8, the even
  element in the low nibble), the original shape beside them.
Each weight is within half a step (scale / 2) of its fp32 value (int4: plus the fp16 rounding
of its scale, < 0.1 % of a step). `decode` turns every layout back into dense floating-point
tensors, so every loader sees a plain state_dict.
"""

from __future__ import annotations

import math

import torch

PRECISIONS = ("fp16", "int8", "int4")
SCALE_SUFFIX = "::int8_scale"
"""The key of an int8 tensor's scales: `<name>::int8_scale` beside the int8 `<name>`."""
INT4_SCALE_SUFFIX = "::int4_scale"
INT4_SHAPE_SUFFIX = "::int4_shape"
"""An int4 tensor is three keys: the packed uint8 `<name>`, its fp16 group scales and its shape."""
INT8_MIN_NUMEL = 4096
"""Smaller tensors (and 1-d ones) stay fp16 under either integer code."""
INT4_GROUP = 32


def encode(weights: dict[str, torch.Tensor], precision: str) -> dict[str, torch.Tensor]:
    """The state_dict as the shipped file stores it (`precision` in PRECISIONS)."""
    if precision not in PRECISIONS:
        raise ValueError(f"weight precision {precision!r}: use one of {', '.join(PRECISIONS)}")
    out: dict[str, torch.Tensor] = {}
    for name, value in weights.items():
        if not torch.is_floating_point(value):
            out[name] = value
        elif precision == "fp16" or value.dim() < 2 or value.numel() < INT8_MIN_NUMEL:
            out[name] = value.half()
        elif precision == "int8":
            out[name], out[name + SCALE_SUFFIX] = quantize_rows(value)
        else:
            out[name], out[name + INT4_SCALE_SUFFIX] = quantize_groups(value)
            out[name + INT4_SHAPE_SUFFIX] = torch.tensor(value.shape, dtype=torch.int64)
    return out


def quantize_rows(w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(int8 q, fp32 scale) with w ≈ q * scale, one scale per row of dim 0 (shape [rows, 1...])."""
    w = w.detach().float()
    peak = w.abs().amax(dim=tuple(range(1, w.dim())), keepdim=True)
    scale = torch.where(peak > 0, peak / 127.0, torch.ones_like(peak))
    q = torch.round(w / scale).clamp_(-127, 127).to(torch.int8)
    return q, scale


def quantize_groups(w: torch.Tensor, group: int = INT4_GROUP) -> tuple[torch.Tensor, torch.Tensor]:
    """(packed uint8 [rows, padded / 2], fp16 scale [rows, groups]): each row of dim 0 flattened,
    zero-padded to a multiple of `group` (even), cut into groups with one scale each."""
    rows = w.shape[0]
    flat = w.detach().float().reshape(rows, -1)
    flat = torch.nn.functional.pad(flat, (0, (-flat.shape[1]) % group))
    groups = flat.reshape(rows, -1, group)
    peak = groups.abs().amax(dim=2, keepdim=True)
    scale = torch.where(peak > 0, peak / 7.0, torch.ones_like(peak)).half()
    q = torch.round(groups / scale.float()).clamp_(-7, 7)
    codes = (q + 8).to(torch.uint8).reshape(rows, -1)
    packed = codes[:, 0::2] | (codes[:, 1::2] << 4)
    return packed, scale.squeeze(2)


def dequantize_groups(packed: torch.Tensor, scale: torch.Tensor, shape: list[int]) -> torch.Tensor:
    """The dense fp32 tensor of `shape` from `quantize_groups`' packed codes and scales; a
    layout that does not fit the shape raises ValueError."""
    rows, groups = scale.shape
    cols = math.prod(shape) // rows if rows else 0
    group = 2 * packed.shape[1] // groups if groups else 0
    if (packed.dtype != torch.uint8 or packed.shape[0] != rows or not shape or shape[0] != rows
            or group <= 0 or groups * group != 2 * packed.shape[1] or not 0 <= groups * group - cols < group):  # fmt: skip
        raise ValueError(
            f"int4 codes {tuple(packed.shape)} ({packed.dtype}) and scales {tuple(scale.shape)} "
            f"do not make a tensor of shape {tuple(shape)}"
        )
    codes = torch.stack([packed & 0x0F, packed >> 4], dim=2).reshape(rows, groups, group)
    dense = (codes.to(torch.float32) - 8.0) * scale.float().unsqueeze(2)
    return dense.reshape(rows, -1)[:, :cols].reshape(shape)


def decode(weights: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Dense weights from a stored state_dict: int8 tensors times their row scales, int4 ones
    unpacked times their group scales (fp32); fp16 and fp32 tensors unchanged. A scale without
    its tensor, or a quantised tensor without its scale or of the wrong dtype (a damaged file),
    raises ValueError naming the key."""
    parts = {}
    for suffix in (SCALE_SUFFIX, INT4_SCALE_SUFFIX, INT4_SHAPE_SUFFIX):
        parts[suffix] = {k[: -len(suffix)]: v for k, v in weights.items() if k.endswith(suffix)}
        for base in parts[suffix]:
            if base not in weights:
                raise ValueError(f"weight {base + suffix!r} has no weight tensor")
    out: dict[str, torch.Tensor] = {}
    for name, value in weights.items():
        if any(name.endswith(s) for s in parts):
            continue
        if name in parts[SCALE_SUFFIX]:
            if value.dtype != torch.int8:
                raise ValueError(f"weight {name!r} has a scale but is {value.dtype}, not int8")
            out[name] = value.float() * parts[SCALE_SUFFIX][name].float()
        elif name in parts[INT4_SCALE_SUFFIX] or name in parts[INT4_SHAPE_SUFFIX]:
            if name not in parts[INT4_SCALE_SUFFIX] or name not in parts[INT4_SHAPE_SUFFIX]:
                raise ValueError(f"int4 weight {name!r} lacks its scales or its shape")
            shape = [int(d) for d in parts[INT4_SHAPE_SUFFIX][name].tolist()]
            try:
                out[name] = dequantize_groups(value, parts[INT4_SCALE_SUFFIX][name], shape)
            except ValueError as exc:
                raise ValueError(f"int4 weight {name!r}: {exc}") from None
        else:
            out[name] = value
    return out


def precision_of(weights: dict[str, torch.Tensor]) -> str:
    """'int8' or 'int4' if tensors are stored quantised, 'fp16' if the floats are half, else
    'fp32'."""
    if any(k.endswith(SCALE_SUFFIX) for k in weights):
        return "int8"
    if any(k.endswith(INT4_SCALE_SUFFIX) for k in weights):
        return "int4"
    floats = [v for v in weights.values() if torch.is_floating_point(v)]
    return "fp16" if floats and all(v.dtype == torch.float16 for v in floats) else "fp32"
