"""Raw env throughput of a vector env with random valid actions.

    python benchmarks/env_throughput.py --env smac_3m --n-envs 256 --steps 200
    python benchmarks/env_throughput.py --env smaclite_protoss_5_vs_5 env.sighted_enemies=false

Trailing env.KEY=VALUE pairs set env options, as on the training command line.

Prints steps per second; the last line is `env_steps_per_s=N` (env steps = vector steps x n_envs), the best
of `--repeats` timed runs (the machine's speed varies by tens of percent between runs; the median is printed
too). Random actions are drawn vectorised (argmax of uniform noise over the available actions; Box actions
uniform within their bounds, cut to [-1, 1]) and their cost is included.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from gymnasium import spaces

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import envs
from core.cli import run_main
from core.config import parse_overrides


def measure(name: str, n_envs: int, steps: int, seed: int = 0, repeats: int = 3,
            options: dict[str, Any] | None = None) -> list[float]:
    venv = envs.make_vec(name, n_envs=n_envs, seed=seed, **(options or {}))
    rng = np.random.default_rng(seed)
    step = venv.reset()
    groups = venv.spec.groups

    def actions(step):
        """Uniform random available actions (Discrete) or uniform in the bounds, else in [-1, 1] (Box)."""
        out = {}
        for g in groups:
            space = g.action_space
            if not isinstance(space, spaces.Box):
                out[g.name] = np.argmax(rng.random(step.group_avail[g.name].shape) * step.group_avail[g.name], -1)
            else:
                low, high = (np.clip(bound, -1, 1) for bound in (space.low, space.high))
                out[g.name] = rng.uniform(low, high, (n_envs, g.n_agents, *g.action_shape)).astype(np.float32)
        return out

    for _ in range(5):  # warm-up
        step = venv.step(actions(step))
    rates = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(steps):
            step = venv.step(actions(step))
        rates.append(steps * n_envs / (time.perf_counter() - start))
    venv.close()
    return rates


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--env", default="smac_3m")
    p.add_argument("--n-envs", type=int, default=256)
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("options", nargs="*", metavar="env.KEY=VALUE")
    args = p.parse_args(argv)
    overrides = parse_overrides(args.options)
    if set(overrides) - {"env"}:
        p.error(f"options must be env.KEY=VALUE, got {args.options}")
    rates = measure(args.env, args.n_envs, args.steps, repeats=args.repeats, options=overrides.get("env"))
    print(f"{args.env}: {args.n_envs} envs x {args.steps} steps x {args.repeats} repeats; "
          f"median {np.median(rates):,.0f} env steps/s")
    print(f"env_steps_per_s={max(rates):.0f}")


if __name__ == "__main__":
    sys.exit(run_main(main))
