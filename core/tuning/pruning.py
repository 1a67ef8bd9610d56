"""Pruning from inside a trial's training runs: the callback each run trains with reports its evaluations to the
trial and stops the run once the study's pruner says so.

A trial is an experiment directory (core.tuning.objective) holding `trial.json`: where the study is stored, the
trial's id, which seed reports and which pruner decides. The callback finds that file above its run directory, so
the same command line works on every executor (local processes, Ray tasks on a shared filesystem).
"""
from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from core.callbacks import Callback, Trainer
from core.config import load_yaml
from core.errors import UserError
from core.user_code import import_object, user_code

if TYPE_CHECKING:
    import optuna

TRIAL_FILE = "trial.json"
CALLBACK = "core.tuning.pruning:ReportToTrial"
PRUNED = "pruned by the study's pruner"  # the start of a pruned run's stop_reason
PRUNERS = ("median", "none")
SQLITE = "sqlite:///"


@dataclass(frozen=True)
class TrialLink:
    """What a trial's training runs need to reach it: the study, the trial and the pruner."""

    storage: str
    study: str
    trial_id: int
    reporting_seed: int  # the run whose evaluations are the trial's intermediate values
    pruner: str  # "median", "none" or package.module:factory

    def write(self, directory: Path) -> None:
        """Into `directory`, a relative SQLite path made absolute (a run's working directory may differ)."""
        link = asdict(self)
        if self.storage.startswith(SQLITE) and not self.storage.startswith(SQLITE + "/"):
            link["storage"] = SQLITE + str(Path(self.storage.removeprefix(SQLITE)).resolve())
        (directory / TRIAL_FILE).write_text(json.dumps(link) + "\n")

    @classmethod
    def find(cls, run_dir: Path) -> TrialLink:
        """The link in the nearest directory above `run_dir` that holds one."""
        for directory in Path(run_dir).resolve().parents:
            if (directory / TRIAL_FILE).is_file():
                return cls(**json.loads((directory / TRIAL_FILE).read_text()))
        raise UserError(f"callback {CALLBACK} reports to an Optuna trial, but no {TRIAL_FILE} is above the run "
                        f"directory {run_dir}: it is for runs that scripts/tune.py starts")


def make_pruner(spec: str) -> optuna.pruners.BasePruner:
    """median: MedianPruner (optuna's defaults: after 5 trials, from the first evaluation); none: no pruning;
    package.module:factory: what factory() returns."""
    import optuna

    if spec == "median":
        return optuna.pruners.MedianPruner()
    if spec == "none":
        return optuna.pruners.NopPruner()
    if ":" not in spec:
        raise UserError(f"unknown pruner {spec!r}; use {', '.join(PRUNERS)} or package.module:factory")
    factory = import_object(spec, "pruner")
    with user_code(f"pruner {spec!r}: its factory failed"):
        pruner = factory()
    if not isinstance(pruner, optuna.pruners.BasePruner):
        raise UserError(f"pruner {spec!r} returned {type(pruner).__name__}, not an optuna.pruners.BasePruner")
    return pruner


def score(metrics: Mapping[str, float | None]) -> float:
    """What a study maximises: the win rate where the env reports wins, else the mean return."""
    win = metrics.get("eval/win_rate")
    value = win if win is not None else metrics.get("eval/return_mean")
    return math.nan if value is None else float(value)


class ReportToTrial(Callback):
    """Reports each evaluation to the trial (the reporting seed's run only) and stops the run when the trial
    should be pruned (every seed's run). An evaluation is reported at the multiple of train.eval_interval it
    passed, the last one at train.steps: trials with other iteration sizes meet at the same steps, where the
    pruner compares them."""

    order = 40

    def __init__(self) -> None:
        self.link: TrialLink | None = None
        self.study: optuna.Study | None = None
        self.interval, self.budget, self.seed = 0, 0, 0

    def on_train_start(self, trainer: Trainer) -> None:
        import optuna

        optuna.logging.set_verbosity(optuna.logging.WARNING)
        self.link = TrialLink.find(trainer.run_dir)
        train = load_yaml(trainer.run_dir / "config.yaml")["train"]
        self.interval, self.budget, self.seed = train["eval_interval"], train["steps"], train["seed"]
        self.study = optuna.load_study(study_name=self.link.study, storage=self.link.storage,
                                       pruner=make_pruner(self.link.pruner))

    def on_eval_end(self, trainer: Trainer, metrics: Mapping[str, float]) -> None:
        import optuna

        assert self.link is not None and self.study is not None, "an evaluation before on_train_start"
        trial = optuna.trial.Trial(self.study, self.link.trial_id)  # read afresh: another seed may have reported
        step = self.step(trainer.env_steps, trainer.total_steps)
        if self.seed == self.link.reporting_seed:
            trial.report(score(metrics), step)
        if trainer.env_steps < trainer.total_steps and trial.should_prune():  # a finished run is the trial's value
            trainer.request_stop(f"{PRUNED} at {trainer.env_steps:,} env steps")

    def step(self, env_steps: int, total_steps: int) -> int:
        """The step an evaluation at `env_steps` is reported at."""
        if env_steps >= total_steps or self.interval <= 0:
            return int(self.budget)
        return env_steps // self.interval * self.interval
