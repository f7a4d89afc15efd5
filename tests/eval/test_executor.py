"""TP-SRL executor on the real HAB env: oracle end to end, stop-masking, failure stages."""

import dataclasses
import math

import mujoco
import numpy as np
import pytest

from rearrange.eval.executor import ExecutorConfig, TPSRLExecutor, nav_goal
from rearrange.planner import make_plan
from rearrange.sim.episodes import arm_starts
from rearrange.sim.episodes.arm_starts import arm_kinematics, carry_joints
from rearrange.sim.robot import REST_ARM_QPOS
from rearrange.skills import action_layout, make_skill
from rearrange.skills.oracle_common import rest_ee_world
from rearrange.skills.oracle_manip import CARRY_OFFSET, CARRY_TOL
from rearrange.skills.reset_arm import JOINT_TOL, RESET_ARM_STEPS, ResetArm
from rearrange.tasks import HabConfig, HabEnv
from rearrange.tasks.base import load_task_episodes


def _env(episode, base_movement=False):
    config = HabConfig(obs_preset="state", skill_base_movement=base_movement)
    return HabEnv(episode.task, config, split="val", episodes=[episode])


@pytest.fixture(scope="module")
def one_target_episode():
    """Tidy House val episode 0 cut to its first target: nav, pick, nav, place."""
    ep = load_task_episodes("tidy_house", None, 1, "val", 0)[0]
    return dataclasses.replace(ep, targets=ep.targets[:1])


class AlwaysStopNav:
    """A nav skill that asks to stop at every step without moving."""

    name = task = "nav"
    step_limit = 300

    def reset(self, target, sim=None):
        self.steps = 0

    def act(self, obs, sim):
        self.steps += 1
        return action_layout("nav").compose(base=np.zeros(2), stop=True)

    def is_done(self, obs, sim):
        return True


class TeleportNav(AlwaysStopNav):
    """Jumps to its goal pose (public sim API), then stops."""

    def reset(self, target, sim=None):
        # before the first observation, so the goal sensor already reads ~0 m
        held = sim.held_object()
        assert sim.set_base_pose(*target.nav_goal)
        if held is not None:  # carry it along (a teleport would leave it behind)
            sim.start_holding(held)

    def act(self, obs, sim):
        return action_layout("nav").compose(base=np.zeros(2), stop=True)


class TeleportPick:
    """Puts its target object in the gripper at once."""

    name = task = "pick"
    step_limit = 200

    def reset(self, target, sim=None):
        self.obj = target.obj_index
        sim.start_holding(self.obj)  # test double: the sim's episode-start grasp

    def act(self, obs, sim):
        return action_layout("pick").compose(arm=np.zeros(7), grip=1.0)

    def is_done(self, obs, sim):
        return sim.held_object() == self.obj


class IdleSkill:
    """Never moves and never finishes by itself."""

    def __init__(self, name, base_movement=False):
        self.name = self.task = name
        self.step_limit = 5
        self.layout = action_layout(name, base_movement)

    def reset(self, target, sim=None):
        pass

    def act(self, obs, sim):
        return self.layout.compose(arm=np.zeros(7), grip=-1.0)

    def is_done(self, obs, sim):
        return False


def test_oracle_skills_complete_a_tidy_house_episode(one_target_episode):
    env = _env(one_target_episode)
    env.reset()
    plan = make_plan(env.sim.layout, env.episode)
    assert [s.skill for s in plan] == ["nav", "pick", "nav", "place"]
    skills = {n: make_skill(n, "oracle") for n in ("nav", "pick", "place")}
    record = TPSRLExecutor(env, skills).run_episode(plan)
    assert record.failure_reason == ""
    assert record.success and record.stages_completed == 2
    assert 0 < record.steps == env.num_steps <= 3000
    assert env.all_targets_done()


def test_nav_stop_is_masked_far_from_the_goal(one_target_episode):
    env = _env(one_target_episode)
    env.reset()
    plan = make_plan(env.sim.layout, env.episode)[:1]
    goal = nav_goal(env, plan[0])
    assert math.dist(env.sim.base_pose()[:2], goal[:2]) > 2.0  # the mask must apply
    config = ExecutorConfig(step_limits={"nav": 12})
    record = TPSRLExecutor(env, {"nav": AlwaysStopNav()}, config).run_episode(plan)
    # stop was ignored every step: the nav step ran to its step limit, then failed robot_at
    assert record.steps == 12 and record.stages_completed == 0

    env.reset()
    unmasked = ExecutorConfig(step_limits={"nav": 12}, mask_nav_stop=False)
    record = TPSRLExecutor(env, {"nav": AlwaysStopNav()}, unmasked).run_episode(plan)
    assert record.steps == 1


