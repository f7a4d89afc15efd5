"""The replay buffer is saved beside the checkpoint (replay.npz) and restored on resume: the
file round-trips the buffer (fp16 observations/actions, exact rewards/flags, the newest rows
within the size bound), is written atomically, and a PQL run "killed" after a checkpoint and
resumed continues with the same transitions instead of warming up again."""

import logging

import numpy as np
from pql_testlib import TINY, train_synthetic

from rearrange.config import compose_train_config
from rearrange.pql.replay import ReplayBuffer, TransitionRows
from rearrange.pql.replay_io import REPLAY_FILE, load_replay, read_replay, save_replay
from rearrange.pql.trainer import PQLTrainer
from rearrange.runtime.checkpoint import SkillCheckpoint
from rearrange.trainers import TRAINERS

ROWS, ENVS, OBS, ACT = 16, 3, 4, 2


def _rows(t: int, rng: np.random.Generator, obs: np.ndarray) -> tuple[TransitionRows, np.ndarray]:
    """Step t from `obs`: env 1 is truncated every 5 steps (its next_obs is a final observation
    the next row's obs does not hold), env 2 terminates every 7."""
    new_obs = rng.normal(size=(ENVS, OBS)).astype(np.float32)
    truncated = np.array([False, t % 5 == 4, False])
    terminated = np.array([False, False, t % 7 == 6])
    next_obs = new_obs.copy()
    next_obs[truncated] = rng.normal(size=(int(truncated.sum()), OBS))
    row = TransitionRows(
        obs=obs,
        actions=rng.uniform(-1, 1, (ENVS, ACT)).astype(np.float32),
        rewards=rng.normal(size=ENVS).astype(np.float32),
        terminated=terminated,
        truncated=truncated,
        next_obs=next_obs,
    )
    return row, new_obs


def _filled(steps: int) -> ReplayBuffer:
    buf = ReplayBuffer.create(ROWS, ENVS, OBS, ACT, shared=False)
    rng = np.random.default_rng(0)
    obs = rng.normal(size=(ENVS, OBS)).astype(np.float32)
    for t in range(steps):
        row, obs = _rows(t, rng, obs)
        buf.add(row)
    return buf


def _in_time_order(buf: ReplayBuffer, count: int) -> dict[str, np.ndarray]:
    """The newest `count` rows of `buf`, oldest first."""
    rows = np.arange(buf.head - count, buf.head) % buf.rows
    keys = ("obs", "next_obs", "actions", "rewards", "terminated", "truncated")
    return {k: getattr(buf, k)[rows] for k in keys}


def test_round_trip_keeps_the_newest_rows_within_the_bound(tmp_path):
    buf = _filled(23)  # wrapped: the ring holds steps 7..22
    path = tmp_path / REPLAY_FILE
    assert save_replay(buf, path, max_transitions=10 * ENVS + 2, num_steps=69) == 10 * ENVS
    fresh = ReplayBuffer.create(ROWS, ENVS, OBS, ACT, shared=False)
    restored = load_replay(fresh, path)
    assert (restored.rows, restored.transitions, restored.saved_at_step) == (10, 30, 69)
    assert fresh.head == 10
    want, got = _in_time_order(buf, 10), _in_time_order(fresh, 10)
    for key in ("obs", "next_obs", "actions"):  # fp16: ~3 significant digits
        np.testing.assert_allclose(got[key], want[key], rtol=1e-3, atol=1e-3)
        assert not np.array_equal(got[key], np.zeros_like(got[key]))
    assert np.array_equal(got["rewards"], want["rewards"])  # exact
    assert np.array_equal(got["terminated"], want["terminated"])
    # exact up to the last row, which is marked as a time-limit end where it did not terminate
    assert np.array_equal(got["truncated"][:-1], want["truncated"][:-1])
    assert np.array_equal(got["truncated"][-1], ~want["terminated"][-1])


def test_next_obs_is_stored_only_where_the_next_row_does_not_hold_it(tmp_path):
    buf = _filled(12)
    path = tmp_path / REPLAY_FILE
    save_replay(buf, path, max_transitions=ROWS * ENVS, num_steps=36)
    arrays = read_replay(path)
    # the whole last row, plus env 1's truncations at steps 4 and 9
    expected = {(11, 0), (11, 1), (11, 2), (4, 1), (9, 1)}
    assert {tuple(x) for x in arrays["next_at"].tolist()} == expected
    assert arrays["obs"].dtype == np.float16 and arrays["rewards"].dtype == np.float32


