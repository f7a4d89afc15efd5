"""Typed configuration for the VER trainer.

`PPOConfig` holds the learning hyper-parameters (defaults = VER paper, Table A1);
`VERConfig` holds the experience-collection / system settings. What every trainer reads (env
count, total steps, seed, device, log and checkpoint intervals in env steps) is the run's
`runtime.run.RunConfig` (docs/DESIGN.md §5). All are plain dataclasses so Hydra can store
them in its ConfigStore; yaml files in `skill_configs/` only override them. Invalid values
raise `ValueError` with one line naming the field and the fix.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from rearrange.runtime.run import RunConfig

ENTROPY_MODES = ("learned", "fixed")
LR_SCHEDULES = ("cosine", "constant")
SYSTEMS = ("ver", "nover", "ddppo", "collect_only")  # collect_only: ver without learning (a bound)


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise ValueError(message)


@dataclass
class PPOConfig:
    """PPO + GAE + learned-entropy settings (VER paper, Table A1 and §4 'Training')."""

    lr: float = 2.5e-4
    """Initial Adam learning rate (policy and, when learned, the entropy coefficient)."""
    lr_schedule: str = "cosine"
    """'cosine': decay from `lr` to 0 over the run's environment steps; 'constant': keep `lr`."""
    eps: float = 1e-5
    """Adam epsilon."""
    ppo_epoch: int = 3
    """Passes over each rollout per update."""
    num_mini_batch: int = 2
    """Mini-batches per epoch; each gets ~T·N / num_mini_batch steps (VER Fig. 3B)."""
    clip_param: float = 0.2
    """PPO ratio clip ε: the surrogate uses clamp(ratio, 1-ε, 1+ε)."""
    value_loss_coef: float = 0.5
    """Weight of the value loss 0.5·(return - V)² in the total loss."""
    use_clipped_value_loss: bool = False
    """Clip the value prediction around the stored one by `clip_param` (paper: off)."""
    use_normalized_advantage: bool = False
    """Normalise advantages to zero mean / unit variance per rollout (paper: off)."""
    gamma: float = 0.99
    """Discount factor γ."""
    gae_lambda: float = 0.95
    """GAE λ."""
    entropy_mode: str = "learned"
    """'learned': α tuned towards `target_entropy` (paper); 'fixed': α = `entropy_coef`
    (the paper's benchmarks use fixed 1e-4)."""
    entropy_coef: float = 1e-3
    """Initial α when learned, the constant α when fixed."""
    min_entropy_coef: float = 1e-4
    """Lower bound of the learned α."""
    max_entropy_coef: float = 1.0
    """Upper bound of the learned α."""
    target_entropy: float = 0.0
    """Target policy entropy λ of the learned-α constraint."""
    use_ver_is: bool = True
    """Weight each step by its environment's truncated importance-sampling coefficient to
    correct VER's uneven per-environment sampling (no effect when all envs give T steps)."""
    max_is_weight: float = 1.0
    """Truncation of the VER IS weight inside the loss."""
    max_grad_norm: float = 0.2
    """Global gradient-norm clip of the policy parameters (habitat-baselines default)."""
    autocast_bf16: bool = False
    """Run the policy's forward in the PPO update under bf16 autocast (the loss stays fp32).
    Off by default: keep it only where a benchmark shows it helps (benchmarks/RESULTS.md)."""
    max_consecutive_skips: int = 3
    """Raise `TrainingDivergedError` after this many consecutive optimiser steps skipped for a
    non-finite loss or gradient."""

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Raise ValueError naming the first bad field."""
        _require(self.lr > 0, f"PPOConfig.lr must be > 0, got {self.lr}")
        _require(
            self.lr_schedule in LR_SCHEDULES,
            f"PPOConfig.lr_schedule={self.lr_schedule!r}: use one of {LR_SCHEDULES}",
        )
        _require(self.ppo_epoch >= 1, f"PPOConfig.ppo_epoch must be >= 1, got {self.ppo_epoch}")
        _require(
            self.num_mini_batch >= 1,
            f"PPOConfig.num_mini_batch must be >= 1, got {self.num_mini_batch}",
        )
        _require(
            0 < self.clip_param < 1,
            f"PPOConfig.clip_param must be in (0, 1), got {self.clip_param}",
        )
        _require(0 <= self.gamma <= 1, f"PPOConfig.gamma must be in [0, 1], got {self.gamma}")
        _require(
            0 <= self.gae_lambda <= 1,
            f"PPOConfig.gae_lambda must be in [0, 1], got {self.gae_lambda}",
        )
        _require(
            self.entropy_mode in ENTROPY_MODES,
            f"PPOConfig.entropy_mode={self.entropy_mode!r}: use one of {ENTROPY_MODES}",
        )
        _require(
            0 < self.min_entropy_coef <= self.max_entropy_coef,
            "PPOConfig entropy bounds must satisfy 0 < min_entropy_coef <= max_entropy_coef, "
            f"got [{self.min_entropy_coef}, {self.max_entropy_coef}]",
        )
        if self.entropy_mode == "learned":
            _require(
                self.min_entropy_coef <= self.entropy_coef <= self.max_entropy_coef,
                f"PPOConfig.entropy_coef={self.entropy_coef} must lie within "
                f"[min_entropy_coef, max_entropy_coef] = [{self.min_entropy_coef}, {self.max_entropy_coef}]",
            )
        else:
            _require(
                self.entropy_coef >= 0,
                f"PPOConfig.entropy_coef must be >= 0, got {self.entropy_coef}",
            )
        _require(
            self.max_is_weight > 0, f"PPOConfig.max_is_weight must be > 0, got {self.max_is_weight}"
        )
        _require(
            self.max_grad_norm > 0, f"PPOConfig.max_grad_norm must be > 0, got {self.max_grad_norm}"
        )
        _require(
            self.max_consecutive_skips >= 1,
            f"PPOConfig.max_consecutive_skips must be >= 1, got {self.max_consecutive_skips}",
        )


@dataclass
class VERConfig:
    """Experience collection and system settings (VER paper §2, Table A1; DD-PPO). The env
    count N is `RunConfig.num_envs`."""

    system: str = "ver"
    """'ver': variable experience per env + in-flight actions; 'nover': same async collection
    but exactly T steps from every env; 'ddppo': synchronous stepping of all envs."""
    rollout_steps: int = 128
    """T: a rollout holds T·N steps in total (per env it varies under 'ver')."""
    num_inference_workers: int = 1
    """Inference workers per process. Only 1 is supported: the main process is the inference
    worker during collection and the learner during learning (VER App. A.1); extra inference
    worker processes are not implemented yet."""
    min_inference_batch: int | None = None
    """Dynamic batching: run inference once this many requests are ready (or once the oldest
    has waited half the average inference time). None = max(1, N // (1.5·workers))."""
    max_inference_batch: int | None = None
    """Dynamic batching: most requests per inference call. None = min(N, ceil(1.5·N/workers))."""
    preemption: bool = True
    """Optimal straggler preemption across ranks (VER §2.3); rollouts it cuts short are
    filled with the previous rollout's (stale) steps."""
    preemption_step_window: int | None = None
    """Per-env step-time window of the preemption decider. None = 5·T."""
    preemption_learn_window: int = 5
    """Learner-time window (updates) of the preemption decider."""
    ddppo_sync_fraction: float = 0.6
    """'ddppo' system: preempt stragglers once this fraction of ranks has finished."""
    overlap_learning: bool = False
    """Collect the next rollout while learning on the current one (HTS-RL style, paper
    Appendix E). Off in the paper's VER. Works with several ranks: the learner thread's
    gradient all-reduce has the default process group to itself (control collectives use a
    separate gloo group)."""
    update_threads: int | None = None
    """Torch threads of the PPO update on CPU (None: the run's `torch_threads`, as for
    acting). Between rollouts the envs have at most their in-flight step left to simulate,
    so on a CPU-only machine the update can use the cores the env workers leave idle; the
    acting step goes back to the run's thread count (benchmarks/RESULTS.md, "Envs per
    worker, update threads"). Not used when the learner is on a GPU or runs beside collection
    (`overlap_learning`); the trainer logs a warning then."""
    cuda_graphs: bool = True
    """On a CUDA device, replay the acting step as one CUDA graph per batch-size bucket
    (graph_acting.py): the eager forward is kernel-launch bound there. No effect on CPU."""
    numpy_acting: bool = True
    """On CPU, run a state policy's acting step in NumPy (numpy_acting.py): the same outputs
    as the eager forward with 2-3x less cost per call. No effect on a GPU or on a
    visual policy, whose ResNet stays in torch."""

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Raise ValueError naming the first bad field."""
        _require(self.system in SYSTEMS, f"VERConfig.system={self.system!r}: use one of {SYSTEMS}")
        _require(
            self.rollout_steps >= 1,
            f"VERConfig.rollout_steps must be >= 1, got {self.rollout_steps}",
        )
        _require(
            self.num_inference_workers == 1,
            f"VERConfig.num_inference_workers={self.num_inference_workers} is not supported: "
            "the main process is the only inference worker; set ver.num_inference_workers=1",
        )
        given = [b for b in (self.min_inference_batch, self.max_inference_batch) if b is not None]
        _require(
            all(b >= 1 for b in given) and given == sorted(given),
            "VERConfig inference batch bounds must satisfy 1 <= min <= max, got "
            f"min={self.min_inference_batch}, max={self.max_inference_batch}",
        )
        _require(
            self.update_threads is None or self.update_threads >= 1,
            f"VERConfig.update_threads must be >= 1 (or null), got {self.update_threads}",
        )
        _require(
            0 < self.ddppo_sync_fraction <= 1,
            f"VERConfig.ddppo_sync_fraction must be in (0, 1], got {self.ddppo_sync_fraction}",
        )

    def check_run(self, run: RunConfig) -> None:
        """Raise ValueError if these settings do not fit the run's N envs (the inference
        batch bounds resolve against N)."""
        lo = self.resolved_min_inference_batch(run.num_envs)
        hi = self.resolved_max_inference_batch(run.num_envs)
        _require(
            1 <= lo <= hi,
            f"VERConfig inference batch bounds must satisfy 1 <= min <= max, got min={lo}, "
            f"max={hi} with run.num_envs={run.num_envs}",
        )

    def steps_per_rollout(self, num_envs: int) -> int:
        """T·N steps per rollout per process."""
        return self.rollout_steps * num_envs

    def resolved_min_inference_batch(self, num_envs: int) -> int:
        if self.min_inference_batch is not None:
            return self.min_inference_batch
        return max(1, int(num_envs / (1.5 * self.num_inference_workers)))

    def resolved_max_inference_batch(self, num_envs: int) -> int:
        if self.max_inference_batch is not None:
            return self.max_inference_batch
        return min(num_envs, math.ceil(1.5 * num_envs / self.num_inference_workers))

    @property
    def resolved_preemption_step_window(self) -> int:
        if self.preemption_step_window is not None:
            return self.preemption_step_window
        return 5 * self.rollout_steps

    def total_updates(self, run: RunConfig, world_size: int = 1) -> int:
        """Number of PPO updates in the run (the cosine LR schedule's horizon)."""
        _require(world_size >= 1, f"world_size must be >= 1, got {world_size}")
        per_update = self.steps_per_rollout(run.num_envs) * world_size
        return max(1, math.ceil(run.total_steps / per_update))