class RadiusStopNav(AlwaysStopNav):
    """AlwaysStopNav trained (as a LearnedSkill reports) to succeed within `radius` m."""

    def __init__(self, radius):
        self.success_radius = radius


def test_hab_stop_mask_is_the_navs_success_radius_plus_half_a_metre(one_target_episode):
    from rearrange.tasks.stop_rule import STOP_MASK_DIST, hab_stop_mask_dist

    assert ExecutorConfig().stop_mask_dist is None  # derived from the nav skill
    assert hab_stop_mask_dist(0.5) == 1.0 and hab_stop_mask_dist(1.5) == STOP_MASK_DIST == 2.0
    assert hab_stop_mask_dist(None) == STOP_MASK_DIST  # unknown radius: the paper's
    env = _env(one_target_episode)
    env.reset()
    plan = make_plan(env.sim.layout, env.episode)[:1]

    def stop_steps(nav, mask_dist=None) -> int:
        env.reset()
        gx, gy, _ = nav_goal(env, plan[0])
        for k in range(72):  # a free pose 1.5 m from the nav goal
            a = 2 * math.pi * k / 72
            if env.sim.set_base_pose(gx + 1.5 * math.cos(a), gy + 1.5 * math.sin(a), a):
                break
        else:
            raise AssertionError("no free pose 1.5 m from the nav goal")
        config = ExecutorConfig(
            step_limits={"nav": 12}, stop_mask_dist=mask_dist, stop_mask_heading=None
        )  # the distance alone (this pose faces away from the goal's heading)
        return TPSRLExecutor(env, {"nav": nav}, config).run_episode(plan).steps

    assert stop_steps(RadiusStopNav(0.5)) == 12  # mask 1 m < 1.5 m: until the step limit
    assert stop_steps(RadiusStopNav(1.5)) == 1  # mask 2 m (the paper's): stops there
    assert stop_steps(AlwaysStopNav()) == 1  # no radius known: the paper's 2 m
    assert stop_steps(RadiusStopNav(1.5), mask_dist=1.0) == 12  # the config decides


def test_hab_stop_mask_on_heading_keeps_the_nav_going_until_it_faces_the_goal_heading(
    one_target_episode,
):
    """At the goal point but turned: a stop is ignored while the heading is more than 30
    degrees off (the nav's 15 degree success angle + 15), taken within it, and taken at any
    heading with the heading mask off (the VER paper's distance-only rule)."""
    from rearrange.tasks.stop_rule import HAB_STOP_MASK_HEADING

    assert ExecutorConfig().stop_mask_heading == HAB_STOP_MASK_HEADING
    env = _env(one_target_episode)
    env.reset()
    plan = make_plan(env.sim.layout, env.episode)[:1]

    def stop_steps(turn_deg: float, heading=HAB_STOP_MASK_HEADING) -> int:
        env.reset()
        gx, gy, gyaw = nav_goal(env, plan[0])
        assert env.sim.set_base_pose(gx, gy, gyaw + math.radians(turn_deg))
        config = ExecutorConfig(step_limits={"nav": 12}, stop_mask_heading=heading)
        return TPSRLExecutor(env, {"nav": RadiusStopNav(0.5)}, config).run_episode(plan).steps

    assert stop_steps(90.0) == 12 and stop_steps(-40.0) == 12  # masked to the step limit
    assert stop_steps(20.0) == 1 and stop_steps(-25.0) == 1  # within 30 degrees: stops
    assert stop_steps(90.0, heading=None) == 1  # distance only


def test_shipped_nav_reports_its_training_success_radius():
    from rearrange.skills.learned import LearnedSkill

    assert LearnedSkill("rearrange/skills/pretrained/nav.pt").success_radius == 0.5
    assert LearnedSkill("rearrange/skills/pretrained/pick.pt").success_radius is None


