"""The study: created in (or continued from) its storage, a seeded TPE sampler, the pruner; trials run in this
process or in worker processes that share the storage."""
from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import sys
import warnings
from typing import TYPE_CHECKING

from core.errors import ConcertoError, RunError, UserError
from core.tuning.objective import TuneSettings, run_trial
from core.tuning.pruning import make_pruner

if TYPE_CHECKING:
    import optuna
    from optuna.trial import FrozenTrial

ATTR = "concerto"  # the study's user attribute holding TuneSettings.identity()
HEARTBEAT_S = 60  # a trial whose process died is marked FAIL after two missed heartbeats
SQLITE_TIMEOUT_S = 60.0  # how long a process waits for another's write to SQLite


def open_study(settings: TuneSettings, sampler_seed: int, worker: int = 0) -> optuna.Study:
    """The study named in `settings`, created if new; UserError for a storage that cannot be opened or a study
    tuned with other settings. Each worker's TPE sampler gets its own seed, which also moves on with the trials
    already in the study, so that workers and continued studies do not repeat each other's random trials."""
    import optuna
    from sqlalchemy.exc import SQLAlchemyError

    optuna.logging.set_verbosity(optuna.logging.ERROR)  # trials are reported by trial_line, failures included
    connect = {"connect_args": {"timeout": SQLITE_TIMEOUT_S}} if settings.storage.startswith("sqlite") else {}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)  # heartbeats: experimental
            storage = optuna.storages.RDBStorage(settings.storage, engine_kwargs=connect,
                                                 heartbeat_interval=HEARTBEAT_S)
        study = optuna.create_study(storage=storage, study_name=settings.study, direction="maximize",
                                    pruner=make_pruner(settings.pruner), load_if_exists=True)
    except (SQLAlchemyError, ValueError, ImportError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise UserError(f"cannot open the study {settings.study!r} in --storage {settings.storage}: {first}"
                        ) from None
    if study.direction != optuna.study.StudyDirection.MAXIMIZE:
        raise UserError(f"study {settings.study!r} in {settings.storage} minimises; choose another --study")
    saved = study.user_attrs.get(ATTR)
    if saved is None:
        study.set_user_attr(ATTR, settings.identity())
    elif saved != settings.identity():
        different = ", ".join(f"{k} {saved.get(k)!r}" for k, v in settings.identity().items() if saved.get(k) != v)
        raise UserError(f"study {settings.study!r} in {settings.storage} was tuned with {different}; rerun with "
                        "its settings to continue it, or choose another --study or --out")
    study.sampler = optuna.samplers.TPESampler(seed=sampler_seed + 1000 * len(study.trials) + worker)
    return study


def run_trials(settings: TuneSettings, n_trials: int, sampler_seed: int, worker: int = 0) -> None:
    """Run `n_trials` trials here, printing one line per finished trial; a failed trial is recorded and the next
    one starts."""
    study = open_study(settings, sampler_seed, worker)
    study.optimize(lambda trial: run_trial(settings, trial), n_trials=n_trials, catch=(RunError,),
                   callbacks=[lambda _, trial: print(trial_line(trial), flush=True)])


def trial_line(trial: FrozenTrial) -> str:
    """How a finished trial is reported: its score, where it was pruned or why it failed, and its values."""
    from optuna.trial import TrialState

    values = ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in trial.params.items())
    if trial.state == TrialState.COMPLETE:
        scores = trial.user_attrs.get("scores", [])
        outcome = f"{trial.user_attrs.get('metric', 'score')} {trial.value:.4g}"
        if len(scores) > 1:
            outcome += f" (IQM of {', '.join(f'{s:.3g}' for s in scores)})"
    elif trial.state == TrialState.PRUNED and trial.last_step is not None:
        outcome = (f"pruned at step {trial.last_step:,} (intermediate value "
                   f"{trial.intermediate_values[trial.last_step]:.4g})")
    elif trial.state == TrialState.PRUNED:
        outcome = "pruned"
    else:
        outcome = f"failed: {trial.user_attrs.get('error', 'see the log above')}"
    return f"trial {trial.number}: {outcome} | {values}"


def optimize(settings: TuneSettings, n_trials: int, workers: int, sampler_seed: int) -> None:
    """Run `n_trials` more trials of the study, `workers` at a time (worker processes sharing its storage)."""
    if workers == 1:
        run_trials(settings, n_trials, sampler_seed)
        return
    context = multiprocessing.get_context("spawn")
    shares = [n_trials // workers + (i < n_trials % workers) for i in range(workers)]
    processes = [context.Process(target=_worker, args=(settings, share, sampler_seed, i), daemon=False)
                 for i, share in enumerate(shares) if share]
    for process in processes:
        process.start()
    try:
        for process in processes:
            process.join()
    except BaseException:  # a signal here: each worker stops its trial with its runs checkpointed
        for process in processes:
            if process.is_alive() and process.pid is not None:
                _interrupt(process.pid)
        for process in processes:
            process.join()
        raise
    if any(p.exitcode in (130, 143) for p in processes):
        raise KeyboardInterrupt("a tuning worker was stopped by a signal")
    failed = [p.exitcode for p in processes if p.exitcode]
    if failed:
        raise RunError(f"{len(failed)} of {len(processes)} tuning workers failed (exit status {failed[0]}); "
                       "the study keeps every trial they finished")


def _worker(settings: TuneSettings, n_trials: int, sampler_seed: int, worker: int) -> None:
    """A worker process's body: one `error:` line and an exit status instead of a traceback."""
    try:
        run_trials(settings, n_trials, sampler_seed, worker)
    except KeyboardInterrupt:
        sys.exit(130)
    except ConcertoError as exc:
        print(f"error: worker {worker}: {exc}", file=sys.stderr, flush=True)
        sys.exit(2 if isinstance(exc, UserError) else 1)


def _interrupt(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):  # it has just ended
        os.kill(pid, signal.SIGINT)
