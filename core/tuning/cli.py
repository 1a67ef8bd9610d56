"""Command line of scripts/tune.py: tune an algorithm's hyperparameters on an env with Optuna.

Exit statuses: 0 the trials ran and the study has a best trial; 1 no trial of the study has completed (every one
failed or was pruned), or a tuning worker failed; 2 bad input (one `error:` line); 130 / 143 SIGINT / SIGTERM
(the running trials' runs checkpointed, the trial recorded as failed, every finished trial kept in the study).
The side that trains the algorithm (multi-agent or single-agent) supplies its config class and env check through
an `Algorithm` (core.experiments.trainers), which the script picks: core imports neither side.
"""
from __future__ import annotations

import argparse
import signal
from collections.abc import Callable
from pathlib import Path

from core.cli import Parser, run_main
from core.config import parse_overrides
from core.errors import ConfigError, Interrupted, MissingDependencyError, UserError
from core.experiments.executors import default_workers
from core.experiments.grid import parse_seeds
from core.experiments.trainers import Algorithm, check_run, installed_algorithm
from core.paths import install_hint
from core.run_config import _route_overrides, env_dir_name, resolve_config
from core.tuning.objective import Executor, TuneSettings
from core.tuning.pruning import make_pruner
from core.tuning.report import completed, top_trials_markdown, write_best_config, write_plots
from core.tuning.space import check_values, default_space, load_space
from core.tuning.study import open_study, optimize

MAX_TRIALS = 100_000
INSTALL = f"{install_hint('tune')} (or pip install 'optuna>=3.5')"
DASHBOARD = "optuna-dashboard"

EPILOG = f"""\
overrides: key=value pairs (as for training) apply to every trial under the sampled values, e.g.
train.eval_interval=10000 train.eval_episodes=16.

Each trial trains the sampled config for --steps env steps on every seed (0 .. K-1 for --seeds K) as an
experiment in OUT/trials/<number>/ and scores it by its final greedy evaluation (the win rate where the env
reports wins, else the mean return), the interquartile mean over the seeds. Its evaluations on the way are
reported to the pruner, which stops unpromising trials (PRUNED). The study lives in --storage (default
sqlite:///OUT/study.db): rerunning the command adds --trials more to it, several processes can share it, and
`{DASHBOARD} <storage>` shows it in a browser. At the end: OUT/best_config.yaml (for train_*.py --config),
OUT/top_trials.md and the plots OUT/optimization_history.png and OUT/param_importances.png.
Needs Optuna: {INSTALL}.
"""


