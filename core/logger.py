"""Run logging: a long-format metrics.csv (step, wall_s, tag, value) and evaluations.jsonl (one line per
evaluation: env steps and every episode's return, length and win), always; and the backends `train.loggers`
selects (TensorBoard here, Weights & Biases in core.wandb_logger), each given the same calls."""
from __future__ import annotations

import csv
import json
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from tensorboard.compat.proto.summary_pb2 import Summary
from torch.utils.tensorboard import SummaryWriter
from torch.utils.tensorboard.summary import hparams

from core.run_config import LoggerName


class LogBackend(Protocol):
    """Where a run's scalars, config and videos go besides metrics.csv. Steps are env steps."""

    def log_config(self, config: Mapping[str, Any]) -> None:
        """The run's resolved config (config.yaml's content), once per start or resume."""
        ...

    def log_scalars(self, metrics: Mapping[str, float], step: int) -> None: ...

    def log_animation(self, tag: str, gif: Path, height: int, width: int, step: int) -> None:
        """A recorded episode, as the GIF file `gif` (height x width frames)."""
        ...

    def flush(self) -> None: ...

    def close(self, failed: bool) -> None: ...


class TensorBoardBackend:
    """TensorBoard event files in the run directory."""

    def __init__(self, run_dir: Path) -> None:
        self.writer = SummaryWriter(log_dir=str(run_dir))

    def log_config(self, config: Mapping[str, Any]) -> None:
        """The algorithm's hyperparameters (and the env copies and seed) in the HParams tab."""
        params = {"algo": config["algo_name"], "env": config["env_name"],
                  **{f"algo.{k}": v for k, v in config["algo"].items()},
                  "train.n_envs": config["train"]["n_envs"], "train.seed": config["train"]["seed"]}
        flat = {k: v if isinstance(v, (int, float, str, bool)) else str(v) for k, v in params.items()}
        for summary in hparams(flat, {"eval/return_mean": 0.0}):
            # torch types file_writer as None (its __init__ value before _get_file_writer sets it)
            self.writer.file_writer.add_summary(summary)  # type: ignore[attr-defined]

    def log_scalars(self, metrics: Mapping[str, float], step: int) -> None:
        for tag, value in metrics.items():
            self.writer.add_scalar(tag, value, step)

    def log_animation(self, tag: str, gif: Path, height: int, width: int, step: int) -> None:
        """An image summary (TensorBoard's Images tab plays it). Written directly: torch's add_video needs
        moviepy.editor, which moviepy 2 removed, and then writes nothing."""
        image = Summary.Image(height=height, width=width, colorspace=3, encoded_image_string=gif.read_bytes())
        summary = Summary(value=[Summary.Value(tag=tag, image=image)])
        self.writer.file_writer.add_summary(summary, step)  # type: ignore[attr-defined]  # as in log_config

    def flush(self) -> None:
        self.writer.flush()

    def close(self, failed: bool) -> None:
        self.writer.close()


def open_backends(names: Sequence[LoggerName], run_dir: Path, run_id: str, project: str | None,
                  group: str | None) -> list[LogBackend]:
    """The backends `names` selects; W&B's run is `run_id` (resumed where it exists) in `project`, in `group`.
    Raises core.errors.UserError when W&B is selected and not installed or not logged in."""
    opened: list[LogBackend] = []
    try:
        for name in names:
            if name == "tensorboard":
                opened.append(TensorBoardBackend(run_dir))
            else:
                from core.wandb_logger import WandbBackend

                opened.append(WandbBackend(run_dir, run_id, project, group))
    except BaseException:
        for backend in opened:
            backend.close(failed=True)
        raise
    return opened


class RunLogger:
    """Writes scalars to metrics.csv in `run_dir` and to each backend (default: TensorBoard).

    Tags follow the project's grouping: train/..., eval/..., loss/..., perf/..., schedule/...
    """

    def __init__(self, run_dir: str | Path, backends: Sequence[LogBackend] | None = None) -> None:
        self.run_dir = Path(run_dir)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        csv_path = self.run_dir / "metrics.csv"
        new_file = not csv_path.exists()
        self._csv_file = csv_path.open("a", newline="")
        self._csv = csv.writer(self._csv_file)
        if new_file:
            self._csv.writerow(["step", "wall_s", "tag", "value"])
        self._start = time.perf_counter()
        self.backends = list(backends) if backends is not None else [TensorBoardBackend(self.run_dir)]

    def log_scalars(self, metrics: Mapping[str, float], step: int) -> None:
        """Log every scalar in `metrics` at `step` (env steps); NaN and inf too, so a curve never just stops."""
        wall = time.perf_counter() - self._start
        values = {tag: float(value) for tag, value in metrics.items() if value is not None}
        for tag, value in values.items():
            self._csv.writerow([step, f"{wall:.3f}", tag, value])
        self._csv_file.flush()
        for backend in self.backends:
            backend.log_scalars(values, step)

    def log_evaluation(self, episodes: Mapping[str, list[float]], step: int) -> None:
        """Append one evaluation's per-episode values at `step` (env steps) to evaluations.jsonl."""
        with (self.run_dir / "evaluations.jsonl").open("a") as file:
            file.write(json.dumps({"env_steps": step, **episodes}) + "\n")

    def log_animation(self, tag: str, gif: Path, height: int, width: int, step: int) -> None:
        """A recorded episode (the GIF file `gif`) at `step`."""
        for backend in self.backends:
            backend.log_animation(tag, gif, height, width, step)

    def log_config(self, config: Mapping[str, Any]) -> None:
        """The run's resolved config: TensorBoard's HParams tab, W&B's run config."""
        for backend in self.backends:
            backend.log_config(config)

    def flush(self) -> None:
        self._csv_file.flush()
        for backend in self.backends:
            backend.flush()

    def close(self, failed: bool = False) -> None:
        """Close the files and end each backend's run (`failed`: W&B marks it so)."""
        self._csv_file.close()
        for backend in self.backends:
            backend.close(failed)
