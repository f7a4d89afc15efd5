"""Packed observation rows: offsets, views that alias the block, compact depth, round trips."""

import numpy as np
import pytest
import torch
from gymnasium import spaces

from rearrange.runtime.obs_rows import ObsRowLayout
from rearrange.runtime.shared_memory import create_buffers

SPACE = spaces.Dict(
    {
        "depth": spaces.Box(0.0, 10.0, (4, 4, 1), np.float32),
        "joint": spaces.Box(-1.0, 1.0, (3,), np.float32),
        "holding": spaces.MultiBinary(1),
        "step": spaces.Box(0, 9, (2,), np.int64),
    }
)


def test_offsets_are_sorted_aligned_and_depth_is_half_size():
    layout = ObsRowLayout(SPACE)
    f = layout.fields
    # sorted keys: depth (16 halves = 32 B), holding (1 B -> 8), joint (12 B -> 16), step (16 B)
    assert list(f) == ["depth", "holding", "joint", "step"]
    assert [f[k].offset for k in f] == [0, 32, 40, 56]
    assert f["depth"].dtype == np.float16 and f["depth"].nbytes == 32
    assert layout.row_bytes == 72
    assert ObsRowLayout(SPACE, compact=False).fields["depth"].dtype == np.float32


def test_views_alias_the_block_and_torch_views_read_the_same_values():
    layout = ObsRowLayout(SPACE)
    block = layout.zeros(3)
    views = layout.views(block)
    assert all(np.shares_memory(v, block) for v in views.values())
    views["joint"][1] = [0.5, -0.25, 1.0]
    views["step"][2] = [7, 9]
    views["depth"][0] = 9.7
    t = layout.torch_views(torch.from_numpy(block))
    assert t["joint"][1].tolist() == [0.5, -0.25, 1.0]
    assert t["step"][2].tolist() == [7, 9] and t["step"].dtype == torch.int64
    assert t["depth"].shape == (3, 4, 4, 1) and t["depth"].dtype == torch.float16
    # float16 keeps depth within 4 mm up to 10 m (spacing 2**-7 m in [8, 16))
    assert abs(float(t["depth"][0, 2, 3, 0]) - 9.7) <= 2**-8
    assert t["joint"][0].tolist() == [0.0, 0.0, 0.0]  # other rows untouched


def test_pack_round_trip_and_shared_buffers_expose_the_rows():
    layout = ObsRowLayout(SPACE, compact=False)
    obs = {
        "depth": np.arange(32, dtype=np.float32).reshape(2, 4, 4, 1),
        "joint": np.array([[1, 2, 3], [4, 5, 6]], np.float32),
        "holding": np.array([[1], [0]], np.int8),
        "step": np.array([[1, 2], [3, 4]], np.int64),
    }
    back = layout.views(layout.pack(obs))
    for key, value in obs.items():
        np.testing.assert_array_equal(back[key], value)
    buffers = create_buffers(SPACE, spaces.Box(-1, 1, (2,), np.float32), 4, shared=False)
    buffers.write_obs(2, {k: v[1] for k, v in obs.items()})
    assert buffers.obs_rows.shape == (4, buffers.layout.row_bytes)
    row = buffers.layout.views(buffers.obs_rows[2:3])
    assert row["joint"][0].tolist() == [4.0, 5.0, 6.0] and row["step"][0].tolist() == [3, 4]


def test_torch_views_of_a_slice_start_at_that_row():
    layout = ObsRowLayout(SPACE)
    block = torch.zeros(5, layout.row_bytes, dtype=torch.uint8)
    layout.torch_views(block)["joint"][3] = torch.tensor([1.0, 2.0, 3.0])
    assert layout.torch_views(block[3:5])["joint"][0].tolist() == pytest.approx([1, 2, 3])
