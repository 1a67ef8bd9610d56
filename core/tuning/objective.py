"""One trial: the sampled config trained on every seed of the study as an experiment (core.experiments), on the
experiment runner's executors, and scored by the interquartile mean of the runs' final evaluations.

Layout under the study's directory OUT: OUT/trials/<number>/ is the trial's experiment directory (its
experiment.yaml, trial.json and cells/<env>/<algo>/seed<k>/ with each run), so every trial's runs can be
inspected, evaluated and plotted like any experiment's.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from core.errors import RunError, UserError
from core.experiments.api import run_experiment
from core.experiments.grid import ExperimentSpec, read_summary
from core.tuning.pruning import CALLBACK, PRUNED, TrialLink, score
from core.tuning.space import Param, overrides

if TYPE_CHECKING:
    from optuna.trial import Trial


Executor = Literal["in-process", "local", "ray"]  # where a trial's runs train (core.experiments executors)


class TrialFailed(RunError):
    """A trial's run failed (an invalid combination of values, a non-finite loss): the trial is recorded as FAIL
    and the study goes on."""


@dataclass(frozen=True)
class TuneSettings:
    """What every trial of a study shares: the runs (algorithm, env, budget, seeds, the user's overrides under
    the sampled values), the space, where the study lives and how trials run."""

    algo: str
    env: str
    steps: int
    seeds: list[int]
    overrides: list[str]
    params: list[Param]
    out: Path
    storage: str
    study: str
    pruner: str = "median"
    executor: Executor = "in-process"
    cell_workers: int | None = None  # "local": a trial's runs trained at once (None: one per core)

    def identity(self) -> dict[str, Any]:
        """What makes two trials comparable; a study continued with other values is refused."""
        return {"algo": self.algo, "env": self.env, "steps": self.steps, "seeds": self.seeds,
                "overrides": self.overrides}

    def trial_dir(self, number: int) -> Path:
        return self.out / "trials" / f"{number:04d}"


def iqm(values: list[float]) -> float:
    """Interquartile mean: the mean of the middle half (scipy's trim_mean(x, 0.25), as rliable computes it); the
    plain mean for fewer than four values."""
    x = np.sort(np.asarray(values, dtype=float))
    cut = int(0.25 * len(x))
    return float(x[cut: len(x) - cut].mean())


def run_trial(settings: TuneSettings, trial: Trial) -> float:
    """Train the trial's config on every seed and return its score; raises optuna.TrialPruned when the pruner
    stopped its runs, TrialFailed when one failed, and KeyboardInterrupt when a signal stopped them (each
    run checkpointed; optuna records the trial as FAIL)."""
    import optuna

    sampled = overrides({p.name: p.suggest(trial) for p in settings.params})
    trial.set_user_attr("overrides", sampled)  # the config as train_*.py takes it, whatever the space's labels
    directory = settings.trial_dir(trial.number)
    directory.mkdir(parents=True, exist_ok=True)
    # optuna offers no public id by which another process can reach a running trial
    TrialLink(settings.storage, settings.study, trial._trial_id, settings.seeds[0], settings.pruner).write(directory)
    spec = ExperimentSpec([settings.algo], [settings.env], settings.seeds, settings.steps,
                          overrides=[*settings.overrides, *sampled])
    try:
        result = run_experiment(spec, directory, workers=settings.cell_workers, ray=settings.executor == "ray",
                                in_process=settings.executor == "in-process", progress=False, callbacks=[CALLBACK],
                                report=False)
    except UserError as exc:  # values each valid alone that the config refuses together: the study goes on
        trial.set_user_attr("error", str(exc))
        raise TrialFailed(f"trial {trial.number}: {exc}") from None
    if result.stopped is not None or result.interrupted:
        raise KeyboardInterrupt(f"trial {trial.number} stopped by a signal; its runs are checkpointed in {directory}")
    if result.failed:
        cell, error = next(iter(result.failed.items()))
        trial.set_user_attr("error", f"{cell.name}: {error}")
        raise TrialFailed(f"trial {trial.number}: {cell.name} failed: {error}")
    summaries = [read_summary(cell.directory(directory)) or {} for cell in spec.cells()]
    pruned = [s["stop_reason"] for s in summaries if str(s.get("stop_reason")).startswith(PRUNED)]
    if pruned:
        raise optuna.TrialPruned(pruned[0])
    scores = [score({"eval/win_rate": s.get("eval_win_rate"), "eval/return_mean": s.get("eval_return_mean")})
              for s in summaries]
    trial.set_user_attr("scores", scores)
    trial.set_user_attr("metric", "win rate" if summaries[0].get("eval_win_rate") is not None else "return")
    return iqm(scores)
