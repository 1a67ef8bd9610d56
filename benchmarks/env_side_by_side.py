"""SMAC env throughput of this checkout beside a peer, interleaved in one run: ours, peer, ours, peer, ...

    python benchmarks/env_side_by_side.py --smax-python ~/jaxmarl-venv/bin/python --map 3m --n-envs 256
    python benchmarks/env_side_by_side.py --checkout /tmp/before --map 3m --n-envs 256 --cores 0

The peer is JaxMARL's SMAX (benchmarks/smax_throughput.py run by --smax-python, an interpreter of a virtual
environment with jaxmarl installed) or another checkout of this project (its benchmarks/env_throughput.py, for
before/after comparisons). Every repeat starts one fresh process per side, each timing `--steps` steps of
`--n-envs` envs with random valid actions three times and reporting its best; the machine's speed drifts by
tens of percent over minutes, so interleaving and medians compare like with like. `--cores 0` pins both sides
to core 0 (`--cores 0,1` to two cores); by default both may use every core (JAX's XLA then runs on all of
them, our simulator on one). The last line is `ours_over_peer=R`, the ratio of the medians.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import NoReturn

HERE = Path(__file__).resolve().parent


def bad_input(message: str) -> NoReturn:
    print(f"error: {message}", file=sys.stderr)
    sys.exit(2)


def rate(cmd: list[str], cwd: Path, cores: set[int] | None) -> float:
    """Run one benchmark process and read its `env_steps_per_s=N` line."""
    pin = (lambda: os.sched_setaffinity(0, cores)) if cores else None
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, preexec_fn=pin)
    if done.returncode != 0:
        last = done.stderr.strip().splitlines()[-1:] or ["no output"]
        raise SystemExit(f"error: {' '.join(cmd)} failed: {last[0]}")
    return float(done.stdout.strip().splitlines()[-1].split("=", 1)[1])


def ours_cmd(checkout: Path, args: argparse.Namespace) -> list[str]:
    return [sys.executable, str(checkout / "benchmarks" / "env_throughput.py"), "--env", f"smac_{args.map}",
            "--n-envs", str(args.n_envs), "--steps", str(args.steps), "--repeats", "3"]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    peer = p.add_mutually_exclusive_group(required=True)
    peer.add_argument("--smax-python", type=Path, help="python of an environment with jaxmarl installed")
    peer.add_argument("--checkout", type=Path, help="another checkout of this project (e.g. a git worktree)")
    p.add_argument("--map", default="3m", help="SMAC map name (smac_<map> on our side)")
    p.add_argument("--n-envs", type=int, default=256)
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--repeats", type=int, default=5, help="fresh processes per side")
    p.add_argument("--cores", help="comma-separated cores to pin both sides to (default: all)")
    args = p.parse_args()
    try:
        cores = {int(c) for c in args.cores.split(",")} if args.cores else None
    except ValueError:
        bad_input(f"--cores takes comma-separated core numbers, got {args.cores!r}")
    if cores and not cores <= os.sched_getaffinity(0):
        bad_input(f"--cores {args.cores}: this process may use cores {sorted(os.sched_getaffinity(0))}")
    if args.smax_python is not None and not args.smax_python.is_file():
        bad_input(f"--smax-python {args.smax_python}: no such file")
    if args.checkout is not None and not (args.checkout / "benchmarks" / "env_throughput.py").is_file():
        bad_input(f"--checkout {args.checkout}: not a checkout of this project (no benchmarks/env_throughput.py)")
    if args.smax_python is not None:
        peer_label, peer_dir = "SMAX", HERE
        peer_cmd = [str(args.smax_python), str(HERE / "smax_throughput.py"), "--map", args.map,
                    "--n-envs", str(args.n_envs), "--steps", str(args.steps), "--repeats", "3"]
    else:
        peer_label, peer_dir = "checkout", args.checkout.resolve()
        peer_cmd = ours_cmd(peer_dir, args)
    sides = {"ours": (ours_cmd(HERE.parent, args), HERE.parent), peer_label: (peer_cmd, peer_dir)}
    rates: dict[str, list[float]] = {label: [] for label in sides}
    for i in range(args.repeats):
        for label, (cmd, cwd) in sides.items():
            rates[label].append(rate(cmd, cwd, cores))
            print(f"repeat {i} {label}: {rates[label][-1]:,.0f} env steps/s", flush=True)
    medians = {label: statistics.median(r) for label, r in rates.items()}
    where = f"cores {sorted(cores)}" if cores else f"all {os.cpu_count()} cores"
    print(f"smac {args.map}, {args.n_envs} envs x {args.steps} steps, {args.repeats} repeats, {where}: "
          + ", ".join(f"{label} median {m:,.0f} (range {min(rates[label]):,.0f}-{max(rates[label]):,.0f})"
                      for label, m in medians.items()))
    print(f"ours_over_peer={medians['ours'] / medians[peer_label]:.2f}")


if __name__ == "__main__":
    main()
