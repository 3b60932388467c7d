"""Scale-out training on Ray RLlib (the ``[rllib]`` extra): the batch engine's vector env and the multi-agent env
as RLlib envs, a masked PPO RLModule with the placement scorer and export to the numpy policy format, configs,
the algorithm built from them (``algo``), and ``allfives train-rllib`` (``train``), which evaluates, checkpoints
and reports through the same modules as ``allfives train``.

Importing this package does not import ray; its modules ``env``, ``module``, ``algo`` and ``train`` (when run)
do.
"""
