"""Reverse curriculum from demonstration states: training episodes that start partway along
the skill's scripted oracle solving that episode (`TaskConfig.oracle_start_prob`,
docs/DESIGN.md §4.2).

Why: a policy that learns to work a door rarely reaches, early in training, the late phases
(release, the way back to rest round the worked door), so it never learns them. Starting a
share of episodes from the oracle's own worked poses lets it practise them.

`OracleStartWrapper` does it on reset: after the env's normal reset, with probability p it
drives the env with the skill's oracle (the one `registry.make_oracle` builds) for k ~
U{0..oracle_start_max_frac * max_episode_steps} steps through the env's own `step()` (grip
tracker, force meter, reward trackers and sim stay consistent), then makes that state the
episode's start (`SkillEnv.rebase_start`). A prefix stops early where the oracle says it is
done. A prefix whose episode ended (success or a failure rule) at step j is replayed from the
same episode's start for k ~ U{0..j-1} steps (the oracles and the sim are deterministic), so
the policy never gets an ended episode; should the replay end too, the start is plain. Every
draw comes from the env's own RNG (`SkillEnv.rng`), so runs reproduce from the seed.

It lives here, not in `tasks`: it drives the env with a runtime skill, and tasks sit below
skills (DESIGN §2.1). `OracleStartEnvFactory` is the trainers' env factory when the option
is on (`trainers.run_setup`), for VER-PPO and PQL alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gymnasium

from rearrange.runtime.env_worker import TaskEnvFactory
from rearrange.skills.base import Skill
from rearrange.skills.registry import make_oracle
from rearrange.tasks.base import SkillEnv

PREFIX_STEPS = "oracle_prefix_steps"
"""The info key of the prefix length after a reset (0: a plain start); also a reset option
that asks for a prefix of that many steps (tests, inspection)."""


class OracleStartWrapper(gymnasium.Wrapper):
    """A skill env whose resets start a `config.oracle_start_prob` share of episodes along
    its oracle's solution (module doc)."""

    def __init__(self, env: gymnasium.Env, oracle: Skill | None = None) -> None:
        super().__init__(env)
        base = env.unwrapped
        if not isinstance(base, SkillEnv):
            raise TypeError(f"OracleStartWrapper needs a skill env, got {type(base).__name__}")
        cfg = base.config
        self.prob = float(cfg.oracle_start_prob)
        self.horizon = int(cfg.oracle_start_max_frac * cfg.max_episode_steps)
        self.oracle = oracle if oracle is not None else make_oracle(cfg.task, cfg.base_movement)
        # The env's limit binds, not the runtime skill's own (benchmarks/oracle_success.py).
        self.oracle.step_limit = cfg.max_episode_steps

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        options = dict(options or {})
        asked = options.pop(PREFIX_STEPS, None)
        obs, info = self.env.reset(seed=seed, options=options)
        rng = self.env.unwrapped.rng
        if asked is not None:
            k = int(asked)
            if k < 0:
                raise ValueError(f"reset option {PREFIX_STEPS} must be >= 0, got {k}")
        elif self.prob > 0 and rng.random() < self.prob:
            k = int(rng.integers(0, self.horizon + 1))
        else:
            k = 0
        if k > 0:
            obs, info, k = self._start_along_oracle(obs, info, k)
        info[PREFIX_STEPS] = k
        return obs, info

    def _start_along_oracle(self, obs: dict, info: dict, k: int) -> tuple[dict, dict, int]:
        """Run the oracle for up to `k` steps and start the episode there; returns the start's
        observation and reset info and the prefix's length."""
        base = self.env.unwrapped
        obs, steps, ended = self._prefix(obs, k)
        if ended:  # the episode ended at step `steps`: a shorter prefix of the same run
            obs, info = base.restart_episode()
            obs, steps, ended = self._prefix(obs, int(base.rng.integers(0, steps)))
            if ended:  # the replay went another way: a plain start
                obs, info = base.restart_episode()
                steps = 0
        base.rebase_start()
        return obs, {"success": False, "episode_id": base.episode.episode_id}, steps

    def _prefix(self, obs: dict, k: int) -> tuple[dict, int, bool]:
        """Up to `k` oracle steps from the episode's start: (obs, steps taken, whether the
        episode ended on the last one)."""
        base = self.env.unwrapped
        self.oracle.reset(base.target, base.sim)
        for step in range(1, k + 1):
            obs, _, terminated, _, info = self.env.step(self.oracle.act(obs, base.sim))
            if terminated or info.get("success"):
                return obs, step, True
            if self.oracle.is_done(obs, base.sim):
                return obs, step, False
        return obs, k, False


@dataclass
class OracleStartEnvFactory(TaskEnvFactory):
    """`TaskEnvFactory` whose envs start along the oracle's solution
    (`TaskConfig.oracle_start_prob`); picklable, as the env workers need."""

    def __call__(self, index: int) -> Any:
        return OracleStartWrapper(super().__call__(index))


__all__ = ["PREFIX_STEPS", "OracleStartEnvFactory", "OracleStartWrapper"]
