"""Procedurally generated SMACv2-style scenarios on the built-in simulator: smaclite_<race>_<n>_vs_<m>.

Every episode draws a new team (SMACv2's weighted_teams unit mix; the enemy mirrors it, plus extra units when
it is larger) and new start positions (surrounded_and_reflect, p = 0.5) on smacv2's open 32 x 32 map
(32x32_flat), with SMACv2's observation settings (unit-type one-hot over the race's 3 types, own position,
each unit's own sight and shoot range with a minimum of 2) and episode limit 200. Sizes equal SMACv2's:
protoss 5v5 obs 92, state 130, 11 actions; terran and zerg 5v5 obs 82, state 120.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from core.errors import UserError
from envs.smac.maps import SMACMap
from envs.smac.roster import ProceduralRoster

RACES = {  # SMACv2 example configs (SMAC_SPEC.md §1.4)
    "protoss": (["stalker", "zealot", "colossus"], [0.45, 0.45, 0.1], ()),
    "terran": (["marine", "marauder", "medivac"], [0.45, 0.45, 0.1], ("medivac",)),
    "zerg": (["zergling", "hydralisk", "baneling"], [0.45, 0.45, 0.1], ("baneling",)),
}
SIZES = ((5, 5), (10, 10), (20, 20), (10, 11), (20, 23))
SMACV2_FLAGS = {"obs_own_pos": True, "use_unit_ranges": True, "min_attack_range": 2.0, "reward_positive_part": True,
                "sighted_enemies": True}
LIMIT = 200
MAP_FILE = "32x32_flat"  # the map smacv2 plays these scenarios on: open ground, walkable x 2-29, y 2-29


@dataclass(frozen=True)
class Scenario:
    race: str
    n_units: int
    n_enemies: int

    @property
    def name(self) -> str:
        return f"smaclite_{self.race}_{self.n_units}_vs_{self.n_enemies}"

    def build(self) -> tuple[SMACMap, ProceduralRoster, dict]:
        """(map for sizes/terrain/one-hot order, roster drawing each episode's units, default feature flags)."""
        types, weights, exception = RACES[self.race]
        smac_map = SMACMap(self.name, ((types[0], self.n_units),), ((types[0], self.n_enemies),), LIMIT,
                           map_type=self.race, unit_type_bits=3, attack_point=(16.0, 16.0), map_file=MAP_FILE)
        area = smac_map.terrain().rectangle()
        assert area is not None  # 32x32_flat is open ground
        roster = ProceduralRoster(types, weights, self.n_units, self.n_enemies, exception, area=area)
        return smac_map, roster, dict(SMACV2_FLAGS)


SCENARIOS = {s.name: s for s in (Scenario(race, n, m) for race in RACES for n, m in SIZES)}

SMACV2_MAPS = {"10gen_protoss": "protoss", "10gen_terran": "terran", "10gen_zerg": "zerg"}
CAPABILITY_KEYS = {"n_units", "n_enemies", "team_gen", "start_positions"}


def smacv2_defaults(map_name: str) -> dict[str, dict[str, Any]]:
    """What a capability config on smacv2's `map_name` may leave out of team_gen and start_positions: the
    built-in scenarios' draws."""
    types, weights, exceptions = RACES[SMACV2_MAPS[map_name]]
    return {"team_gen": {"dist_type": "weighted_teams", "unit_types": types, "weights": weights,
                         "exception_unit_types": list(exceptions), "observe": True},
            "start_positions": {"dist_type": "surrounded_and_reflect", "p": 0.5, "map_x": 32, "map_y": 32}}


def scenario_for(map_name: str, capability_config: Mapping[str, Any]) -> str:
    """The smaclite_<race>_<n>_vs_<m> scenario that plays a smacv2 capability config on a 10gen_<race> map:
    n_units/n_enemies, weighted_teams with the scenario's unit types, weights and exceptions (observed), and
    surrounded_and_reflect positions. Anything else is one UserError line."""
    race = SMACV2_MAPS.get(map_name)
    if race is None:
        raise UserError(f"capability_config with keys {sorted(capability_config)} is not supported on "
                        f"{map_name} (its teams and start positions come from the map); use a smacv2 map "
                        f"({', '.join(SMACV2_MAPS)}), a smaclite_<race>_<n>_vs_<m> map, or capability_config={{}}")
    extra = sorted(set(capability_config) - CAPABILITY_KEYS)
    if extra:
        raise UserError(f"capability_config keys {extra} are not simulated (stochastic attack and health, enemy "
                        f"masks); supported: {', '.join(sorted(CAPABILITY_KEYS))}")
    n_units, n_enemies = capability_config.get("n_units"), capability_config.get("n_enemies")
    name = f"smaclite_{race}_{n_units}_vs_{n_enemies}"
    if name not in SCENARIOS:
        raise UserError(f"no built-in scenario for {map_name} with n_units={n_units}, n_enemies={n_enemies}; "
                        f"available: {', '.join(s for s in SCENARIOS if race in s)}")
    types, weights, exceptions = RACES[race]
    defaults = smacv2_defaults(map_name)
    team = {**defaults["team_gen"], **capability_config.get("team_gen", {})}
    # the same mix in any order (smacv2's own zerg config lists zergling, baneling, hydralisk)
    unit_types, unit_weights = list(team["unit_types"]), list(team["weights"])
    mix = (dict(zip((t.lower() for t in unit_types), unit_weights, strict=True))
           if len(unit_types) == len(unit_weights) else None)
    excepted = {t.lower() for t in team["exception_unit_types"]}
    if mix != dict(zip(types, weights, strict=True)) or excepted != set(exceptions) \
            or team["dist_type"] != "weighted_teams":
        raise UserError(f"team_gen {team} differs from the built-in {name} (weighted_teams, unit_types {types}, "
                        f"weights {weights}, exceptions {list(exceptions)})")
    if not team["observe"]:
        raise UserError("team_gen observe=False (unit types hidden from the observations) is not simulated")
    start = {**defaults["start_positions"], **capability_config.get("start_positions", {})}
    if start["dist_type"] != "surrounded_and_reflect" or start["p"] != 0.5 \
            or (start["map_x"], start["map_y"]) != (32, 32):
        raise UserError(f"start_positions {start} differ from the built-in surrounded_and_reflect with p = 0.5 on "
                        f"a 32 x 32 map")
    return name
