"""Built-in StarCraft II micromanagement simulator (no SC2 binary needed): `smac_<map>` envs.

Three faces of one simulator:
    envs.make_vec("smac_3m", n_envs=256)          # natively batched vector env (what the trainers use)
    envs.make("smac_3m")                           # PettingZoo ParallelEnv
    from envs.smac import StarCraft2Env           # drop-in for smac.env.StarCraft2Env
The names are registered from the map and scenario tables; the simulator's modules are imported when an env is
made or a face below is first used, so that `import envs` stays cheap.
"""
from __future__ import annotations

import functools
import importlib
from typing import TYPE_CHECKING, Any

from envs.registry import EnvEntry, register_lazily
from envs.smac.maps import MAPS, SMACMap, get_map
from envs.smac.scenarios import SCENARIOS

if TYPE_CHECKING:
    from envs.smac.compat.pettingzoo_env import SMACParallelEnv
    from envs.smac.compat.starcraft2_env import StarCraft2Env
    from envs.smac.heuristic import HeuristicPolicy
    from envs.smac.vec_env import SMACVecEnv

FACES = {"HeuristicPolicy": "envs.smac.heuristic", "SMACParallelEnv": "envs.smac.compat.pettingzoo_env",
         "StarCraft2Env": "envs.smac.compat.starcraft2_env", "SMACVecEnv": "envs.smac.vec_env"}


def __getattr__(name: str) -> Any:
    """The simulator's faces (FACES), imported on first use."""
    if name not in FACES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(FACES[name]), name)


def _entry(map_name: str) -> EnvEntry:
    """The registry entry of map or scenario `map_name`: its PettingZoo and natively batched faces."""
    from envs.smac.compat.pettingzoo_env import SMACParallelEnv
    from envs.smac.vec_env import SMACVecEnv

    return EnvEntry(functools.partial(SMACParallelEnv, map_name),
                    vec_factory=functools.partial(SMACVecEnv, map_name))


for _name in MAPS:
    register_lazily(f"smac_{_name}", functools.partial(_entry, _name))
for _name in SCENARIOS:  # procedurally generated SMACv2-style scenarios
    register_lazily(_name, functools.partial(_entry, _name))

__all__ = ["MAPS", "SCENARIOS", "HeuristicPolicy", "SMACMap", "SMACParallelEnv", "SMACVecEnv", "StarCraft2Env",
           "get_map"]
