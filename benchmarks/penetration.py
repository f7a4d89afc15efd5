"""Where the robot passes through fixed geometry (issue 27, item 1): per skill and policy.

The robot is kinematic and collides in the physics only with free objects; its overlap with
walls, fixed furniture, the fridge door and the drawers is only measured (a collision pass
in `rearrange/sim/world.py`, DESIGN §3). This benchmark runs val episodes of each skill with
the shipped learned checkpoint and/or the scripted (oracle) skill and, after every policy
step, does its own collision pass with the robot's static bit switched on (the same pass as
the sim's, but keeping every contact): which robot link is inside which piece of furniture
and which part of it (counter top, fridge shelf, drawer front, table top from below, wall),
and how deep, and from which side it came in. The door or drawer the gripper holds is also
reported apart, in two parts: its handle (bar and posts, `SceneIndex.art_grip_geoms`),
which the sim exempts because the gripper sits on it and which stays out of the main
figures, and the rest of it (the fridge door's panel, the drawer's front, sides, bottom and
back), which the sim counts and blocks like any wall (DESIGN §3) and so do the main figures. The pass runs on the state the step
left and changes nothing in the physics.

It prints, per skill x policy: success, the episodes whose deepest contact is deeper than
2 / 5 / 10 cm, the deepest contact, tables of the episodes' deepest contacts grouped by the
penetrated part, by robot link and by the episode's target receptacle, and the per-step
`sim.contact_force()` distribution of the successful episodes (to calibrate a Habitat-style
force limit). `--frames DIR` saves a three-view PNG at the deepest step of the worst
episodes; `--json OUT` writes every episode record; `--sim FIELD=VALUE` sets SimConfig
fields (e.g. the world's blocking, once it exists, to measure after the fix).

    MUJOCO_GL=egl python -m benchmarks.penetration --policy both --episodes 30 --seed 1 \\
        --json benchmarks/results/penetration/before.json      # all seven skills
    MUJOCO_GL=egl python -m benchmarks.penetration --skills pick --policy oracle --episodes 5 \\
        --seed 1 --base-movement --frames /tmp/frames
"""

from __future__ import annotations

import argparse
import ast
import collections
import dataclasses
import json
import math
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

THRESHOLDS = (0.02, 0.05, 0.10)  # m: the 2 / 5 / 10 cm
TARGET_DEPTH = 0.02  # the target: no contact deeper than this in >= 99 % of episodes
PENETRATION_STIFFNESS = 1.0e4  # N/m, as world.PENETRATION_STIFFNESS (the static force part)
# Habitat 2.0's force_terminate: force above min_force accumulates; max_accum_force 5000.
HABITAT_MIN_FORCE, HABITAT_MAX_ACCUM = 20.0, 5000.0

# Part names of each furniture kind's fixed boxes and moving-part boxes, in the build order
# of `rearrange.sim.furniture_parts` (the compiled model keeps that order per body).
_TABLE = ("top", "leg", "leg", "leg", "leg")
FIXED_PARTS = {
    "counter": ("carcass", "top"),
    "table": _TABLE,
    "coffee_table": _TABLE,
    "side_table": _TABLE,
    "shelf": ("side", "side", "back", "bottom board", "middle board", "top board"),
    "sofa": ("seat", "back", "arm", "arm"),
    "fridge": ("back wall", "side wall", "side wall", "shelf", "ceiling"),
    "cabinet": ("base", "top", "back", "side wall", "divider", "side wall"),
}
MOVING_PARTS = {  # furniture kind -> (kind of its moving part, part names)
    "fridge": ("fridge door", ("panel", "handle", "handle post", "handle post")),
    "cabinet": (
        "drawer",
        ("bottom", "front", "back", "side", "side", "handle", "handle post", "handle post"),
    ),
}


@dataclass(frozen=True)
class GeomLabel:
    """What a static geom is: the piece (`counter_0`, `drawer_1`, `wall_3`), its kind
    (`counter`, `drawer`, `fridge door`, `wall`) and the part (`top`, `shelf`, `front`)."""

    piece: str
    kind: str
    part: str

    @property
    def key(self) -> str:
        """The group this geom is counted in: kind and part, e.g. "counter top"."""
        return f"{self.kind} {self.part}".strip()


