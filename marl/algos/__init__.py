"""Registry of multi-agent algorithms: --algo name -> agent class, config class, runner, defaults."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from core.errors import UnknownNameError
from marl.algos.mappo import MAPPO, MAPPOConfig
from marl.onpolicy import OnPolicyRunner


@dataclass(frozen=True)
class AlgoEntry:
    agent_class: type
    config_class: type
    runner_class: Callable[..., Any]
    defaults: dict[str, Any] = field(default_factory=dict)  # config values that define this variant
    discrete_only: bool = False


ALGOS: dict[str, AlgoEntry] = {
    "mappo": AlgoEntry(MAPPO, MAPPOConfig, OnPolicyRunner, {"critic_input": "state"}),
    "ippo": AlgoEntry(MAPPO, MAPPOConfig, OnPolicyRunner, {"critic_input": "obs"}),
}


def get_algo(name: str) -> AlgoEntry:
    if name not in ALGOS:
        raise UnknownNameError(f"unknown algorithm {name!r}; valid algorithms: {', '.join(sorted(ALGOS))}")
    return ALGOS[name]