def parser() -> Parser:
    p = Parser(prog="tune.py", description="Tune an algorithm's hyperparameters with Optuna (TPE sampler, median "
               "pruner), each trial trained over one or more seeds.", epilog=EPILOG,
               formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--algo", required=True, help="algorithm (multi-agent or single-agent)")
    p.add_argument("--env", required=True, help="env, as for training")
    p.add_argument("--trials", type=int, default=20, help="trials to add to the study (default 20)")
    p.add_argument("--steps", type=int, required=True, help="env-step budget of every run")
    p.add_argument("--seeds", default="1", help="seeds per trial: a count (3: seeds 0-2) or a list (3,7,9; one "
                                               "seed: 7,); the score is their interquartile mean (default 1)")
    p.add_argument("--study", help="study name (default <algo>_<env>)")
    p.add_argument("--storage", help="Optuna storage URL (default sqlite:///OUT/study.db)")
    parallel = p.add_mutually_exclusive_group()
    parallel.add_argument("--workers", type=int, default=1, help="trials run at once, in processes sharing the "
                                                                 "study (default 1)")
    parallel.add_argument("--ray", action="store_true", help="run each trial's runs as Ray tasks (a local Ray, "
                                                             "or the cluster RAY_ADDRESS names)")
    p.add_argument("--space", help="search space YAML (default configs/tune/<algo>.yaml)")
    p.add_argument("--out", help="study directory (default tune/<algo>_<env>)")
    p.add_argument("--pruner", default="median", help="median (default), none, or package.module:factory "
                                                      "returning an optuna pruner")
    p.add_argument("--sampler-seed", type=int, default=0, help="seed of the TPE sampler (default 0)")
    p.add_argument("overrides", nargs="*", metavar="key=value")
    return p


def run(argv: list[str] | None, algorithm_of: Callable[[str], Algorithm]) -> int:
    """Tune as `argv` says; returns the exit status (UserError for bad input)."""
    args = parser().parse_intermixed_args(argv)
    _require_optuna()
    if not 1 <= args.trials <= MAX_TRIALS:
        raise UserError(f"--trials must be between 1 and {MAX_TRIALS:,}, got {args.trials}")
    if args.steps < 1:
        raise UserError(f"--steps must be at least 1, got {args.steps}")
    if args.workers < 1:
        raise UserError(f"--workers must be at least 1, got {args.workers}")
    try:
        seeds = parse_seeds(args.seeds)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    algo = algorithm_of(args.algo)
    settings = _settings(args, algo, seeds)
    if args.ray:
        from core.experiments.ray_cluster import require_ray

        require_ray()
    return _tune(settings, args, algo)


def _settings(args: argparse.Namespace, algo: Algorithm, seeds: list[int]) -> TuneSettings:
    """The study's settings, every input checked: the overrides, the space and each of its values."""
    fixed = _override_keys(args.overrides, algo.config_class) & {"train.steps", "train.seed"}
    if fixed:
        raise UserError(f"{sorted(fixed)[0]} is set by the tuning command: use --steps and --seeds")

    def check(extra: list[str]) -> None:
        resolve_config(args.algo, args.env, algo.config_class, algo.variant, cli_train={"steps": args.steps},
                       overrides=[*args.overrides, *extra])

    check_run(args.algo, args.env, algo, cli_train={"steps": args.steps}, overrides=args.overrides)
    make_pruner(args.pruner)
    space = Path(args.space) if args.space else default_space(args.algo)
    if not space.is_file():
        raise UserError(f"no search space at {space}" + ("" if args.space else f" for {args.algo}: give --space FILE"))
    params = load_space(space, algo.config_class, algo.variant)
    both = sorted(_override_keys(args.overrides, algo.config_class) & {p.name for p in params})
    if both:
        raise UserError(f"{both[0]} is both searched ({space}) and set by an override; drop one of them")
    check_values(params, check, space)
    out = Path(args.out or Path("tune") / f"{args.algo}_{env_dir_name(args.env)}")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"cannot create --out {out}: {exc.strerror or exc}") from None
    # one run at a time goes fastest in this process (no interpreter and torch start per run); several seeds
    # train side by side in processes, each worker's share of the cores
    executor: Executor = "ray" if args.ray else "in-process" if len(seeds) == 1 else "local"
    return TuneSettings(args.algo, args.env, args.steps, seeds, list(args.overrides), params, out,
                        args.storage or f"sqlite:///{out / 'study.db'}",
                        args.study or f"{args.algo}_{env_dir_name(args.env)}", args.pruner, executor,
                        max(1, default_workers() // args.workers))


def _override_keys(overrides: list[str], config_class: type) -> set[str]:
    """`section.key` of every key=value override (bare keys routed as training routes them)."""
    try:
        routed = _route_overrides(parse_overrides(overrides), config_class)
    except ConfigError as exc:
        raise UserError(str(exc)) from None
    return {f"{section}.{key}" for section, keys in routed.items() for key in keys}


def _tune(settings: TuneSettings, args: argparse.Namespace, algo: Algorithm) -> int:
    study = open_study(settings, args.sampler_seed)
    trials_dir = settings.out / "trials"
    if not study.trials and trials_dir.is_dir() and any(trials_dir.iterdir()):
        raise UserError(f"{trials_dir} holds trials of a study that {settings.storage} does not have (another "
                        "--study, or its database removed): remove them or choose another --out")
    print(f"tuning {settings.algo} on {settings.env}: {args.trials} trial{'s' if args.trials != 1 else ''} of "
          f"{settings.steps:,} env steps x {len(settings.seeds)} seed{'s' if len(settings.seeds) != 1 else ''}; "
          f"study {settings.study!r} ({len(study.trials)} trials so far) in {settings.storage}", flush=True)
    try:
        optimize(settings, args.trials, args.workers, args.sampler_seed)
    except (KeyboardInterrupt, Interrupted) as exc:
        signum = exc.signum if isinstance(exc, Interrupted) else signal.SIGINT
        raise Interrupted(signum, f"(the study keeps every finished trial, in {settings.storage}: rerun the "
                                  "command to continue it)") from None
    study = open_study(settings, args.sampler_seed)
    table = top_trials_markdown(study, settings)
    (settings.out / "top_trials.md").write_text(table)
    print(table, end="")
    best = write_best_config(study, settings, algo.config_class, algo.train_script,
                             settings.out / "best_config.yaml")
    plots, notes = write_plots(study, settings.out)
    for note in notes:
        print(f"note: {note}")
    written = [settings.out / "top_trials.md", *([best] if best else []), *plots]
    print(f"written to {settings.out}: {', '.join(p.name for p in written)}")
    print(f"dashboard: {DASHBOARD} {settings.storage}")
    if not completed(study):
        print("no trial of the study has completed: no best config", flush=True)
        return 1
    return 0


def _require_optuna() -> None:
    try:
        import optuna  # noqa: F401
    except ImportError as exc:
        raise MissingDependencyError(f"tuning needs Optuna ({exc}): {INSTALL}") from None


def main(argv: list[str] | None = None, algorithm_of: Callable[[str], Algorithm] = installed_algorithm) -> int:
    status = 0

    def go(a: list[str] | None) -> None:
        nonlocal status
        status = run(a, algorithm_of)

    return run_main(go, argv) or status
