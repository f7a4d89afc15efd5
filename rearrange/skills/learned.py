"""A skill driven by a policy trained with VER-PPO or PQL, loaded from its checkpoint.

The policy (CONTRACTS §5) is recurrent: the skill keeps its hidden state and previous action
between steps and zeroes them on `reset`. At deployment the HRL masks apply (DESIGN §6),
applied by whoever steps the world (the executor), not here: nav stop is ignored while the
goal is farther than the HAB mask distance, grip follows the skill's grip rule.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from rearrange.skill_spec import SkillTarget, action_layout, step_limit_for
from rearrange.skills.base import SkillError, check_skill_name
from rearrange.skills.termination import postcondition_met


def single_thread_torch() -> None:
    """Batch-1 inference of a small policy: torch's intra-op threads only add contention
    (measured 69 ms per LSTM step with 2 threads beside a training run, vs < 1 ms)."""
    import torch

    torch.set_num_threads(1)


def _fix_hint(skill_name: str) -> str:
    return (
        f"train it with `python -m rearrange.train_skill {skill_name}` "
        "or run with `--skills oracle`"
    )


def _load_checkpoint(path: Path) -> Any:
    from rearrange.runtime import checkpoint as ckpt_mod  # lazy: torch-heavy

    return ckpt_mod.load_checkpoint(path, map_location="cpu")


def _field(ckpt: Any, *names: str) -> Any:
    for n in names:
        if isinstance(ckpt, dict) and n in ckpt:
            return ckpt[n]
        if hasattr(ckpt, n):
            return getattr(ckpt, n)
    raise KeyError(f"checkpoint has none of the fields {names}")


def build_policy_from_checkpoint(path: Path, skill_name: str, device: str) -> tuple[Any, Any, Any]:
    """(policy in eval mode, observation_space, action_space); SkillError on any failure.
    The checkpoint's training config is kept as `policy.trained_config`."""
    if not path.is_file():
        raise SkillError(
            f"checkpoint {path} for skill {skill_name!r} not found; {_fix_hint(skill_name)}"
        )
    try:
        ckpt = _load_checkpoint(path)
        obs_space = _field(ckpt, "observation_space", "obs_space")
        act_space = _field(ckpt, "action_space", "act_space")
        policy = _policy_from(ckpt, obs_space, act_space)
        policy.to(device).eval()
        policy.trained_config = _field(ckpt, "config")
    except SkillError:
        raise
    except Exception as exc:  # any unreadable / inconsistent file gets the same one line
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise SkillError(
            f"checkpoint {path} for skill {skill_name!r} is unreadable ({type(exc).__name__}: "
            f"{first[:200]}); {_fix_hint(skill_name)}"
        ) from None
    return policy, obs_space, act_space


def _policy_from(ckpt: Any, obs_space: Any, act_space: Any) -> Any:
    """Rebuilds the network from the checkpoint's model config and loads its weights."""
    from rearrange.models import build_policy
    from rearrange.models.config import ModelConfig

    model_cfg = _field(ckpt, "config")
    if isinstance(model_cfg, dict) and "model" in model_cfg:
        model_cfg = model_cfg["model"]
    if isinstance(model_cfg, dict):
        # The trainer stores plain data (lists for tuples); keep only ModelConfig fields.
        known = ModelConfig.__dataclass_fields__
        model_cfg = ModelConfig(
            **{
                k: tuple(v) if isinstance(v, list) else v
                for k, v in model_cfg.items()
                if k in known
            }
        )
    if model_cfg.policy == "pql_actor":
        import rearrange.pql.policy  # noqa: F401  (registers the PQL trainer's policy)
    policy = build_policy(obs_space, act_space, model_cfg)
    policy.load_state_dict(_field(ckpt, "policy"))
    return policy


