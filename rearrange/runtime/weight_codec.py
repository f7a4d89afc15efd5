"""How a shipped checkpoint stores its policy weights: fp16 (every skill so far), or int8 with
one fp32 scale per output row for the large matrices (the depth students: the paper's ResNet18
+ LSTM is 9M parameters, 17 MB in fp16, ~9 MB in int8; docs/DESIGN.md §9).

int8 is symmetric, per output row (dim 0: a conv's output channel, a linear's or an LSTM
gate's output unit): w ≈ q * scale, q in [-127, 127], scale = max|w_row| / 127, so each weight
is within scale / 2 of its fp32 value. Tensors under `INT8_MIN_NUMEL` elements (biases, norms,
the action head's log-std) stay fp16: they are a negligible share of the bytes. `decode` turns
either layout back into dense floating-point tensors, so every loader sees a plain state_dict.
"""

from __future__ import annotations

import torch

PRECISIONS = ("fp16", "int8")
SCALE_SUFFIX = "::int8_scale"
"""The key of a quantised tensor's scales: `<name>::int8_scale` beside the int8 `<name>`."""
INT8_MIN_NUMEL = 4096


def encode(weights: dict[str, torch.Tensor], precision: str) -> dict[str, torch.Tensor]:
    """The state_dict as the shipped file stores it (`precision` in PRECISIONS)."""
    if precision not in PRECISIONS:
        raise ValueError(f"weight precision {precision!r}: use one of {', '.join(PRECISIONS)}")
    out: dict[str, torch.Tensor] = {}
    for name, value in weights.items():
        if not torch.is_floating_point(value):
            out[name] = value
        elif precision == "int8" and value.dim() >= 2 and value.numel() >= INT8_MIN_NUMEL:
            q, scale = quantize_rows(value)
            out[name], out[name + SCALE_SUFFIX] = q, scale
        else:
            out[name] = value.half()
    return out


def quantize_rows(w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(int8 q, fp32 scale) with w ≈ q * scale, one scale per row of dim 0 (shape [rows, 1...])."""
    w = w.detach().float()
    peak = w.abs().amax(dim=tuple(range(1, w.dim())), keepdim=True)
    scale = torch.where(peak > 0, peak / 127.0, torch.ones_like(peak))
    q = torch.round(w / scale).clamp_(-127, 127).to(torch.int8)
    return q, scale


def decode(weights: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Dense weights from a stored state_dict: int8 tensors times their scales (fp32); fp16 and
    fp32 tensors unchanged. A scale without its tensor, or an int8 tensor without its scale
    (a damaged file), raises ValueError naming the key."""
    scales = {k[: -len(SCALE_SUFFIX)]: v for k, v in weights.items() if k.endswith(SCALE_SUFFIX)}
    out: dict[str, torch.Tensor] = {}
    for name, value in weights.items():
        if name.endswith(SCALE_SUFFIX):
            if name[: -len(SCALE_SUFFIX)] not in weights:
                raise ValueError(f"int8 scale {name!r} has no weight tensor")
            continue
        if name in scales:
            if value.dtype != torch.int8:
                raise ValueError(f"weight {name!r} has a scale but is {value.dtype}, not int8")
            out[name] = value.float() * scales[name].float()
        else:
            out[name] = value
    return out


def precision_of(weights: dict[str, torch.Tensor]) -> str:
    """'int8' if any tensor is stored quantised, 'fp16' if the floats are half, else 'fp32'."""
    if any(k.endswith(SCALE_SUFFIX) for k in weights):
        return "int8"
    floats = [v for v in weights.values() if torch.is_floating_point(v)]
    return "fp16" if floats and all(v.dtype == torch.float16 for v in floats) else "fp32"
