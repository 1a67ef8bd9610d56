"""smac.env.multiagentenv on the built-in simulator."""
from smac.env import MultiAgentEnv

__all__ = ["MultiAgentEnv"]
