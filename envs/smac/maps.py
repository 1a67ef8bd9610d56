"""SMAC map definitions: rosters, episode limits, unit-type one-hot orders, terrain and spawn points.

Rosters, limits and type bits follow SMAC's map registry; spawn points and attack-move targets follow the
map scripts (SMAC_SPEC.md §5.3); terrain (walkable grid, heights) is the real map file's (`terrain.py`).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from core.errors import UnknownNameError
from envs.smac.terrain import Terrain, load_terrain
from envs.smac.units import UNIT_TYPES

MAP_SIZE = 32

# unit-type one-hot orders (SMAC_SPEC §3): allies use the RL unit ids, enemies SC2's default ids
TYPE_ORDERS = {
    "marines": ({}, {}),
    "MMM": ({"marauder": 0, "marine": 1, "medivac": 2}, {"marauder": 0, "marine": 1, "medivac": 2}),
    "stalkers_and_zealots": ({"stalker": 0, "zealot": 1}, {"zealot": 0, "stalker": 1}),
    "colossi_stalkers_zealots": ({"colossus": 0, "stalker": 1, "zealot": 2},
                                 {"colossus": 0, "stalker": 1, "zealot": 2}),
    "bane": ({"baneling": 0, "zergling": 1}, {"baneling": 0, "zergling": 1}),
    # SMACv2 (get_unit_type_id), used by the procedurally generated smaclite_* scenarios
    "protoss": ({"stalker": 0, "zealot": 1, "colossus": 2}, {"stalker": 0, "zealot": 1, "colossus": 2}),
    "terran": ({"marine": 0, "marauder": 1, "medivac": 2}, {"marine": 0, "marauder": 1, "medivac": 2}),
    "zerg": ({"zergling": 0, "hydralisk": 1, "baneling": 2}, {"zergling": 0, "hydralisk": 1, "baneling": 2}),
}


@dataclass(frozen=True)
class SMACMap:
    name: str
    allies: tuple[tuple[str, int], ...]  # (unit type, count), in agent-id order
    enemies: tuple[tuple[str, int], ...]
    limit: int
    map_type: str = "marines"
    unit_type_bits: int = 0
    ally_spawn: tuple[float, float] = (9.0, 16.0)
    enemy_spawn: tuple[float, float] = (23.0, 16.0)
    attack_point: tuple[float, float] = (9.0, 16.0)
    spawn_by_type: dict[str, tuple[tuple[float, float], tuple[float, float]]] = field(default_factory=dict)
    unit_spawns: tuple[tuple[float, float], ...] = ()  # each unit's own spawn point (allies, then enemies)
    map_file: str = ""  # the map file whose terrain this map uses (default: the map's name)
    attack_spread: float = 0.0  # the attack point's x is drawn uniformly within this of attack_point's at spawn

    @property
    def ally_names(self) -> list[str]:
        return [name for name, count in self.allies for _ in range(count)]

    @property
    def enemy_names(self) -> list[str]:
        return [name for name, count in self.enemies for _ in range(count)]

    @property
    def n_agents(self) -> int:
        return sum(c for _, c in self.allies)

    @property
    def n_enemies(self) -> int:
        return sum(c for _, c in self.enemies)

    @property
    def ally_race(self) -> str:
        return _race(self.allies[0][0])

    @property
    def enemy_race(self) -> str:
        return _race(self.enemies[0][0])

    def type_ids(self) -> tuple[dict[str, int], dict[str, int]]:
        return TYPE_ORDERS[self.map_type] if self.unit_type_bits else ({}, {})

    def terrain(self) -> Terrain:
        """The walkable grid and heights of the map file."""
        return load_terrain(self.map_file or self.name)


def _race(unit: str) -> str:
    return UNIT_TYPES[unit].race


def _m(n_ally: int, n_enemy: int, limit: int) -> SMACMap:
    name = f"{n_ally}m" if n_ally == n_enemy else f"{n_ally}m_vs_{n_enemy}m"
    return SMACMap(name, (("marine", n_ally),), (("marine", n_enemy),), limit)


def _sz(name: str, ally: tuple[int, int], enemy: tuple[int, int], limit: int) -> SMACMap:
    return SMACMap(name, (("stalker", ally[0]), ("zealot", ally[1])), (("stalker", enemy[0]), ("zealot", enemy[1])),
                   limit, "stalkers_and_zealots", 2)


def _s_vs_z(n_zealots: int, limit: int) -> SMACMap:
    return SMACMap(f"3s_vs_{n_zealots}z", (("stalker", 3),), (("zealot", n_zealots),), limit, "stalkers", 0)


MAPS: dict[str, SMACMap] = {m.name: m for m in (
    _m(3, 3, 60), _m(8, 8, 120), _m(25, 25, 150), _m(5, 6, 70), _m(8, 9, 120), _m(10, 11, 150), _m(27, 30, 180),
    SMACMap("MMM", (("marauder", 2), ("marine", 7), ("medivac", 1)), (("marauder", 2), ("marine", 7), ("medivac", 1)),
            150, "MMM", 3),
    SMACMap("MMM2", (("marauder", 2), ("marine", 7), ("medivac", 1)), (("marauder", 3), ("marine", 8), ("medivac", 1)),
            180, "MMM", 3),
    _sz("2s3z", (2, 3), (2, 3), 120), _sz("3s5z", (3, 5), (3, 5), 150), _sz("3s5z_vs_3s6z", (3, 5), (3, 6), 170),
    SMACMap("1c3s5z", (("colossus", 1), ("stalker", 3), ("zealot", 5)),
            (("colossus", 1), ("stalker", 3), ("zealot", 5)), 180, "colossi_stalkers_zealots", 3),
    SMACMap("2m_vs_1z", (("marine", 2),), (("zealot", 1),), 150, "marines", 0, (16.0, 12.0), (16.0, 19.0),
            (16.0, 12.0), unit_spawns=((13.0, 12.0), (19.0, 12.0), (16.0, 19.0)), attack_spread=3.0),
    SMACMap("2s_vs_1sc", (("stalker", 2),), (("spine_crawler", 1),), 300, "stalkers", 0, (14.05, 10.35),
            (13.92, 20.04), (13.92, 20.04), unit_spawns=((11.12, 10.34), (16.98, 10.37), (13.92, 20.04))),
    _s_vs_z(3, 150), _s_vs_z(4, 200), _s_vs_z(5, 250),
    SMACMap("6h_vs_8z", (("hydralisk", 6),), (("zealot", 8),), 150, "hydralisks", 0, (14.60, 9.49),
            (14.41, 16.76), (14.60, 9.49)),
    SMACMap("corridor", (("zealot", 6),), (("zergling", 24),), 400, "zealots", 0, (19.04, 19.12),
            (27.91, 28.24), (4.47, 4.33)),
    SMACMap("bane_vs_bane", (("baneling", 4), ("zergling", 20)), (("baneling", 4), ("zergling", 20)), 200, "bane", 2,
            (16.0, 11.0), (16.0, 21.0), (16.0, 8.0),
            spawn_by_type={"baneling": ((16.0, 8.0), (16.0, 24.0)), "zergling": ((16.0, 11.0), (16.0, 21.0))}),
    SMACMap("so_many_baneling", (("zealot", 7),), (("baneling", 32),), 100, "zealots", 0, (11.47, 12.02),
            (27.91, 28.24), (4.47, 4.33)),
    SMACMap("2c_vs_64zg", (("colossus", 2),), (("zergling", 64),), 400, "colossus", 0, (16.0, 16.0),
            (16.0, 9.0), (16.0, 16.0)),
)}


def get_map(name: str) -> SMACMap:
    if name not in MAPS:
        raise UnknownNameError(f"unknown SMAC map {name!r}; available maps: {', '.join(sorted(MAPS))}")
    return MAPS[name]
