"""Observation encoders: a dict of observation tensors -> one feature vector per step.

Observations are split once, from the observation space, into image keys ([H, W, C] Boxes,
stacked on channels and fed to the ResNet) and vector keys (everything else, flattened and
concatenated in sorted key order so the layout never depends on dict order).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import torch
from gymnasium import spaces
from torch import nn

from rearrange.models.config import ModelConfig, ModelConfigError
from rearrange.models.normalizer import ObsNormalizer
from rearrange.models.resnet import VisualEncoder


@dataclass(frozen=True)
class ObservationLayout:
    """Which observation keys are images and which are vectors, and their sizes."""

    visual_keys: tuple[str, ...]
    vector_keys: tuple[str, ...]
    image_hw: tuple[int, int] | None
    image_channels: int
    vector_size: int
    # Per visual key, the divisor that maps its values to ~[0, 1].
    image_scales: tuple[float, ...]


def _is_image_space(space: spaces.Space) -> bool:
    return isinstance(space, spaces.Box) and len(space.shape) == 3 and space.shape[2] in (1, 3, 4)


def _image_scale(key: str, space: spaces.Box, config: ModelConfig) -> float:
    if "depth" in key:
        return config.depth_max  # metres -> [0, 1]
    if space.dtype == np.uint8:
        return 255.0
    return 1.0


def _check_vector_space(key: str, space: spaces.Space) -> int:
    if not isinstance(space, (spaces.Box, spaces.MultiBinary)):
        raise ModelConfigError(
            f"observation {key!r} has unsupported space {type(space).__name__}; "
            "the policy takes Box or MultiBinary observations"
        )
    return int(np.prod(space.shape))


def split_observation_space(space: spaces.Dict, config: ModelConfig) -> ObservationLayout:
    """Sort the observation keys into images and vectors (images dropped for backbone 'none')."""
    if not isinstance(space, spaces.Dict):
        raise ModelConfigError(
            f"observation_space must be gymnasium.spaces.Dict, got {type(space).__name__}"
        )
    keys = sorted(space.spaces)
    if config.visual_keys is None:
        visual = [k for k in keys if _is_image_space(space[k])]
    else:
        visual = sorted(config.visual_keys)
        for k in visual:
            if k not in space.spaces or not _is_image_space(space[k]):
                raise ModelConfigError(
                    f"ModelConfig.visual_keys names {k!r}, which is not an [H, W, C] Box in "
                    f"the observation space (keys: {keys}); fix visual_keys"
                )
    vectors = [k for k in keys if k not in visual]
    if config.backbone == "none":
        visual = []  # state-only: images are ignored, not flattened into the vector
    hws = {tuple(space[k].shape[:2]) for k in visual}
    if len(hws) > 1:
        raise ModelConfigError(
            f"image observations {visual} have different sizes {sorted(hws)}; "
            "render them at one resolution"
        )
    return ObservationLayout(
        visual_keys=tuple(visual),
        vector_keys=tuple(vectors),
        image_hw=hws.pop() if hws else None,
        image_channels=sum(space[k].shape[2] for k in visual),
        vector_size=sum(_check_vector_space(k, space[k]) for k in vectors),
        image_scales=tuple(_image_scale(k, space[k], config) for k in visual),
    )


def check_observation_keys(obs: Mapping[str, torch.Tensor], layout: ObservationLayout) -> None:
    """Raise a one-line KeyError-like ValueError when the policy's inputs are missing."""
    missing = [k for k in layout.visual_keys + layout.vector_keys if k not in obs]
    if missing:
        raise ValueError(
            f"observation dict lacks keys {missing} that the policy was built with; "
            "pass the env's full observation dict"
        )


def flatten_vectors(obs: Mapping[str, torch.Tensor], layout: ObservationLayout) -> torch.Tensor:
    """Concatenate the vector observations as float32 [B, vector_size] (sorted key order)."""
    parts = [obs[k].reshape(obs[k].shape[0], -1).float() for k in layout.vector_keys]
    return torch.cat(parts, dim=1)


def stack_images(obs: Mapping[str, torch.Tensor], layout: ObservationLayout) -> torch.Tensor:
    """[B, H, W, C] images -> normalised float32 [B, C_total, H, W]."""
    parts = [
        obs[k].float().permute(0, 3, 1, 2) / scale
        for k, scale in zip(layout.visual_keys, layout.image_scales, strict=True)
    ]
    return torch.cat(parts, dim=1) if len(parts) > 1 else parts[0]


class VisualObservationEncoder(nn.Module):
    """ResNet embedding of the images, concatenated with the raw vector observations."""

    def __init__(self, layout: ObservationLayout, config: ModelConfig) -> None:
        super().__init__()
        if not layout.visual_keys:
            raise ModelConfigError(
                f"backbone {config.backbone!r} needs an image observation ([H, W, C] Box) but "
                "the observation space has none; use backbone='none' for a state-only policy"
            )
        assert layout.image_hw is not None
        self.layout = layout
        self.visual = VisualEncoder(layout.image_channels, *layout.image_hw, config)
        self.output_size = self.visual.output_size + layout.vector_size
        # model.vector_norm: the vectors' normaliser (statistics set from outside)
        self.vector_norm = (
            ObsNormalizer(layout.vector_size) if config.vector_norm and layout.vector_size else None
        )

    def forward(self, obs: Mapping[str, torch.Tensor]) -> torch.Tensor:
        feats = [self.visual(stack_images(obs, self.layout))]
        if self.layout.vector_keys:
            vectors = flatten_vectors(obs, self.layout)
            if self.vector_norm is not None:
                vectors = self.vector_norm(vectors)
            feats.append(vectors)
        return torch.cat(feats, dim=1)


class StateObservationEncoder(nn.Module):
    """MLP over the concatenated vector observations (the state-only policy)."""

    def __init__(self, layout: ObservationLayout, config: ModelConfig) -> None:
        super().__init__()
        if layout.vector_size == 0:
            raise ModelConfigError(
                "backbone 'none' needs vector observations but the observation space has none"
            )
        self.layout = layout
        layers: list[nn.Module] = []
        size = layout.vector_size
        for hidden in config.state_mlp_hidden:
            layers += [nn.Linear(size, hidden), nn.ReLU(inplace=True)]
            size = hidden
        self.mlp = nn.Sequential(*layers)
        self.output_size = size

    def forward(self, obs: Mapping[str, torch.Tensor]) -> torch.Tensor:
        return self.mlp(flatten_vectors(obs, self.layout))


ENCODERS: dict[str, type[nn.Module]] = {
    "resnet18_convnext": VisualObservationEncoder,
    "none": StateObservationEncoder,
}


def build_encoder(layout: ObservationLayout, config: ModelConfig) -> nn.Module:
    """Encoder for config.backbone; has .output_size."""
    if config.backbone not in ENCODERS:
        raise ModelConfigError(
            f"ModelConfig.backbone={config.backbone!r} is unknown; use one of {sorted(ENCODERS)}"
        )
    return ENCODERS[config.backbone](layout, config)