def test_failed_step_ends_the_episode_at_its_stage(one_target_episode):
    ep = load_task_episodes("tidy_house", None, 1, "val", 0)[0]
    env = _env(ep)
    env.reset()
    plan = make_plan(env.sim.layout, env.episode)
    skills = {"nav": TeleportNav(), "pick": TeleportPick(), "place": IdleSkill("place")}
    record = TPSRLExecutor(env, skills, ExecutorConfig(reset_arm=False)).run_episode(plan)
    # nav + pick 1 succeed (stage 1 reached), nav to the goal succeeds, place 1 fails
    assert record.stages_completed == 1 and not record.success
    assert record.failed_skill == str(plan[3]) and plan[3].skill == "place"
    assert record.steps == 1 + 1 + 1 + 5  # place ran its 5-step limit, nothing after it
    assert "object_at" in record.failure_reason
    assert record.failure_cause == "skill timed out"  # off goal, but out of steps first


class DroppingNav(TeleportNav):
    """Jumps to its goal pose and lets go of what the gripper holds (a weld torn on the
    way), then stops."""

    def reset(self, target, sim=None):
        super().reset(target, sim)
        sim.gripper.release()  # test double: the hold is lost as a broken weld loses it


def test_nav_that_loses_the_held_object_fails_as_dropped(one_target_episode):
    env = _env(one_target_episode)
    env.reset()
    plan = make_plan(env.sim.layout, env.episode)
    skills = {"nav": DroppingNav(), "pick": TeleportPick(), "place": IdleSkill("place")}
    record = TPSRLExecutor(env, skills, ExecutorConfig(reset_arm=False)).run_episode(plan)
    # the first nav held nothing and passes; the second one lost obj and fails there
    assert record.failed_skill == str(plan[2]) and plan[2].skill == "nav"
    obj = plan[1].obj_index
    assert record.failure_reason == f"dropped obj_{obj} during nav (lost its hold)"
    assert record.failure_cause == "dropped object"
    assert record.stages_completed == 1 and record.steps == 3
    assert [r["ok"] for r in record.skill_runs] == [True, True, False]


def test_never_succeeding_pick_fails_at_stage_zero(one_target_episode):
    env = _env(one_target_episode, base_movement=True)
    env.reset()
    plan = make_plan(env.sim.layout, env.episode, no_nav=True)
    assert [s.skill for s in plan] == ["pick", "place"]
    skills = {"pick": IdleSkill("pick", True), "place": IdleSkill("place", True)}
    record = TPSRLExecutor(env, skills).run_episode(plan)
    assert (record.stages_completed, record.steps, record.success) == (0, 5, False)
    assert record.failed_skill == str(plan[0]) and "not holding" in record.failure_reason
    assert record.failure_cause == "skill timed out"  # the idle pick used its step limit


def test_global_step_limit_cuts_the_episode(one_target_episode):
    env = _env(one_target_episode)
    env.reset()
    plan = make_plan(env.sim.layout, env.episode)
    skills = {n: make_skill(n, "oracle") for n in ("nav", "pick", "place")}
    record = TPSRLExecutor(env, skills, ExecutorConfig(max_steps=25)).run_episode(plan)
    assert record.steps == 25 and not record.success
    assert "step limit 25" in record.failure_reason
    assert record.failure_cause == "skill timed out"


def test_legs_count_the_steps_the_world_cut_short(one_target_episode, monkeypatch):
    """Each skill run records how many of its steps the world blocked and how many of its
    last steps in a row were (a frozen leg): here the sim's counter is bumped by hand on
    pick steps 2, 3, 7, 8, 9 and 10 of 10, never on the place's 5."""
    env = _env(one_target_episode)
    env.reset()
    plan = make_plan(env.sim.layout, env.episode, no_nav=True)
    skills = {"pick": IdleSkill("pick"), "place": IdleSkill("place")}
    skills["pick"].step_limit = 10
    apply, count = env.apply_action, {"n": 0}

    def apply_blocked(name, action):
        apply(name, action)
        count["n"] += 1
        if name == "pick" and count["n"] in (2, 3, 7, 8, 9, 10):
            env.sim.blocked_steps += 1

    monkeypatch.setattr(env, "apply_action", apply_blocked)
    record = TPSRLExecutor(env, skills, ExecutorConfig(reset_arm=False)).run_episode(plan)
    pick = record.skill_runs[0]
    assert (pick["steps"], pick["blocked_steps"], pick["blocked_at_end"]) == (10, 6, 4)
    assert len(record.skill_runs) == 1  # the idle pick failed: the place never ran


