"""The names client code imports from smac.env and smacv2.env, on the built-in simulator."""
from __future__ import annotations

from typing import Any

from envs.smac.starcraft2_env import MultiAgentEnv, StarCraft2Env

__all__ = ["MultiAgentEnv", "StarCraft2Env", "StarCraftCapabilityEnvWrapper"]


class StarCraftCapabilityEnvWrapper(MultiAgentEnv):
    """smacv2's wrapper, keyword arguments only: `env` is a StarCraft2Env playing the capability config on the
    simulator's smaclite_<race>_<n>_vs_<m> scenario (see envs.smac.scenarios.scenario_for), which draws each
    episode's teams and start positions itself; every other method and attribute is the env's."""

    def __init__(self, **kwargs: Any) -> None:
        self.distribution_config = kwargs["capability_config"]
        self.env = StarCraft2Env(**{"map_name": "10gen_protoss", **kwargs})

    def __getattr__(self, name: str) -> Any:
        if name == "env":  # not set yet: the constructor failed
            raise AttributeError(name)
        return getattr(self.env, name)

    def reset(self) -> tuple[list[Any], Any]:
        return self.env.reset()

    def step(self, actions: Any) -> tuple[float, bool, dict[str, Any]]:
        return self.env.step(actions)

    def get_obs(self) -> list[Any]:
        return self.env.get_obs()

    def get_state(self) -> Any:
        return self.env.get_state()

    def get_avail_actions(self) -> list[list[int]]:
        return self.env.get_avail_actions()
