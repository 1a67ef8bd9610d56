"""Paths around obstacles: where a unit heading for a point should walk to on a map that is not one open
rectangle (corridor's choke, the plateaus and ramps of 2c_vs_64zg, the octagons).

Built once per map from the walkable grid: shortest 8-connected paths between every pair of walkable cells
(no corner cutting), which cell centres see each other along a straight line, and for each (goal, start) pair
the furthest cell of a shortest path that the start still sees. At run time a unit walks straight to its
destination when the line is clear, else to that cell's centre: three table lookups per unit, no search.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

from envs.smac.terrain import load_terrain

SIZE = 32
SAMPLE_STEP = 0.2  # spacing of the points that test a straight line for unwalkable cells
# 8-connected moves (dx, dy) and their lengths
MOVES = [(dx, dy) for dx in (-1, 0, 1) for dy in (-1, 0, 1) if dx or dy]


@dataclass(frozen=True)
class Paths:
    """Path tables of one map (see module docstring); nodes are the walkable cells."""

    node: np.ndarray  # [SIZE * SIZE] int64: node of cell (x, y) at x * SIZE + y, -1 where not walkable
    centre: np.ndarray  # [n_nodes] complex64: cell centres
    visible: np.ndarray  # [n_nodes, n_nodes] bool: the straight line between the two centres stays walkable
    waypoint: np.ndarray  # [n_goal, n_start] int64: the node to walk to (the start itself when unreachable)
    reachable: np.ndarray  # [n_goal, n_start] bool

    def heading(self, z: np.ndarray, dest: np.ndarray) -> np.ndarray:
        """Where units at `z` bound for `dest` (complex, same shape) walk to: `dest` itself when the line
        between their cells is clear or either end is off the walkable cells (the unit then stops at the
        wall), else the waypoint's centre."""
        start = self.node[_cell(z)]
        goal = self.node[_cell(dest)]
        s, g = np.maximum(start, 0), np.maximum(goal, 0)
        detour = (start >= 0) & (goal >= 0) & ~self.visible[s, g] & self.reachable[g, s]
        return np.where(detour, self.centre[self.waypoint[g, s]], dest)


def _cell(z: np.ndarray) -> np.ndarray:
    x = np.clip(np.floor(z.real), 0, SIZE - 1).astype(np.int64)
    y = np.clip(np.floor(z.imag), 0, SIZE - 1).astype(np.int64)
    return x * SIZE + y


@cache
def map_paths(map_file: str, cliff_walkers: bool = False) -> Paths:
    """The path tables of `map_file` (built once per process), for units that walk up and down cliffs or not."""
    terrain = load_terrain(map_file)
    return build_paths(terrain.cliff_walkable if cliff_walkers else terrain.walkable)


def build_paths(walkable: np.ndarray) -> Paths:
    """Path tables of a walkable grid [SIZE, SIZE] (see module docstring)."""
    xs, ys = np.nonzero(walkable)
    n = xs.size
    node = np.full(SIZE * SIZE, -1, np.int64)
    node[xs * SIZE + ys] = np.arange(n)
    centre = ((xs + 0.5) + 1j * (ys + 0.5)).astype(np.complex64)
    neighbours, lengths = _neighbours(walkable, node, xs, ys)  # [n, 8] (-1: no move), [8]
    dist = _distances(neighbours, lengths, n)
    # next step from start s toward goal g: the neighbour minimising move length + its distance to g
    through = np.where(neighbours[None] >= 0, dist[:, np.maximum(neighbours, 0)] + lengths, np.inf)  # [g, s, 8]
    best = through.argmin(axis=2)
    nxt = np.take_along_axis(np.broadcast_to(neighbours, (n, n, 8)), best[..., None], axis=2)[..., 0]
    reachable = np.isfinite(dist)
    goals = np.arange(n)
    nxt = np.where(reachable & (goals[:, None] != goals[None, :]), nxt, goals[None, :].repeat(n, 0))
    nxt[goals, goals] = goals
    visible = _visibility(walkable, centre)
    # string pulling: from each start, follow the path while the start still sees the next node
    way = np.broadcast_to(goals, (n, n)).copy()  # [g, s]
    start = way.copy()
    active = reachable.copy()
    for _ in range(n):
        step = np.take_along_axis(nxt, way, axis=1)
        active &= (way != goals[:, None]) & visible[start, step]
        if not active.any():
            break
        way = np.where(active, step, way)
    return Paths(node, centre, visible, way, reachable)


def _neighbours(walkable: np.ndarray, node: np.ndarray, xs: np.ndarray, ys: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
    """Each node's neighbour in each of the 8 directions (-1: blocked; a diagonal needs both sides open)."""
    padded = np.zeros((SIZE + 2, SIZE + 2), bool)
    padded[1:-1, 1:-1] = walkable

    def open_(dx: int, dy: int) -> np.ndarray:
        return padded[xs + 1 + dx, ys + 1 + dy]

    out = np.full((xs.size, len(MOVES)), -1, np.int64)
    for k, (dx, dy) in enumerate(MOVES):
        ok = open_(dx, dy) & open_(dx, 0) & open_(0, dy)
        out[ok, k] = node[(xs[ok] + dx) * SIZE + ys[ok] + dy]
    lengths = np.array([np.hypot(dx, dy) for dx, dy in MOVES])
    return out, lengths


def _distances(neighbours: np.ndarray, lengths: np.ndarray, n: int) -> np.ndarray:
    """All-pairs shortest path lengths [n, n] (inf: unreachable), by relaxation over every goal at once."""
    dist = np.full((n, n), np.inf)
    np.fill_diagonal(dist, 0.0)
    safe = np.maximum(neighbours, 0)
    blocked = neighbours < 0
    while True:
        through = dist[:, safe] + lengths  # [g, s, 8]
        through[:, blocked] = np.inf
        new = np.minimum(dist, through.min(axis=2))
        if np.array_equal(new, dist):
            return dist
        dist = new


def _visibility(walkable: np.ndarray, centre: np.ndarray) -> np.ndarray:
    """[n, n]: every point sampled along the straight line between the two cell centres is walkable."""
    n = centre.size
    longest = float(np.abs(centre[:, None] - centre[None, :]).max()) if n else 0.0
    t = np.linspace(0.0, 1.0, max(int(np.ceil(longest / SAMPLE_STEP)), 1) + 1, dtype=np.float32)
    flat = walkable.ravel()
    out = np.empty((n, n), bool)
    for s in range(n):
        points = centre[s] + (centre[None, :] - centre[s]) * t[:, None]  # [samples, n]
        out[s] = flat[_cell(points)].all(axis=0)
    return out
