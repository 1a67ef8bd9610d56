"""smacv2.env on the built-in simulator: StarCraft2Env, StarCraftCapabilityEnvWrapper and MultiAgentEnv."""
from smacv2 import loader as _loader

_api = _loader.import_simulator("envs.smac.compat.api")
StarCraft2Env = _api.SMACv2Env
StarCraftCapabilityEnvWrapper = _api.StarCraftCapabilityEnvWrapper
MultiAgentEnv = _api.MultiAgentEnv

__all__ = ["MultiAgentEnv", "StarCraft2Env", "StarCraftCapabilityEnvWrapper"]
