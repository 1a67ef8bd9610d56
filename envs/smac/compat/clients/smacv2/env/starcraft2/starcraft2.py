"""smacv2.env.starcraft2.starcraft2 on the built-in simulator: StarCraft2Env, CannotResetException, Direction."""
from smacv2 import loader as _loader
from smacv2.env import StarCraft2Env

CannotResetException = _loader.import_simulator("envs.smac.compat.api").CannotResetException
Direction = _loader.import_simulator("envs.smac.unit_view").Direction

__all__ = ["CannotResetException", "Direction", "StarCraft2Env"]