def test_force_limit_ends_the_episode_as_excessive_force(one_target_episode, monkeypatch):
    from rearrange.tasks.force_limit import ForceLimit

    ep = one_target_episode
    config = HabConfig(obs_preset="state", force_limit=ForceLimit(max_accum=1000.0))
    env = HabEnv(ep.task, config, split="val", episodes=[ep])
    env.reset()
    bumps = iter([0.0, 600.0, 0.0, 600.0] * 10)  # hitting something again and again
    monkeypatch.setattr(env.sim, "contact_force", lambda: next(bumps))
    plan = make_plan(env.sim.layout, env.episode, no_nav=True)
    skills = {"pick": IdleSkill("pick"), "place": IdleSkill("place")}
    skills["pick"].step_limit = 50
    record = TPSRLExecutor(env, skills, ExecutorConfig(reset_arm=False)).run_episode(plan)
    # rises of 600 N at steps 2 and 4: 1200 N > 1000 N, and the pick ends there
    assert record.steps == 4 and not record.success and record.stages_completed == 0
    assert record.failure_cause == "excessive force" and record.failed_skill == str(plan[0])
    assert "1200 N accumulated" in record.failure_reason
    assert record.skill_runs[0]["ended_by"] == "force"


class SetJointSkill:
    """Open/close skill double: sets its articulation to the target value (public sim API)."""

    def __init__(self, name):
        self.name = self.task = name
        self.step_limit = 200

    def reset(self, target, sim=None):
        sim.set_articulation_pos(
            target.articulation, 0.46 if "drawer" in target.articulation else 1.25
        )

    def act(self, obs, sim):
        return action_layout(self.name).compose(arm=np.zeros(7), grip=-1.0)

    def is_done(self, obs, sim):
        return True


def test_open_cab_counts_as_a_stage_in_set_table():
    ep = load_task_episodes("set_table", None, 1, "val", 0)[0]
    env = _env(ep)
    env.reset()
    plan = make_plan(env.sim.layout, env.episode)
    kinds = [s.skill for s in plan]
    assert kinds[:4] == ["nav", "open_cab", "nav", "pick"]  # the extra nav after open_cab
    skills = {
        "nav": TeleportNav(),
        "open_cab": SetJointSkill("open_cab"),
        "open_fridge": SetJointSkill("open_fridge"),
        "pick": TeleportPick(),
        "place": IdleSkill("place"),
    }
    record = TPSRLExecutor(env, skills).run_episode(plan)
    # open_cab_1 and pick_1 done, place_1 fails
    assert record.stages_completed == 2
    assert record.failed_skill.startswith("place(")


@pytest.mark.slow
def test_oracle_tidy_house_several_episodes_record_consistent_stages():
    eps = load_task_episodes("tidy_house", None, 3, "val", 0)
    skills = {n: make_skill(n, "oracle") for n in ("nav", "pick", "place")}
    for ep in eps:
        env = _env(ep)
        env.reset()
        plan = make_plan(env.sim.layout, env.episode)
        record = TPSRLExecutor(env, skills).run_episode(plan)
        assert 0 <= record.stages_completed <= 10 and record.steps <= 3000
        assert record.success == (record.stages_completed == 10 and not record.failed_skill)


def test_nav_goal_is_a_pick_ready_pose_and_oracle_nav_lands_on_it(one_target_episode):
    from rearrange.sim.placement import in_ready_pose, placement_now

    env = _env(one_target_episode)
    env.reset()
    plan = make_plan(env.sim.layout, env.episode)
    goal = nav_goal(env, plan[0])
    assert placement_now(env.sim).pose_ok(*goal)  # the episode generator's clearance test
    record = TPSRLExecutor(env, {"nav": make_skill("nav", "oracle")}).run_episode(plan[:1])
    x, y, yaw = env.sim.base_pose()
    assert math.dist((x, y), goal[:2]) < 0.05
    assert abs(math.remainder(yaw - goal[2], 2 * math.pi)) < math.radians(3)
    assert in_ready_pose(env.sim, env.sim.object_pos(plan[0].obj_index)[:2], reach_max=1.0)
    assert record.failed_skill == "plan"  # the nav step held; only the cut plan "failed"


