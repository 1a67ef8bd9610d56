"""Import the terrain of the real SMAC/SMACv2 maps into the simulator's package data (envs/smac/map_data/).

Reads the per-map JSON extracted from the real `.SC2Map` files (the walkable grid as smac holds its
`pathing_grid`, and `terrain_height` in smac's own layout) and writes, per map, those two grids and the cells
a cliff-walking unit (the Colossus) can stand on:

    python scripts/import_smac_maps.py [SOURCE_DIR]      # default: ../shared/smac_maps beside the checkout
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "envs" / "smac" / "map_data"


EDGE = 2  # no unit stands within 2 cells of a map edge (the README of the map data, rule 4)


def convert(source: dict) -> dict:
    """The fields the simulator reads: walkable rows (row = y, char = x), the same for cliff walkers, and
    smac-layout heights as bytes."""
    walkable = source["walkable"]
    heights = source["terrain_height"]
    levels = source["cliff_level"]
    for name, grid in (("walkable", walkable), ("terrain_height", heights), ("cliff_level", levels)):
        if len(grid) != 32 or any(len(row) != 32 for row in grid):
            raise ValueError(f"{name} is not 32 x 32")
    if any(set(row) - {"0", "1"} for row in walkable):
        raise ValueError("walkable holds characters other than '0' and '1'")
    return {"map": source["map"],
            "walkable": walkable,
            "cliff_walkable": cliff_walkable(levels),
            # smac's terrain_height[x, j] = byte / 255; stored as the byte (row j, column x)
            "terrain_height_bytes": [[round(h * 255) for h in row] for row in heights]}


def cliff_walkable(levels: list[str]) -> list[str]:
    """Rows of the cells a unit that walks up and down cliffs can stand on: the ground rule without its cliff
    clause, i.e. any cell above level 0 (the void) and at least EDGE cells from every map edge."""
    inside = range(EDGE, 32 - EDGE)
    return ["".join("1" if level != "0" and x in inside and y in inside else "0" for x, level in enumerate(row))
            for y, row in enumerate(levels)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", nargs="?", default=str(ROOT.parent / "shared" / "smac_maps"))
    args = parser.parse_args(argv)
    files = sorted(Path(args.source).glob("*.json"))
    if not files:
        print(f"error: no map JSON files in {args.source}", file=sys.stderr)
        return 2
    converted = {}
    for path in files:  # every file is checked before any is written
        try:
            converted[path.name] = convert(json.loads(path.read_text()))
        except (ValueError, KeyError, TypeError) as e:  # json.JSONDecodeError is a ValueError
            print(f"error: {path}: not a map file this script can read ({type(e).__name__}: {e})", file=sys.stderr)
            return 2
    OUT.mkdir(parents=True, exist_ok=True)
    for name, data in converted.items():
        (OUT / name).write_text(json.dumps(data, separators=(",", ":")) + "\n")
    print(f"wrote {len(files)} maps to {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
