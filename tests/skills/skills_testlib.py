"""Helpers shared by the skills tests."""

from dataclasses import asdict


def train_ckpt(path, task="pick", base_movement=False, obs_preset="state", depth_size=32):
    """A real (untrained) policy checkpoint as train_skill writes it (its config): a state
    policy, or with obs_preset="depth" a small ResNet on depth_size² head depth."""
    from rearrange.models import ModelConfig, build_policy
    from rearrange.runtime.checkpoint import SkillCheckpoint, TrainingState, rng_state
    from rearrange.tasks import task_observation_space
    from rearrange.tasks.actions import action_space

    obs_space = task_observation_space(task, obs_preset, depth_size, base_movement=base_movement)
    act_space = action_space(task, base_movement or task == "nav")
    model = ModelConfig(backbone="none", rnn_hidden_size=16, state_mlp_hidden=[16])
    if obs_preset == "depth":
        model = ModelConfig(
            base_width=8, groupnorm_groups=4, blocks_per_stage=[1, 1], stage_dilations=[1, 1],
            compressed_size=64, visual_embedding_size=16, rnn_hidden_size=16, rnn_layers=1,
            state_mlp_hidden=[16],
        )  # fmt: skip
    policy = build_policy(obs_space, act_space, model)
    config = {
        "skill": task,
        "base_movement": base_movement,
        "model": asdict(model),
        "task": {"task": task, "obs_preset": obs_preset, "base_movement": base_movement},
    }
    SkillCheckpoint.from_training(
        config, policy.state_dict(), obs_space, act_space, num_steps=4096, num_updates=4,
        wall_time_s=12.5, training=TrainingState({"optimizer": {}}, rng_state()),
    ).save(path)  # fmt: skip
    return policy