@dataclass
class Contact:
    """One robot-vs-static contact. `side` is the side the link came in from: "from above"
    (pressed down into a top or shelf), "from below" (up into a table top) or "sideways",
    from the contact normal. `static_contacts` gives the normal's side now, which flips
    once a link is more than half through a thin slab (the shortest way out is then the far
    side); `EpisodeRecord.add_step` replaces it by the side at the step the two geoms
    started touching (its depth is small then), kept while they touch."""

    link: str
    piece: str
    kind: str
    part: str
    side: str
    depth: float  # m
    pos: tuple[float, float, float]
    normal: tuple[float, float, float] = (0.0, 0.0, 1.0)  # from the static geom to the robot
    geoms: tuple[int, int] = (-1, -1)  # (robot geom, static geom)
    held: bool = False  # a part of the door / drawer the gripper holds
    handle: bool = False  # held and its handle bar or a post (the sim exempts those)

    @property
    def key(self) -> str:
        return f"{self.kind} {self.part}".strip()

    def where(self) -> str:
        """ "gripper in drawer_0 front (from above)"."""
        part = f" {self.part}" if self.part else ""
        return f"{self.link} in {self.piece}{part} ({self.side})"


def short_link(body_name: str) -> str:
    """`robot0:wrist_flex_link` -> `wrist_flex`."""
    name = body_name.split(":", 1)[-1]
    return name[: -len("_link")] if name.endswith("_link") else name


def geom_labels(model, layout) -> dict[int, GeomLabel]:
    """Every wall and furniture geom of the compiled `model` of `layout`, labelled."""
    out: dict[int, GeomLabel] = {}
    body_geoms = collections.defaultdict(list)
    for g in range(model.ngeom):
        body_geoms[int(model.geom_bodyid[g])].append(g)
        name = model.geom(g).name
        if name.startswith("wall_"):
            out[g] = GeomLabel(name, "wall", "")

    def label(body_name: str, piece: str, kind: str, parts: tuple[str, ...]) -> None:
        geoms = body_geoms.get(model.body(body_name).id, [])
        for k, g in enumerate(geoms):
            part = parts[k] if len(geoms) == len(parts) else f"box {k}"
            out[g] = GeomLabel(piece, kind, part)

    for f in layout.furniture:
        label(f.name, f.name, f.kind, FIXED_PARTS.get(f.kind, ()))
    for a in layout.articulations:
        kind = next(x.kind for x in layout.furniture if x.name == a.furniture)
        part_kind, parts = MOVING_PARTS.get(kind, (a.name, ()))
        body = "fridge_door" if a.name == "fridge" else f"{a.name}_body"
        label(body, "fridge_door" if a.name == "fridge" else a.name, part_kind, parts)
    return out


def _side(normal_z: float) -> str:
    if normal_z > 0.7:
        return "from above"
    if normal_z < -0.7:
        return "from below"
    return "sideways"


def static_contacts(sim, labels: dict[int, GeomLabel]) -> list[Contact]:
    """Every contact between the robot and walls / fixed furniture / doors / drawers now:
    the sim's own collision pass with the robot's static bit switched on
    (`RearrangeSim.collide_with_static`). Contacts with the articulation the gripper holds
    are kept with `held=True`, and also `handle=True` where it is the handle bar or a post
    (EpisodeRecord counts both apart). The contact list is rebuilt by the next physics
    step, so this changes nothing."""
    from rearrange.sim.furniture_geoms import STATIC_BIT

    m, d, idx = sim.model, sim.data, sim.idx
    sim.collide_with_static()
    if d.ncon == 0:
        return []
    held = sim.held_articulation()
    held_geoms = set() if held is None else {int(g) for g in idx.art_geoms[held]}
    handle_geoms = set() if held is None else {int(g) for g in idx.art_grip_geoms[held]}
    out = []
    for i in range(d.ncon):
        c = d.contact[i]
        g0, g1 = int(c.geom[0]), int(c.geom[1])
        if idx.robot_geoms[g0] == idx.robot_geoms[g1]:
            continue  # robot-robot or static-static
        rg, sg, sign = (g0, g1, -1.0) if idx.robot_geoms[g0] else (g1, g0, 1.0)
        if not m.geom_contype[sg] & STATIC_BIT or c.dist >= 0:
            continue
        lab = labels.get(sg) or GeomLabel(m.body(int(m.geom_bodyid[sg])).name, "other", str(sg))
        link = short_link(m.body(int(m.geom_bodyid[rg])).name)
        normal = tuple(round(sign * float(v), 4) for v in c.frame[:3])  # static -> robot
        out.append(
            Contact(
                link,
                lab.piece,
                lab.kind,
                lab.part,
                _side(normal[2]),
                float(-c.dist),
                tuple(round(float(v), 4) for v in c.pos),
                normal,
                (rg, sg),
                sg in held_geoms,
                sg in handle_geoms,
            )
        )
    return out


