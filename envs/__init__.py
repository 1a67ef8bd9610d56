"""Multi-agent env contract, registry, PettingZoo adapter and vector envs.

    import envs
    envs.register("my_env", my_factory, n_agents=3)
    venv = envs.make_vec("my_env", n_envs=8, vec="subproc", seed=0)
    step = venv.reset()
    step.obs["agent_0"]  # [n_envs, *obs_shape]
"""
from envs import lbf_rware as _lbf_rware  # noqa: F401  (registers the lbf_* and rware_* families)
from envs import mamujoco as _mamujoco  # noqa: F401  (registers the mamujoco_* family)
from envs import mpe as _mpe  # noqa: F401  (registers mpe_* names)
from envs import smac as _smac  # noqa: F401  (registers smac_* names)
from envs import smacv2 as _smacv2  # noqa: F401  (registers smacv2_* names)
from envs import vmas_env as _vmas_env  # noqa: F401  (registers the vmas_* family)
from envs.pettingzoo_adapter import PettingZooAdapter
from envs.registry import env_factory, make, make_vec, register, registered_names, resolve
from envs.spec import AgentGroup, EnvSpec
from envs.subproc_vec_env import SubprocVecEnv
from envs.sync_vec_env import SyncVecEnv
from envs.vec_env import VecEnv, VecStep

__all__ = [
    "AgentGroup", "EnvSpec", "PettingZooAdapter", "SubprocVecEnv", "SyncVecEnv", "VecEnv", "VecStep",
    "env_factory", "make", "make_vec", "register", "registered_names", "resolve",
]
