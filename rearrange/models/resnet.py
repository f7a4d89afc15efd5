"""ConvNeXt-style half-width ResNet18 with GroupNorm (VER paper §4, "Architecture").

Changes from torchvision's ResNet18, each taken from ConvNeXt (Liu et al. 2022):
- patchify stem: one non-overlapping k=4, s=4 conv instead of 7x7/s2 conv + max-pool;
- dedicated down-sample layers between stages (GroupNorm + k=2, s=2 conv) instead of strided
  first convs and 1x1 projection shortcuts, so every residual block keeps its shape;
- layer scale: a learned per-channel gain on each residual branch, initialised small;
- dilated 3x3 convs in the low-resolution stages, for a larger receptive field at no cost;
- no ReLU after the residual sum (a clean identity path, as in ConvNeXt blocks).
BatchNorm is replaced by GroupNorm (Wijmans et al. 2020): on-policy batches are highly
correlated, which makes batch statistics unreliable.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from rearrange.models.config import ModelConfig, ModelConfigError


def _groupnorm(channels: int, groups: int) -> nn.GroupNorm:
    # Fall back to fewer groups when a layer is narrower than configured (e.g. tiny tests).
    return nn.GroupNorm(math.gcd(groups, channels), channels)


class LayerScale(nn.Module):
    """Per-channel learned gain on a residual branch (Touvron et al. 2021)."""

    def __init__(self, channels: int, init_value: float) -> None:
        super().__init__()
        self.gamma = nn.Parameter(torch.full((channels,), float(init_value)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.gamma.view(1, -1, 1, 1)


class BasicBlock(nn.Module):
    """Two 3x3 convs with GroupNorm; the second one dilated; shape-preserving."""

    def __init__(self, channels: int, groups: int, dilation: int, layer_scale: float) -> None:
        super().__init__()
        self.branch = nn.Sequential(
            nn.Conv2d(channels, channels, 3, padding=1, bias=False),
            _groupnorm(channels, groups),
            nn.ReLU(inplace=True),
            nn.Conv2d(channels, channels, 3, padding=dilation, dilation=dilation, bias=False),
            _groupnorm(channels, groups),
            LayerScale(channels, layer_scale),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.branch(x)


def _downsample(in_ch: int, out_ch: int, groups: int) -> nn.Sequential:
    """ConvNeXt's dedicated down-sample layer: normalise, then a 2x2 stride-2 conv."""
    return nn.Sequential(_groupnorm(in_ch, groups), nn.Conv2d(in_ch, out_ch, 2, stride=2))


class ConvNeXtResNet(nn.Module):
    """Backbone: image [B, C, H, W] -> feature map [B, out_channels, H/32, W/32] (rounded down)."""

    def __init__(self, in_channels: int, config: ModelConfig) -> None:
        super().__init__()
        groups, width = config.groupnorm_groups, config.base_width
        self.stem = nn.Sequential(
            nn.Conv2d(in_channels, width, config.stem_patch, stride=config.stem_patch),
            _groupnorm(width, groups),
        )
        layers: list[nn.Module] = []
        for i, (n_blocks, dilation) in enumerate(
            zip(config.blocks_per_stage, config.stage_dilations, strict=True)
        ):
            if i > 0:
                layers.append(_downsample(width, width * 2, groups))
                width *= 2
            for _ in range(n_blocks):
                layers.append(BasicBlock(width, groups, dilation, config.layer_scale_init))
        self.stages = nn.Sequential(*layers)
        # ReLU after the last stage: blocks add without activation, so the output is signed.
        self.out_norm = nn.Sequential(_groupnorm(width, groups), nn.ReLU(inplace=True))
        self.out_channels = width
        self.patch = config.stem_patch
        self.n_downsamples = len(config.blocks_per_stage) - 1
        self.total_stride = self.patch * 2**self.n_downsamples

    def output_hw(self, height: int, width: int) -> tuple[int, int]:
        """Spatial size of the feature map for an input of height x width."""
        h, w = height // self.patch, width // self.patch
        for _ in range(self.n_downsamples):
            h, w = h // 2, w // 2
        return h, w

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out_norm(self.stages(self.stem(x)))


class VisualEncoder(nn.Module):
    """Image [B, C, H, W] (already normalised) -> embedding [B, visual_embedding_size].

    As in habitat-baselines, the final map is compressed by a 3x3 conv to ~compressed_size
    values, flattened and projected by a linear layer (keeping spatial layout, unlike pooling).
    """

    def __init__(self, in_channels: int, height: int, width: int, config: ModelConfig) -> None:
        super().__init__()
        self.backbone = ConvNeXtResNet(in_channels, config)
        h, w = self.backbone.output_hw(height, width)
        if h < 1 or w < 1:
            raise ModelConfigError(
                f"image of {height}x{width} is too small for the ResNet (total stride "
                f"{self.backbone.total_stride}); use images of at least that size"
            )
        comp_ch = max(1, round(config.compressed_size / (h * w)))
        self.compression = nn.Sequential(
            nn.Conv2d(self.backbone.out_channels, comp_ch, 3, padding=1, bias=False),
            _groupnorm(comp_ch, config.groupnorm_groups),
            nn.ReLU(inplace=True),
        )
        self.fc = nn.Sequential(
            nn.Flatten(), nn.Linear(comp_ch * h * w, config.visual_embedding_size), nn.ReLU(True)
        )
        self.feature_map_shape = (comp_ch, h, w)
        self.output_size = config.visual_embedding_size
        # channels_last: convert the conv weights once; in-place updates (init, optimizer,
        # load_state_dict, .to(device)) keep their layout. Flatten restores NCHW order.
        self.channels_last = config.channels_last
        if self.channels_last:
            self.to(memory_format=torch.channels_last)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.channels_last:
            x = x.contiguous(memory_format=torch.channels_last)
        return self.fc(self.compression(self.backbone(x)))