# --------------------------------------------------------------------------- per episode


@dataclass
class EpisodeRecord:
    skill: str
    policy: str  # "learned" | "oracle"
    base_movement: bool
    index: int
    episode_id: str = ""
    target: str = ""  # the receptacle / articulation / furniture the episode is about
    target_kind: str = ""
    success: bool = False
    cause: str = ""
    steps: int = 0
    max_depth: float = 0.0  # the deepest contact but with the held door / drawer
    deepest: Contact | None = None
    deepest_step: int = -1
    deepest_holding: str = ""  # what the gripper held then: an articulation, "obj_3" or ""
    # The door / drawer being held, apart: the deepest contact with its handle bar and posts
    # (the sim exempts them: the gripper sits on them) and with the rest of it (the door's
    # panel, the drawer's front, sides, bottom, back: the sim counts them and blocks).
    held_handle_max_depth: float = 0.0
    held_handle_deepest: Contact | None = None
    held_panel_max_depth: float = 0.0
    held_panel_deepest: Contact | None = None
    steps_over: dict[str, int] = field(default_factory=dict)  # "2cm" -> steps deeper
    part_max: dict[str, float] = field(default_factory=dict)  # "counter top" -> max depth
    link_max: dict[str, float] = field(default_factory=dict)  # "wrist_flex" -> max depth
    forces: list[float] = field(default_factory=list)  # sim.contact_force() per step
    static_forces: list[float] = field(default_factory=list)  # 1e4 N/m x summed depth
    pair_forces: list[float] = field(default_factory=list)  # the same, deepest per geom pair
    _entry: dict = field(default_factory=dict, repr=False)  # touching pair -> side it entered

    def add_step(self, step: int, contacts: list[Contact], force: float, holding: str = "") -> bool:
        """Record one step; True when it holds the episode's deepest contact so far. A
        contact's side becomes the one its pair of geoms entered from (see `Contact`);
        contacts with the held door / drawer also count towards `held_handle_max_depth`
        (its handle bar and posts, left out of everything else) or `held_panel_max_depth`
        (the rest of it, which counts like any wall)."""
        entry = {}
        for k, c in enumerate(contacts):
            pair = (c.link, c.piece, c.part, c.geoms)
            entry[pair] = self._entry.get(pair) or entry.get(pair) or c.side
            contacts[k] = dataclasses.replace(c, side=entry[pair])
        self._entry = entry
        for c in contacts:
            if c.held and c.handle and c.depth > self.held_handle_max_depth:
                self.held_handle_max_depth, self.held_handle_deepest = c.depth, c
            elif c.held and not c.handle and c.depth > self.held_panel_max_depth:
                self.held_panel_max_depth, self.held_panel_deepest = c.depth, c
        contacts = [c for c in contacts if not c.handle]  # the held panel counts, as in the sim
        self.forces.append(float(force))
        self.static_forces.append(PENETRATION_STIFFNESS * sum(c.depth for c in contacts))
        per_pair: dict = {}
        for c in contacts:
            per_pair[c.geoms] = max(per_pair.get(c.geoms, 0.0), c.depth)
        self.pair_forces.append(PENETRATION_STIFFNESS * sum(per_pair.values()))
        if not contacts:
            return False
        for c in contacts:
            self.part_max[c.key] = max(self.part_max.get(c.key, 0.0), c.depth)
            self.link_max[c.link] = max(self.link_max.get(c.link, 0.0), c.depth)
        worst = max(contacts, key=lambda c: c.depth)
        for t in THRESHOLDS:
            if worst.depth > t:
                k = cm(t)
                self.steps_over[k] = self.steps_over.get(k, 0) + 1
        if worst.depth > self.max_depth:
            self.max_depth, self.deepest, self.deepest_step = worst.depth, worst, step
            self.deepest_holding = holding
            return True
        return False

    def to_dict(self) -> dict:
        """JSON-ready; the per-step forces sparse (most steps touch nothing): `force_steps`
        lists [step, contact_force, static part, static part one contact per pair] (N) of
        the steps where one of them is not 0."""
        d = asdict(self)
        for k in ("_entry", "forces", "static_forces", "pair_forces"):
            del d[k]
        d["deepest_key"] = self.deepest.key if self.deepest else ""
        d["force_sum"] = float(sum(self.forces))
        rows = zip(self.forces, self.static_forces, self.pair_forces)
        d["force_steps"] = [
            [k, round(f, 1), round(s, 1), round(p, 1)]
            for k, (f, s, p) in enumerate(rows, start=1)
            if f or s or p
        ]
        return d


