"""The RLlib algorithm of a ``train-rllib`` config: its env (registered with Ray), modules and PPO settings.

:func:`build_algo_config` turns a checked :class:`~allfives_training.rllib.config.RLlibConfig` into RLlib's
``PPOConfig``: with ``learners: one_seat`` one module on the batch engine's vector env
(:mod:`allfives_training.rllib.vector_env`), else the multi-agent env's modules and the mapping of its seats to
them. The env creators and the mapping are module-level functions, so they pickle to the env runners, and
each sets the torch-thread rule (:func:`~allfives_training.threads.one_torch_thread`) where RLlib's processes
start their torch work. :class:`~allfives_training.rllib.train.RLlibRun` builds and runs the algorithm.
"""

from __future__ import annotations

import functools
from typing import Any, Optional

from allfives_training.rllib.config import RLlibConfig
from allfives_training.threads import one_torch_thread

__all__ = ["build_algo_config", "env_config", "module_ids", "ENV_NAME", "VECTOR_ENV_NAME", "SINGLE_MODULE"]

ENV_NAME = "allfives_multiagent"
VECTOR_ENV_NAME = "allfives_vector"
SINGLE_MODULE = "default_policy"  # RLlib's DEFAULT_MODULE_ID: the one module of a single-agent run (one_seat)


def module_ids(cfg: RLlibConfig) -> list[str]:
    from allfives_env.core.rules import Rules

    if cfg.learners == "one_seat":
        return [SINGLE_MODULE]
    if cfg.policies == "shared":
        return ["shared"]
    rules = Rules.from_options(cfg.rules)
    return [f"team_{side}" for side in sorted({rules.side_of(s) for s in range(rules.num_players)})]


def _map_agent(agent_id: str, episode: Any = None, *, rules_options: dict, policies: str, **kwargs: Any) -> str:
    """RLlib's ``policy_mapping_fn`` (a module-level function, so it pickles to the env runners)."""
    from allfives_env.core.rules import Rules

    from allfives_training.rllib.env import policy_for

    return policy_for(agent_id, Rules.from_options(rules_options), policies)


def env_config(cfg: RLlibConfig) -> dict:
    """The env config of a run: :func:`~allfives_training.rllib.vector_env.make_vector_env`'s with
    ``learners: one_seat``, else :class:`AllFivesMultiAgentEnv`'s."""
    if cfg.learners == "one_seat":
        return {"rules": dict(cfg.rules), "reward": cfg.env.reward, "episode": cfg.env.episode,
                "action_features": cfg.env.action_features, "opponents": list(cfg.opponents),
                "opponent_weights": [float(w) for w in cfg.opponents.values()]}
    return {"rules": dict(cfg.rules), "reward": cfg.env.reward, "episode": cfg.env.episode,
            "action_features": cfg.env.action_features, "learners": cfg.learners, "opponents": dict(cfg.opponents)}


def _make_env(config: dict) -> Any:
    from allfives_training.rllib.env import AllFivesMultiAgentEnv

    one_torch_thread()
    return AllFivesMultiAgentEnv(config)


def _make_vector_env(config: dict) -> Any:
    from allfives_training.rllib.vector_env import make_vector_env

    one_torch_thread()
    return make_vector_env(config)


def _model_config(cfg: RLlibConfig) -> dict:
    from allfives_env.core.rules import Rules

    from allfives_training.rllib.module import model_config

    net = cfg.network
    return model_config(Rules.from_options(cfg.rules), net.hidden, net.activation, net.action_scorer,
                        net.trunk_reads_features, net.score_gain)


def _with_env(config: Any, cfg: RLlibConfig) -> Any:
    """``config`` with the run's env, env runners and module(s): one module on the vector env of the batch
    engine (``learners: one_seat``), or the multi-agent env's modules and policy mapping."""
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.tune.registry import register_env

    from allfives_training.rllib.module import MaskedPPOModule

    runners = cfg.env_runners
    config = config.env_runners(num_env_runners=runners.num_env_runners,
                                num_envs_per_env_runner=runners.num_envs_per_env_runner,
                                num_cpus_per_env_runner=runners.num_cpus_per_env_runner)
    if cfg.learners == "one_seat":
        from allfives_training.rllib.vector_env import make_vector_env

        register_env(VECTOR_ENV_NAME, _make_vector_env)
        probe = make_vector_env({**env_config(cfg), "num_envs": 1})
        spec = RLModuleSpec(module_class=MaskedPPOModule, observation_space=probe.single_observation_space,
                            action_space=probe.single_action_space, model_config=_model_config(cfg))
        probe.close()
        # the creator returns a vector env of num_envs games (one BatchGame); RLlib's runner takes it as is
        return (config.environment(VECTOR_ENV_NAME, env_config=env_config(cfg), disable_env_checking=True)
                .env_runners(gym_env_vectorize_mode="vector_entry_point").rl_module(rl_module_spec=spec))
    from allfives_training.rllib.env import AllFivesMultiAgentEnv

    register_env(ENV_NAME, _make_env)
    probe = AllFivesMultiAgentEnv(env_config(cfg))
    obs_space = probe.observation_spaces[probe.possible_agents[0]]
    act_space = probe.action_spaces[probe.possible_agents[0]]
    ids = module_ids(cfg)
    specs = {m: RLModuleSpec(module_class=MaskedPPOModule, observation_space=obs_space, action_space=act_space,
                             model_config=_model_config(cfg)) for m in ids}
    mapping = functools.partial(_map_agent, rules_options=dict(cfg.rules), policies=cfg.policies)
    return (
        # RLlib's env pre-check steps with unmasked random actions, which this env refuses as illegal;
        # tests/test_rllib.py checks the adapter against the MultiAgentEnv API instead
        config.environment(ENV_NAME, env_config=env_config(cfg), disable_env_checking=True)
        .multi_agent(policies=set(ids), policy_mapping_fn=mapping, policies_to_train=ids)
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=specs))
    )


def build_algo_config(cfg: RLlibConfig, seed: Optional[int] = None) -> Any:
    """The RLlib ``PPOConfig`` of a validated run config (``seed``: instead of the config's)."""
    from ray.rllib.algorithms.ppo import PPOConfig

    one_torch_thread()  # the learner trains in the driver (num_learners=0)
    ppo = cfg.ppo
    config = (
        PPOConfig()
        .learners(num_learners=0)
        .training(lr=ppo.lr, train_batch_size_per_learner=ppo.train_batch_size,
                  minibatch_size=ppo.minibatch_size, num_epochs=ppo.num_epochs, gamma=ppo.gamma,
                  lambda_=ppo.lambda_, clip_param=ppo.clip_param, entropy_coeff=ppo.entropy_coeff,
                  vf_loss_coeff=ppo.vf_loss_coeff, grad_clip=ppo.grad_clip,
                  use_kl_loss=ppo.kl_coeff > 0, kl_coeff=ppo.kl_coeff)
        .debugging(seed=cfg.seed if seed is None else seed)
        # a failed env runner ends the run with its error (--resume continues from the newest checkpoint),
        # rather than RLlib's default of restarting it up to 1000 times: those restarts hide an env that
        # raises (the errors of restartable runners are ignored), and creating a restartable actor whose
        # config sits in Ray's object store makes Ray log an "E ... core_worker.cc ... max_restarts > 0"
        # line at every start that reads like a failure
        .fault_tolerance(restart_failed_env_runners=False)
    )
    return _with_env(config, cfg)