def test_restore_into_a_smaller_buffer_keeps_the_newest(tmp_path):
    buf = _filled(12)
    path = tmp_path / REPLAY_FILE
    save_replay(buf, path, max_transitions=ROWS * ENVS, num_steps=36)
    small = ReplayBuffer.create(5, ENVS, OBS, ACT, shared=False)
    assert load_replay(small, path).rows == 5 and small.head == 5
    np.testing.assert_allclose(small.obs, _in_time_order(buf, 5)["obs"], rtol=1e-3, atol=1e-3)


def test_a_save_replaces_the_file_atomically_and_a_zero_bound_writes_nothing(tmp_path):
    path = tmp_path / REPLAY_FILE
    save_replay(_filled(3), path, max_transitions=100, num_steps=9)
    save_replay(_filled(6), path, max_transitions=100, num_steps=18)
    assert [p.name for p in tmp_path.iterdir()] == [REPLAY_FILE]  # no temp file left
    assert int(read_replay(path)["meta"][5]) == 18
    assert save_replay(_filled(6), tmp_path / "other.npz", max_transitions=0, num_steps=18) == 0
    assert not (tmp_path / "other.npz").exists()


def _trainer(root, name: str, total: int) -> PQLTrainer:
    """A PQL trainer of the `train_synthetic` run `name`, built as train_skill builds it."""
    overrides = ["+algo=pql", "run.serial=true", f"runs_root={root}", f"run_name={name}"]
    cfg = compose_train_config("synthetic", [*overrides, *TINY, f"run.total_steps={total}"])
    trainer = TRAINERS["pql"].build(cfg, root / "synthetic" / name)
    trainer.setup.tensorboard = trainer.setup.progress = False
    return trainer


def test_a_killed_run_resumes_with_its_replay_and_keeps_training(tmp_path, caplog):
    assert train_synthetic(tmp_path, "kill", "--serial", "total_steps=800") == 0
    ckpt_dir = tmp_path / "synthetic" / "kill" / "checkpoints"
    saved = read_replay(ckpt_dir / REPLAY_FILE)
    assert saved["obs"].shape[:2] == (200, 4)  # 800 steps / 4 envs, all within the bound
    before = SkillCheckpoint.load(ckpt_dir / "latest.pt")

    # "kill": nothing of the first process survives; a fresh trainer reads the run directory
    trainer = _trainer(tmp_path, "kill", 1200)
    try:
        with caplog.at_level(logging.INFO, logger="rearrange.train"):
            trainer._build()
        assert "restored 800 replay transitions" in caplog.text
        assert trainer.replay.head == 200
        np.testing.assert_array_equal(trainer.replay.obs[:200], saved["obs"].astype(np.float32))
        np.testing.assert_array_equal(trainer.replay.rewards[:200], saved["rewards"])
    finally:
        trainer._close()

    assert train_synthetic(tmp_path, "kill", "--serial", "total_steps=1200") == 0
    after = SkillCheckpoint.load(ckpt_dir / "latest.pt")
    actor_steps = (
        after.training.learner["units"]["ACTOR"] - before.training.learner["units"]["ACTOR"]
    )
    assert after.num_steps == 1200
    assert actor_steps == 100  # 400 steps / 4 envs, none spent on a warm-up
    final = read_replay(ckpt_dir / REPLAY_FILE)
    assert final["obs"].shape[:2] == (300, 4)  # the old rows plus the new ones
    np.testing.assert_array_equal(final["obs"][:200], saved["obs"])


def test_resume_without_a_replay_file_warms_up_again(tmp_path, caplog):
    assert train_synthetic(tmp_path, "lost", "--serial", "total_steps=400") == 0
    ckpt_dir = tmp_path / "synthetic" / "lost" / "checkpoints"
    (ckpt_dir / REPLAY_FILE).unlink()
    before = SkillCheckpoint.load(ckpt_dir / "latest.pt").training.learner["units"]["ACTOR"]
    with caplog.at_level(logging.WARNING, logger="rearrange.train"):
        assert train_synthetic(tmp_path, "lost", "--serial", "total_steps=800") == 0
    assert "the replay starts empty" in caplog.text
    after = SkillCheckpoint.load(ckpt_dir / "latest.pt").training.learner["units"]["ACTOR"]
    assert after - before == 100 - 16  # the 16-step warm-up is back
