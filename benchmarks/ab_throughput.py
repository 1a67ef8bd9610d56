"""Training throughput of two checkouts of this project, interleaved: A, B, A, B, ... on the same machine.

    python benchmarks/ab_throughput.py --a /tmp/before --b . --algo mappo --env smac_3m --steps 60000 --repeats 5

Each repeat runs `scripts/train_marl.py` of checkout A, then of checkout B, in fresh processes (one at a time,
no evaluation or periodic checkpoints), and reads steps/s from their summary JSON. The machine's speed drifts
by tens of percent over minutes, so interleaving and medians compare like with like. Prints each run, the
medians and the ratio B/A (last line: `b_over_a=R`).
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path


def run_once(checkout: Path, args: argparse.Namespace, out: Path) -> float:
    summary = out / "summary.json"
    cmd = [sys.executable, str(checkout / "scripts" / "train_marl.py"), "--algo", args.algo, "--env", args.env,
           "--steps", str(args.steps), "--no-progress", "--logdir", str(out / "runs"),
           "--summary-json", str(summary), "train.eval_interval=0", "train.checkpoint_interval=0",
           "train.eval_episodes=1", "train.eval_envs=1", *args.overrides]
    if args.n_envs is not None:
        cmd[4:4] = ["--n-envs", str(args.n_envs)]
    subprocess.run(cmd, cwd=checkout, check=True, capture_output=True, text=True)
    return float(json.loads(summary.read_text())["steps_per_s"])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--a", type=Path, required=True, help="checkout A (e.g. a git worktree of the old commit)")
    p.add_argument("--b", type=Path, required=True, help="checkout B")
    p.add_argument("--algo", default="mappo")
    p.add_argument("--env", default="smac_3m")
    p.add_argument("--steps", type=int, default=60_000)
    p.add_argument("--n-envs", type=int, help="envs of both runs (default: each checkout's own default)")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("overrides", nargs="*", help="key=value overrides passed to both")
    args = p.parse_args()
    rates: dict[str, list[float]] = {"A": [], "B": []}
    for i in range(args.repeats):
        for label, checkout in (("A", args.a), ("B", args.b)):
            with tempfile.TemporaryDirectory() as tmp:
                rate = run_once(checkout.resolve(), args, Path(tmp))
            rates[label].append(rate)
            print(f"repeat {i} {label}: {rate:,.0f} env steps/s", flush=True)
    med = {label: statistics.median(values) for label, values in rates.items()}
    envs = args.n_envs or "default"
    print(f"{args.algo} on {args.env}, {args.steps:,} steps, {envs} envs: median A {med['A']:,.0f}, "
          f"B {med['B']:,.0f} env steps/s")
    print(f"b_over_a={med['B'] / med['A']:.3f}")


if __name__ == "__main__":
    main()
