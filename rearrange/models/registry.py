"""Policies registered by name, looked up from ModelConfig.policy (habitat-baselines style)."""

from __future__ import annotations

from collections.abc import Callable

from gymnasium import spaces
from torch import nn

from rearrange.models.config import ModelConfig, ModelConfigError

_POLICIES: dict[str, type[nn.Module]] = {}


def register_policy(name: str) -> Callable[[type[nn.Module]], type[nn.Module]]:
    """Class decorator: make a policy class buildable as ModelConfig(policy=name)."""

    def register(cls: type[nn.Module]) -> type[nn.Module]:
        if name in _POLICIES and _POLICIES[name] is not cls:
            raise ValueError(f"policy name {name!r} is already registered to {_POLICIES[name]}")
        _POLICIES[name] = cls
        return cls

    return register


def policy_names() -> list[str]:
    return sorted(_POLICIES)


def get_policy_class(name: str) -> type[nn.Module]:
    if name not in _POLICIES:
        raise ModelConfigError(
            f"ModelConfig.policy={name!r} is not a registered policy; use one of {policy_names()}"
        )
    return _POLICIES[name]


def build_policy(
    observation_space: spaces.Dict, action_space: spaces.Box, config: ModelConfig | None = None
) -> nn.Module:
    """The policy named by config.policy for these spaces (docs/CONTRACTS.md §5)."""
    config = ModelConfig() if config is None else config
    return get_policy_class(config.policy)(observation_space, action_space, config)
