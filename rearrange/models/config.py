"""Configuration of the skill policy networks (VER paper §4, "Architecture")."""

from __future__ import annotations

from dataclasses import dataclass, field

BACKBONES = ("resnet18_convnext", "none")


class ModelConfigError(ValueError):
    """A ModelConfig field or an observation/action space the policy cannot use."""


@dataclass
class ModelConfig:
    """Every knob of the policy network; defaults follow the VER paper and habitat-baselines.

    The policy is: visual encoder (optional) + raw proprioceptive vectors + previous-action
    embedding -> LSTM -> independent Gaussian over actions, and a value head.
    """

    # Registry name of the policy class (see rearrange/models/registry.py).
    policy: str = "recurrent_gaussian"
    # "resnet18_convnext": ConvNeXt-style half-width ResNet18 on the image observations.
    # "none": state-only policy; image observations are ignored and the vectors go through
    # an MLP encoder instead.
    backbone: str = "resnet18_convnext"

    # (Sequence fields are lists, not tuples, so Hydra/YAML overrides assign them directly.)

    # --- visual backbone -------------------------------------------------------------------
    # Width of the first stage; ResNet18 uses 64, the paper halves it (Wijmans et al. 2020).
    base_width: int = 32
    # Residual blocks per stage (ResNet18 = 2, 2, 2, 2).
    blocks_per_stage: list[int] = field(default_factory=lambda: [2, 2, 2, 2])
    # GroupNorm groups everywhere (habitat-baselines uses 16 for half-width ResNets; 32 is
    # the first stage's width, so 16 keeps >= 2 channels per group).
    groupnorm_groups: int = 16
    # Patchify stem (ConvNeXt): non-overlapping conv with kernel = stride = stem_patch.
    # 4 turns 128x128 into 32x32, the same resolution as ResNet's conv+maxpool stem.
    stem_patch: int = 4
    # Layer scale (Touvron et al. 2021) initial value. ConvNeXt uses 1e-6: every residual
    # block starts as (almost) the identity. The gamma itself gets full-size gradients, so with
    # Adam (lr 2.5e-4) it reaches ~0.03 within ~100 updates.
    layer_scale_init: float = 1e-6
    # Dilation of the 3x3 convs per stage. Dilating the two low-resolution stages mimics the
    # larger kernels of ConvNeXt (paper: "dilated convolutions ... mimics larger kernel
    # convolutions without increasing computation"). One entry per stage.
    stage_dilations: list[int] = field(default_factory=lambda: [1, 1, 2, 2])
    # The final feature map is compressed (3x3 conv) to about this many values, then flattened
    # (habitat-baselines: 2048, e.g. 128 channels x 4 x 4 for a 128x128 input).
    compressed_size: int = 2048
    # Size of the visual embedding fed to the LSTM.
    visual_embedding_size: int = 512
    # Run the visual encoder's convs in channels_last (NHWC) memory format: conv weights are
    # converted once at construction, the image batch on every forward. Same numbers up to
    # float rounding; may speed up cuDNN convs on GPU (measure before enabling). Off by
    # default, so configs saved before this field existed rebuild unchanged.
    channels_last: bool = False

    # --- observations ----------------------------------------------------------------------
    # Observation keys treated as images ([H, W, C]); None = every 3-D Box whose last
    # dimension is 1, 3 or 4. All image keys must share H and W (stacked on channels).
    visual_keys: list[str] | None = None
    # Depth is in metres, clipped to [0, depth_max] by the sensor; divided by this to get [0, 1].
    depth_max: float = 10.0

    # --- state-only encoder (backbone "none") ----------------------------------------------
    state_mlp_hidden: list[int] = field(default_factory=lambda: [256, 256])

    # --- recurrent core --------------------------------------------------------------------
    rnn_hidden_size: int = 512
    rnn_layers: int = 2
    # Linear embedding of the previous action (DD-PPO uses 32).
    prev_action_embedding_size: int = 32
    # False: the previous action is not an input (zeros reach the embedding, in training and
    # acting alike; the layer stays, so weights move between the two settings). For a DAgger
    # student whose own previous action became its cue to keep still: the open_cab depth
    # student stalled in front of the handle, outputs ~0 with the teacher's saturated (docs/
    # DESIGN.md §5.4). The paper's policy has the input (True, the default).
    prev_action_input: bool = True
    # True: the vector observations (joints, EE position, goal sensors...) pass a fixed
    # per-feature normaliser ((x - mean) / std, clipped to ±5) before they join the image
    # embedding; its statistics are buffers in the checkpoint, set by `--algo distill` from
    # the teacher's own observation normaliser (identity until set). Why: raw, these 14-odd
    # inputs of ~0.1 m spread sit beside 512 image features, and a DAgger student must act on
    # a few centimetres of marker_rel_pos (docs/DESIGN.md §5.4). False (the default) is the
    # paper's policy: raw vectors concatenated with the image embedding.
    vector_norm: bool = False

    # --- action distribution ---------------------------------------------------------------
    # State-independent learned log standard deviation, clamped to the bounds in forward.
    action_log_std_init: float = 0.0
    action_log_std_min: float = -5.0
    action_log_std_max: float = 2.0
    # Orthogonal-init gain of the action-mean layer: small so the initial policy is ~N(b, std).
    action_mean_init_gain: float = 0.01
    # Initial bias b of the first len(list) action means (the rest 0): a prior for
    # exploration. Place starts holding its object with grip index 7 at +1, so a random
    # initial policy releases it on ~0.3 % of steps instead of every other step
    # (skill_configs/place.yaml). Not part of the task: the policy learns away from it.
    action_mean_init: list[float] = field(default_factory=list)
    # tanh on the Gaussian mean (habitat-baselines rl_skill's default), keeping the mean in
    # (-1, 1); samples still spread beyond it by the std and the env clips them. Off by
    # default: checkpoints saved before this field existed rebuild with the default, and were
    # trained with an unsquashed mean (README, "Where this differs").
    squash_mean: bool = False

    def validate(self) -> ModelConfig:
        """Raise ModelConfigError naming the bad field; return self for chaining."""
        if self.backbone not in BACKBONES:
            raise ModelConfigError(
                f"ModelConfig.backbone={self.backbone!r} is unknown; use one of {BACKBONES}"
            )
        if len(self.stage_dilations) != len(self.blocks_per_stage):
            raise ModelConfigError(
                f"ModelConfig.stage_dilations has {len(self.stage_dilations)} entries but "
                f"blocks_per_stage has {len(self.blocks_per_stage)}; give one dilation per stage"
            )
        if self.base_width % self.groupnorm_groups != 0:
            raise ModelConfigError(
                f"ModelConfig.base_width={self.base_width} is not divisible by "
                f"groupnorm_groups={self.groupnorm_groups}; pick groups that divide the width"
            )
        if not self.action_log_std_min < self.action_log_std_max:
            raise ModelConfigError(
                "ModelConfig.action_log_std_min must be < action_log_std_max "
                f"(got {self.action_log_std_min}, {self.action_log_std_max})"
            )
        if any(abs(v) > 1.0 for v in self.action_mean_init):
            raise ModelConfigError(
                f"ModelConfig.action_mean_init={self.action_mean_init}: actions live in [-1, 1]"
            )
        for name in ("rnn_hidden_size", "rnn_layers", "base_width", "visual_embedding_size"):
            if getattr(self, name) <= 0:
                raise ModelConfigError(f"ModelConfig.{name} must be positive")
        if not isinstance(self.channels_last, bool):
            raise ModelConfigError(
                f"ModelConfig.channels_last={self.channels_last!r} must be true or false"
            )
        if self.depth_max <= 0:
            raise ModelConfigError("ModelConfig.depth_max must be positive (metres)")
        return self