class LearnedSkill:
    """Skill protocol around a trained policy checkpoint."""

    def __init__(
        self,
        checkpoint_path: str | Path,
        device: str = "cpu",
        skill_name: str | None = None,
        deterministic: bool = True,
    ) -> None:
        path = Path(checkpoint_path)
        if not path.is_file():
            hint = _fix_hint(skill_name or _skill_from_path(path))
            raise SkillError(f"checkpoint {path} not found; {hint}")
        self.name = check_skill_name(skill_name or _skill_from_path(path))
        self.task = self.name
        self.device = device
        self.deterministic = deterministic
        self.policy, self.observation_space, self.action_space = build_policy_from_checkpoint(
            path, self.name, device
        )
        self.base_movement = _trained_base_movement(self.policy, self.name, self.action_space)
        self.layout = action_layout(self.name, base_movement=self.base_movement)
        self.step_limit = _trained_step_limit(self.policy, self.name, self.base_movement)
        # nav: the radius (m) its training counted success within (the HAB stop-mask's base)
        self.success_radius = _trained_nav_radius(self.policy) if self.name == "nav" else None
        self.target = SkillTarget()
        self._reset_state()

    @property
    def observation_preset(self) -> str:
        spaces = self.observation_space.spaces
        if "depth" in spaces:
            return "depth"
        return "state_rays" if "rays" in spaces else "state"

    def _reset_state(self) -> None:
        import torch

        r, h = self.policy.num_recurrent_layers, self.policy.hidden_size
        self._hidden = torch.zeros(1, r, h, device=self.device)
        self._prev_action = torch.zeros(1, self.layout.size, device=self.device)
        self._not_done = torch.zeros(1, dtype=torch.bool, device=self.device)
        self.steps = 0

    def reset(self, target: SkillTarget, sim_or_env_state: Any = None) -> None:
        self.target = target
        self._reset_state()

    def _obs_tensors(self, obs: dict) -> dict:
        import torch

        keys = list(self.observation_space.spaces)
        missing = [k for k in keys if k not in obs]
        if missing:
            raise SkillError(f"skill {self.name!r} needs observations {missing}; got {sorted(obs)}")
        return {
            k: torch.as_tensor(np.asarray(obs[k]), dtype=torch.float32, device=self.device)[None]
            for k in keys
        }

    def act(self, obs: dict, sim: Any) -> np.ndarray:
        import torch

        with torch.no_grad():
            _, action, _, self._hidden = self.policy.act(
                self._obs_tensors(obs),
                self._hidden,
                self._prev_action,
                self._not_done,
                deterministic=self.deterministic,
            )
        self._prev_action = action
        self._not_done = torch.ones(1, dtype=torch.bool, device=self.device)
        a = np.clip(action[0].cpu().numpy().astype(np.float32), -1.0, 1.0)
        self.steps += 1
        # The policy's action as it is: whoever steps the world applies the deployment
        # masks, once (the skill env in training and eval_skill, the HRL executor in HAB:
        # tasks/stop_rule.py, tasks/grip_rules.py), and ends nav on a stop it accepts.
        return a

    def is_done(self, obs: dict, sim: Any) -> bool:
        if self.steps >= self.step_limit:
            return True
        return sim is not None and postcondition_met(self.name, self.target, sim)


def _trained_base_movement(policy: Any, name: str, action_space: Any) -> bool:
    """Whether the checkpoint's skill drives the base, as its training config records it
    (`task.base_movement`: train_skill saves the whole config in VER and PQL checkpoints);
    checkpoints without that record: an action width with the two base dimensions."""
    config = policy.trained_config
    task = config.get("task") if isinstance(config, dict) else None
    if isinstance(task, dict) and task.get("base_movement") is not None:
        return bool(task["base_movement"])
    width = int(np.prod(action_space.shape))
    return name != "nav" and width == action_layout(name, base_movement=True).size


def _trained_step_limit(policy: Any, name: str, base_movement: bool) -> int:
    """A fixed-base skill gets the step limit it was trained with (the task's, e.g. pick 300);
    a base-moving one (NoNav) the HAB allowance of `step_limit_for`, which includes a drive."""
    if not base_movement:
        try:
            return int(policy.trained_config["task"]["max_episode_steps"])
        except Exception:  # older checkpoints: the DESIGN §6 default
            pass
    return step_limit_for(name, base_movement)


def _trained_nav_radius(policy: Any) -> float | None:
    """task.thresholds.nav_dist of the checkpoint's training config, if it records one."""
    try:
        return float(policy.trained_config["task"]["thresholds"]["nav_dist"])
    except Exception:  # older checkpoints / no config
        return None


def _skill_from_path(path: Path) -> str:
    """pick.pt → pick, checkpoints/pick/latest.pt → pick."""
    stem = path.stem
    return stem if stem != "latest" and not stem.startswith("ckpt") else path.parent.name
