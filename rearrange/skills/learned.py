"""A skill driven by a policy trained with VER-PPO or PQL, loaded from its checkpoint.

The policy (CONTRACTS §5) is recurrent: the skill keeps its hidden state and previous action
between steps and zeroes them on `reset`. At deployment the HRL masks apply (DESIGN §6),
applied by whoever steps the world (the executor), not here: nav stop is ignored while the
goal is farther than the HAB mask distance, grip follows the skill's grip rule.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from rearrange.skill_spec import SkillTarget, action_layout, step_limit_for
from rearrange.skills.base import SkillError, check_skill_name
from rearrange.skills.termination import postcondition_met

if TYPE_CHECKING:
    from rearrange.runtime.checkpoint import SkillCheckpoint


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


def build_policy_from_checkpoint(
    path: Path, skill_name: str, device: str
) -> tuple[Any, SkillCheckpoint]:
    """(policy in eval mode, its `SkillCheckpoint`); SkillError on any failure. `skill_name`
    is the skill of an old checkpoint that does not record its own."""
    if not path.is_file():
        raise SkillError(
            f"checkpoint {path} for skill {skill_name!r} not found; {_fix_hint(skill_name)}"
        )
    try:
        from rearrange.runtime.checkpoint import SkillCheckpoint  # lazy: torch-heavy

        ckpt = SkillCheckpoint.load(path, map_location="cpu", skill=skill_name)
        policy = _policy_from(ckpt)
        policy.to(device).eval()
    except Exception as exc:  # any unreadable / inconsistent file gets the same one line
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise SkillError(
            f"checkpoint {path} for skill {skill_name!r} is unreadable ({type(exc).__name__}: "
            f"{first[:200]}); {_fix_hint(skill_name)}"
        ) from None
    return policy, ckpt


def _policy_from(ckpt: SkillCheckpoint) -> Any:
    """Rebuilds the network from the checkpoint's model config and loads its weights."""
    from rearrange.models import build_policy

    if ckpt.model.policy == "pql_actor":
        import rearrange.pql.policy  # noqa: F401  (registers the PQL trainer's policy)
    policy = build_policy(ckpt.observation_space, ckpt.action_space, ckpt.model)
    policy.load_state_dict(ckpt.weights)
    return policy


def sampling_seed(eval_seed: int, episode: int, skill_name: str = "") -> int:
    """The seed of one episode's sampled actions for one skill (`LearnedSkill.seed_sampling`):
    from the evaluation's seed, the episode's index and the skill's name, so an episode draws
    the same actions whatever ran before it and whichever other skills sample."""
    salt = sum(ord(c) << (8 * (i % 4)) for i, c in enumerate(skill_name))
    return int(np.random.SeedSequence([int(eval_seed), int(episode), salt]).generate_state(1)[0])


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
        hint = skill_name or _skill_from_path(path)  # for old files that record no skill
        if not path.is_file():
            raise SkillError(f"checkpoint {path} not found; {_fix_hint(hint)}")
        self.policy, ckpt = build_policy_from_checkpoint(path, hint, device)
        if skill_name is not None and ckpt.skill != skill_name:
            raise SkillError(
                f"checkpoint {path} is a {ckpt.skill!r} checkpoint, not one of {skill_name!r}: "
                f"pass a checkpoint of {skill_name} or drop --checkpoints for the shipped one"
            )
        self.name = check_skill_name(ckpt.skill)
        if not deterministic and ckpt.model.policy == "pql_actor":
            raise SkillError(
                f"sampled actions: {path} is a PQL actor (one deterministic action per state, "
                f"no action distribution to sample); evaluate {self.name} with its mean action"
            )
        self.task = self.name
        self.device = device
        self.deterministic = deterministic
        self.observation_space, self.action_space = ckpt.observation_space, ckpt.action_space
        self.observation_preset = ckpt.obs_preset
        self.trained_config = ckpt.config  # the composed training config, for the record
        self.base_movement = ckpt.base_movement
        self.layout = action_layout(self.name, base_movement=self.base_movement)
        # A fixed-base skill gets the step limit it was trained with (the task's, e.g. pick
        # 300); a base-moving one (NoNav) the HAB allowance of `step_limit_for`, which
        # includes a drive; checkpoints that record none the DESIGN §6 default.
        trained_limit = None if self.base_movement else ckpt.step_limit
        self.step_limit = trained_limit or step_limit_for(self.name, self.base_movement)
        # nav: the radius (m) its training counted success within (the HAB stop-mask's base)
        self.success_radius = ckpt.success_radius if self.name == "nav" else None
        # place: the goal distance (m) its training let it release within (the grip mask's)
        self.release_dist = ckpt.release_dist
        self.target = SkillTarget()
        self._noise = None  # torch.Generator of the sampled actions (seed_sampling)
        self._reset_state()

    def seed_sampling(self, seed: int) -> None:
        """Draw the sampled actions (deterministic=False) from a generator seeded here, so a
        stochastic evaluation repeats from its seed; an evaluation seeds each episode itself
        (`eval.runner`, `eval.one_skill`), so an episode's draws do not depend on the ones
        before it. Unseeded, the samples come from torch's global generator."""
        import torch

        self._noise = torch.Generator(device=self.device)
        self._noise.manual_seed(int(seed))

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

    def follow(self, executed: np.ndarray) -> None:
        """The previous action the next `act` sees is `executed`, not this skill's own: a
        teacher beside another policy keeps its memory of what was done, as the DAgger
        teacher does (distill/teacher_labels.CheckpointTeacher)."""
        import torch

        a = np.asarray(executed, dtype=np.float32).reshape(1, -1)
        self._prev_action = torch.as_tensor(a, device=self.device)

    def act(self, obs: dict, sim: Any) -> np.ndarray:
        import torch

        noise = None
        if not self.deterministic and self._noise is not None:
            noise = torch.randn(self._prev_action.shape, generator=self._noise, device=self.device)
        with torch.no_grad():
            _, action, _, self._hidden = self.policy.act(
                self._obs_tensors(obs),
                self._hidden,
                self._prev_action,
                self._not_done,
                deterministic=self.deterministic,
                **({} if noise is None else {"noise": noise}),
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


def require_depth_policy(skill: LearnedSkill, path: Path) -> None:
    """`--policy depth` (eval, eval_skill): SkillError in one line unless `skill` observes
    head depth."""
    if skill.observation_preset != "depth":
        raise SkillError(
            f"--policy depth: {path} is a {skill.observation_preset} policy, not one on head "
            f"depth; pass {skill.name}'s depth checkpoint ({skill.name}[_bm]_depth.pt or a "
            "--algo distill run) or drop --policy depth"
        )


def _skill_from_path(path: Path) -> str:
    """The skill a file name suggests, for an old checkpoint that records none: pick.pt and
    pick_bm.pt and pick_bm_depth.pt → pick, runs/pick/RUN/checkpoints/latest.pt → pick."""
    from rearrange.runtime.checkpoint import (  # lazy: torch-heavy
        BASE_MOVEMENT_SUFFIX,
        DEPTH_SUFFIX,
    )

    stem, folder = path.stem, path.parent
    if stem == "latest" or stem.startswith("ckpt"):  # runs/SKILL/RUN/checkpoints/latest.pt
        return folder.parent.parent.name if folder.name == "checkpoints" else folder.name
    return stem.removesuffix(DEPTH_SUFFIX).removesuffix(BASE_MOVEMENT_SUFFIX)
