"""Parameter counts, for documentation and sanity checks."""

from __future__ import annotations

from torch import nn


def count_parameters(module: nn.Module, trainable_only: bool = True) -> int:
    """Number of scalar parameters (only those with requires_grad unless trainable_only=False)."""
    return sum(p.numel() for p in module.parameters() if p.requires_grad or not trainable_only)


def parameter_breakdown(module: nn.Module) -> dict[str, int]:
    """Parameter count per direct child module (plus '<own>' for parameters held directly)."""
    counts = {name: count_parameters(child, False) for name, child in module.named_children()}
    own = sum(p.numel() for p in module.parameters(recurse=False))
    if own:
        counts["<own>"] = own
    return counts