def cm(t: float) -> str:
    return f"{round(t * 100)}cm"


def episode_target(task: str, episode, layout) -> tuple[str, str]:
    """(name, kind) of what the episode is about: pick's source receptacle, place's goal
    receptacle, the articulation of open/close, the furniture nearest nav's goal."""
    from rearrange.skill_spec import skill_def

    spec = skill_def(task)
    kinds = {f.name: f.kind for f in layout.furniture}

    def rec_kind(name: str) -> str:
        try:
            furn = layout.receptacle(name).furniture
        except KeyError:
            return "?"
        return {"fridge": "fridge shelf", "cabinet": "drawer"}.get(kinds[furn], kinds[furn])

    if spec.target == "object" and not spec.starts_holding:  # pick: where it rests
        name = episode.objects[episode.targets[0].obj_index].receptacle
        return name, rec_kind(name)
    if spec.target == "object":  # place: where it goes
        name = episode.targets[0].goal_receptacle
        return name, rec_kind(name)
    if spec.target == "nav_goal":
        gx, gy = episode.extras["nav_goal"][:2]
        f = min(layout.furniture, key=lambda f: math.hypot(f.center[0] - gx, f.center[1] - gy))
        return f.name, f.kind
    fridge = spec.articulation.articulation == "fridge"
    name = episode.extras.get("articulation") or ("fridge" if fridge else "drawer_0")
    return name, "fridge" if name == "fridge" else "drawer"


# --------------------------------------------------------------------------- running


def _probe_env(env, on_reset, on_step):
    """`env` with a hook after reset and after every step (the skill loop is unchanged)."""
    import gymnasium as gym

    class Probe(gym.Wrapper):
        def reset(self, **kw):
            out = self.env.reset(**kw)
            on_reset()
            return out

        def step(self, action):
            out = self.env.step(action)
            on_step()
            return out

    return Probe(env)


@dataclass
class Run:
    skill: str
    policy: str
    base_movement: bool
    checkpoint: str = ""
    seconds: float = 0.0
    episodes: list[EpisodeRecord] = field(default_factory=list)
    frames: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"{self.skill}{' (base)' if self.base_movement else ''} / {self.policy}"


def run_skill(
    skill_name: str,
    policy: str,
    base_movement: bool,
    episodes: int,
    seed: int,
    split: str = "val",
    frames_dir: Path | None = None,
    frames_per_run: int = 2,
    sim_overrides: dict | None = None,
    checkpoints: str | None = None,
) -> Run:
    """`episodes` episodes of one skill with one policy, measured at every step."""
    import torch

    from rearrange.eval.one_skill import SkillEvalArgs, load_skill
    from rearrange.skill_spec import skill_def
    from rearrange.skills.rollout import run_skill_episode
    from rearrange.tasks import default_task_config, make_env

    bm = base_movement and skill_def(skill_name).has_base_movement_variant
    args = SkillEvalArgs(
        skill_name,
        base_movement=bm,
        skills=policy,
        episodes=episodes,
        seed=seed,
        checkpoints=checkpoints if policy == "learned" else None,
    )
    skill, ckpt, preset = load_skill(args)
    cfg = default_task_config(
        skill_name,
        obs_preset=preset,
        num_episodes=episodes,
        base_movement=bm,
        **_sim_config(sim_overrides or {}),
    )
    env = make_env(skill_name, cfg, split=split, seed=seed)
    skill.step_limit = cfg.max_episode_steps
    run = Run(skill_name, policy, bm, ckpt)
    base = env.unwrapped
    state: dict = {}

    def labels() -> dict[int, GeomLabel]:
        # the current scene's only: a cache of every episode's model kept them all alive
        # (a 100-episode run of the seven skills grew past 6 GB)
        if state.get("model") is not base.sim.model:
            state["model"] = base.sim.model
            state["labels"] = geom_labels(base.sim.model, base.sim.layout)
        return state["labels"]

    def on_reset() -> None:
        rec = state["rec"]
        rec.episode_id = base.episode.episode_id
        rec.target, rec.target_kind = episode_target(skill_name, base.episode, base.sim.layout)
        state["step"] = 0

    def on_step() -> None:
        sim, rec = base.sim, state["rec"]
        state["step"] += 1
        obj = sim.held_object()
        holding = sim.held_articulation() or ("" if obj is None else f"obj_{obj}")
        contacts = static_contacts(sim, labels())
        if rec.add_step(state["step"], contacts, sim.contact_force(), holding):
            state["qpos"][rec.index] = sim.data.qpos.copy()

    probe = _probe_env(env, on_reset, on_step)
    state["qpos"] = {}
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    t0 = time.time()
    try:
        for i in range(episodes):
            state["rec"] = rec = EpisodeRecord(skill_name, policy, bm, i)
            result = run_skill_episode(probe, skill, i)
            rec.success, rec.cause, rec.steps = result.success, result.cause, result.steps
            run.episodes.append(rec)
        run.seconds = time.time() - t0
        if frames_dir is not None:
            worst = sorted(run.episodes, key=lambda r: -r.max_depth)[:frames_per_run]
            for rec in worst:
                if rec.max_depth > THRESHOLDS[0]:
                    path = save_frame(env, rec, state["qpos"][rec.index], frames_dir)
                    run.frames.append(str(path))
    finally:
        torch.set_num_threads(threads)
        env.close()
    return run


