"""Registry of single-agent algorithms: --algo name -> agent, config, runner, defaults, action spaces."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.errors import UnknownNameError
from single_agent.algos.dqn import DQN, DQNConfig
from single_agent.algos.ppo import PPO, PPOConfig
from single_agent.algos.sac import SAC, SACConfig
from single_agent.algos.td3 import TD3, TD3Config
from single_agent.offpolicy import OffPolicyRunner
from single_agent.onpolicy import RolloutRunner


@dataclass(frozen=True)
class AlgoEntry:
    agent_class: type
    config_class: type
    runner_class: type
    defaults: dict[str, Any] = field(default_factory=dict)  # config values that define this variant
    discrete: bool = False   # handles Discrete action spaces
    continuous: bool = False  # handles Box action spaces


ALGOS: dict[str, AlgoEntry] = {
    "dqn": AlgoEntry(DQN, DQNConfig, OffPolicyRunner, discrete=True),
    "ddpg": AlgoEntry(TD3, TD3Config, OffPolicyRunner, {"n_critics": 1, "policy_delay": 1, "target_noise": 0.0},
                      continuous=True),
    "td3": AlgoEntry(TD3, TD3Config, OffPolicyRunner, continuous=True),
    "sac": AlgoEntry(SAC, SACConfig, OffPolicyRunner, continuous=True),
    "ppo": AlgoEntry(PPO, PPOConfig, RolloutRunner, discrete=True, continuous=True),
}


def get_algo(name: str) -> AlgoEntry:
    if name not in ALGOS:
        raise UnknownNameError(f"unknown algorithm {name!r}; valid algorithms: {', '.join(sorted(ALGOS))}")
    return ALGOS[name]
