"""Training entry points for All Fives: sb3-contrib MaskablePPO on the single-seat env, and PPO on Ray RLlib.

``allfives train --config configs/default.yaml`` or ``python -m allfives_training.train --config ...`` (the
command line, :mod:`allfives_training.train`), ``allfives train-rllib`` (:mod:`allfives_training.rllib`).
One module a job, shared by both trainers where they do the same job:

* configs: :mod:`~allfives_training.schema` (reading and checking YAML into typed dataclass sections),
  :mod:`~allfives_training.sections` (the sections and settings both configs have, declared once),
  :mod:`~allfives_training.config` (:class:`~allfives_training.config.TrainConfig`: every key and its default);
* a run: :mod:`~allfives_training.run_plan` (arguments to a run), :mod:`~allfives_training.runs` (run
  directories), :mod:`~allfives_training.trainer` (the stable-baselines3 run's state and schedule),
  :mod:`~allfives_training.sb3_model` (building, restoring and saving its model),
  :mod:`~allfives_training.evaluations` (a policy against the baselines), :mod:`~allfives_training.checkpoint`
  (checkpoints without pickle), :mod:`~allfives_training.report` (tables and the learning curve),
  :mod:`~allfives_training.threads` (one torch thread per process);
* the learner's world: :mod:`~allfives_training.vec_env` and :mod:`~allfives_training.batch_vec_env` (vec
  envs), :mod:`~allfives_training.league` (self-play snapshots), :mod:`~allfives_training.imitation` (the warm
  start), :mod:`~allfives_training.export` (torch actor -> numpy policy file).

Nothing here is imported by the ``allfives_env`` library; torch, stable-baselines3 and Ray are imported only
when a run starts.
"""