def _sim_config(overrides: dict) -> dict:
    """The TaskConfig keyword that sets SimConfig fields: `sim` (a SimConfig) in newer trees,
    `sim_overrides` (a dict) in older ones; nothing when there is nothing to set."""
    from rearrange.sim.config import SimConfig
    from rearrange.tasks.config import TaskConfig

    if not overrides:
        return {}
    if "sim" in TaskConfig.__dataclass_fields__:
        return {"sim": dataclasses.replace(SimConfig(), **overrides)}
    return {"sim_overrides": dict(overrides)}


def save_frame(env, rec: EpisodeRecord, qpos: np.ndarray, out_dir: Path) -> Path:
    """Three views of the deepest step, side by side in one PNG, the penetrated piece drawn
    translucent and the contact point ringed: behind the robot (context), a close-up from
    the robot's left (a top or shelf entered from above or below is edge-on), and a close-up
    from above (a wall or side panel is edge-on)."""
    import mujoco
    from PIL import Image

    from rearrange.sim.render import CameraView, Overlays, follow_view, render_view

    env.reset(options={"episode_index": rec.index})
    sim = env.unwrapped.sim
    m, d = sim.model, sim.data
    d.qpos[:] = qpos
    mujoco.mj_forward(m, d)
    c = rec.deepest
    labels = geom_labels(m, sim.layout)
    geoms = np.array(sorted(g for g, lab in labels.items() if lab.piece == c.piece), dtype=int)
    saved = m.geom_rgba[geoms].copy()
    m.geom_rgba[geoms, 3] = 0.35
    text = [
        f"{rec.skill}{' (base)' if rec.base_movement else ''} {rec.policy}  "
        f"{rec.episode_id}  step {rec.deepest_step}/{rec.steps}  "
        f"{'success' if rec.success else rec.cause}",
        f"{c.where()}: {100 * c.depth:.1f} cm, holding {rec.deepest_holding or 'nothing'}",
    ]
    ov = Overlays(text=text, markers=[(c.pos, f"{100 * c.depth:.1f} cm")])
    r = sim.renderer(640, 480)
    try:
        context = render_view(sim, r, follow_view(sim), ov)
        yaw = math.degrees(float(sim.base_pose()[2]))
        marks = Overlays(markers=ov.markers)
        side = render_view(sim, r, CameraView(tuple(c.pos), 1.3, yaw + 90.0, -12.0), marks)
        top = render_view(sim, r, CameraView(tuple(c.pos), 1.3, yaw, -80.0), marks)
    finally:
        m.geom_rgba[geoms] = saved
    out_dir.mkdir(parents=True, exist_ok=True)
    part = f"_{c.part.replace(' ', '-')}" if c.part else ""
    name = (
        f"{rec.skill}{'_bm' if rec.base_movement else ''}_{rec.policy}_ep{rec.index:02d}_"
        f"{c.link}_{c.piece}{part}_{round(1000 * c.depth)}mm.png"
    )
    path = out_dir / name
    Image.fromarray(np.hstack([context, side, top])).save(path)
    return path


