"""Registry of multi-agent algorithms: --algo name -> agent class, config class, runner, defaults."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from core.errors import UnknownNameError
from core.trainer import Runner
from marl.algos.coma import COMA, COMAConfig
from marl.algos.mappo import MAPPO, MAPPOConfig
from marl.algos.value_decomposition import ValueDecomposition, ValueDecompositionConfig
from marl.episodes import OnPolicyEpisodeRunner, ReplayEpisodeRunner
from marl.onpolicy import OnPolicyRunner


@dataclass(frozen=True)
class AlgoEntry:
    """An algorithm: its agent, its config class and the runner that collects its experience and trains it."""

    agent_class: type
    config_class: type
    runner_class: Callable[..., Runner]
    defaults: dict[str, Any] = field(default_factory=dict)  # config values that define this variant
    discrete_only: bool = False


def _value_based(mixer: str) -> AlgoEntry:
    return AlgoEntry(ValueDecomposition, ValueDecompositionConfig, ReplayEpisodeRunner, {"mixer": mixer},
                     discrete_only=True)


ALGOS: dict[str, AlgoEntry] = {
    "mappo": AlgoEntry(MAPPO, MAPPOConfig, OnPolicyRunner, {"critic_input": "state"}),
    "ippo": AlgoEntry(MAPPO, MAPPOConfig, OnPolicyRunner, {"critic_input": "obs"}),
    "iql": _value_based("none"),
    "vdn": _value_based("vdn"),
    "qmix": _value_based("qmix"),
    "coma": AlgoEntry(COMA, COMAConfig, OnPolicyEpisodeRunner, discrete_only=True),
}


def get_algo(name: str) -> AlgoEntry:
    if name not in ALGOS:
        raise UnknownNameError(f"unknown algorithm {name!r}; valid algorithms: {', '.join(sorted(ALGOS))}")
    return ALGOS[name]
