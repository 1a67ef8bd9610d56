"""Learning curve of one training run next to the random policy, as a Markdown table.

    python benchmarks/learning_curve.py --algo mappo --env mpe_simple_spread --steps 300000 --seed 0
    python benchmarks/learning_curve.py --algo sac --env Pendulum-v1 --steps 20000 --seed 0

Multi-agent algorithms train through scripts/train_marl.py's code, single-agent ones (dqn, ddpg, td3, sac,
ppo) through scripts/train_single.py's.
Trains through the CLI (so defaults and configs are exactly what users get), then reads eval/... rows
from the run's metrics.csv. The random policy is evaluated on the same eval envs and seeds.
"""
from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import envs
import marl.cli
import single_agent.cli
from core.trainer import EVAL_SEED_OFFSET
from marl.evaluation import RandomAgent, evaluate
from single_agent.algos import ALGOS as SINGLE_AGENT_ALGOS
from single_agent.evaluation import RandomPolicy
from single_agent.evaluation import evaluate as evaluate_single
from single_agent.vec_env import TransitionVecEnv


def random_baseline(algo: str, env: str, config: dict, seed: int) -> dict[str, float]:
    """The random policy on the run's eval envs and seeds."""
    episodes = config["train"]["eval_episodes"]
    n_envs = min(config["train"]["eval_envs"], episodes)
    if algo in SINGLE_AGENT_ALGOS:
        single_env = TransitionVecEnv(env, n_envs, **config["env"])
        policy = RandomPolicy(single_env.action_space, seed)
        return evaluate_single(policy, single_env, episodes, seed=seed + EVAL_SEED_OFFSET)
    eval_env = envs.make_vec(env, n_envs, **config["env"])
    return evaluate(RandomAgent(eval_env.spec, seed=seed), eval_env, episodes, seed=seed + EVAL_SEED_OFFSET)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--algo", required=True)
    p.add_argument("--env", required=True)
    p.add_argument("--steps", type=int, required=True)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--logdir", default="runs/benchmarks")
    p.add_argument("overrides", nargs="*")
    args = p.parse_args()
    run = single_agent.cli.run if args.algo in SINGLE_AGENT_ALGOS else marl.cli.run
    summary = run(["--algo", args.algo, "--env", args.env, "--steps", str(args.steps), "--seed", str(args.seed),
                   "--logdir", args.logdir, "--no-progress", *args.overrides])
    run_dir = Path(summary["run_dir"])
    config = __import__("yaml").safe_load((run_dir / "config.yaml").read_text())
    random = random_baseline(args.algo, args.env, config, args.seed)
    rows: dict[int, dict[str, str]] = {}
    with (run_dir / "metrics.csv").open() as f:
        for row in csv.DictReader(f):
            if row["tag"] in ("eval/return_mean", "eval/win_rate"):
                rows.setdefault(int(row["step"]), {"wall_s": row["wall_s"]})[row["tag"]] = row["value"]
    print(f"\n{args.algo} on {args.env}, seed {args.seed}, {config['train']['eval_episodes']} greedy eval episodes")
    print("| env steps | wall s | eval return | eval win rate |\n|---|---|---|---|")
    for step, row in sorted(rows.items()):
        win = row.get("eval/win_rate")
        print(f"| {step:,} | {float(row['wall_s']):.0f} | {float(row['eval/return_mean']):.2f} | "
              f"{'-' if win is None else f'{float(win):.2f}'} |")
    random_win = random.get("eval/win_rate")
    print(f"| random policy | - | {random['eval/return_mean']:.2f} | "
          f"{'-' if random_win is None else f'{random_win:.2f}'} |")
    print(f"final_eval_return={summary['eval_return_mean']:.3f} random_return={random['eval/return_mean']:.3f}")


if __name__ == "__main__":
    main()
