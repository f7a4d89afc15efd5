"""The ConvNeXt-style half-width ResNet18 backbone and visual encoder."""

from __future__ import annotations

import pytest
import torch

from rearrange.models import ModelConfig, ModelConfigError
from rearrange.models.resnet import BasicBlock, ConvNeXtResNet, LayerScale, VisualEncoder


@pytest.mark.parametrize(
    ("size", "spatial", "compressed_channels"),
    [(128, 4, 128), (64, 2, 512)],  # 2048 values after compression in both cases
)
def test_resnet_output_size(size: int, spatial: int, compressed_channels: int) -> None:
    config = ModelConfig()
    backbone = ConvNeXtResNet(1, config)
    with torch.no_grad():
        fmap = backbone(torch.rand(2, 1, size, size))
    # half-width ResNet18: 32 -> 64 -> 128 -> 256 channels, total stride 4 * 2^3 = 32
    assert fmap.shape == (2, 256, spatial, spatial)
    assert backbone.output_hw(size, size) == (spatial, spatial)

    encoder = VisualEncoder(1, size, size, config)
    assert encoder.feature_map_shape == (compressed_channels, spatial, spatial)
    with torch.no_grad():
        emb = encoder(torch.rand(3, 1, size, size))
    assert emb.shape == (3, 512)
    assert bool((emb >= 0).all())  # ReLU output


def test_non_square_and_multichannel_input() -> None:
    encoder = VisualEncoder(4, 96, 160, ModelConfig())  # e.g. RGB-D
    assert encoder.feature_map_shape[1:] == (3, 5)
    with torch.no_grad():
        assert encoder(torch.rand(1, 4, 96, 160)).shape == (1, 512)


def test_too_small_image_is_a_clear_error() -> None:
    with pytest.raises(ModelConfigError, match="too small"):
        VisualEncoder(1, 16, 16, ModelConfig())


def test_convnext_parts_are_present() -> None:
    backbone = ConvNeXtResNet(1, ModelConfig())
    stem = backbone.stem[0]
    assert stem.kernel_size == (4, 4) and stem.stride == (4, 4)  # patchify stem
    blocks = [m for m in backbone.stages if isinstance(m, BasicBlock)]
    downs = [m for m in backbone.stages if not isinstance(m, BasicBlock)]
    assert len(blocks) == 8 and len(downs) == 3  # ResNet18: 4 stages x 2 blocks
    for down in downs:  # dedicated down-sample layer: GroupNorm then 2x2/s2 conv
        assert isinstance(down[0], torch.nn.GroupNorm)
        assert down[1].kernel_size == (2, 2) and down[1].stride == (2, 2)
    dilations = [b.branch[3].dilation for b in blocks]
    assert dilations == [(1, 1)] * 4 + [(2, 2)] * 4  # stages 3 and 4 dilated
    assert not any(isinstance(m, torch.nn.BatchNorm2d) for m in backbone.modules())
    scales = [m for m in backbone.modules() if isinstance(m, LayerScale)]
    assert len(scales) == 8
    assert all(torch.allclose(s.gamma, torch.full_like(s.gamma, 1e-6)) for s in scales)


def test_layer_scale_makes_blocks_start_near_identity() -> None:
    block = BasicBlock(32, 16, dilation=2, layer_scale=1e-6)
    x = torch.randn(2, 32, 8, 8)
    with torch.no_grad():
        # GroupNorm output is O(1); times 1e-6 the branch adds at most ~1e-5
        assert torch.allclose(block(x), x, atol=1e-4)
        block.branch[-1].gamma.fill_(1.0)
        assert not torch.allclose(block(x), x, atol=1e-2)


def test_gradient_reaches_the_stem() -> None:
    encoder = VisualEncoder(1, 64, 64, ModelConfig())
    encoder(torch.rand(2, 1, 64, 64)).sum().backward()
    stem_grad = encoder.backbone.stem[0].weight.grad
    assert stem_grad is not None and float(stem_grad.abs().sum()) > 0
