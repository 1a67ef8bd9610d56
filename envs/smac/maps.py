"""SMAC map definitions: rosters, episode limits, unit-type one-hot orders, terrain and spawn points.

Rosters, limits and type bits follow SMAC's map registry; spawn points, attack-move targets and terrain
follow the SMAC map files as summarised in SMAC_SPEC.md §5.3. Terrain for maps whose layout the spec does not
give (bane_vs_bane, so_many_baneling, 2c_vs_64zg, 2m_vs_1z) is open ground; corridor and 6h_vs_8z are
reconstructions from the spec's description (chambers joined by a diagonal corridor; an octagonal plateau).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from core.errors import UnknownNameError
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
    "none": ({}, {}),
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
    terrain: str = "simple"  # simple | open | plateau | corridor
    ally_spawn: tuple[float, float] = (9.0, 16.0)
    enemy_spawn: tuple[float, float] = (23.0, 16.0)
    attack_point: tuple[float, float] = (9.0, 16.0)
    spawn_by_type: dict[str, tuple[tuple[float, float], tuple[float, float]]] = field(default_factory=dict)

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

    def pathing(self) -> np.ndarray:
        """Walkable cells, indexed [x, y]."""
        return TERRAINS[self.terrain]()


def _race(unit: str) -> str:
    return UNIT_TYPES[unit].race


def _simple() -> np.ndarray:
    grid = np.zeros((MAP_SIZE, MAP_SIZE), bool)
    grid[:, 8:24] = True  # ground band y 7-24 minus the cliff edge
    return grid


def _open() -> np.ndarray:
    return np.ones((MAP_SIZE, MAP_SIZE), bool)


def _plateau() -> np.ndarray:
    x, y = np.meshgrid(np.arange(MAP_SIZE), np.arange(MAP_SIZE), indexing="ij")
    inside = (x >= 8) & (x <= 21) & (y >= 8) & (y <= 19)
    corner = np.minimum(np.minimum(x - 8, 21 - x), 99) + np.minimum(np.minimum(y - 8, 19 - y), 99)
    return inside & (corner >= 3)


def _corridor() -> np.ndarray:
    x, y = np.meshgrid(np.arange(MAP_SIZE) + 0.5, np.arange(MAP_SIZE) + 0.5, indexing="ij")
    near = (x >= 1) & (x <= 9.5) & (y >= 1) & (y <= 9.5)
    far = (x >= 22) & (x <= 31) & (y >= 22) & (y <= 31)
    corridor = (np.abs(x - y) <= 2.5) & (x >= 1) & (x <= 31)
    return near | far | corridor


TERRAINS = {"simple": _simple, "open": _open, "plateau": _plateau, "corridor": _corridor}


def _m(n_ally: int, n_enemy: int, limit: int) -> SMACMap:
    name = f"{n_ally}m" if n_ally == n_enemy else f"{n_ally}m_vs_{n_enemy}m"
    return SMACMap(name, (("marine", n_ally),), (("marine", n_enemy),), limit)


def _sz(name: str, ally: tuple[int, int], enemy: tuple[int, int], limit: int) -> SMACMap:
    return SMACMap(name, (("stalker", ally[0]), ("zealot", ally[1])), (("stalker", enemy[0]), ("zealot", enemy[1])),
                   limit, "stalkers_and_zealots", 2)


def _s_vs_z(n_zealots: int, limit: int) -> SMACMap:
    return SMACMap(f"3s_vs_{n_zealots}z", (("stalker", 3),), (("zealot", n_zealots),), limit, "none", 0, "open")


MAPS: dict[str, SMACMap] = {m.name: m for m in (
    _m(3, 3, 60), _m(8, 8, 120), _m(25, 25, 150), _m(5, 6, 70), _m(8, 9, 120), _m(10, 11, 150), _m(27, 30, 180),
    SMACMap("MMM", (("marauder", 2), ("marine", 7), ("medivac", 1)), (("marauder", 2), ("marine", 7), ("medivac", 1)),
            150, "MMM", 3),
    SMACMap("MMM2", (("marauder", 2), ("marine", 7), ("medivac", 1)), (("marauder", 3), ("marine", 8), ("medivac", 1)),
            180, "MMM", 3),
    _sz("2s3z", (2, 3), (2, 3), 120), _sz("3s5z", (3, 5), (3, 5), 150), _sz("3s5z_vs_3s6z", (3, 5), (3, 6), 170),
    SMACMap("1c3s5z", (("colossus", 1), ("stalker", 3), ("zealot", 5)),
            (("colossus", 1), ("stalker", 3), ("zealot", 5)), 180, "colossi_stalkers_zealots", 3),
    SMACMap("2m_vs_1z", (("marine", 2),), (("zealot", 1),), 150, "none", 0, "open", (16.0, 12.0), (16.0, 19.0),
            (16.0, 12.0)),
    _s_vs_z(3, 150), _s_vs_z(4, 200), _s_vs_z(5, 250),
    SMACMap("6h_vs_8z", (("hydralisk", 6),), (("zealot", 8),), 150, "none", 0, "plateau", (14.60, 9.49),
            (14.41, 16.76), (14.60, 9.49)),
    SMACMap("corridor", (("zealot", 6),), (("zergling", 24),), 400, "none", 0, "corridor", (19.04, 19.12),
            (27.91, 28.24), (4.47, 4.33)),
    SMACMap("bane_vs_bane", (("baneling", 4), ("zergling", 20)), (("baneling", 4), ("zergling", 20)), 200, "bane", 2,
            "open", (16.0, 11.0), (16.0, 21.0), (16.0, 8.0),
            spawn_by_type={"baneling": ((16.0, 8.0), (16.0, 24.0)), "zergling": ((16.0, 11.0), (16.0, 21.0))}),
    SMACMap("so_many_baneling", (("zealot", 7),), (("baneling", 32),), 100, "none", 0, "open", (11.47, 12.02),
            (27.91, 28.24), (4.47, 4.33)),
    SMACMap("2c_vs_64zg", (("colossus", 2),), (("zergling", 64),), 400, "none", 0, "open", (16.0, 16.0),
            (16.0, 9.0), (16.0, 16.0)),
)}


def get_map(name: str) -> SMACMap:
    if name not in MAPS:
        raise UnknownNameError(f"unknown SMAC map {name!r}; available maps: {', '.join(sorted(MAPS))}")
    return MAPS[name]
