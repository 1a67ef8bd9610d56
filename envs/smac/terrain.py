"""The real maps' terrain: walkable grid and terrain height of each SMAC/SMACv2 map file.

The data in `map_data/` comes from the real `.SC2Map` files (imported by scripts/import_smac_maps.py) and is
held exactly as smac holds it: `walkable[x, y]` is smac's `pathing_grid[x, y]`, `height[x, j]` is smac's
`terrain_height[x, j]` (API byte / 255; smac's height grid is flipped along y with respect to the world, and
the features read it that way, as smac does). `cliff_walkable` is the ground rule without its cliff clause: the
Colossus walks up and down cliffs (only 2c_vs_64zg has any), though smac gates its move actions with the ground
grid as for every unit.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

from core.errors import UnknownNameError

MAP_DATA = Path(__file__).resolve().parent / "map_data"


@dataclass(frozen=True)
class Terrain:
    """One map's grids, indexed [x, y] (see module docstring)."""

    name: str
    walkable: np.ndarray  # bool [32, 32]
    cliff_walkable: np.ndarray  # bool [32, 32]: where a unit that walks up and down cliffs (the Colossus) can go
    height: np.ndarray  # float64 [32, 32], smac's layout

    def rectangle(self) -> tuple[float, float, float, float] | None:
        """(x0, x1, y0, y1) if the walkable cells form one axis-aligned rectangle, else None."""
        xs, ys = np.nonzero(self.walkable)
        x0, x1, y0, y1 = xs.min(), xs.max() + 1, ys.min(), ys.max() + 1
        return (float(x0), float(x1), float(y0), float(y1)) if self.walkable[x0:x1, y0:y1].all() else None


def map_files() -> list[str]:
    """Names of every map file with terrain data."""
    return sorted(p.stem for p in MAP_DATA.glob("*.json"))


@cache
def load_terrain(map_file: str) -> Terrain:
    """The terrain of `map_file` (a map name such as "3m" or "32x32_flat"); read once per process."""
    path = MAP_DATA / f"{map_file}.json"
    if not path.is_file():
        raise UnknownNameError(f"no terrain data for map file {map_file!r}; available: {', '.join(map_files())}")
    data = json.loads(path.read_text())
    walkable, cliff_walkable = (np.array([[c == "1" for c in row] for row in data[key]]).T  # rows are y
                                for key in ("walkable", "cliff_walkable"))
    height = np.array(data["terrain_height_bytes"], float).T / 255
    walkable.flags.writeable = cliff_walkable.flags.writeable = height.flags.writeable = False
    return Terrain(map_file, walkable, cliff_walkable, height)