# --------------------------------------------------------------------------- tables


def pct(values, q) -> float:
    return float(np.percentile(values, q)) if len(values) else float("nan")


def summary_row(run: Run) -> str:
    eps = run.episodes
    n = len(eps)
    ok = sum(e.success for e in eps)
    over = [sum(e.max_depth > t for e in eps) for t in THRESHOLDS]
    worst = max(eps, key=lambda e: e.max_depth, default=None)
    where = "-"
    if worst is not None and worst.deepest is not None:
        where = f"{worst.deepest.where()}, ep {worst.index} step {worst.deepest_step}"
    steps = sum(e.steps for e in eps)
    deep_steps = sum(e.steps_over.get(cm(THRESHOLDS[0]), 0) for e in eps)
    within = sum(e.max_depth <= TARGET_DEPTH for e in eps)
    handle = max((e.held_handle_max_depth for e in eps), default=0.0)
    handle_over = sum(e.held_handle_max_depth > THRESHOLDS[0] for e in eps)
    panel = max((e.held_panel_max_depth for e in eps), default=0.0)
    panel_over = sum(e.held_panel_max_depth > THRESHOLDS[0] for e in eps)
    return (
        f"| {run.skill}{' (base)' if run.base_movement else ''} | {run.policy} | {n} | {ok}/{n} "
        f"| {over[0]} | {over[1]} | {over[2]} | {100 * within / max(n, 1):.0f} % "
        f"| {100 * (worst.max_depth if worst else 0):.1f} | {where} "
        f"| {100 * deep_steps / max(steps, 1):.1f} % | {handle_over} / {100 * handle:.1f} "
        f"| {panel_over} / {100 * panel:.1f} | {run.seconds:.0f} |"
    )


SUMMARY_HEADER = (
    "| skill | policy | eps | success | > 2 cm | > 5 cm | > 10 cm | eps ≤ 2 cm (target ≥ 99 %) "
    "| deepest (cm) | deepest contact | steps > 2 cm "
    "| held handle (exempt): eps > 2 cm / deepest (cm) "
    "| rest of the held door/drawer (blocks): eps > 2 cm / deepest (cm) | s |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
)


def group_table(eps: list[EpisodeRecord], by: str) -> str:
    """Episodes grouped by the penetrated part (`by="part"`), the robot link (`"link"`) or
    the episode's target kind (`"target"`): how many episodes have their deepest contact
    there, how many go deeper than 2 / 5 / 10 cm there (any step), and the deepest."""
    if by == "target":
        groups = collections.defaultdict(list)
        for e in eps:
            groups[e.target_kind].append(e)
        rows = ["| target | eps | success | > 2 cm | > 5 cm | > 10 cm | deepest (cm) | at |"]
        rows.append("|---|---|---|---|---|---|---|---|")
        for k in sorted(groups, key=lambda k: -max(e.max_depth for e in groups[k])):
            g = groups[k]
            over = [sum(e.max_depth > t for e in g) for t in THRESHOLDS]
            w = max(g, key=lambda e: e.max_depth)
            at = f"{w.deepest.link} in {w.deepest.key}" if w.deepest else "-"
            ok = sum(e.success for e in g)
            rows.append(
                f"| {k} | {len(g)} | {ok} | {over[0]} | {over[1]} | {over[2]} "
                f"| {100 * w.max_depth:.1f} | {at} |"
            )
        return "\n".join(rows)
    attr, other = ("part_max", "link_max") if by == "part" else ("link_max", "part_max")
    deepest_key = (lambda e: e.deepest.key) if by == "part" else (lambda e: e.deepest.link)
    keys = {k for e in eps for k in getattr(e, attr)}
    rows = [
        f"| {by} | eps deepest here | eps > 2 cm here | > 5 cm | > 10 cm | deepest (cm) "
        f"| with ({'links' if by == 'part' else 'parts'}, eps deepest) |",
        "|---|---|---|---|---|---|---|",
    ]
    stats = []
    for k in keys:
        depths = [getattr(e, attr).get(k, 0.0) for e in eps]
        mine = [e for e in eps if e.deepest is not None and deepest_key(e) == k]
        partners = collections.Counter(
            (e.deepest.link if by == "part" else e.deepest.key) for e in mine
        )
        stats.append((max(depths), k, len(mine), depths, partners))
    for deepest, k, n_deepest, depths, partners in sorted(stats, reverse=True):
        over = [sum(x > t for x in depths) for t in THRESHOLDS]
        with_ = ", ".join(f"{p} {n}" for p, n in partners.most_common(3)) or "-"
        rows.append(
            f"| {k} | {n_deepest} | {over[0]} | {over[1]} | {over[2]} | {100 * deepest:.1f} "
            f"| {with_} |"
        )
    return "\n".join(rows)


