"""β, the probability of executing the teacher's action, and the distill config's checks."""

import pytest

from rearrange.distill.config import DistillConfig
from rearrange.distill.schedule import LinearSchedule


def test_beta_decays_linearly_then_stays():
    beta = LinearSchedule(1.0, 0.0, 100)
    values = [beta(s) for s in (0, 25, 50, 99, 100, 1000)]
    assert values == pytest.approx([1.0, 0.75, 0.5, 0.01, 0.0, 0.0])


def test_beta_between_other_ends():
    beta = LinearSchedule(0.8, 0.2, 200)
    assert beta(50) == pytest.approx(0.8 - 0.6 * 50 / 200)  # 0.65
    assert beta(150) == pytest.approx(0.35)
    assert beta(-10) == 0.8  # before the start: the start


def test_no_decay_steps_is_the_end_value():
    assert LinearSchedule(1.0, 0.3, 0)(0) == 0.3


def test_the_config_builds_the_schedule_in_env_steps():
    cfg = DistillConfig(beta_start=1.0, beta_end=0.0, beta_steps=1000)
    beta = LinearSchedule(cfg.beta_start, cfg.beta_end, cfg.beta_steps)
    assert beta(250) == 0.75
    assert (cfg.buffer_chunks, cfg.minibatch_chunks) == (16_384 // 32, 512 // 32)


@pytest.mark.parametrize(
    ("fields", "needle"),
    [({"beta_start": 1.5}, "DistillConfig.beta_start must be in [0, 1]"),
     ({"rollout_steps": 60, "chunk_len": 32}, "chunk_len=32 must divide rollout_steps=60"),
     ({"buffer_steps": 8}, "buffer_steps=8 must hold at least one chunk"),
     ({"depth_dtype": "int8"}, "depth_dtype='int8'"),
     ({"loss": "l1"}, "DistillConfig.loss='l1'"),
     ({"lr": 0}, "DistillConfig.lr must be > 0")],
)  # fmt: skip
def test_a_bad_value_is_one_line_naming_it(fields, needle):
    with pytest.raises(ValueError) as err:
        DistillConfig(**fields)
    assert needle in str(err.value) and "\n" not in str(err.value)
