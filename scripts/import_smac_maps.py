"""Import the terrain of the real SMAC/SMACv2 maps into the simulator's package data (envs/smac/map_data/).

Reads the per-map JSON extracted from the real `.SC2Map` files (the walkable grid as smac holds its
`pathing_grid`, and `terrain_height` in smac's own layout) and writes, per map, only those two grids:

    python scripts/import_smac_maps.py [SOURCE_DIR]      # default: ../shared/smac_maps beside the checkout
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "envs" / "smac" / "map_data"


def convert(source: dict) -> dict:
    """The fields the simulator reads: walkable rows (row = y, char = x) and smac-layout heights as bytes."""
    walkable = source["walkable"]
    heights = source["terrain_height"]
    if len(walkable) != 32 or any(len(row) != 32 or set(row) - {"0", "1"} for row in walkable):
        raise ValueError("walkable is not 32 rows of 32 '0'/'1' characters")
    if len(heights) != 32 or any(len(row) != 32 for row in heights):
        raise ValueError("terrain_height is not 32 x 32")
    return {"map": source["map"],
            "walkable": walkable,
            # smac's terrain_height[x, j] = byte / 255; stored as the byte (row j, column x)
            "terrain_height_bytes": [[round(h * 255) for h in row] for row in heights]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", nargs="?", default=str(ROOT.parent / "shared" / "smac_maps"))
    args = parser.parse_args(argv)
    files = sorted(Path(args.source).glob("*.json"))
    if not files:
        print(f"error: no map JSON files in {args.source}", file=sys.stderr)
        return 2
    OUT.mkdir(parents=True, exist_ok=True)
    for path in files:
        data = convert(json.loads(path.read_text()))
        (OUT / path.name).write_text(json.dumps(data, separators=(",", ":")) + "\n")
    print(f"wrote {len(files)} maps to {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
