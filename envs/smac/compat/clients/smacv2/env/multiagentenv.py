"""smacv2.env.multiagentenv on the built-in simulator."""
from smacv2.env import MultiAgentEnv

__all__ = ["MultiAgentEnv"]
