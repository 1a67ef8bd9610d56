"""Weights & Biases as a logging backend (`train.loggers=[tensorboard,wandb]`; the `wandb` extra).

One W&B run per run directory: its id is the run directory's own (run.json), so a `--resume` continues the same
W&B run; its name is the directory's name, its files go under `<run dir>/wandb/`, its group is the experiment
grid the run is a cell of (`train.experiment`), and every metric is plotted against `env_steps`. What would stop
the run later (no package, no API key in online mode, a bad WANDB_MODE) is a UserError before training, and W&B
never prompts: a training command must not wait for input. WANDB_MODE=offline keeps the run on disk
(`wandb sync` uploads it later).
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

from core.errors import UserError, describe_exception
from core.paths import install_hint

STEP = "env_steps"  # the x axis of every metric
DEFAULT_PROJECT = "concerto"
LOCAL_MODES = ("offline", "dryrun", "disabled")  # modes that need no API key


def import_wandb() -> ModuleType:
    """The wandb package, or a UserError saying how to install it."""
    try:
        import wandb
    except ImportError:
        raise UserError(f"train.loggers includes wandb, which is not installed: {install_hint('wandb')} "
                        "(or drop wandb from train.loggers)") from None
    return wandb


class WandbBackend:
    """A W&B run receiving the run's config, scalars and recorded episodes (core.logger.LogBackend)."""

    def __init__(self, run_dir: Path, run_id: str, project: str | None, group: str | None) -> None:
        wandb = self.wandb = import_wandb()
        try:
            settings = wandb.setup(wandb.Settings(silent=True)).settings  # env vars and settings files
        except Exception as exc:  # a bad WANDB_MODE or other WANDB_* value
            raise UserError(f"wandb rejects its settings: {_first_line(exc)}") from None
        if settings.mode not in LOCAL_MODES and not wandb.login(prompt=False, verify=False):
            raise UserError("train.loggers includes wandb, which is online but not logged in: run `wandb login`, "
                            "set WANDB_API_KEY, or set WANDB_MODE=offline (upload later with `wandb sync`)")
        try:
            self.run = wandb.init(
                project=project or os.environ.get("WANDB_PROJECT") or DEFAULT_PROJECT, name=run_dir.name,
                dir=str(run_dir), id=run_id, resume="allow", group=group,
                settings=wandb.Settings(silent=True, console="off"))  # console="off": stdout/stderr stay ours
        except Exception as exc:
            raise UserError(f"wandb could not start its run: {describe_exception(exc)}") from None
        self.run.define_metric(STEP)
        self.run.define_metric("*", step_metric=STEP)
        if settings.mode in ("offline", "dryrun"):
            files = Path(self.run.dir).parent
            print(f"W&B run offline (upload it with: wandb sync {files})", flush=True)
        elif settings.mode != "disabled":
            print(f"W&B run: {self.run.url}", flush=True)

    def log_config(self, config: Mapping[str, Any]) -> None:
        self.run.config.update(dict(config), allow_val_change=True)  # a resume may change the budget

    def log_scalars(self, metrics: Mapping[str, float], step: int) -> None:
        self.run.log({STEP: step, **metrics})

    def log_animation(self, tag: str, gif: Path, height: int, width: int, step: int) -> None:
        self.run.log({STEP: step, tag: self.wandb.Video(str(gif), format="gif")})

    def flush(self) -> None:
        pass  # run.log hands each row to W&B's service process at once

    def close(self, failed: bool) -> None:
        try:
            self.run.finish(exit_code=1 if failed else 0)
        except Exception as exc:  # the run's own outcome stands; its W&B copy is incomplete
            print(f"note: wandb could not finish its run: {describe_exception(exc)}", flush=True)


def _first_line(exc: BaseException) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return " ".join(lines[:3]) or type(exc).__name__
