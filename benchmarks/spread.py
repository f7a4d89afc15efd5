"""How the benchmarks write repeated measurements in their tables (and RESULTS.md):
"median [min–max]"."""

from __future__ import annotations

import statistics
from collections.abc import Sequence


def median_cell(values: Sequence[float], digits: int = 0, empty: str = "n/a") -> str:
    """'median [min–max]' of `values` with `digits` decimals; `empty` when there are none."""
    if not values:
        return empty
    f = f".{digits}f"
    return f"{statistics.median(values):{f}} [{min(values):{f}}–{max(values):{f}}]"
