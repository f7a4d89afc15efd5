"""What a boolean world option costs (`SimConfig.stop_loose_parts`, `arm_slide`,
`arm_slide_with_base`, `block_held_handle`), on the real workload: a shipped learned skill
(default open_fridge, fixed base or --base-movement) on its own val episodes, the same
episodes with the option on and off, interleaved episode by episode.

    MUJOCO_GL=egl python -m benchmarks.sim_option_cost --field arm_slide --episodes 20 [--skill open_fridge]

Prints per setting: steps/s of the env steps alone (policy time excluded), the steps the
option acted on (its sim counter, `COUNTERS`), successes, and the deepest robot overlap
measured after every step (a fresh collision pass, as `benchmarks/penetration.py`).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import time

os.environ.setdefault("MUJOCO_GL", "egl")

import numpy as np  # noqa: E402

# the RearrangeSim counter of the steps each option acted on
COUNTERS = {
    "stop_loose_parts": "free_part_stopped_steps",
    "arm_slide": "arm_slid_steps",
    "arm_slide_with_base": "arm_slid_steps",  # with it, also those slid beside a base part
    "block_held_handle": "held_part_blocked_steps",
}


def _timed(env, timings: list[float], depths: list[float]):
    """`env` with each step's wall time appended to `timings` and the robot's deepest overlap
    after it, from a fresh collision pass, kept in depths[-1] (one slot per episode)."""
    import gymnasium as gym

    class Timed(gym.Wrapper):
        def reset(self, **kw):
            depths.append(0.0)
            return self.env.reset(**kw)

        def step(self, action):
            t0 = time.perf_counter()
            out = self.env.step(action)
            timings.append(time.perf_counter() - t0)
            depths[-1] = max(depths[-1], self.env.unwrapped.sim.static_depth_now())
            return out

    return Timed(env)


def main(argv: list[str] | None = None) -> int:
    import torch

    from rearrange.eval.one_skill import SkillEvalArgs, load_skill
    from rearrange.sim.config import SimConfig
    from rearrange.skills.rollout import run_skill_episode
    from rearrange.tasks import default_task_config, make_env

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--skill", default="open_fridge")
    p.add_argument("--episodes", type=int, default=20)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--base-movement", action="store_true")
    p.add_argument("--field", default="stop_loose_parts", choices=sorted(COUNTERS))
    a = p.parse_args(argv)
    counter = COUNTERS[a.field]
    torch.set_num_threads(1)
    skill, ckpt, preset = load_skill(
        SkillEvalArgs(a.skill, base_movement=a.base_movement, episodes=a.episodes, seed=a.seed)
    )
    envs, stats = {}, {}
    for on in (False, True):
        cfg = default_task_config(
            a.skill,
            obs_preset=preset,
            num_episodes=a.episodes,
            base_movement=a.base_movement,
            sim=dataclasses.replace(SimConfig(), **{a.field: on}),
        )
        stats[on] = {"t": [], "succ": 0, "deep": [], "acted": 0}
        env = make_env(a.skill, cfg, split="val", seed=a.seed)
        skill.step_limit = cfg.max_episode_steps
        envs[on] = _timed(env, stats[on]["t"], stats[on]["deep"])
    for i in range(a.episodes):  # interleaved: load spikes hit both alike
        for on, env in envs.items():
            s = stats[on]
            s["succ"] += run_skill_episode(env, skill, i).success  # as eval_skill runs it
            s["acted"] += getattr(env.unwrapped.sim, counter)
    print(
        f"# {a.skill}{' --base-movement' if a.base_movement else ''}, {ckpt}, "
        f"{a.episodes} val episodes of seed {a.seed}, load {os.getloadavg()[0]:.1f}"
    )
    print(
        f"| {a.field} | env steps/s | steps | steps acted on | success | eps > 2 cm | deepest (cm) |"
    )
    print("|---|---|---|---|---|---|---|")
    for on, s in stats.items():
        t = np.asarray(s["t"])
        print(
            f"| {'on' if on else 'off'} | {len(t) / t.sum():.0f} | {len(t)} | {s['acted']} "
            f"| {s['succ']}/{a.episodes} | {sum(d > 0.02 for d in s['deep'])} "
            f"| {100 * max(s['deep']):.1f} |"
        )
    on, off = (len(stats[k]["t"]) / np.sum(stats[k]["t"]) for k in (True, False))
    print(
        f"env steps/s on / off: {on / off:.3f} (median step {1e3 * statistics.median(stats[True]['t']):.2f} "
        f"vs {1e3 * statistics.median(stats[False]['t']):.2f} ms)"
    )
    for env in envs.values():
        env.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
