"""Scale-out training on Ray RLlib (the ``[rllib]`` extra): the batch engine's vector env and the multi-agent env
as RLlib envs, a masked PPO RLModule with the placement scorer and export to the numpy policy format, configs,
and ``allfives train-rllib``.

Importing this package does not import ray; its modules ``env``, ``module`` and ``train`` (when run) do.
"""
