"""Built-in StarCraft II micromanagement simulator (no SC2 binary needed): `smac_<map>` envs.

Three faces of one simulator:
    envs.make_vec("smac_3m", n_envs=256)          # natively batched vector env (what the trainers use)
    envs.make("smac_3m")                           # PettingZoo ParallelEnv
    from envs.smac import StarCraft2Env           # drop-in for smac.env.StarCraft2Env
"""
import functools

from envs.registry import register
from envs.smac.heuristic import HeuristicPolicy
from envs.smac.maps import MAPS, SMACMap, get_map
from envs.smac.pettingzoo_env import SMACParallelEnv
from envs.smac.scenarios import SCENARIOS
from envs.smac.starcraft2_env import StarCraft2Env
from envs.smac.vec_env import SMACVecEnv

for _name in MAPS:
    register(f"smac_{_name}", functools.partial(SMACParallelEnv, _name),
             vec_factory=functools.partial(SMACVecEnv, _name))
for _name in SCENARIOS:  # procedurally generated SMACv2-style scenarios
    register(_name, functools.partial(SMACParallelEnv, _name), vec_factory=functools.partial(SMACVecEnv, _name))

__all__ = ["MAPS", "SCENARIOS", "HeuristicPolicy", "SMACMap", "SMACParallelEnv", "SMACVecEnv", "StarCraft2Env",
           "get_map"]
