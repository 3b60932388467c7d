"""Scale-out training on Ray RLlib (the ``[rllib]`` extra): the multi-agent env adapter, a masked PPO
RLModule with export to the numpy policy format, configs, and ``allfives train-rllib``.

Importing this package does not import ray; its modules ``env``, ``module`` and ``train`` (when run) do.
"""