def force_stats(eps: list[EpisodeRecord]) -> dict:
    """Per-step `contact_force()` percentiles and per-episode sums of the given episodes."""
    steps = [f for e in eps for f in e.forces]
    static = [f for e in eps for f in e.static_forces]
    pair = [f for e in eps for f in e.pair_forces]
    sums = [sum(e.forces) for e in eps]
    accum = [sum(max(f - HABITAT_MIN_FORCE, 0.0) for f in e.forces) for e in eps]
    return {
        "episodes": len(eps),
        "steps": len(steps),
        "step_nonzero": float(np.mean(np.asarray(steps) > 0)) if steps else float("nan"),
        "step_p50": pct(steps, 50),
        "step_p90": pct(steps, 90),
        "step_p99": pct(steps, 99),
        "step_max": max(steps, default=float("nan")),
        "static_step_p99": pct(static, 99),
        "static_step_max": max(static, default=float("nan")),
        "pair_step_p99": pct(pair, 99),
        "pair_step_max": max(pair, default=float("nan")),
        "episode_sum_p50": pct(sums, 50),
        "episode_sum_p90": pct(sums, 90),
        "episode_sum_max": max(sums, default=float("nan")),
        "accum_p50": pct(accum, 50),
        "accum_p90": pct(accum, 90),
        "accum_max": max(accum, default=float("nan")),
        "accum_over_5000": sum(a > HABITAT_MAX_ACCUM for a in accum),
    }


FORCE_HEADER = (
    "| skill | policy | succ. eps | steps | steps > 0 | step p50 | p90 | p99 | max "
    "| static part p99 / max | same, one contact per geom pair | episode sum p50 | p90 | max "
    "| accum. > 20 N p50 / p90 / max | eps accum. > 5000 |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
)


def force_row(run: Run) -> str:
    s = force_stats([e for e in run.episodes if e.success])
    return (
        f"| {run.skill}{' (base)' if run.base_movement else ''} | {run.policy} | {s['episodes']} "
        f"| {s['steps']} | {100 * s['step_nonzero']:.0f} % | {s['step_p50']:.0f} "
        f"| {s['step_p90']:.0f} | {s['step_p99']:.0f} | {s['step_max']:.0f} "
        f"| {s['static_step_p99']:.0f} / {s['static_step_max']:.0f} "
        f"| {s['pair_step_p99']:.0f} / {s['pair_step_max']:.0f} "
        f"| {s['episode_sum_p50']:.0f} | {s['episode_sum_p90']:.0f} "
        f"| {s['episode_sum_max']:.0f} "
        f"| {s['accum_p50']:.0f} / {s['accum_p90']:.0f} / {s['accum_max']:.0f} "
        f"| {s['accum_over_5000']} |"
    )


def report(runs: list[Run]) -> str:
    out = ["## Summary (per episode: the deepest robot-vs-static contact over all its steps)"]
    out += ["", SUMMARY_HEADER] + [summary_row(r) for r in runs]
    for r in runs:
        out += ["", f"## {r.name}  (checkpoint: {r.checkpoint})", ""]
        out += ["By penetrated part:", "", group_table(r.episodes, "part"), ""]
        out += ["By robot link:", "", group_table(r.episodes, "link"), ""]
        out += ["By the episode's target:", "", group_table(r.episodes, "target")]
        deep = sorted(
            (e for e in r.episodes if e.max_depth > THRESHOLDS[0]), key=lambda e: -e.max_depth
        )
        if deep:
            out += ["", "Episodes deeper than 2 cm (deepest contact):", ""]
            for e in deep:
                held = ""
                if e.held_handle_deepest is not None:
                    held += f", in the held handle {100 * e.held_handle_max_depth:.1f} cm"
                if e.held_panel_deepest is not None:
                    held += f", in the rest of the held part {100 * e.held_panel_max_depth:.1f} cm"
                out.append(
                    f"- ep {e.index} ({e.episode_id}, target {e.target}): "
                    f"{100 * e.max_depth:.1f} cm, {e.deepest.where()} at step "
                    f"{e.deepest_step}/{e.steps} holding {e.deepest_holding or 'nothing'}, "
                    f"{e.steps_over.get('2cm', 0)} steps > 2 cm{held}, "
                    f"{'success' if e.success else 'fail: ' + e.cause}"
                )
        if r.frames:
            out += ["", "Frames: " + ", ".join(Path(p).name for p in r.frames)]
    pooled = [e for r in runs for e in r.episodes]
    out += ["", "## All runs pooled", "", "By penetrated part:", "", group_table(pooled, "part")]
    out += ["", "By robot link:", "", group_table(pooled, "link")]
    out += [
        "",
        "## contact_force() per step, successful episodes (N; 1 cm static = 100 N per contact "
        "point)",
        "",
        "Static part: 1e4 N/m x the summed depth of the robot-vs-static contacts (as the sim). "
        "A box-box pair (finger vs slab) gives up to 4 contact points, a mesh-box pair one. "
        "Accum.: Habitat's force_terminate measure, force above 20 N summed over the episode "
        "(Habitat's skills end at 5000).",
    ]
    out += ["", FORCE_HEADER] + [force_row(r) for r in runs]
    return "\n".join(out)


