"""What the experiment runner costs per cell, and what a second worker gains, on this machine.

    python benchmarks/experiment_overhead.py --algo mappo --env smac_3m --steps 40000 --cells 4 --repeats 3

Per repeat: a bare `scripts/train_marl.py` run and a one-cell `scripts/experiment.py` grid of the same run
and the same `--cells` seeds as grids with --workers 1 and --workers 2. With bare time b, a one-cell grid
takes F + b + p and an n-cell serial grid F + n (b + p): F is the grid's fixed cost (start-up, results and
report), p the cost per cell. The speed-up is serial over 2 workers. Prints each measurement and medians.
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
    b, one, serial_s, parallel_s = (statistics.median(x) for x in (bare, one_cell, serial, parallel))
    per_cell = (serial_s - one - (args.cells - 1) * b) / (args.cells - 1)
    print(f"median: bare {b:.1f} s, one-cell grid {one:.1f} s, {args.cells} cells workers=1 {serial_s:.1f} s, "
          f"workers=2 {parallel_s:.1f} s; fixed cost {one - b - per_cell:.1f} s per grid, {per_cell:.2f} s per "
          f"cell; speed-up of 2 workers {serial_s / parallel_s:.2f}x")


if __name__ == "__main__":
    main()
