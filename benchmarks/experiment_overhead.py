"""What the experiment runner costs per cell, and what a second worker gains, on this machine.

    python benchmarks/experiment_overhead.py --algo mappo --env smac_3m --steps 40000 --cells 4 --repeats 3

Per repeat: a bare `scripts/train_marl.py` run and a one-cell `scripts/experiment.py` grid of the same run
(the overhead per cell is the difference in wall time); then the same `--cells` seeds as a grid with
--workers 1 and with --workers 2 (the speed-up is the ratio). Prints each measurement and medians.
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
QUIET = ["train.eval_interval=0", "train.checkpoint_interval=0", "train.eval_episodes=8"]


def timed(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--algo", default="mappo")
    p.add_argument("--env", default="smac_3m")
    p.add_argument("--steps", type=int, default=40_000)
    p.add_argument("--cells", type=int, default=4)
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args()
    train = [sys.executable, str(ROOT / "scripts" / "train_marl.py"), "--algo", args.algo, "--env", args.env,
             "--steps", str(args.steps), "--no-progress", *QUIET]
    grid = [sys.executable, str(ROOT / "scripts" / "experiment.py"), "--algos", args.algo, "--envs", args.env,
            "--steps", str(args.steps), "--no-progress", *QUIET]
    bare, one_cell, serial, parallel = [], [], [], []
    for i in range(args.repeats):
        with tempfile.TemporaryDirectory() as tmp:
            bare.append(timed([*train, "--logdir", f"{tmp}/bare"]))
            one_cell.append(timed([*grid, "--seeds", "1", "--workers", "1", "--out", f"{tmp}/one"]))
            serial.append(timed([*grid, "--seeds", str(args.cells), "--workers", "1", "--out", f"{tmp}/w1"]))
            parallel.append(timed([*grid, "--seeds", str(args.cells), "--workers", "2", "--out", f"{tmp}/w2"]))
        print(f"repeat {i}: bare {bare[-1]:.1f} s, one-cell grid {one_cell[-1]:.1f} s, {args.cells} cells "
              f"workers=1 {serial[-1]:.1f} s, workers=2 {parallel[-1]:.1f} s", flush=True)
    med = statistics.median
    print(f"median: bare {med(bare):.1f} s, one-cell grid {med(one_cell):.1f} s "
          f"(overhead {med(one_cell) - med(bare):+.1f} s per cell); {args.cells} cells: workers=1 {med(serial):.1f} s, "
          f"workers=2 {med(parallel):.1f} s (speed-up {med(serial) / med(parallel):.2f}x)")


if __name__ == "__main__":
    main()
