"""Wall time and final greedy return of our single-agent learners next to stable-baselines3, same settings.

    python benchmarks/single_vs_sb3.py --algo sac --env Pendulum-v1 --steps 20000 --seeds 0,1,2
    python benchmarks/single_vs_sb3.py --algo dqn --env CartPole-v1 --steps 50000 --seeds 0,1,2 double_q=false

Both sides get the hyperparameters of our resolved config (configs/algos + configs/tuned, plus any key=value
overrides), translated to SB3's arguments: same algorithm, env, step budget, network sizes, batch sizes,
learning rates, buffer, warm-up, train frequency and exploration. Wall time is the training loop only (SB3's
`learn`, our `Trainer.train` without periodic evaluation); both are then evaluated greedily on the same
eval envs and seeds. The last line is a Markdown row of means over the seeds. `--threads` sets torch's thread
count for both; by default each side keeps its own default (SB3: torch's default, ours: train.torch_threads).
Needs `pip install -e .[bench]`.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.run_config import resolve_config
from core.trainer import EVAL_SEED_OFFSET
from single_agent.algos import get_algo
from single_agent.cli import run
from single_agent.evaluation import evaluate
from single_agent.vec_env import TransitionVecEnv

DEFAULT_THREADS = torch.get_num_threads()  # torch's own default, which SB3 runs with


def sb3_model(algo: str, env_id: str, cfg: Any, n_envs: int, steps: int, seed: int):
    """The SB3 model with the same settings as our resolved config `cfg`."""
    import stable_baselines3 as sb3
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.noise import NormalActionNoise

    env = make_vec_env(env_id, n_envs=n_envs, seed=seed)
    common: dict[str, Any] = dict(seed=seed, device="cpu", verbose=0)
    if algo == "ppo":
        anneal = (lambda v: (lambda left: v * left)) if cfg.anneal else (lambda v: v)
        return sb3.PPO("MlpPolicy", env, n_steps=cfg.n_steps, batch_size=cfg.batch_size, n_epochs=cfg.n_epochs,
                       learning_rate=anneal(cfg.lr), clip_range=anneal(cfg.clip_range), gamma=cfg.gamma,
                       gae_lambda=cfg.gae_lambda, ent_coef=cfg.ent_coef, vf_coef=cfg.vf_coef,
                       max_grad_norm=cfg.max_grad_norm,
                       policy_kwargs=dict(net_arch=dict(pi=cfg.hidden_sizes, vf=cfg.hidden_sizes),
                                          activation_fn=torch.nn.Tanh), **common)
    off = dict(learning_rate=cfg.lr, buffer_size=cfg.buffer_size, learning_starts=cfg.learning_starts,
               batch_size=cfg.batch_size, tau=cfg.tau, gamma=cfg.gamma, train_freq=cfg.train_freq,
               gradient_steps=cfg.gradient_steps, policy_kwargs=dict(net_arch=cfg.hidden_sizes), **common)
    if algo == "dqn":
        if cfg.double_q or cfg.dueling or cfg.n_step > 1:
            raise SystemExit("SB3's DQN has no double-Q, dueling or n-step: pass double_q=false")
        # our target interval counts gradient updates, SB3's counts env steps
        interval = max(1, cfg.target_update_interval * cfg.train_freq * n_envs // cfg.gradient_steps)
        return sb3.DQN("MlpPolicy", env, target_update_interval=interval, max_grad_norm=cfg.max_grad_norm,
                       exploration_fraction=cfg.epsilon_anneal_steps / steps, exploration_initial_eps=cfg.epsilon_start,
                       exploration_final_eps=cfg.epsilon_finish, **off)
    if algo == "sac":
        return sb3.SAC("MlpPolicy", env, ent_coef="auto" if cfg.auto_alpha else cfg.alpha,
                       target_update_interval=cfg.target_update_interval, **off)
    box = env.action_space
    assert isinstance(box, gym.spaces.Box), "TD3 and DDPG act in Box spaces"
    width = (box.high - box.low) / 2
    noise = NormalActionNoise(np.zeros(box.shape), cfg.action_noise * width)
    off["policy_kwargs"]["n_critics"] = cfg.n_critics
    return sb3.TD3("MlpPolicy", env, action_noise=noise, policy_delay=cfg.policy_delay,
                   target_policy_noise=cfg.target_noise, target_noise_clip=cfg.target_noise_clip, **off)


class SB3Policy:
    """Adapts an SB3 model to our evaluation loop (greedy actions, already in env units)."""

    def __init__(self, model) -> None:
        self.model = model

    def act(self, obs, explore: bool, rng=None) -> np.ndarray:
        return self.model.predict(obs, deterministic=not explore)[0]

    def env_action(self, action: np.ndarray) -> np.ndarray:
        return action


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--algo", required=True, choices=["dqn", "ddpg", "td3", "sac", "ppo"])
    p.add_argument("--env", required=True)
    p.add_argument("--steps", type=int, required=True)
    p.add_argument("--seeds", default="0", help="comma-separated seeds; each runs both sides once")
    p.add_argument("--threads", type=int, help="torch threads for both sides (default: each side's own default)")
    p.add_argument("--logdir", default="runs/benchmarks")
    p.add_argument("overrides", nargs="*")
    args = p.parse_args()
    rows = [compare(args, int(seed)) for seed in args.seeds.split(",")]
    for row in rows:
        print(json.dumps(row))
    mean = {key: float(np.mean([r[key] for r in rows]))
            for key in ("ours_wall_s", "ours_return", "sb3_wall_s", "sb3_return")}
    print(f"| {args.algo} | {args.env} | {args.steps:,} | {args.seeds} | {mean['ours_wall_s']:.1f} | "
          f"{mean['ours_return']:.1f} | {mean['sb3_wall_s']:.1f} | {mean['sb3_return']:.1f} | "
          f"{mean['ours_wall_s'] / mean['sb3_wall_s']:.2f} |")


def compare(args: argparse.Namespace, seed: int) -> dict[str, Any]:
    """Train and evaluate SB3, then ours, with one seed."""
    entry = get_algo(args.algo)
    overrides = [*args.overrides, "train.eval_interval=0"]
    if args.threads:
        overrides.append(f"train.torch_threads={args.threads}")
    train, cfg, env_kwargs = resolve_config(args.algo, args.env, entry.config_class, entry.defaults,
                                            cli_train={"steps": args.steps, "seed": seed}, overrides=overrides)
    eval_env = TransitionVecEnv(args.env, min(train.eval_envs, train.eval_episodes), **env_kwargs)

    torch.set_num_threads(args.threads or DEFAULT_THREADS)
    torch.set_flush_denormal(False)  # SB3 as shipped (our trainer turns flushing on for itself)
    sb3_threads = torch.get_num_threads()
    model = sb3_model(args.algo, args.env, cfg, train.n_envs, args.steps, seed)
    start = time.perf_counter()
    model.learn(args.steps)
    sb3_wall = time.perf_counter() - start
    sb3_eval = evaluate(SB3Policy(model), eval_env, train.eval_episodes, seed=seed + EVAL_SEED_OFFSET)

    ours = run(["--algo", args.algo, "--env", args.env, "--steps", str(args.steps), "--seed", str(seed),
                "--logdir", args.logdir, "--no-progress", *overrides])
    return {"algo": args.algo, "env": args.env, "steps": args.steps, "seed": seed,
            "ours_wall_s": round(ours["wall_s"], 1), "ours_return": round(ours["eval_return_mean"], 1),
            "ours_threads": train.torch_threads, "sb3_wall_s": round(sb3_wall, 1),
            "sb3_return": round(sb3_eval["eval/return_mean"], 1), "sb3_threads": sb3_threads}


if __name__ == "__main__":
    main()
