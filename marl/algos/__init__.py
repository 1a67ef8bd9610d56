"""Registry of multi-agent algorithms: --algo name -> agent class, config class, runner, defaults."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from core.errors import UnknownNameError
from marl.algos.coma import COMA, COMAConfig
from marl.algos.mappo import MAPPO, MAPPOConfig
from marl.algos.qmix import QMIXConfig, ValueDecomposition
from marl.episodes import EpisodeRunner
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
    "iql": AlgoEntry(ValueDecomposition, QMIXConfig, EpisodeRunner, {"mixer": "none"}, discrete_only=True),
    "vdn": AlgoEntry(ValueDecomposition, QMIXConfig, EpisodeRunner, {"mixer": "vdn"}, discrete_only=True),
    "qmix": AlgoEntry(ValueDecomposition, QMIXConfig, EpisodeRunner, {"mixer": "qmix"}, discrete_only=True),
    "coma": AlgoEntry(COMA, COMAConfig, EpisodeRunner, discrete_only=True),
}


def get_algo(name: str) -> AlgoEntry:
    if name not in ALGOS:
        raise UnknownNameError(f"unknown algorithm {name!r}; valid algorithms: {', '.join(sorted(ALGOS))}")
    return ALGOS[name]