def _git(*args: str) -> str:
    try:
        return subprocess.run(
            ["git", *args], capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"


def main(argv: list[str] | None = None) -> int:
    from rearrange.skill_spec import SKILL_NAMES

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--skills", default=",".join(SKILL_NAMES), help="comma-separated skills")
    p.add_argument("--policy", choices=("learned", "oracle", "both"), default="both")
    p.add_argument(
        "--checkpoints",
        metavar="FILE|DIR",
        help="the learned policy's checkpoint (default: the shipped one); one skill only",
    )
    p.add_argument("--episodes", type=int, default=30)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--split", default="val")
    p.add_argument("--base-movement", action="store_true", help="arm skills may drive the base")
    p.add_argument("--frames", type=Path, help="save PNGs of the worst episodes here")
    p.add_argument("--frames-per-run", type=int, default=2)
    p.add_argument("--json", type=Path, help="write every episode record here")
    p.add_argument(
        "--sim",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="SimConfig override (repeatable), e.g. --sim world_blocks_robot=True",
    )
    a = p.parse_args(argv)
    sim_overrides = {}
    for item in a.sim:
        key, sep, text = item.partition("=")
        if not sep:
            p.error(f"--sim {item!r}: write FIELD=VALUE")
        try:
            sim_overrides[key] = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            sim_overrides[key] = text
    skills = [s.strip() for s in a.skills.split(",") if s.strip()]
    bad = [s for s in skills if s not in SKILL_NAMES]
    if bad:
        p.error(f"unknown skills {bad}; choose from {', '.join(SKILL_NAMES)}")
    policies = ("oracle", "learned") if a.policy == "both" else (a.policy,)
    commit = _git("rev-parse", "--short", "HEAD")
    dirty = _git("status", "--short", "rearrange") if commit != "?" else ""
    print(
        f"# Robot-vs-static penetration, {a.split} episodes, seed {a.seed}, "
        f"{'base movement' if a.base_movement else 'fixed base'}, "
        f"sim overrides {sim_overrides or 'none'}, commit {commit}"
        + (" (rearrange/ has uncommitted changes)" if dirty else ""),
        flush=True,
    )
    runs = []
    for skill in skills:
        for policy in policies:
            run = run_skill(
                skill,
                policy,
                a.base_movement,
                a.episodes,
                a.seed,
                a.split,
                a.frames,
                a.frames_per_run,
                sim_overrides,
                a.checkpoints,
            )
            runs.append(run)
            print(summary_row(run), flush=True)
    print()
    print(report(runs))
    if a.json is not None:
        a.json.parent.mkdir(parents=True, exist_ok=True)
        blob = {
            "args": {k: str(v) if isinstance(v, Path) else v for k, v in vars(a).items()},
            "commit": _git("rev-parse", "HEAD"),
            "rearrange_dirty": dirty,
            "runs": [
                {
                    "skill": r.skill,
                    "policy": r.policy,
                    "base_movement": r.base_movement,
                    "checkpoint": r.checkpoint,
                    "seconds": r.seconds,
                    "frames": r.frames,
                    "force_successful": force_stats([e for e in r.episodes if e.success]),
                    "episodes": [e.to_dict() for e in r.episodes],
                }
                for r in runs
            ],
        }
        a.json.write_text(json.dumps(blob, separators=(",", ":")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
