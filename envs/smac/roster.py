"""Who fights where: fixed SMAC rosters and SMACv2-style procedurally generated ones.

A roster names the unit types that can appear (`type_names`) and draws, for a batch of new episodes, each
unit slot's type index and starting position (allies first, then enemies).
"""
from __future__ import annotations

from typing import Protocol

import numpy as np

from envs.smac.maps import MAP_SIZE, SMACMap
from envs.smac.units import UNIT_TYPES

SPAWN_JITTER = 0.1


class Roster(Protocol):
    """What a battle needs from a roster."""

    type_names: list[str]
    # smacv2's 32x32_flat script: every idle enemy is ordered to attack the closest ally (a unit-targeted order,
    # kept until that ally dies); else the SMAC maps' script: attack-move to the map's point, SC2's default
    # behaviour on the way (acquire what comes in range, retaliate)
    hunts_closest: bool

    def sample(self, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
        """Unit-type indices [n, U] and start positions [n, U, 2] of `n` new episodes."""
        ...


class FixedRoster:
    """A SMAC map: the same units every episode, each side packed in a square grid around its spawn point."""

    hunts_closest = False

    def __init__(self, smac_map: SMACMap) -> None:
        names = smac_map.ally_names + smac_map.enemy_names
        self.type_names = sorted(set(names))
        self.kinds = np.array([self.type_names.index(n) for n in names])
        n_agents = smac_map.n_agents
        positions = np.zeros((len(names), 2))
        for side, units in enumerate((np.arange(n_agents), np.arange(n_agents, len(names)))):
            groups: dict[tuple[float, float], list[int]] = {}
            for unit in units.tolist():
                point = smac_map.spawn_by_type.get(names[unit], (smac_map.ally_spawn, smac_map.enemy_spawn))[side]
                groups.setdefault(point, []).append(unit)
            for point, members in groups.items():
                cols = int(np.ceil(np.sqrt(len(members))))
                gap = 2 * max(UNIT_TYPES[names[u]].radius for u in members) + 0.05
                for k, u in enumerate(members):
                    col, row = divmod(k, cols)
                    offset = np.array([col - (cols - 1) / 2, row - (cols - 1) / 2]) * gap
                    positions[u] = np.array(point) + (offset if side == 0 else -offset)
        if smac_map.unit_spawns:
            positions = np.array(smac_map.unit_spawns, float)
        self.positions = onto_walkable(positions, smac_map.terrain().walkable)

    def sample(self, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
        jitter = rng.uniform(-SPAWN_JITTER, SPAWN_JITTER, (n, *self.positions.shape))
        return np.broadcast_to(self.kinds, (n, len(self.kinds))), self.positions + jitter


class ProceduralRoster:
    """SMACv2's weighted_teams unit mix and surrounded_and_reflect start positions (SMAC_SPEC.md §1.4)."""

    hunts_closest = True

    def __init__(self, unit_types: list[str], weights: list[float], n_units: int, n_enemies: int,
                 exception_types: tuple[str, ...] = (), p_reflect: float = 0.5,
                 area: tuple[float, float, float, float] = (0.0, MAP_SIZE, 0.0, MAP_SIZE)) -> None:
        self.type_names = list(unit_types)
        x0, x1, y0, y1 = area  # the walkable rectangle: units drawn outside it start at its edge, as in SC2
        self.lo, self.hi = np.array([x0 + 0.5, y0 + 0.5]), np.array([x1 - 0.5, y1 - 0.5])
        self.weights = np.asarray(weights, float) / np.sum(weights)
        self.exception = np.array([t in exception_types for t in unit_types])
        self.n_units, self.n_enemies, self.p_reflect = n_units, n_enemies, p_reflect
        # smacv2's 10gen maps number their ally unit types alphabetically (baneling, colossus, ..., zergling)
        self._type_id_rank = np.argsort(np.argsort(self.type_names))

    def sample(self, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
        return self.placed(*self.draw(rng, n))

    def draw(self, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
        """Teams [n, U] and positions [n, U, 2] as smacv2's weighted_teams and surrounded_and_reflect draw them,
        before `placed`."""
        a, e = self.n_units, self.n_enemies
        allies = rng.choice(len(self.type_names), (n, a), p=self.weights)
        while True:  # redraw teams made only of exception types (e.g. all medivacs)
            bad = self.exception[allies].all(1)
            if not bad.any():
                break
            allies[bad] = rng.choice(len(self.type_names), (int(bad.sum()), a), p=self.weights)
        extra = rng.choice(len(self.type_names), (n, max(e - a, 0)), p=self.weights)
        enemies = np.concatenate([allies, extra], axis=1)[:, :e]
        kinds = np.concatenate([allies, enemies], axis=1)
        reflect = rng.random(n) < self.p_reflect
        return kinds, np.where(reflect[:, None, None], self._reflect(rng, n), self._surrounded(rng, n))

    def placed(self, kinds: np.ndarray, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Teams [n, U] and positions [n, U, 2] as the battle starts them: units outside the walkable rectangle at
        its edge, allies numbered as smacv2 numbers its agents (sorted by SC2 unit type id, x, y)."""
        a = self.n_units
        kinds, positions = kinds.copy(), np.clip(positions, self.lo, self.hi)
        order = np.lexsort((positions[:, :a, 1], positions[:, :a, 0], self._type_id_rank[kinds[:, :a]]), axis=-1)
        kinds[:, :a] = np.take_along_axis(kinds[:, :a], order, axis=1)
        positions[:, :a] = np.take_along_axis(positions[:, :a], order[..., None], axis=1)
        return kinds, positions

    def _reflect(self, rng: np.random.Generator, n: int) -> np.ndarray:
        a, e = self.n_units, self.n_enemies
        allies = rng.uniform([0, 0], [MAP_SIZE / 2 - 1, MAP_SIZE], (n, a, 2))
        enemies = np.concatenate([np.stack([MAP_SIZE - allies[..., 0], allies[..., 1]], -1),
                                  rng.uniform([MAP_SIZE / 2, 0], [MAP_SIZE, MAP_SIZE], (n, max(e - a, 0), 2))],
                                 axis=1)[:, :e]
        return np.concatenate([allies, enemies], axis=1)

    def _surrounded(self, rng: np.random.Generator, n: int) -> np.ndarray:
        a, e = self.n_units, self.n_enemies
        centre = np.full(2, MAP_SIZE / 2)
        allies = np.broadcast_to(centre, (n, a, 2)) + rng.uniform(-0.5, 0.5, (n, a, 2))
        corners = np.array([[0, 0], [0, MAP_SIZE], [MAP_SIZE, 0], [MAP_SIZE, MAP_SIZE]], float)
        near = centre + np.sign(corners - centre) * 2  # centre +- 2 toward each corner
        n_groups = rng.integers(1, 5, n)
        # the groups' sizes are multinomial and each takes the next enemies in order, as smacv2 fills them
        group = np.sort((rng.random((n, e)) * n_groups[:, None]).astype(int), axis=1)
        which = np.argsort(rng.random((n, 4)), axis=1)  # a random permutation of the corners per env
        corner = which[np.arange(n)[:, None], group]
        t = rng.random((n, 4))[np.arange(n)[:, None], corner][..., None]
        enemies = t * near[corner] + (1 - t) * corners[corner] + rng.uniform(-0.5, 0.5, (n, e, 2))
        return np.concatenate([allies, enemies], axis=1)


def onto_walkable(positions: np.ndarray, walkable: np.ndarray) -> np.ndarray:
    """Positions [U, 2] with those off the walkable cells moved to the nearest walkable cell's centre (SC2
    places a unit created on unpathable ground at the closest pathable spot)."""
    cells = np.floor(positions).astype(int)
    off = ~walkable[np.clip(cells[:, 0], 0, MAP_SIZE - 1), np.clip(cells[:, 1], 0, MAP_SIZE - 1)]
    if not off.any():
        return positions
    centres = np.argwhere(walkable) + 0.5
    nearest = np.abs(positions[off, None, :] - centres[None]).sum(-1).argmin(1)
    out = positions.copy()
    out[off] = centres[nearest]
    return out
