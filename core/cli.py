"""What the training command lines share: flags, config resolution, the run, the summary and exit codes.

Bad input (UserError) prints one `error: ...` line and exits with status 2; a crashed env worker exits 1;
Ctrl-C saves a checkpoint and exits 130.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any, Callable

from core.callbacks import load_callback
from core.errors import EnvWorkerError, UserError
from core.run_config import make_run_dir, resolve_config

OVERRIDES_HELP = """\
overrides: key=value pairs after the flags set any config value, e.g. algo.lr=3e-4 train.eval_interval=5000
env.KEY=VALUE (a bare key goes to the algo section, or to train if only it has the key).
"""


class Parser(argparse.ArgumentParser):
    """argparse that reports bad usage as one line (exit status 2)."""

    def error(self, message: str) -> None:
        raise UserError(message)


def build_parser(prog: str, description: str, algos: str, env_help: str, epilog: str) -> Parser:
    """The flags every training command takes; callers may add their own."""
    p = Parser(prog=prog, description=description, epilog=OVERRIDES_HELP + epilog,
               formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--algo", required=True, help=f"algorithm: {algos}")
    p.add_argument("--env", required=True, help=env_help)
    p.add_argument("--steps", type=int, help="env-step budget (one step of one env)")
    p.add_argument("--n-envs", type=int, help="parallel env copies")
    p.add_argument("--vec", choices=["sync", "subproc"], help="vector env kind: sync (in process) or subproc (workers)")
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


def train_from_args(args: argparse.Namespace, config_class: type, defaults: dict[str, Any], trainer_class: type,
                    cli_train: dict[str, Any] | None = None, report_wins: bool = True) -> dict[str, Any]:
    """Resolve the run config from the parsed flags, train, write the summary JSON and print the summary."""
    cli_train = {"steps": args.steps, "n_envs": args.n_envs, "vec": args.vec, "seed": args.seed, "device": args.device,
                 "progress": False if args.no_progress else None, **(cli_train or {})}
    train, algo_cfg, env_kwargs = resolve_config(args.algo, args.env, config_class, defaults,
                                                 args.config, cli_train, args.overrides)
    callbacks = [load_callback(spec) for spec in args.callback]
    if args.summary_json:
        Path(args.summary_json).parent.mkdir(parents=True, exist_ok=True)
    run_dir = make_run_dir(args.logdir, args.env, args.algo, train.seed)
    trainer = trainer_class(args.algo, args.env, train, algo_cfg, env_kwargs, run_dir, callbacks, resume=args.resume)
    try:
        summary = trainer.train()
    finally:
        trainer.close()
    if args.summary_json:
        Path(args.summary_json).write_text(json.dumps(summary, indent=2) + "\n")
    print_summary(summary, args.algo, args.env, report_wins)
    return summary


def print_summary(summary: dict[str, Any], algo: str, env: str, report_wins: bool = True) -> None:
    """One line with steps, speed, eval return (and test win rate), then where the TensorBoard logs are."""
    win = summary["eval_win_rate"]
    ret = summary["eval_return_mean"]
    parts = [f"{algo} on {env}: {summary['env_steps']:,} env steps in {summary['wall_s']:.1f} s "
             f"({summary['steps_per_s']:,.0f} steps/s)",
             f"eval return {ret:.3f}" if ret is not None and math.isfinite(ret) else "eval return n/a"]
    if win is not None:
        parts.append(f"test win rate {win:.1%}")
    elif report_wins:
        parts.append("test win rate n/a (env reports no wins)")
    if summary.get("stop_reason"):
        parts.append(f"stopped early: {summary['stop_reason']}")
    print("; ".join(parts))
    print(f"TensorBoard logs: {summary['run_dir']}  (view with: tensorboard --logdir {Path(summary['run_dir']).parents[2]})")


def run_main(run: Callable[[list[str] | None], Any], argv: list[str] | None = None) -> int:
    """Call `run(argv)` and turn errors into exit codes: 2 for bad input, 1 for a crashed env, 130 for Ctrl-C."""
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
