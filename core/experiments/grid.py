"""An experiment's grid: (algorithm, env, seed) cells, each an ordinary training run in its own directory.

Layout under the experiment directory `out`:

    out/experiment.yaml                          the grid (written by the runner, checked on a rerun)
    out/cells/<env>/<algo>/seed<k>/              one cell
        run/<env>/<algo>/<time>-seed<k>/         its run directory (config.yaml, logs, checkpoints,
                                                 evaluations.jsonl), as any train_*.py run writes it
        summary.json, log.txt, status.json       the run's summary, its output, the cell's state
"""
from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from core.checkpoint import checkpoint_dirs
from core.errors import UserError
from core.paths import shipped_config
from core.run_config import env_dir_name

CellState = Literal["new", "interrupted", "done", "failed"]


@dataclass(frozen=True)
class Cell:
    """One training run of the grid."""

    algo: str
    env: str
    seed: int

    @property
    def name(self) -> str:
        return f"{self.algo}/{self.env}/seed{self.seed}"

    def directory(self, out: Path) -> Path:
        return out / "cells" / env_dir_name(self.env) / self.algo / f"seed{self.seed}"


@dataclass
class ExperimentSpec:
    """What to run: every algorithm on every env for every seed, `steps` env steps each. `overrides` (key=value)
    apply to every cell, `algo_overrides[algo]` after them to that algorithm's cells. `train_config`, if given,
    is each cell's training config file (`--config`), a path in which `{algo}` and `{env}` stand for the cell's
    (configs/reference/{algo}_{env}.yaml). Raises UserError for an empty or repeated name or seed, a budget
    below 1, or a cell whose training config file does not exist."""

    algos: list[str]
    envs: list[str]
    seeds: list[int]
    steps: int
    overrides: list[str] = field(default_factory=list)
    algo_overrides: dict[str, list[str]] = field(default_factory=dict)
    train_config: str | None = None

    def __post_init__(self) -> None:
        self.algos, self.envs = _unique(self.algos, "--algos"), _unique(self.envs, "--envs")
        self.seeds = _unique(self.seeds, "--seeds")
        if any(isinstance(s, bool) or not isinstance(s, int) or s < 0 for s in self.seeds):
            raise UserError(f"seeds must be non-negative integers, got {self.seeds}")
        if isinstance(self.steps, bool) or not isinstance(self.steps, int) or self.steps < 1:
            raise UserError(f"--steps must be a positive integer, got {self.steps!r}")
        self.overrides = list(self.overrides)
        self.algo_overrides = {a: list(o) for a, o in self.algo_overrides.items()}
        missing = [path for cell in self.cells() if (path := self.config_file(cell)) and not path.is_file()]
        if missing:
            raise UserError(f"training config {missing[0]} (from {self.train_config}) is not a file")

    def config_file(self, cell: Cell) -> Path | None:
        """The cell's training config file (`train_config` filled in), or None."""
        if self.train_config is None:
            return None
        try:
            return shipped_config(self.train_config.format(algo=cell.algo, env=cell.env))
        except (KeyError, IndexError, ValueError, AttributeError, TypeError) as exc:
            raise UserError(f"train_config {self.train_config!r}: only {{algo}} and {{env}} may be filled in "
                            f"({exc})") from None

    def cells(self) -> list[Cell]:
        return [Cell(a, e, s) for e in self.envs for a in self.algos for s in self.seeds]

    def cell_overrides(self, cell: Cell) -> list[str]:
        return [*self.overrides, *self.algo_overrides.get(cell.algo, [])]

    def to_dict(self) -> dict[str, Any]:
        grid = {"algos": self.algos, "envs": self.envs, "seeds": self.seeds, "steps": self.steps,
                "overrides": self.overrides, "algo_overrides": self.algo_overrides}
        return grid if self.train_config is None else {**grid, "train_config": self.train_config}


def _unique(values: Iterable[Any], flag: str) -> list[Any]:
    items = list(values)
    if not items:
        raise UserError(f"{flag} is empty")
    repeated = [v for i, v in enumerate(items) if v in items[:i]]
    if repeated:
        raise UserError(f"{flag} gives {repeated[0]!r} twice")
    return items


def parse_seeds(text: str) -> list[int]:
    """`--seeds 5` means seeds 0-4; `--seeds 3,7,9` lists them, and `--seeds 7,` is seed 7 alone."""
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if not parts or not all(p.isdigit() for p in parts):
        raise ValueError(f"--seeds must be a count (5: seeds 0-4) or a list (3,7,9; one seed: 7,), got {text!r}")
    if len(parts) == 1 and "," not in text:
        count = int(parts[0])
        if count < 1:
            raise ValueError("--seeds must be at least 1")
        return list(range(count))
    seeds = [int(p) for p in parts]
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"--seeds lists a seed twice: {text}")
    return seeds


def run_dir(cell_dir: Path) -> Path | None:
    """The cell's run directory, once its run has created it: the newest with a checkpoint, else the newest (a
    resume whose checkpoint had left its run continues in a second one, which may fail before checkpointing)."""
    runs = [path.parent for path in sorted((cell_dir / "run").glob("*/*/*/config.yaml"))]
    newest = [run for run in runs if checkpoint_dirs(run)] or runs
    return newest[-1] if newest else None


def read_summary(cell_dir: Path) -> dict[str, Any] | None:
    """The run's summary, if it finished (not stopped by a signal)."""
    try:
        summary = json.loads((cell_dir / "summary.json").read_text())
    except (OSError, ValueError):
        return None
    return summary if isinstance(summary, dict) and summary.get("signal") is None else None


def cell_state(cell_dir: Path) -> CellState:
    """done: finished; failed: its last attempt failed (a rerun tries again); interrupted: stopped with a
    checkpoint to resume from; new: nothing to continue."""
    if read_summary(cell_dir) is not None:
        return "done"
    try:
        status = json.loads((cell_dir / "status.json").read_text())
    except (OSError, ValueError):
        status = {}
    if status.get("state") == "failed":
        return "failed"
    run = run_dir(cell_dir)
    return "interrupted" if run is not None and checkpoint_dirs(run) else "new"
