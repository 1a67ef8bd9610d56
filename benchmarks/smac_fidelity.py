"""Win rates of fixed policies on the built-in SMAC simulator, next to the SMAC paper's heuristic baseline.

    python benchmarks/smac_fidelity.py --maps 2s3z,3s5z,3m,8m,5m_vs_6m,3s_vs_5z,MMM,corridor --episodes 200

Policies (envs/smac/baselines.py): the SMAC paper's heuristic as SMAC runs it (`heuristic_ai=True`: raw
attack orders on the nearest enemy, kept until it dies), random valid actions, and stop-only. Published
heuristic win rates (SMAC_SPEC.md §7a) are printed beside ours where they exist.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from envs.smac.baselines import win_rate

PAPER_HEURISTIC = {"2s3z": 90, "3s5z": 42, "1c3s5z": 81, "10m_vs_11m": 12, "5m_vs_6m": 0, "3s_vs_5z": 0,
                   "27m_vs_30m": 0, "MMM2": 0, "3s5z_vs_3s6z": 0, "6h_vs_8z": 0, "corridor": 0, "2c_vs_64zg": 0,
                   "bane_vs_bane": 43, "2s_vs_1sc": 0}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--maps", default="2s3z,3s5z,3m,8m,5m_vs_6m,3s_vs_5z,MMM,corridor")
    p.add_argument("--episodes", type=int, default=200)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    print("| map | heuristic win % (ours) | SMAC paper heuristic % | random win % | stop-only win % | "
          "heuristic return |\n|---|---|---|---|---|---|")
    for name in args.maps.split(","):
        start = time.perf_counter()
        heur, ret = win_rate(name, "heuristic", args.episodes, args.seed)
        rand, _ = win_rate(name, "random", args.episodes, args.seed)
        stop, _ = win_rate(name, "stop", args.episodes, args.seed)
        paper = PAPER_HEURISTIC.get(name)
        print(f"| {name} | {100 * heur:.1f} | {'-' if paper is None else paper} | {100 * rand:.1f} | "
              f"{100 * stop:.1f} | {ret:.2f} |  <!-- {time.perf_counter() - start:.0f} s -->", flush=True)


if __name__ == "__main__":
    main()
