"""PQL (Parallel Q-Learning, Li et al. 2023): an off-policy trainer for state-observation skills.

Three roles run concurrently and wait to hold their speed ratios (β_a:v, β_p:v):

    actor.py           Actor: env workers in lockstep, mixed exploration, rows into the replay
    v_learner.py       V-learner: double-Q critics on n-step targets, target critics
    p_learner.py       P-learner: deterministic policy maximising min(Q1, Q2)
    learner_process.py the learners as processes (or in-process for serial mode)
    ratio.py           speed-ratio control        replay.py     shared-memory replay ring
    targets.py         n-step / clipped double-Q / categorical targets
    exploration.py     mixed σ_i                  param_sync.py shared parameter slots
    policy.py          the deployable `pql_actor` policy (loads as a learned skill)
    trainer.py         the loop, logs, checkpoints: the "pql" row of rearrange/trainers.py

Importing this package loads no torch (config.py is imported by rearrange.config).
"""
