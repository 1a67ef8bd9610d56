"""smac.env.starcraft2.starcraft2 on the built-in simulator: StarCraft2Env and smac's Direction."""
from smac import loader as _loader
from smac.env import StarCraft2Env

Direction = _loader.import_simulator("envs.smac.unit_view").Direction

__all__ = ["Direction", "StarCraft2Env"]
