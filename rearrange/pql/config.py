"""Typed configuration of the PQL trainer (Parallel Q-Learning, Li et al. 2023).

Defaults are the paper's Table B.1 (batch 8,192, β_a:v = 1:8, β_p:v = 1:2, τ = 0.05, 3-step
returns, mixed exploration σ ∈ [0.05, 0.8], 5M replay; its 4,096 envs would be the run's
`run.num_envs`, `runtime.run.RunConfig`, which also holds total steps, seed, device and the
log and checkpoint intervals in env steps); the networks are the reference's state MLPs
(512-256-128, ELU). `skill_configs/algo/pql.yaml` overrides them for a 2-core CPU. The actor network's hidden sizes are the model group's `state_mlp_hidden`
(the checkpoint's `model` section rebuilds it as the `pql_actor` policy); the critics' are
`critic_hidden` here. Invalid values raise ValueError with one line naming the field and the fix.
"""

from __future__ import annotations

from dataclasses import dataclass, field


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise ValueError(message)


@dataclass
class PQLConfig:
    """Actor / V-learner / P-learner settings (PQL paper §3 and Table B.1)."""

    warmup_steps: int = 32
    """Steps per env collected before the learners start (uniform random actions on a fresh
    run; a resumed run restores its replay.npz and needs none, or warms up with the noisy
    policy if the file is missing)."""
    buffer_size: int = 5_000_000
    """Replay capacity in transitions (rounded up to whole rows of N)."""
    batch_size: int = 8192
    """Transitions per V-learner and per P-learner update."""
    actor_lr: float = 5e-4
    """Adam learning rate of the policy (P-learner)."""
    critic_lr: float = 5e-4
    """Adam learning rate of the two critics (V-learner)."""
    gamma: float = 0.99
    """Discount factor γ."""
    nstep: int = 3
    """n of the n-step return target (paper App. C: 3 is best)."""
    tau: float = 0.05
    """Polyak rate of the target critics, applied after every V-learner update."""
    max_grad_norm: float = 0.5
    """Gradient-norm clip of both learners."""
    reward_scale: float = 1.0
    """Rewards are multiplied by this in the targets (paper Table B.2; matters for PQL-D's
    fixed support)."""
    obs_norm: bool = True
    """Normalise observations by running mean/std (updated by the Actor from what it sees)."""
    critic_hidden: list[int] = field(default_factory=lambda: [512, 256, 128])
    """Hidden sizes of each critic MLP (ELU)."""
    beta_a_v: float = 0.125
    """β_a:v = f_a / f_v: Actor rollout steps (all N envs) per V-learner update (1:8)."""
    beta_p_v: float = 0.5
    """β_p:v = f_p / f_v: P-learner updates per V-learner update (1:2)."""
    ratio_control: bool = True
    """Processes wait to hold β_a:v and β_p:v (paper §3.2); False lets them run freely."""
    ratio_lead: float = 1.0
    """How many of its own units (steps / updates) a process may start beyond its share
    before it waits (1: the Actor collects step k+1 while the V-learner trains on step k)."""
    sigma_min: float = 0.05
    """Smallest exploration std of the mixed exploration (env 0)."""
    sigma_max: float = 0.8
    """Largest exploration std (env N-1); env i gets σ_min + i/(N-1)·(σ_max - σ_min)."""
    v_policy_sync_interval: int = 8
    """V-learner updates between pulls of the P-learner's policy: the lagged policy is the
    target policy (paper §3.2; 8 = once per Actor step at β_a:v = 1:8, as in Algorithm 1)."""
    p_critic_sync_interval: int = 4
    """P-learner updates between pulls of the V-learner's critics."""
    distributional: bool = False
    """PQL-D: categorical critics (C51 projection, cross-entropy) instead of MSE."""
    v_min: float = -10.0
    """Lower end of PQL-D's value support."""
    v_max: float = 10.0
    """Upper end of PQL-D's value support."""
    num_atoms: int = 51
    """Atoms of PQL-D's value support."""
    learner_threads: int = 1
    """torch intra-op threads per learner process (`run.serial`: Actor, V- and P-learner in
    one process, interleaved by the same ratio control; `run.device`: the learners')."""
    checkpoint_replay: int = 1_000_000
    """Replay transitions saved with each checkpoint (checkpoints/replay.npz: the newest this
    many, observations and actions in fp16, ~K·(2·obs_dim + 2·act_dim + 6) bytes) so that a
    resumed run continues with its data; 0 saves none (a resumed run warms up again)."""
    learner_timeout_s: float = 120.0
    """A learner that does not answer a checkpoint request for this long is reported stuck."""

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Raise ValueError naming the first bad field."""
        positive_ints = ("buffer_size", "batch_size", "nstep")
        for name in positive_ints + ("v_policy_sync_interval", "p_critic_sync_interval"):
            value = getattr(self, name)
            _require(value >= 1, f"PQLConfig.{name} must be >= 1, got {value}")
        for name in ("actor_lr", "critic_lr", "max_grad_norm", "reward_scale"):
            value = getattr(self, name)
            _require(value > 0, f"PQLConfig.{name} must be > 0, got {value}")
        _require(
            self.warmup_steps >= 1, f"PQLConfig.warmup_steps must be >= 1, got {self.warmup_steps}"
        )
        _require(0 <= self.gamma <= 1, f"PQLConfig.gamma must be in [0, 1], got {self.gamma}")
        _require(0 < self.tau <= 1, f"PQLConfig.tau must be in (0, 1], got {self.tau}")
        for name in ("beta_a_v", "beta_p_v"):
            value = getattr(self, name)
            _require(value > 0, f"PQLConfig.{name} must be > 0 (e.g. 0.125 for 1:8), got {value}")
        _require(self.ratio_lead >= 1, f"PQLConfig.ratio_lead must be >= 1, got {self.ratio_lead}")
        _require(
            0 <= self.sigma_min <= self.sigma_max,
            f"PQLConfig needs 0 <= sigma_min <= sigma_max, got [{self.sigma_min}, {self.sigma_max}]",
        )
        _require(
            bool(self.critic_hidden) and all(h >= 1 for h in self.critic_hidden),
            f"PQLConfig.critic_hidden must list positive sizes, got {self.critic_hidden}",
        )
        _require(
            self.v_min < self.v_max,
            f"PQLConfig needs v_min < v_max, got [{self.v_min}, {self.v_max}]",
        )
        _require(self.num_atoms >= 2, f"PQLConfig.num_atoms must be >= 2, got {self.num_atoms}")
        _require(self.learner_threads >= 1, "PQLConfig.learner_threads must be >= 1")
        _require(
            self.checkpoint_replay >= 0,
            f"PQLConfig.checkpoint_replay must be >= 0 (0: no replay.npz), got "
            f"{self.checkpoint_replay}",
        )
        _require(self.learner_timeout_s > 0, "PQLConfig.learner_timeout_s must be > 0")

    def rows(self, num_envs: int) -> int:
        """Replay rows (one row = one Actor step of all N envs)."""
        return max(-(-self.buffer_size // num_envs), self.warmup_steps + self.nstep + 8)
