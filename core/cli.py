"""What the training command lines share: flags, config resolution, the run, the summary and exit statuses.

Exit statuses: 0 done; 2 bad input found before the first training step (one `error: ...` line); 1 a run
that failed after it started (one `error: ...` line naming the last good checkpoint); 130 / 143 SIGINT /
SIGTERM (the run stops at the next consistent point with a checkpoint there).
"""
from __future__ import annotations

import argparse
import json
import math
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

from core import signals
from core.callbacks import load_callback
from core.errors import EXIT_BAD_INPUT, EXIT_RUN_FAILED, Interrupted, RunError, UserError
from core.resume import resume_config
from core.run_config import resolve_config
from core.run_dir import checkpoint_metadata, make_run_dir, resume_run_dir
from core.user_code import cwd_on_path

OVERRIDES_HELP = """\
overrides: key=value pairs after the flags set any config value, e.g. algo.lr=3e-4 train.eval_interval=5000
env.KEY=VALUE (a bare key goes to the algo section, or to train if only it has the key).
"""

AlgoLookup = Callable[[str], tuple[type, dict[str, Any]]]  # algo name -> (config class, variant defaults)


class Parser(argparse.ArgumentParser):
    """argparse that reports bad usage as one line (exit status 2). Under `concerto COMMAND` its usage and
    help name that command (`command_name`) rather than the script."""

    command_name: str | None = None  # set by core.command for the subcommand it runs

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if Parser.command_name is not None:
            self.prog = Parser.command_name

    def error(self, message: str) -> NoReturn:
        raise UserError(message)


