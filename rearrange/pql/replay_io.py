"""The replay buffer on disk: `replay.npz` beside a PQL run's `latest.pt`, so a resumed run
continues with the transitions it had instead of warming up from an empty buffer (an empty
replay after `--resume` dropped open_cab's success from ~1.0 to ~0.2).

Format (numpy .npz, written atomically like the checkpoint: temp file, fsync, rename):

    obs [K, N, D] fp16, actions [K, N, A] fp16   the newest K rows (K·N ≤ the size bound)
    rewards [K, N] fp32, terminated / truncated [K, N] bool   exact
    next_at [M, 2] int32 (row, env), next_obs [M, D] fp16   only where next_obs differs from
        the following row's obs (a truncation's final observation, a session boundary) and
        the whole last row: elsewhere next_obs[t] == obs[t+1], so it is not stored twice
    meta [6] int64: format, num_envs, obs_dim, act_dim, head at save, env steps at save

Size: about K·N·(2·D + 2·A + 6) bytes; open_cab (D = 14, A = 8) measured 50 bytes per
transition: 1.3 MB at 25k steps, 50 MB for the CPU profile's full 1M-transition buffer. The
bound is `pql.checkpoint_replay` transitions (default 1M): a buffer holding more saves only
its newest rows within it; the older rows are dropped. Observations and actions lose precision to fp16 (3 significant
digits; observations are normalised by running statistics anyway); rewards and flags do not.
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import NamedTuple

import numpy as np

from rearrange.pql.replay import ReplayBuffer
from rearrange.runtime.checkpoint import write_atomically

REPLAY_FILE = "replay.npz"
FORMAT = 1


class RestoredReplay(NamedTuple):
    """What `load_replay` put into the buffer."""

    rows: int  # replay rows restored (each holds one step of every env)
    transitions: int  # rows · envs
    saved_at_step: int  # env steps of the run when the file was written


def held_steps(replay: ReplayBuffer, max_transitions: int) -> np.ndarray:
    """Absolute steps t (oldest first) of the newest rows held, at most `max_transitions`
    transitions: the rows a save keeps."""
    held = min(replay.head, replay.rows)
    keep = min(held, max_transitions // replay.num_envs)
    return np.arange(replay.head - keep, replay.head)


def _next_obs_fixups(obs: np.ndarray, next_obs: np.ndarray) -> np.ndarray:
    """[M, 2] (row, env) where next_obs cannot be read from the next row's obs."""
    differs = np.zeros(obs.shape[:2], bool)
    differs[:-1] = np.any(next_obs[:-1] != obs[1:], axis=-1)
    differs[-1] = True  # the newest row has no next row
    return np.argwhere(differs).astype(np.int32)


def replay_arrays(replay: ReplayBuffer, max_transitions: int, num_steps: int) -> dict:
    """The arrays of `replay.npz` (module docstring) for the newest rows within the bound."""
    rows = held_steps(replay, max_transitions) % replay.rows
    obs, next_obs = replay.obs[rows], replay.next_obs[rows]
    fix = _next_obs_fixups(obs, next_obs)
    meta = [FORMAT, replay.num_envs, obs.shape[-1], replay.actions.shape[-1], replay.head]
    return {
        "obs": obs.astype(np.float16),
        "actions": replay.actions[rows].astype(np.float16),
        "rewards": replay.rewards[rows].astype(np.float32),
        "terminated": replay.terminated[rows],
        "truncated": replay.truncated[rows],
        "next_at": fix,
        "next_obs": next_obs[fix[:, 0], fix[:, 1]].astype(np.float16),
        "meta": np.array([*meta, num_steps], np.int64),
    }


def save_replay(replay: ReplayBuffer, path: Path, max_transitions: int, num_steps: int) -> int:
    """Write the newest ≤ `max_transitions` transitions to `path` atomically (nothing when the
    bound holds less than one row or the buffer is empty); returns the transitions written."""
    if replay.head == 0 or max_transitions < replay.num_envs:
        return 0
    arrays = replay_arrays(replay, max_transitions, num_steps)
    write_atomically(path, lambda f: np.savez(f, **arrays))
    return arrays["rewards"].size


class ReplayFileError(ValueError):
    """replay.npz is unreadable or does not fit this run (one line: what, and what happens)."""


def read_replay(path: Path) -> dict[str, np.ndarray]:
    """The arrays of a replay.npz; ReplayFileError if it is unreadable."""
    try:
        with np.load(path, allow_pickle=False) as data:
            return {key: data[key] for key in data.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        raise ReplayFileError(f"{path} is unreadable ({type(exc).__name__})") from None


KEYS = ("obs", "actions", "rewards", "terminated", "truncated", "next_at", "next_obs", "meta")


def _check_fits(arrays: dict[str, np.ndarray], replay: ReplayBuffer, path: Path) -> None:
    """ReplayFileError unless the file is a complete replay of this run's shapes."""
    meta = arrays.get("meta")
    if any(k not in arrays for k in KEYS) or meta is None or int(meta[0]) != FORMAT:
        raise ReplayFileError(f"{path} is not a replay file of format {FORMAT}")
    saved = (int(meta[1]), int(meta[2]), int(meta[3]))
    here = (replay.num_envs, replay.obs.shape[-1], replay.actions.shape[-1])
    if saved != here:
        raise ReplayFileError(
            f"{path} holds (envs, obs dim, action dim) = {saved}, this run {here}"
        )


def load_replay(replay: ReplayBuffer, path: Path) -> RestoredReplay:
    """Fill an empty buffer from `path`: the newest rows that fit, in time order from row 0,
    `head` = their count. The last restored row is marked truncated (where it did not
    terminate): the run's envs restart, so its n-step returns must stop there and bootstrap
    from its stored next_obs instead of running into the next session's first steps.
    Raises ReplayFileError (the buffer is then left empty)."""
    arrays = read_replay(path)
    _check_fits(arrays, replay, path)
    obs = arrays["obs"]
    count = min(len(obs), replay.rows)
    first = len(obs) - count
    next_obs = np.empty(obs.shape, np.float32)
    next_obs[:-1] = obs[1:]
    at = arrays["next_at"]
    next_obs[at[:, 0], at[:, 1]] = arrays["next_obs"]
    replay.obs[:count] = obs[first:]
    replay.next_obs[:count] = next_obs[first:]
    replay.actions[:count] = arrays["actions"][first:]
    replay.rewards[:count] = arrays["rewards"][first:]
    replay.terminated[:count] = arrays["terminated"][first:]
    replay.truncated[:count] = arrays["truncated"][first:]
    if count:
        replay.truncated[count - 1] |= ~replay.terminated[count - 1]
    replay.set_head(count)
    return RestoredReplay(count, count * replay.num_envs, int(arrays["meta"][5]))
