"""Training entry points for All Fives: sb3-contrib MaskablePPO on the single-seat env.

``allfives train --config configs/default.yaml`` or ``python -m allfives_training.train --config ...``; see
:mod:`allfives_training.train` (the run), :mod:`allfives_training.config` (:class:`~allfives_training.config.TrainConfig`: every key
and its default), :mod:`allfives_training.schema` (reading and checking configs), :mod:`allfives_training.runs` (run
directories), :mod:`allfives_training.export` (torch actor -> numpy policy file), :mod:`allfives_training.league` (self-play
snapshots), :mod:`allfives_training.vec_env` (the batched subprocess vec env) and :mod:`allfives_training.report`
(evaluation tables and the learning curve). Nothing here is imported by the ``allfives_env`` library;
torch and stable-baselines3 are imported only when a run starts.
"""
