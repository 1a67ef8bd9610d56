"""The names client code imports from smac.env and smacv2.env, on the built-in simulator."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.errors import UserError
from envs.smac.scenarios import RACES, SCENARIOS
from envs.smac.starcraft2_env import StarCraft2Env

SMACV2_MAPS = {"10gen_protoss": "protoss", "10gen_terran": "terran", "10gen_zerg": "zerg"}


class MultiAgentEnv:
    """smac's base class of multi-agent envs (pymarl and EPyMARL import it; the simulator's env has every
    method it names)."""

    def step(self, actions: Any) -> Any:
        raise NotImplementedError

    def get_obs(self) -> Any:
        raise NotImplementedError

    def get_state(self) -> Any:
        raise NotImplementedError

    def get_avail_actions(self) -> Any:
        raise NotImplementedError

    def reset(self) -> Any:
        raise NotImplementedError


def StarCraftCapabilityEnvWrapper(capability_config: Mapping[str, Any], map_name: str = "10gen_protoss",
                                  **kwargs: Any) -> StarCraft2Env:
    """smacv2's wrapper: the simulator's smaclite_<race>_<n>_vs_<m> scenario for a smacv2 capability config
    (10gen_<race> map, n_units/n_enemies, weighted_teams with the scenario's unit types, weights and
    exceptions, surrounded_and_reflect positions). Anything else is one UserError line."""
    race = SMACV2_MAPS.get(map_name)
    if race is None:
        raise UserError(f"smacv2 map {map_name!r} is not simulated; use one of {', '.join(SMACV2_MAPS)}")
    name = f"smaclite_{race}_{capability_config.get('n_units')}_vs_{capability_config.get('n_enemies')}"
    if name not in SCENARIOS:
        raise UserError(f"no built-in scenario for {map_name} with n_units={capability_config.get('n_units')}, "
                        f"n_enemies={capability_config.get('n_enemies')}; available: "
                        f"{', '.join(s for s in SCENARIOS if race in s)}")
    types, weights, exceptions = RACES[race]
    team = dict(capability_config.get("team_gen", {}))
    # the same mix in any order (smacv2's own zerg config lists zergling, baneling, hydralisk)
    unit_types, unit_weights = list(team.get("unit_types", types)), list(team.get("weights", weights))
    mix = (dict(zip((t.lower() for t in unit_types), unit_weights, strict=True))
           if len(unit_types) == len(unit_weights) else None)
    excepted = {t.lower() for t in team.get("exception_unit_types", exceptions)}
    if mix != dict(zip(types, weights, strict=True)) or excepted != set(exceptions) \
            or team.get("dist_type", "weighted_teams") != "weighted_teams":
        raise UserError(f"team_gen {team} differs from the built-in {name} (weighted_teams, unit_types {types}, "
                        f"weights {weights}, exceptions {list(exceptions)})")
    start = dict(capability_config.get("start_positions", {}))
    if start.get("dist_type", "surrounded_and_reflect") != "surrounded_and_reflect" or start.get("p", 0.5) != 0.5:
        raise UserError(f"start_positions {start} differ from the built-in surrounded_and_reflect with p = 0.5")
    return StarCraft2Env(map_name=name, **kwargs)
