"""Where the main process spends its time during collection, per environment step.

The collector and the inference worker add wall-clock seconds to named parts when a
`HostCost` is attached (off by default: then the hot path pays one `is None` test per
section). The trainer-ceiling benchmark reports the parts as µs per collected step. On CUDA,
`synchronize=True` waits for the device after the policy so that its time is not charged to
the next part that touches the device.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

PARTS = ("stage", "policy", "commit", "actions_d2h", "send", "wait", "complete")
"""stage: gather observation rows + host→device copy + recurrent-state gather; policy: the
acting forward; commit: rollout-storage writes; actions_d2h: actions to shared memory;
send: STEP messages to the workers; wait: blocked on the workers' pipes, then reading their
replies; complete: writing rewards/flags back into storage and the ready/busy bookkeeping."""

GROUPS = {
    "inference": ("policy",),
    "storage": ("commit", "complete"),
    "transfer": ("stage", "actions_d2h"),
    "ipc": ("send",),
    "waiting": ("wait",),
}
"""The issue-level split: inference, storage, host↔device transfer, env IPC and waiting."""


@dataclass
class HostCost:
    seconds: dict[str, float] = field(default_factory=lambda: dict.fromkeys(PARTS, 0.0))
    steps: int = 0
    synchronize: bool = False

    def add(self, part: str, since: float) -> float:
        """Charge the time since `since` to `part`; returns now (the next section's start)."""
        t = time.perf_counter()
        self.seconds[part] += t - since
        return t

    def per_step_us(self) -> dict[str, float]:
        """µs per collected step of each part and group, and their total."""
        n = max(self.steps, 1)
        out = {part: 1e6 * s / n for part, s in self.seconds.items()}
        for group, parts in GROUPS.items():
            out[group] = sum(out[p] for p in parts)
        out["total"] = sum(out[p] for p in PARTS)
        return out

    def reset(self) -> None:
        self.seconds = dict.fromkeys(PARTS, 0.0)
        self.steps = 0
