"""Where the held object sits relative to the EE (base frame) at the end of successful picks.

python benchmarks/results/depth_evals_2026-12-03/grasp_diag.py N CKPT [CKPT ...]
(first N val episodes of seed 1, the depth pick's task at 128² depth)."""

import sys

import numpy as np

from rearrange.skills.learned import LearnedSkill
from rearrange.tasks import default_task_config, make_env


def held_offsets(path: str, n: int) -> tuple[np.ndarray, np.ndarray]:
    skill = LearnedSkill(path, skill_name="pick", deterministic=True)
    cfg = default_task_config("pick", obs_preset="depth", num_episodes=n, depth_size=128)
    env = make_env("pick", cfg, split="val", seed=1)
    skill.step_limit = cfg.max_episode_steps
    offsets, ees = [], []
    for i in range(n):
        obs, info = env.reset(options={"episode_index": i})
        sim = env.unwrapped.sim
        skill.reset(env.unwrapped.target, sim)
        while True:
            obs, _, terminated, truncated, info = env.step(skill.act(obs, sim))
            if info.get("success") or terminated or truncated or skill.is_done(obs, sim):
                break
        held = sim.held_object()
        if info.get("success") and held is not None:
            ee = sim.ee_pos("base")
            offsets.append(sim.to_base_frame(sim.object_pos(held)) - ee)
            ees.append(ee)
    env.close()
    return np.array(offsets), np.array(ees)


def main() -> None:
    n = int(sys.argv[1])
    for path in sys.argv[2:]:
        o, e = held_offsets(path, n)
        print(
            path,
            len(o),
            "offset median",
            np.round(np.median(o, 0), 3),
            "abs-mean",
            np.round(np.abs(o).mean(0), 3),
            "EE median",
            np.round(np.median(e, 0), 3),
        )


if __name__ == "__main__":
    main()
