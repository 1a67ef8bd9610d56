"""Command line: python scripts/train_marl.py --algo mappo --env mpe_simple_spread [key=value ...]."""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from core.callbacks import load_callback
from core.errors import EnvWorkerError, UserError
from core.run_config import make_run_dir, resolve_config
from envs.registry import resolve
from marl.algos import get_algo
from marl.trainer import MarlTrainer

EPILOG = """\
overrides: key=value pairs after the flags set any config value, e.g. algo.lr=3e-4 train.eval_interval=5000
env.max_cycles=50 (a bare key goes to the algo section, or to train if only it has the key).
env: a registered name (mpe_simple_spread, ...) or package.module:factory returning a PettingZoo env.
"""


class _Parser(argparse.ArgumentParser):
    """argparse that reports bad usage as one line (exit status 2)."""

    def error(self, message: str) -> None:
        raise UserError(message)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="train_marl.py", description="Train a multi-agent RL algorithm.", epilog=EPILOG,
                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--algo", required=True, help="algorithm: mappo, ippo, coma, iql, vdn, qmix")
    p.add_argument("--env", required=True, help="registered env name or package.module:factory")
    p.add_argument("--steps", type=int, help="env-step budget (one step of one env)")
    p.add_argument("--n-envs", type=int, help="parallel env copies")
    p.add_argument("--vec", choices=["sync", "subproc"], help="vector env kind")
    p.add_argument("--seed", type=int)
    p.add_argument("--device", help="cpu, cuda or cuda:N")
    p.add_argument("--config", help="YAML file with train/algo/env sections")
    p.add_argument("--logdir", default="runs", help="root of run directories (default: runs)")
    p.add_argument("--callback", action="append", default=[], metavar="SPEC",
                   help="callback plugin package.module:ClassName (repeatable)")
    p.add_argument("--summary-json", help="write a JSON summary of the run here")
    p.add_argument("--resume", help="checkpoint directory, or a run directory to resume from its latest checkpoint")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("overrides", nargs="*", metavar="key=value")
    return p


def run(argv: list[str] | None = None) -> dict:
    """Parse arguments, train, and return the run summary (raises UserError on bad input)."""
    args = build_parser().parse_intermixed_args(argv)
    entry = get_algo(args.algo)
    resolve(args.env)
    cli_train = {"steps": args.steps, "n_envs": args.n_envs, "vec": args.vec, "seed": args.seed,
                 "device": args.device, "progress": False if args.no_progress else None}
    train, algo_cfg, env_kwargs = resolve_config(args.algo, args.env, entry.config_class, entry.defaults,
                                                 args.config, cli_train, args.overrides)
    callbacks = [load_callback(spec) for spec in args.callback]
    if args.summary_json:
        Path(args.summary_json).parent.mkdir(parents=True, exist_ok=True)
    run_dir = make_run_dir(args.logdir, args.env, args.algo, train.seed)
    trainer = MarlTrainer(args.algo, args.env, train, algo_cfg, env_kwargs, run_dir, callbacks, resume=args.resume)
    try:
        summary = trainer.train()
    finally:
        trainer.close()
    if args.summary_json:
        Path(args.summary_json).write_text(json.dumps(summary, indent=2) + "\n")
    _print_summary(summary, args.algo, args.env)
    return summary


def _print_summary(summary: dict, algo: str, env: str) -> None:
    win = summary["eval_win_rate"]
    ret = summary["eval_return_mean"]
    parts = [f"{algo} on {env}: {summary['env_steps']:,} env steps in {summary['wall_s']:.1f} s "
             f"({summary['steps_per_s']:,.0f} steps/s)",
             f"eval return {ret:.3f}" if ret is not None and math.isfinite(ret) else "eval return n/a",
             f"test win rate {win:.1%}" if win is not None else "test win rate n/a (env reports no wins)"]
    if summary.get("stop_reason"):
        parts.append(f"stopped early: {summary['stop_reason']}")
    print("; ".join(parts))
    print(f"TensorBoard logs: {summary['run_dir']}  (view with: tensorboard --logdir {Path(summary['run_dir']).parents[2]})")


def main(argv: list[str] | None = None) -> int:
    try:
        run(argv)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except EnvWorkerError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted: checkpoint saved in the run directory", file=sys.stderr)
        return 130
    return 0
