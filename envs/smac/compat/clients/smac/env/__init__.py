"""smac.env on the built-in simulator: StarCraft2Env and MultiAgentEnv."""
from smac import loader as _loader

_api = _loader.import_simulator("envs.smac.compat.api")
StarCraft2Env = _api.StarCraft2Env
MultiAgentEnv = _api.MultiAgentEnv

__all__ = ["MultiAgentEnv", "StarCraft2Env"]
