"""The Rollout: one flat batch of VER experience handed from rollout storage to the learner.

Layout (docs/CONTRACTS.md §6): S steps in collection order. Steps of different environments
interleave arbitrarily, but the steps of one environment appear in time order (stale steps,
which are older, before fresh ones). Nothing here assumes an equal number of steps per env.

Episode ends follow gymnasium: `dones` marks every end (terminated or truncated); `truncated`
marks the ends caused by a time limit only, whose return continues with γ·V(final
observation) = γ·`final_values` (the env auto-resets, so that observation is not a step).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import torch
from torch import Tensor

ObsDict = dict[str, Tensor]


def index_obs(obs: ObsDict, index: Tensor) -> ObsDict:
    """Select steps `index` (a long tensor of step indices) from every observation tensor."""
    return {key: value.index_select(0, index) for key, value in obs.items()}


# Per-step tensor fields of a Rollout, besides `obs` (a dict) and `is_stale` (set by who
# builds the rollout); `bootstrap_values` is per env.
STEP_TENSOR_FIELDS = (
    "actions",
    "prev_actions",
    "log_probs",
    "values",
    "rewards",
    "dones",
    "hidden_in",
    "episode_starts",
    "env_ids",
    "policy_versions",
    "truncated",
    "final_values",
)


@dataclass
class Rollout:
    """Flat batch of S steps from N environments (contract §6)."""

    obs: ObsDict
    """Observation tensors, each [S, ...]: the observation the policy acted on at the step."""
    actions: Tensor
    """[S, A] actions taken (unclipped Gaussian samples)."""
    prev_actions: Tensor
    """[S, A] action fed to the policy with the step's observation (zero at episode starts)."""
    log_probs: Tensor
    """[S] log π_old(a|s) from the policy version that acted."""
    values: Tensor
    """[S] V_old(s) from the policy version that acted."""
    rewards: Tensor
    """[S] reward received for the step's action."""
    dones: Tensor
    """[S] bool: the episode ended at this step (terminated or truncated)."""
    hidden_in: Tensor
    """[S, R, H] recurrent state fed to the policy at the step (zero at episode starts)."""
    episode_starts: Tensor
    """[S] bool: the step is the first of an episode."""
    env_ids: Tensor
    """[S] long: environment index in [0, N)."""
    policy_versions: Tensor
    """[S] long: version of the policy that acted."""
    bootstrap_values: Tensor
    """[N] value of each env's next (in-flight) step; 0 where the env's last step was done."""
    is_stale: Tensor
    """[S] bool: the step was collected for an earlier update (preemption fill)."""
    truncated: Tensor | None = None
    """[S] bool: the episode was cut by a time limit at this step (`dones` is set too, but not
    terminated): its value target bootstraps from `final_values`. None = no truncation."""
    final_values: Tensor | None = None
    """[S] V_old(final observation) at truncated steps, 0 elsewhere. None = zeros."""

    def __post_init__(self) -> None:
        if self.truncated is None:
            self.truncated = torch.zeros_like(self.rewards, dtype=torch.bool)
        if self.final_values is None:
            self.final_values = torch.zeros_like(self.rewards, dtype=torch.float32)

    @property
    def num_steps(self) -> int:
        """S, the number of steps in the rollout."""
        return int(self.rewards.shape[0])

    @property
    def num_envs(self) -> int:
        """N, the number of environments (length of `bootstrap_values`)."""
        return int(self.bootstrap_values.shape[0])

    @property
    def device(self) -> torch.device:
        return self.rewards.device

    def to(self, device: torch.device | str, non_blocking: bool = False) -> Rollout:
        """A copy with every tensor on `device`."""
        moved = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, dict):
                moved[f.name] = {
                    k: v.to(device, non_blocking=non_blocking) for k, v in value.items()
                }
            else:
                moved[f.name] = value.to(device, non_blocking=non_blocking)
        return Rollout(**moved)

    def select_steps(self, index: Tensor) -> Rollout:
        """The steps `index` ([M] long) as a Rollout, with the same bootstrap values."""
        return Rollout(
            obs=index_obs(self.obs, index),
            **{name: getattr(self, name)[index] for name in STEP_TENSOR_FIELDS},
            bootstrap_values=self.bootstrap_values,
            is_stale=self.is_stale[index],
        )

    def select_obs(self, index: Tensor) -> ObsDict:
        """Observations of steps `index` ([M] long)."""
        return index_obs(self.obs, index)

    def steps_per_env(self) -> Tensor:
        """[N] long: number of steps collected from each environment."""
        return torch.bincount(self.env_ids, minlength=self.num_envs)

    def validate(self) -> None:
        """Raise ValueError with one line if shapes or dtypes break contract §6."""
        s = self.num_steps
        if s == 0:
            raise ValueError("Rollout is empty: collect at least one step before updating")
        per_step = {
            "actions": self.actions,
            "prev_actions": self.prev_actions,
            "log_probs": self.log_probs,
            "values": self.values,
            "dones": self.dones,
            "hidden_in": self.hidden_in,
            "episode_starts": self.episode_starts,
            "env_ids": self.env_ids,
            "policy_versions": self.policy_versions,
            "is_stale": self.is_stale,
            "truncated": self.truncated,
            "final_values": self.final_values,
            **{f"obs[{k!r}]": v for k, v in self.obs.items()},
        }
        for name, tensor in per_step.items():
            if tensor.shape[0] != s:
                raise ValueError(
                    f"Rollout.{name} has {tensor.shape[0]} steps but rewards has {s}: "
                    "every per-step field must have the same first dimension"
                )
        for name in ("log_probs", "values", "rewards", "dones", "episode_starts", "env_ids",
                     "truncated", "final_values"):  # fmt: skip
            if getattr(self, name).dim() != 1:
                raise ValueError(
                    f"Rollout.{name} must be 1-D [S], got shape {tuple(getattr(self, name).shape)}"
                )
        for name in ("dones", "episode_starts", "is_stale", "truncated"):
            if getattr(self, name).dtype != torch.bool:
                raise ValueError(
                    f"Rollout.{name} must be a bool tensor, got {getattr(self, name).dtype}"
                )
        if bool((self.truncated & ~self.dones).any()):
            raise ValueError(
                "Rollout.truncated is set on steps whose `dones` is False: a truncated step "
                "ends its episode, so set dones there too"
            )
        if self.hidden_in.dim() != 3:
            raise ValueError(
                f"Rollout.hidden_in must be [S, R, H], got shape {tuple(self.hidden_in.shape)}"
            )
        if self.env_ids.dtype != torch.long:
            raise ValueError(f"Rollout.env_ids must be int64, got {self.env_ids.dtype}")
        lo, hi = int(self.env_ids.min()), int(self.env_ids.max())
        if lo < 0 or hi >= self.num_envs:
            raise ValueError(
                f"Rollout.env_ids span [{lo}, {hi}] but bootstrap_values has {self.num_envs} envs: "
                "env ids must lie in [0, N)"
            )