def build_parser(prog: str, description: str, algos: str, env_help: str, epilog: str) -> Parser:
    """The flags every training command takes; callers may add their own."""
    p = Parser(prog=prog, description=description, epilog=OVERRIDES_HELP + epilog,
               formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--algo", help=f"algorithm: {algos} (required unless --resume)")
    p.add_argument("--env", help=f"{env_help} (required unless --resume)")
    p.add_argument("--steps", type=int, help="env-step budget (one step of one env)")
    p.add_argument("--n-envs", type=int, help="parallel env copies")
    p.add_argument("--vec", choices=["sync", "subproc"], help="vector env kind: sync (in process) or subproc (workers)")
    p.add_argument("--seed", type=int)
    p.add_argument("--device", help="cpu, cuda or cuda:N")
    p.add_argument("--config", help="YAML file with train/algo/env sections")
    p.add_argument("--logdir", default="runs", help="root of new run directories (default: runs); a resumed run "
                                                    "goes on in its own, or in a new one here if its checkpoint "
                                                    "is no longer inside it")
    p.add_argument("--callback", action="append", default=[], metavar="SPEC",
                   help="callback plugin package.module:ClassName (repeatable)")
    p.add_argument("--summary-json", help="write a JSON summary of the run here")
    p.add_argument("--resume", help="continue a run: its directory (newest checkpoint) or a checkpoint directory; "
                                    "the run goes on in its own directory")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("overrides", nargs="*", metavar="key=value")
    return p


def train_from_args(args: argparse.Namespace, lookup: AlgoLookup, check_env: Callable[[str], Any],
                    trainer_class: type, cli_train: dict[str, Any] | None = None,
                    report_wins: bool = True) -> dict[str, Any]:
    """Resolve the run config from the parsed flags (or the checkpoint being resumed), train, write the
    summary JSON and print the summary. Raises Interrupted after a signal, once the checkpoint is written."""
    cli_train = {"steps": args.steps, "n_envs": args.n_envs, "vec": args.vec, "seed": args.seed, "device": args.device,
                 "progress": False if args.no_progress else None, **(cli_train or {})}
    if args.resume:
        checkpoint, meta = checkpoint_metadata(Path(args.resume))
        algo, env = _same(args.algo, meta.get("algo"), "--algo"), _same(args.env, meta.get("env"), "--env")
        config_class, defaults = lookup(algo)
        train, algo_cfg, env_kwargs = resume_config(meta, config_class, defaults, args.config, cli_train,
                                                    args.overrides, str(checkpoint))
    else:
        if not args.algo or not args.env:
            raise UserError("the following arguments are required: " + ", ".join(
                flag for flag, value in (("--algo", args.algo), ("--env", args.env)) if not value))
        algo, env = args.algo, args.env
        config_class, defaults = lookup(algo)
        check_env(env)
        train, algo_cfg, env_kwargs = resolve_config(algo, env, config_class, defaults, args.config, cli_train,
                                                     args.overrides)
    callbacks = [load_callback(spec) for spec in args.callback]
    summary_path = writable(args.summary_json, "--summary-json") if args.summary_json else None
    if args.resume:
        run_dir, note = resume_run_dir(checkpoint, meta, args.logdir, env, algo, train.seed)
    else:
        run_dir, note = make_run_dir(args.logdir, env, algo, train.seed), None
    try:
        trainer = trainer_class(algo, env, train, algo_cfg, env_kwargs, run_dir, callbacks, resume=args.resume)
    except BaseException as exc:
        if not args.resume or note is not None:  # a run directory made for a run that never started
            shutil.rmtree(run_dir, ignore_errors=True)
        if isinstance(exc, RunError):  # a failure before the first training step (an env failing at reset)
            raise UserError(str(exc)) from None
        if isinstance(exc, Interrupted):
            raise Interrupted(exc.signum, "before training started; nothing was saved") from None
        raise
    if note:
        print(note, flush=True)
    try:
        summary = trainer.train()
    finally:
        trainer.close()
    if summary_path is not None:
        try:
            summary_path.write_text(json.dumps(summary, indent=2) + "\n")
        except OSError as exc:
            raise RunError(f"the run finished but --summary-json {summary_path} could not be written "
                           f"({exc.strerror or exc}); checkpoint: {summary['checkpoint']}") from None
    print_summary(summary, algo, env, report_wins, tensorboard="tensorboard" in train.loggers)
    if summary["signal"] is not None:
        where = (f"checkpoint: {summary['checkpoint']} (continue with --resume {run_dir})"
                 if summary["checkpoint"] else "nothing was trained, so nothing was saved")
        raise Interrupted(summary["signal"], f"at {summary['env_steps']:,} env steps; {where}")
    return summary


def _same(given: str | None, saved: Any, flag: str) -> str:
    if not isinstance(saved, str):
        raise UserError(f"the checkpoint does not name its {flag[2:]}; it cannot be resumed")
    if given is not None and given != saved:
        raise UserError(f"cannot resume with {flag} {given}: the checkpoint is for {saved}")
    return saved


def writable(path: str, flag: str) -> Path:
    """Check before the work starts that the output file given with `flag` can be written (its directory is
    created)."""
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.is_dir():
            raise UserError(f"{flag} {path} is a directory")
        with target.open("a"):
            pass
    except OSError as exc:
        raise UserError(f"cannot write {flag} {path}: {exc.strerror or exc}") from None
    return target


def print_summary(summary: dict[str, Any], algo: str, env: str, report_wins: bool = True,
                  tensorboard: bool = True) -> None:
    """One line with steps, speed, eval return (and test win rate), then where the run's (TensorBoard) logs are."""
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
    run_dir = Path(summary["run_dir"])
    if not tensorboard:
        print(f"Run directory: {run_dir}")
        return
    logdir = run_dir.parents[2] if len(run_dir.parents) > 2 else run_dir  # <logdir>/<env>/<algo>/<run>
    print(f"TensorBoard logs: {run_dir}  (view with: tensorboard --logdir {logdir})")


def run_main(run: Callable[[list[str] | None], Any], argv: list[str] | None = None) -> int:
    """Call `run(argv)` with signals handled and turn failures into one line and an exit status."""
    try:
        with signals.handled(), cwd_on_path():  # a user's env/callback modules in the current directory import
            run(argv)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except RunError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_RUN_FAILED
    except Interrupted as exc:
        print(exc, file=sys.stderr)
        return exc.exit_status
    except KeyboardInterrupt:  # signals not handled here (not the main thread)
        print("interrupted", file=sys.stderr)
        return 130
    return 0
