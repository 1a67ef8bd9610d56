"""Training throughput vs the raw env step rate, measured in the same process and run.

    python benchmarks/train_throughput.py --env mpe_simple_spread --n-envs 8 --steps 100000

1. raw: one PettingZoo env stepped in a plain loop with random valid actions (no learning, no vec env);
2. train (sync / subproc): full MAPPO training (MLP, collection + PPO updates) through the trainer's runner.
Prints a table and, last, `train_over_raw=R` for the sync run (target: >= 0.5).
"""
from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import envs
from core.episode_stats import EpisodeStats
from core.run_state import RunState
from marl.algos.mappo import MAPPO, MAPPOConfig
from marl.onpolicy import OnPolicyRunner


def raw_env_rate(name: str, steps: int, seed: int = 0) -> float:
    """Steps per second of a single env driven directly through the PettingZoo ParallelEnv API."""
    env = envs.make(name)
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    spaces = {a: env.action_space(a) for a in env.possible_agents}
    start = time.perf_counter()
    for _ in range(steps):
        if not env.agents:
            env.reset()
        env.step({a: int(rng.integers(spaces[a].n)) for a in env.agents})
    return steps / (time.perf_counter() - start)


def train_rate(name: str, n_envs: int, steps: int, vec: str, threads: int) -> float:
    """Env steps per second of MAPPO training (collection + updates), after one warm-up iteration."""
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    venv = envs.make_vec(name, n_envs, vec=vec, seed=0)
    try:
        runner = OnPolicyRunner(MAPPO(venv.spec, MAPPOConfig()), venv, RunState(seed=0))
        counted = 0

        def count(n: int, finished: EpisodeStats | None) -> None:
            nonlocal counted
            counted += n

        runner.iteration(count)
        counted = 0
        start = time.perf_counter()
        while counted < steps:
            runner.iteration(count)
        return counted / (time.perf_counter() - start)
    finally:
        venv.close()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--env", default="mpe_simple_spread")
    p.add_argument("--n-envs", type=int, default=8)
    p.add_argument("--steps", type=int, default=100_000)
    p.add_argument("--raw-steps", type=int, default=20_000)
    args = p.parse_args()
    print(f"machine: {platform.processor() or platform.machine()}, {torch.get_num_threads()} torch threads max, "
          f"python {platform.python_version()}, torch {torch.__version__}")
    raw = raw_env_rate(args.env, args.raw_steps)
    rows = [("raw env (1 process, random actions)", raw)]
    for vec, threads in (("sync", 1), ("sync", 2), ("subproc", 1)):
        rows.append((f"MAPPO training, {vec}, {args.n_envs} envs, {threads} torch thread(s)",
                     train_rate(args.env, args.n_envs, args.steps, vec, threads)))
    print(f"| {args.env} | env steps/s | x raw |\n|---|---|---|")
    for label, rate in rows:
        print(f"| {label} | {rate:,.0f} | {rate / raw:.2f} |")
    print(f"train_over_raw={rows[1][1] / raw:.2f}")


if __name__ == "__main__":
    main()
