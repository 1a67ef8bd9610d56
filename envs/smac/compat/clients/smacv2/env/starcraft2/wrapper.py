"""smacv2.env.starcraft2.wrapper on the built-in simulator."""
from smacv2.env import StarCraftCapabilityEnvWrapper

__all__ = ["StarCraftCapabilityEnvWrapper"]
