"""Procedurally generated SMACv2-style scenarios on the built-in simulator: smaclite_<race>_<n>_vs_<m>.

Every episode draws a new team (SMACv2's weighted_teams unit mix; the enemy mirrors it, plus extra units when
it is larger) and new start positions (surrounded_and_reflect, p = 0.5) on smacv2's open 32 x 32 map
(32x32_flat), with SMACv2's observation settings (unit-type one-hot over the race's 3 types, own position,
each unit's own sight and shoot range with a minimum of 2) and episode limit 200. Sizes equal SMACv2's:
protoss 5v5 obs 92, state 130, 11 actions; terran and zerg 5v5 obs 82, state 120.
"""
from __future__ import annotations

from dataclasses import dataclass

from envs.smac.maps import SMACMap
from envs.smac.roster import ProceduralRoster

RACES = {  # SMACv2 example configs (SMAC_SPEC.md §1.4)
    "protoss": (["stalker", "zealot", "colossus"], [0.45, 0.45, 0.1], ()),
    "terran": (["marine", "marauder", "medivac"], [0.45, 0.45, 0.1], ("medivac",)),
    "zerg": (["zergling", "hydralisk", "baneling"], [0.45, 0.45, 0.1], ("baneling",)),
}
SIZES = ((5, 5), (10, 10), (20, 20), (10, 11), (20, 23))
SMACV2_FLAGS = {"obs_own_pos": True, "use_unit_ranges": True, "min_attack_range": 2.0, "reward_positive_part": True}
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
