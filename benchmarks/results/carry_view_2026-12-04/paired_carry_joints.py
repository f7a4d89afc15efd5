"""The paired row of RESULTS "The carry pose in view": `rearrange.eval_skill` with the free-IK
carry start of c15a6c8 drawn as before (the same random draws) and then replaced by
`carry_joints`, so every other part of each episode is as in the free-IK run. Run at c15a6c8:

    MUJOCO_GL=egl python benchmarks/results/carry_view_2026-12-04/paired_carry_joints.py \\
        nav --policy depth --episodes 50 --seed 1 --set episodes.nav_hold_prob=1.0
"""

import runpy
import sys

import rearrange.sim.episodes.arm_starts as A

_free_ik = A.carry_arm


def _carry_joints_after_the_same_draws(rng, cfg, kin):
    _free_ik(rng, cfg, kin)  # consume the draws the free-IK start made
    q = A.carry_joints()
    kin.set_arm(q)
    return q


A.carry_arm = _carry_joints_after_the_same_draws
sys.argv = ["eval_skill", *sys.argv[1:]]
runpy.run_module("rearrange.eval_skill", run_name="__main__")