def test_nonav_oracle_pick_and_place_navigate_themselves(one_target_episode):
    env = _env(one_target_episode, base_movement=True)
    env.reset()
    plan = make_plan(env.sim.layout, env.episode, no_nav=True)
    skills = {n: make_skill(n, "oracle", base_movement=True) for n in ("pick", "place")}
    record = TPSRLExecutor(env, skills).run_episode(plan)
    assert record.failure_reason == ""
    assert record.success and record.stages_completed == 2


def test_arm_reset_runs_after_pick_only_and_lifts_the_held_object(one_target_episode):
    """habitat-lab's add_arm_rest: a scripted reset after every skill but nav and the last.
    After TeleportPick the EE sits at rest holding the object; the reset lifts it to the
    carry pose (rest + 0.13 m up) and keeps the hold."""
    env = _env(one_target_episode)
    env.reset()
    plan = make_plan(env.sim.layout, env.episode)
    rest_z = float(rest_ee_world(env.sim)[2])
    skills = {"nav": TeleportNav(), "pick": TeleportPick(), "place": IdleSkill("place")}
    lifted = {}

    class RecordingNav(TeleportNav):
        def reset(self, target, sim=None):
            if sim.held_object() is not None:  # the second nav: after pick and the reset
                lifted["z"] = float(sim.ee_pos("world")[2])
                lifted["held"] = sim.held_object()
            super().reset(target, sim)

    class RecordingPick(TeleportPick):
        def reset(self, target, sim=None):  # the leg's start, where the executor measured it
            x, y, yaw = (float(v) for v in sim.base_pose())
            ox, oy = (float(v) for v in sim.object_pos(target.obj_index)[:2])
            sx, sy = x + 0.033 * math.cos(yaw), y + 0.033 * math.sin(yaw)  # the shoulder
            lifted["reach"] = math.hypot(ox - sx, oy - sy)
            lifted["bearing"] = math.degrees(
                math.remainder(math.atan2(oy - y, ox - x) - yaw, math.tau)
            )
            super().reset(target, sim)

    class RecordingPlace(IdleSkill):
        def reset(self, target, sim=None):  # how the object is held as the place starts
            obj = sim.held_object()
            lifted["held_dist"] = float(np.linalg.norm(sim.object_pos(obj) - sim.ee_pos()))
            mat = np.zeros(9)
            mujoco.mju_quat2Mat(mat, sim.object_quat(obj))
            lifted["held_tilt"] = math.degrees(math.acos(np.clip(mat[8], -1.0, 1.0)))

    skills["nav"], skills["pick"] = RecordingNav(), RecordingPick()
    skills["place"] = RecordingPlace("place")
    record = TPSRLExecutor(env, skills).run_episode(plan)
    runs = record.skill_runs
    assert [r["skill"] for r in runs] == ["nav", "pick", "nav", "place"]
    # pick and place legs say where they started: shoulder -> object, and its bearing; the
    # teleported nav left the object at the executor's stand reach, straight ahead
    assert runs[1]["start_reach_m"] == pytest.approx(lifted["reach"], abs=1e-3)
    assert runs[1]["start_bearing_deg"] == pytest.approx(lifted["bearing"], abs=0.1)
    assert 0.4 < runs[1]["start_reach_m"] < 1.0 and abs(runs[1]["start_bearing_deg"]) < 1.0
    assert "start_reach_m" in runs[3] and "start_reach_m" not in runs[0]
    # the place leg says how it found the object held: EE distance and tilt off upright
    assert runs[3]["held_dist_m"] == pytest.approx(lifted["held_dist"], abs=1e-3)
    assert runs[3]["held_tilt_deg"] == pytest.approx(lifted["held_tilt"], abs=0.1)
    assert 0.0 < runs[3]["held_dist_m"] < 0.3
    assert "held_dist_m" not in runs[1]
    resets = runs[1]["reset_arm_steps"]
    assert 0 < resets < RESET_ARM_STEPS  # it finished by reaching the pose, not the budget
    assert "reset_arm_steps" not in runs[0] and "reset_arm_steps" not in runs[3]
    # a teleporting nav ends on its goal pose; only nav legs say where they ended
    assert runs[0]["end_dist_m"] < 1e-3 and runs[0]["end_heading_deg"] < 0.1
    assert "end_dist_m" not in runs[1] and "end_dist_m" not in runs[3]
    assert record.steps == 1 + 1 + resets + 1 + 5
    assert lifted["held"] == env.pick_target(0).obj_index
    assert lifted["z"] == pytest.approx(rest_z + CARRY_OFFSET[2], abs=CARRY_TOL)


