"""Typed configuration of the distillation trainer (`--algo distill`, `distill.*`).

Counts are environment steps (all envs together) where they say so, steps per env where they
say that. What every trainer reads (envs, total steps, seed, device, log and checkpoint
intervals) is the run's `runtime.run.RunConfig`. Imports no torch (rearrange.config reads it).
Invalid values raise ValueError with one line naming the field and the fix.
"""

from __future__ import annotations

from dataclasses import dataclass, field

LOSSES = ("mse_nll", "nll")
DEPTH_DTYPES = ("float16", "uint8")
PREV_ACTIONS = ("student", "executed")


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise ValueError(message)


@dataclass
class DistillConfig:
    """DAgger settings: the teacher, the β schedule, collection rounds, the aggregated buffer
    and the student's optimisation."""

    teacher: str | None = None
    """Teacher checkpoint (a file, or a train_skill run directory); 'oracle': the skill's
    scripted oracle (privileged: nav follows the NavMap's shortest path); None: the shipped
    checkpoint of the skill and base movement (`--teacher` sets it). The synthetic env's
    teacher is scripted (none may be given)."""
    oracle_near: float | None = None
    """m (nav): within this distance of the goal point the skill's scripted oracle labels the
    states instead of the teacher checkpoint (`teacher_labels.NearGoalTeacher`: the oracle's
    exact stop at the goal pose, the learned teacher's driving elsewhere); 0: off; None (not
    given): off, or on --resume the radius the run recorded (so `=0` turns it off there)."""
    oracle_yaw_tol: float | None = None
    """degrees (nav, with --teacher oracle or distill.oracle_near): the oracle's stop label
    comes within this of the goal heading; None: 10 (`OracleTeacher.NAV_YAW_TOL`)."""
    unjam: bool | None = None
    """Skills that drive (nav): after a step that commanded a base move and left the base
    where it was, blocked (the arm or what it carries against a wall) or in a base collision
    (its disc against a footprint), the label is to back away instead of the teacher's
    (`distill/unjam.py`); None (not given): off, or on --resume what the run recorded."""
    grip_near: float | None = None
    """m (pick): the teacher's grip label is open until the gripper is this close to the
    target object's surface, so the student learns to close only where closing takes the
    target, not a neighbour (`distill/grip_labels.py`); 0: off; None (not given): off, or on
    --resume the radius the run recorded."""
    grip_clear: float | None = None
    """m (pick): the teacher's grip label is open while another object's surface is this
    close to the gripper's and nearer than the target's, so the student learns not to close
    beside a neighbour and keeps the teacher's grip everywhere else (`distill/grip_labels.py`);
    0: off; None (not given): off, or on --resume the radius the run recorded."""
    fixed_base_teacher: str | None = None
    """A base-moving pick or place: a fixed-base state checkpoint (a file, a run directory, or
    'shipped' for the shipped one) that labels the states once the target is within
    `fixed_base_reach` of the shoulder and ahead of the base, the teacher before then
    (`distill/hand_off.py`); None (not given): off, or on --resume what the run recorded."""
    fixed_base_reach: float = 0.85
    """m: the hand-off's shoulder-to-target distance (the close spawns' reach_max)."""
    drawer_teacher: str | None = None
    """With fixed_base_teacher (pick): a base-moving state checkpoint (or 'shipped') that
    labels the picks from a drawer, which are never handed off; None: the teacher does
    (on --resume: what the run recorded)."""
    fridge_teacher: str | None = None
    """With fixed_base_teacher (pick): 'oracle' (the scripted pick oracle) or a base-moving
    state checkpoint (or 'shipped') whose labels drive the picks from the fridge's shelves,
    handed off as the others (`distill/hand_off.py`); None: the teacher drives them (on
    --resume: what the run recorded)."""
    beta_start: float = 1.0
    """Probability of executing the teacher's action (else the student's) at step 0."""
    beta_end: float = 0.0
    """β once `beta_steps` environment steps are done (constant after)."""
    beta_steps: int = 250_000
    """Environment steps over which β moves linearly from beta_start to beta_end."""
    prev_action: str = "student"
    """The student's previous-action input during collection: 'student' (its own previous
    mean, what it is fed when deployed) or 'executed' (the teacher's action on teacher
    steps: the student then learns to copy it, `distill/collect.py`)."""
    stop_veto: bool = False
    """Skills with a stop action (nav): execute the teacher's stop value where the student
    calls stop and the teacher does not, so the episode goes on past the student's mistaken
    stop and DAgger labels what follows (`distill/collect.py`)."""
    grip_veto: bool = False
    """Skills with a grip (pick): execute the teacher's open grip where the student closes it
    and the teacher's label is open (with `grip_clear`: beside a neighbour), so the episode
    goes on past the student's mistaken close and DAgger labels what follows
    (`distill/collect.py`)."""
    rollout_steps: int = 64
    """Steps per env of one collection round (the round adds rollout_steps × run.num_envs
    labelled steps to the buffer, then the student trains)."""
    chunk_len: int = 32
    """Truncated-BPTT length: the buffer holds sequences of this many consecutive steps of
    one env (an episode start inside one restarts the LSTM from zero); divides rollout_steps."""
    buffer_steps: int = 16_384
    """Capacity of the aggregated FIFO buffer in environment steps (whole chunks; the oldest
    chunks are evicted). Not checkpointed: a resumed run starts with it empty."""
    depth_dtype: str = "float16"
    """How the buffer stores depth images: 'float16' (4 mm at 10 m, 2 bytes a pixel, what
    the shared-memory rows hold) or 'uint8' (depth / depth-max quantised to 255 levels,
    3.9 cm at a 10 m max, 1 byte a pixel)."""
    updates_per_round: int = 4
    """Minibatches drawn at random from the buffer after each collection round: a fixed
    replay ratio, so learning costs the same every round however full the buffer is (4 x
    512 steps per 1,024-step round of the defaults: each step is trained on ~2 times per
    round it spends in the buffer). 0: `epochs` passes over the whole buffer instead, whose
    cost grows with the buffer (measured with 2 envs at 128² depth on a 2-core CPU: 16 SPS
    at the first round, 2.4 SPS by 1.8k steps)."""
    epochs: int = 2
    """Passes over the whole buffer after each round, when updates_per_round is 0."""
    minibatch_steps: int = 512
    """Steps per minibatch (rounded down to whole chunks, at least one)."""
    lr: float = 2.5e-4
    """Adam learning rate of the student (constant)."""
    eps: float = 1e-5
    """Adam epsilon."""
    max_grad_norm: float = 0.5
    """Global gradient-norm clip of the student's parameters."""
    loss: str = "mse_nll"
    """'mse_nll': ½‖mean − a*‖² for the mean plus the Gaussian NLL of a* with the mean
    detached (trains only the log-std); 'nll': the Gaussian NLL alone (`distill/loss.py`)."""
    norm_warmup_steps: int = 0
    """A new student with `model.vector_norm`: 0 takes its normaliser's statistics from the
    teacher's checkpoint; N > 0 measures them on the first N collected steps (whole rounds,
    driven by the teacher while β is near 1) in the student's own envs and starts learning
    after them, for a teacher whose training noise widened its statistics (open_fridge's
    `task.work_noise_scale=5`: joint std up to 4.9 rad, the cabinets' teachers 0.2-0.5;
    `distill/student_norm.py`)."""
    action_weights: list[float] = field(default_factory=list)
    """Per-dimension weights of the squared error of 'mse_nll', one per action dimension in
    the action layout's order (nav: [linear, angular, stop]); empty: all 1. E.g.
    `distill.action_weights=[1,1,4]` makes nav's thresholded stop count 4x."""

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Raise ValueError naming the first bad field."""
        _require(
            self.oracle_near is None or self.oracle_near >= 0.0,
            f"DistillConfig.oracle_near must be >= 0 (metres; 0: off), got {self.oracle_near}",
        )
        for name in ("grip_near", "grip_clear"):
            value = getattr(self, name)
            _require(
                value is None or value >= 0.0,
                f"DistillConfig.{name} must be >= 0 (metres; 0: off), got {value}",
            )
        _require(
            0.0 < self.fixed_base_reach <= 2.0,
            f"DistillConfig.fixed_base_reach must be in (0, 2] (metres), got {self.fixed_base_reach}",
        )
        for name in ("beta_start", "beta_end"):
            value = getattr(self, name)
            _require(0.0 <= value <= 1.0, f"DistillConfig.{name} must be in [0, 1], got {value}")
        _require(
            self.beta_steps >= 0, f"DistillConfig.beta_steps must be >= 0, got {self.beta_steps}"
        )
        _require(
            self.updates_per_round >= 0,
            f"DistillConfig.updates_per_round must be >= 0, got {self.updates_per_round}",
        )
        _require(
            self.norm_warmup_steps >= 0,
            f"DistillConfig.norm_warmup_steps must be >= 0, got {self.norm_warmup_steps}",
        )
        for name in ("rollout_steps", "chunk_len", "epochs", "minibatch_steps"):
            value = getattr(self, name)
            _require(value >= 1, f"DistillConfig.{name} must be >= 1, got {value}")
        _require(
            self.rollout_steps % self.chunk_len == 0,
            f"DistillConfig.chunk_len={self.chunk_len} must divide rollout_steps="
            f"{self.rollout_steps} (a round is cut into whole chunks per env)",
        )
        _require(
            self.buffer_steps >= self.chunk_len,
            f"DistillConfig.buffer_steps={self.buffer_steps} must hold at least one chunk "
            f"(chunk_len={self.chunk_len})",
        )
        _require(
            self.depth_dtype in DEPTH_DTYPES,
            f"DistillConfig.depth_dtype={self.depth_dtype!r}: use one of {DEPTH_DTYPES}",
        )
        _require(self.loss in LOSSES, f"DistillConfig.loss={self.loss!r}: use one of {LOSSES}")
        _require(
            self.prev_action in PREV_ACTIONS,
            f"DistillConfig.prev_action={self.prev_action!r}: use one of {PREV_ACTIONS}",
        )
        weights = self.action_weights
        _require(
            not weights or (min(weights) >= 0 and max(weights) > 0),
            f"DistillConfig.action_weights={self.action_weights}: weights must be >= 0 and "
            "not all 0 (or empty for all 1)",
        )
        _require(
            not self.action_weights or self.loss == "mse_nll",
            f"DistillConfig.action_weights apply to loss 'mse_nll', not {self.loss!r}: "
            "drop them or set distill.loss=mse_nll",
        )
        for name in ("lr", "eps", "max_grad_norm"):
            value = getattr(self, name)
            _require(value > 0, f"DistillConfig.{name} must be > 0, got {value}")

    @property
    def buffer_chunks(self) -> int:
        """The buffer's capacity in chunks."""
        return self.buffer_steps // self.chunk_len

    @property
    def minibatch_chunks(self) -> int:
        """Chunks per minibatch."""
        return max(1, self.minibatch_steps // self.chunk_len)
