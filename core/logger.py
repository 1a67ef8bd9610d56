"""Run logging: TensorBoard event files, a long-format metrics.csv (step, wall_s, tag, value) and
evaluations.jsonl (one line per evaluation: env steps and every episode's return, length and win)."""
from __future__ import annotations

import csv
import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tensorboard.compat.proto.summary_pb2 import Summary
from torch.utils.tensorboard import SummaryWriter
from torch.utils.tensorboard.summary import hparams


class RunLogger:
    """Writes scalars to TensorBoard and metrics.csv in `run_dir`.

    Tags follow the project's grouping: train/..., eval/..., loss/..., perf/..., schedule/...
    """

    def __init__(self, run_dir: str | Path) -> None:
        self.run_dir = Path(run_dir)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.writer = SummaryWriter(log_dir=str(self.run_dir))
        csv_path = self.run_dir / "metrics.csv"
        new_file = not csv_path.exists()
        self._csv_file = csv_path.open("a", newline="")
        self._csv = csv.writer(self._csv_file)
        if new_file:
            self._csv.writerow(["step", "wall_s", "tag", "value"])
        self._start = time.perf_counter()

    def log_scalars(self, metrics: Mapping[str, float], step: int) -> None:
        """Log every scalar in `metrics` at `step` (env steps); NaN and inf too, so a curve never just stops."""
        wall = time.perf_counter() - self._start
        for tag, value in metrics.items():
            if value is None:
                continue
            value = float(value)
            self.writer.add_scalar(tag, value, step)
            self._csv.writerow([step, f"{wall:.3f}", tag, value])
        self._csv_file.flush()

    def log_evaluation(self, episodes: Mapping[str, list[float]], step: int) -> None:
        """Append one evaluation's per-episode values at `step` (env steps) to evaluations.jsonl."""
        with (self.run_dir / "evaluations.jsonl").open("a") as file:
            file.write(json.dumps({"env_steps": step, **episodes}) + "\n")

    def log_animation(self, tag: str, gif: bytes, height: int, width: int, step: int) -> None:
        """An animated GIF as an image summary at `step` (TensorBoard's Images tab plays it). Written directly:
        torch's add_video needs moviepy.editor, which moviepy 2 removed, and then writes nothing."""
        image = Summary.Image(height=height, width=width, colorspace=3, encoded_image_string=gif)
        summary = Summary(value=[Summary.Value(tag=tag, image=image)])
        self.writer.file_writer.add_summary(summary, step)  # type: ignore[attr-defined]  # as in log_hparams

    def log_hparams(self, params: Mapping[str, Any], metrics: Mapping[str, float]) -> None:
        """Record hyperparameters (scalars and strings) in TensorBoard's HParams tab, in this run's file."""
        flat = {k: v if isinstance(v, (int, float, str, bool)) else str(v) for k, v in params.items()}
        for summary in hparams(flat, dict(metrics)):
            # torch types file_writer as None (its __init__ value before _get_file_writer sets it)
            self.writer.file_writer.add_summary(summary)  # type: ignore[attr-defined]

    def flush(self) -> None:
        self.writer.flush()
        self._csv_file.flush()

    def close(self) -> None:
        self.writer.close()
        self._csv_file.close()