def test_arm_reset_without_a_held_object_returns_to_rest(one_target_episode):
    env = _env(one_target_episode)
    env.reset()
    sim = env.sim
    layout = action_layout("pick")
    for _ in range(20):  # push the arm well away from rest
        env.apply_action("pick", layout.compose(arm=np.full(7, 0.5), grip=-1.0))
    assert np.linalg.norm(sim.ee_pos("world") - rest_ee_world(sim)) > 0.05
    arm = ResetArm(layout)
    for _ in range(RESET_ARM_STEPS):
        if arm.is_done(sim):
            break
        env.apply_action("pick", arm.act(sim))
    assert np.linalg.norm(sim.ee_pos("world") - rest_ee_world(sim)) < CARRY_TOL
    assert sim.held_object() is None
    # habitat-lab's reset ends at the rest joints, not just the rest EE
    assert np.abs(sim.arm_joint_pos() - np.array(REST_ARM_QPOS)).max() < JOINT_TOL


def test_arm_reset_ends_at_the_canonical_joints_not_another_arm_with_the_ee_there(
    one_target_episode,
):
    """An arm with its EE at rest but the shoulder panned 0.6 rad (as a pick leaves it after
    the EE-space reset) is not done: the joint phase turns it back to the rest joints, and
    while holding to `carry_joints` (the EE then at the carry pose)."""
    env = _env(one_target_episode)
    env.reset()
    sim = env.sim
    layout = action_layout("pick")
    kin = arm_kinematics()
    panned = kin.rest.copy()
    panned[0] += 0.6  # shoulder pan
    sim.set_arm_joint_pos(
        arm_starts._reach(kin, kin.rest_ee, panned)
    )  # EE back at rest, other joints
    kin.set_arm(kin.rest)
    assert np.linalg.norm(sim.ee_pos("world") - rest_ee_world(sim)) < 0.01
    err0 = np.abs(sim.arm_joint_pos() - np.array(REST_ARM_QPOS)).max()
    assert err0 > 0.15  # another arm, the same EE
    arm = ResetArm(layout)
    assert not arm.is_done(sim)
    steps = 0
    while not arm.is_done(sim) and steps < RESET_ARM_STEPS:
        env.apply_action("pick", arm.act(sim))
        steps += 1
    assert arm.joint_phase and arm.ee_steps == 0  # the EE was already there
    # the joint target moves ≤ arm_delta_scale a step: at least err0 / scale steps
    assert (err0 - JOINT_TOL) / sim.config.arm_delta_scale <= steps < RESET_ARM_STEPS
    assert np.abs(sim.arm_joint_pos() - np.array(REST_ARM_QPOS)).max() < JOINT_TOL
    # holding: the carry joints, whose EE is the carry pose (rest + CARRY_OFFSET)
    q = carry_joints()
    kin.set_arm(q)
    assert np.linalg.norm(kin.ee() - (kin.rest_ee + CARRY_OFFSET)) < 0.01
    kin.set_arm(kin.rest)


def test_nav_to_a_drawer_ends_at_its_work_pose():
    """The open/close skills train from the articulation's work pose; the nav before
    open_cab must end there (from a pick-ready pose beside the drawer the learned open_cab
    fails)."""
    from rearrange.sim.placement import articulation_work_pose

    ep = load_task_episodes("set_table", None, 1, "val", 0)[0]
    env = _env(ep)
    env.reset()
    plan = make_plan(env.sim.layout, env.episode)
    i = next(k for k, s in enumerate(plan) if s.skill == "open_cab")
    nav, art_name = plan[i - 1], plan[i].articulation
    assert nav.skill == "nav" and nav.nav_kind == "articulation"
    art = next(a for a in env.sim.layout.articulations if a.name == art_name)
    work = articulation_work_pose(env.sim.layout, art, footprints=env.sim.footprints)
    assert nav_goal(env, nav) == pytest.approx(work)


