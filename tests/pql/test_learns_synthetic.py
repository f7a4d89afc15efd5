"""End to end: PQL (serial mode, the same Actor / learner / ratio code) learns the synthetic
1-D reach task from the CLI, and its checkpoint's greedy policy solves fresh episodes."""

from pql_testlib import greedy_success, train_synthetic

from rearrange.runtime.checkpoint import SkillCheckpoint


def test_serial_pql_learns_the_reach_task(tmp_path):
    assert train_synthetic(tmp_path, "learn", "--serial", "total_steps=2400") == 0
    ckpt = tmp_path / "synthetic" / "learn" / "checkpoints" / "latest.pt"
    state = SkillCheckpoint.load(ckpt)
    assert state.num_steps == 2400
    units = state.training.learner["units"]
    # β_a:v = 1:2 and β_p:v = 1:2 after the 16-step warm-up (2400/4 = 600 Actor steps)
    assert units["ACTOR"] == 600 - 16
    assert abs(units["V_LEARNER"] - 2 * units["ACTOR"]) <= 2
    assert abs(units["P_LEARNER"] - units["V_LEARNER"] / 2) <= 2
    assert greedy_success(ckpt) >= 0.9


def test_serial_pql_d_runs_both_learners_on_the_categorical_critic(tmp_path):
    extra = ["--serial", "pql.distributional=true", "pql.v_min=-5", "pql.v_max=5"]
    assert train_synthetic(tmp_path, "dist", *extra, "total_steps=400") == 0
    state = SkillCheckpoint.load(tmp_path / "synthetic" / "dist" / "checkpoints" / "latest.pt")
    critic = state.training.learner["v_learner"]["critic"]
    assert critic["q1.4.weight"].shape[0] == 51  # logits over the 51 atoms
    assert state.training.learner["units"]["P_LEARNER"] > 0
