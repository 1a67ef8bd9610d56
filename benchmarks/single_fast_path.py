"""Gradient updates per second of each off-policy learner's fast path against its reference (autograd) update.

    python benchmarks/single_fast_path.py --tuned-dqn     # dqn and sac at their default configs, tuned dqn
    python benchmarks/single_fast_path.py --algos sac --repeats 9 --updates 400

TD3/DDPG have no fast path any more (theirs gained about 1.1x; BENCHMARKS.md).

Each learner runs with its configs/algos/<algo>.yaml settings (network sizes, batch size, gradient steps per
training phase, train.torch_threads) on CartPole-sized (4 observations, 2 actions) or Pendulum-sized (3
observations, 1 action dimension) spaces, with denormals flushed as in training. Both agents start from the same
seed and train on the same pre-drawn batches, so sampling is not timed. Repeats alternate which path goes
first; the table shows the median rates and the median of the repeats' fast / reference ratios. `--tuned-dqn`
adds DQN at its tuned CartPole settings (256x256, 128 updates a phase, a target copy every 128), where the fast
path also shares the target network's evaluation across a phase.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from gymnasium import spaces

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.config import from_dict, load_yaml
from core.paths import CONFIG_DIR
from core.precision import training_float_modes
from core.run_config import TrainConfig
from core.run_state import RunState
from single_agent.agent import OffPolicyAgent
from single_agent.algos import get_algo

TUNED_DQN = {"hidden_sizes": [256, 256], "gradient_steps": 128, "target_update_interval": 128}


def default_configs(algo: str, overrides: dict[str, Any]) -> tuple[TrainConfig, Any]:
    """The train and algo sections of configs/algos/<algo>.yaml, validated, with `overrides` on the algo's."""
    entry = get_algo(algo)
    data = load_yaml(CONFIG_DIR / "algos" / f"{algo}.yaml")
    train = from_dict(TrainConfig, data.get("train") or {}, "train")
    return train, from_dict(entry.config_class, {**entry.defaults, **(data.get("algo") or {}), **overrides}, "algo")


def make_agent(algo: str, cfg: Any) -> OffPolicyAgent:
    entry = get_algo(algo)
    obs_space = spaces.Box(-1.0, 1.0, (3,) if entry.continuous else (4,))
    action_space: spaces.Space = spaces.Box(-2.0, 2.0, (1,)) if entry.continuous else spaces.Discrete(2)
    torch.manual_seed(0)
    return entry.agent_class(obs_space, action_space, cfg, "cpu", run=RunState(0, 10**6))


def random_batches(agent: OffPolicyAgent, n: int, rows: int, rng: np.random.Generator) -> list[dict[str, Any]]:
    def batch() -> dict[str, Any]:
        action = (rng.integers(0, agent.act_dim, rows) if agent.discrete
                  else rng.uniform(-1.0, 1.0, (rows, agent.act_dim)).astype(np.float32))
        return {"obs": rng.standard_normal((rows, agent.obs_dim)).astype(np.float32),
                "next_obs": rng.standard_normal((rows, agent.obs_dim)).astype(np.float32), "action": action,
                "reward": rng.standard_normal(rows).astype(np.float32),
                "discount": np.where(rng.random(rows) < 0.01, 0.0, 0.99).astype(np.float32)}
    return [batch() for _ in range(n)]


def updates_per_second(agent: OffPolicyAgent, batches: list[dict[str, Any]], updates: int) -> float:
    """Updates per second over `updates` gradient updates, in training phases of cfg.gradient_steps each."""
    phases = max(1, updates // agent.cfg.gradient_steps)
    start = time.perf_counter()
    for i in range(phases):
        agent.train(batches[i % len(batches)], agent.cfg.gradient_steps)
    return phases * agent.cfg.gradient_steps / (time.perf_counter() - start)


def compare(algo: str, overrides: dict[str, Any], updates: int, repeats: int) -> dict[str, Any]:
    train, cfg = default_configs(algo, {**overrides, "fast_path": True})
    agents = {"fast": make_agent(algo, cfg), "reference": make_agent(algo, default_configs(algo, {
        **overrides, "fast_path": False})[1])}
    if not agents["fast"].fast_path:
        raise SystemExit(f"{algo} has no fast path" if not agents["fast"].has_fast_path
                         else "this torch build lacks the private calls of the fast paths")
    batches = random_batches(agents["fast"], 8, cfg.batch_size * cfg.gradient_steps, np.random.default_rng(0))
    rates: dict[str, list[float]] = {"fast": [], "reference": []}
    torch.set_num_threads(train.torch_threads)
    with training_float_modes(train.matmul_precision):
        for agent in agents.values():  # warm-up: first-call allocations, oneDNN primitive caches
            updates_per_second(agent, batches, max(cfg.gradient_steps, updates // 10))
        for repeat in range(repeats):
            order = ["fast", "reference"] if repeat % 2 == 0 else ["reference", "fast"]
            for name in order:
                rates[name].append(updates_per_second(agents[name], batches, updates))
    fast, reference = statistics.median(rates["fast"]), statistics.median(rates["reference"])
    # each repeat's pair ran back to back: the median of their ratios is less moved by the machine's drift
    ratio = statistics.median(f / r for f, r in zip(rates["fast"], rates["reference"], strict=True))
    return {"algo": algo, "hidden": cfg.hidden_sizes, "batch": cfg.batch_size, "per_phase": cfg.gradient_steps,
            "threads": train.torch_threads, "fast": fast, "reference": reference, "ratio": ratio,
            "fast_runs": rates["fast"], "reference_runs": rates["reference"]}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--algos", default="dqn,sac")
    p.add_argument("--updates", type=int, default=256, help="gradient updates per timed run")
    p.add_argument("--repeats", type=int, default=7, help="timed runs of each path (at least 5)")
    p.add_argument("--tuned-dqn", action="store_true", help="add DQN at its tuned CartPole settings")
    args = p.parse_args()
    if args.repeats < 5:
        p.error("--repeats must be at least 5")
    cases: list[tuple[str, dict[str, Any]]] = [(algo, {}) for algo in args.algos.split(",")]
    if args.tuned_dqn:
        cases.append(("dqn", TUNED_DQN))
    print(f"torch {torch.__version__}, {args.repeats} interleaved runs of {args.updates} updates per path")
    print("| learner | hidden | batch | updates a phase | threads | fast updates/s | reference updates/s | ratio |")
    print("|---|---|---|---|---|---|---|---|")
    for algo, overrides in cases:
        row = compare(algo, overrides, args.updates, args.repeats)
        hidden = "x".join(map(str, row["hidden"]))
        print(f"| {algo} | {hidden} | {row['batch']} | {row['per_phase']} | {row['threads']} | {row['fast']:,.0f} | "
              f"{row['reference']:,.0f} | {row['ratio']:.2f}x |", flush=True)
        spread = {name: f"{min(row[name + '_runs']):,.0f}-{max(row[name + '_runs']):,.0f}"
                  for name in ("fast", "reference")}
        print(f"  (runs: fast {spread['fast']}, reference {spread['reference']})", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