def test_nav_to_a_fridge_shelf_object_stands_clear_of_the_open_door():
    """After open_fridge the door stands at ~1.19 rad; the nav goal for the shelf object must
    be a pose the sim lets the base reach, facing the object (treating the whole door sweep
    as blocked leaves no pick-ready pose, and the fallback stands in the door)."""
    from rearrange.sim.placement import articulation_work_pose, in_ready_pose

    ep = load_task_episodes("set_table", None, 2, "val", 0)[1]
    env = _env(ep)
    env.reset()
    sim = env.sim
    sim.set_articulation_pos("fridge", 1.19)
    fridge = next(a for a in sim.layout.articulations if a.name == "fridge")
    assert sim.set_base_pose(*articulation_work_pose(sim.layout, fridge, footprints=sim.footprints))
    plan = make_plan(sim.layout, env.episode)
    i = next(k for k, s in enumerate(plan) if s.skill == "pick" and "fridge" in s.receptacle)
    goal = nav_goal(env, plan[i - 1])
    assert sim.set_base_pose(*goal)  # not inside the door panel
    assert in_ready_pose(sim, sim.object_pos(plan[i].obj_index)[:2], reach_max=0.9)


def test_nav_to_the_fridge_keeps_its_work_pose_beside_an_open_drawer():
    """set_table leaves the drawer open; beside the fridge it overlaps the resting arm at the
    fridge's work pose, but the base fits there, and open_fridge was trained from there
    (the pick-ready fallback faces the fridge ~37° off, where the learned open_fridge
    stalls)."""
    from rearrange.sim.placement import articulation_work_pose, placement_now

    ep = load_task_episodes("set_table", None, 1, "val", 0)[0]
    env = _env(ep)
    env.reset()
    sim = env.sim
    plan = make_plan(sim.layout, env.episode)
    nav = next(s for s in plan if s.skill == "nav" and s.args == ("fridge",))
    fridge = next(a for a in sim.layout.articulations if a.name == "fridge")
    work = articulation_work_pose(sim.layout, fridge, footprints=sim.footprints)
    sim.set_articulation_pos("drawer_0", 0.43)
    assert not placement_now(sim).pose_ok(*work)  # the strict check fails here ...
    assert nav_goal(env, nav) == pytest.approx(work)  # ... the nav still goes there
    assert sim.set_base_pose(*work)


def _reach(goal, target_xy) -> float:
    from rearrange.sim.placement import shoulder_reach
    from rearrange.sim.placement.stand_poses import PLACEMENT

    return shoulder_reach(goal, target_xy, PLACEMENT.shoulder_x)


def test_pick_leg_nav_goal_aims_at_the_pick_stand_reach(one_target_episode):
    from rearrange.eval.executor import PICK_STAND_REACH
    from rearrange.sim.placement import COMFORT_REACH

    env = _env(one_target_episode)
    env.reset()
    plan = make_plan(env.sim.layout, env.episode)
    assert plan[0].skill == "nav" and plan[0].nav_kind == "object"
    obj_xy = env.sim.object_pos(plan[0].obj_index)[:2]
    far, near = nav_goal(env, plan[0]), nav_goal(env, plan[0], COMFORT_REACH)
    # both are pick-ready poses; each nearer its own aim than the other (one 5 cm cell)
    assert abs(_reach(far, obj_xy) - PICK_STAND_REACH) <= 0.05
    assert abs(_reach(near, obj_xy) - COMFORT_REACH) <= 0.05
    assert _reach(far, obj_xy) > _reach(near, obj_xy) + 0.1
    # the executor's config decides it: the nav target observed is that pose
    ex = TPSRLExecutor(env, {}, ExecutorConfig(pick_stand_reach=COMFORT_REACH))
    assert tuple(ex.task_target(plan[0]).nav_goal) == pytest.approx(near)
    ex = TPSRLExecutor(env, {})
    assert tuple(ex.task_target(plan[0]).nav_goal) == pytest.approx(far)
    # a place leg (nav to the goal) keeps the comfortable reach
    place_nav = next(s for s in plan[1:] if s.skill == "nav")
    assert nav_goal(env, place_nav, 0.9) == nav_goal(env, place_nav)


def test_postcondition_checks_name_their_cause(one_target_episode):
    """At the episode start nothing is held, placed or reached: each check says why, typed."""
    env = _env(one_target_episode)
    env.reset()
    plan = make_plan(env.sim.layout, env.episode)
    executor = TPSRLExecutor(env, {}, ExecutorConfig(reset_arm=False))
    causes = {s.skill: executor.check(s)[2] for s in plan}
    assert causes["pick"].value == "no grasp"
    assert causes["place"].value == "placed off goal"
    nav_far = [s for s in plan if s.skill == "nav" and not executor.check(s)[0]]
    assert nav_far and executor.check(nav_far[0])[2].value == "nav short of goal"
