"""Training entry points for All Fives: sb3-contrib MaskablePPO on the single-seat env.

``allfives train --config configs/default.yaml`` or ``python -m training.train --config ...``; see
:mod:`training.train` (the run), :mod:`training.config` (:class:`~training.config.TrainConfig`: every key
and its default), :mod:`training.schema` (reading and checking configs), :mod:`training.runs` (run
directories), :mod:`training.export` (torch actor -> numpy policy file), :mod:`training.league` (self-play
snapshots), :mod:`training.vec_env` (the batched subprocess vec env) and :mod:`training.report`
(evaluation tables and the learning curve). Nothing here is imported by the ``allfives_env`` library;
torch and stable-baselines3 are imported only when a run starts.
"""
