"""Policy networks: ConvNeXt-style half-width ResNet18 + 2-layer LSTM + Gaussian actions."""

from rearrange.models.config import ModelConfig, ModelConfigError
from rearrange.models.policy import RecurrentGaussianPolicy
from rearrange.models.registry import build_policy, get_policy_class, policy_names, register_policy
from rearrange.models.summary import count_parameters, parameter_breakdown

__all__ = [
    "ModelConfig",
    "ModelConfigError",
    "RecurrentGaussianPolicy",
    "build_policy",
    "count_parameters",
    "get_policy_class",
    "parameter_breakdown",
    "policy_names",
    "register_policy",
]
