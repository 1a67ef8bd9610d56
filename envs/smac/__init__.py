"""Built-in StarCraft II micromanagement simulator (no SC2 binary needed): `smac_<map>` envs.

    venv = envs.make_vec("smac_3m", n_envs=256)   # natively batched vector env
"""
from envs.smac.maps import MAPS, SMACMap, get_map
from envs.smac.vec_env import SMACVecEnv

__all__ = ["MAPS", "SMACMap", "SMACVecEnv", "get_map"]
