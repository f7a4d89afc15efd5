"""Helpers shared by the skills tests."""

from dataclasses import asdict


def train_ckpt(path, task="pick", base_movement=False):
    """A real (untrained) state policy checkpoint as train_skill writes it (its config)."""
    from rearrange.models import ModelConfig, build_policy
    from rearrange.runtime.checkpoint import SkillCheckpoint, TrainingState, rng_state
    from rearrange.tasks import task_observation_space
    from rearrange.tasks.actions import action_space

    obs_space = task_observation_space(task, "state", base_movement=base_movement)
    act_space = action_space(task, base_movement or task == "nav")
    model = ModelConfig(backbone="none", rnn_hidden_size=16, state_mlp_hidden=[16])
    policy = build_policy(obs_space, act_space, model)
    config = {
        "skill": task,
        "base_movement": base_movement,
        "model": asdict(model),
        "task": {"task": task, "obs_preset": "state", "base_movement": base_movement},
    }
    SkillCheckpoint.from_training(
        config, policy.state_dict(), obs_space, act_space, num_steps=4096, num_updates=4,
        wall_time_s=12.5, training=TrainingState({"optimizer": {}}, rng_state()),
    ).save(path)  # fmt: skip
    return policy
