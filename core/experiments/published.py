"""Published learning results beside an experiment's: the points a paper's curve or table gives (env steps,
score), the steps it took to reach a score, and how the experiment's runs compare (`--published FILE`).

The file is YAML keyed by env and algorithm, as the grid names them; scores in the metric's own units as the
report prints them (win rate in %):

    smac_MMM2:
      mappo:
        source: HARL assets/smac_learning_curve.jpg, read off the curve (about ±5 points, ±0.2M steps)
        points: [[1000000, 3], [2000000, 40]]     # [env steps, score]
        steps_to: {50: 2300000, 80: null}          # null: not reached within the published curve

`published_section` writes the comparison table of summary.md; `overlay` draws the points on a learning-curve
panel.
"""
from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from core.config import load_yaml
from core.errors import ConfigError, UserError
from core.experiments.results import env_task, evaluation_curve

if TYPE_CHECKING:
    from matplotlib.axes import Axes

Results = dict[str, Any]
TaskKey = tuple[str, str]
THRESHOLDS = (50.0, 80.0)  # scores whose first crossing the comparison reports
CHECKPOINTS = (1_000_000, 2_000_000)  # env steps at which it reports the score


@dataclass(frozen=True)
class PublishedCurve:
    """One algorithm's published result on one task."""

    task: TaskKey
    algo: str
    source: str
    points: list[tuple[float, float]] = field(default_factory=list)  # (env steps, score)
    steps_to: dict[float, float | None] = field(default_factory=dict)  # score -> env steps (None: never)


def load_published(path: str | os.PathLike[str]) -> list[PublishedCurve]:
    """The curves of a published-results file (see the module docstring); one UserError line for a bad one."""
    try:
        data = load_yaml(Path(path))
    except ConfigError as exc:
        raise UserError(str(exc)) from None
    curves = []
    for env, by_algo in data.items():
        if not isinstance(by_algo, Mapping):
            raise UserError(f"{path}: {env} must map algorithms to published results")
        for algo, entry in by_algo.items():
            where = f"{path}: {env}.{algo}"
            if not isinstance(entry, Mapping) or not isinstance(entry.get("source"), str):
                raise UserError(f"{where} needs a source (where the numbers were read)")
            unknown = sorted(set(entry) - {"source", "points", "steps_to"})
            if unknown:
                raise UserError(f"{where}: unknown key {unknown[0]}; valid keys: points, source, steps_to")
            try:
                points = [(float(s), float(v)) for s, v in entry.get("points") or []]
                steps_to = {float(t): None if s is None else float(s) for t, s in dict(entry.get("steps_to") or {})
                            .items()}
            except (TypeError, ValueError):
                raise UserError(f"{where}: points are [env steps, score] pairs and steps_to maps a score to env "
                                f"steps or null") from None
            curves.append(PublishedCurve(env_task(str(env)), str(algo), entry["source"], sorted(points), steps_to))
    return curves


def first_crossing(evaluations: Sequence[tuple[float, float]], score: float) -> float | None:
    """The env steps of the first evaluation at or above `score`; None if none is."""
    return next((steps for steps, value in evaluations if value >= score), None)


def score_at(evaluations: Sequence[tuple[float, float]], steps: float) -> float | None:
    """The score of the last evaluation at or before `steps`, if the run got within 5% of `steps`."""
    before = [value for at, value in evaluations if at <= steps]
    reached = bool(evaluations) and evaluations[-1][0] >= 0.95 * steps
    return before[-1] if before and reached else None


def _spread(values: Sequence[float | None], fmt: str, none: str) -> str:
    """'median (min-max), k of n' over the runs that have a value; `none` where none has."""
    have = sorted(v for v in values if v is not None)
    if not have:
        return none
    span = f" ({fmt.format(have[0])}-{fmt.format(have[-1])})" if len(have) > 1 else ""
    return f"{fmt.format(float(np.median(have)))}{span}, {len(have)} of {len(values)}"


def _millions(value: float | None) -> str:
    return "not within the curve" if value is None else f"{value / 1e6:.2g}M"


def published_section(results: Results, published: Sequence[PublishedCurve], metric: str = "win_rate",
                      scale: float = 100.0) -> list[str]:
    """summary.md's table of the experiment beside the published results, per task and algorithm that both
    have (a published algorithm also stands beside its labelled variants, `<algo>-<label>`): env steps to reach
    each of THRESHOLDS (median over the runs that reached it, min-max, how many did) and the score at each of
    CHECKPOINTS (median, min-max over runs that got there)."""
    header = ["env", "task", "algorithm", "runs"]
    unit = "%" if metric == "win_rate" else ""
    header += [f"steps to {t:g}{unit} (ours / published)" for t in THRESHOLDS]
    header += [f"at {c / 1e6:g}M (ours / published)" for c in CHECKPOINTS]
    rows, shown = [], []
    for curve in published:
        env, task = curve.task
        by_algo = results.get(env, {}).get(task, {})
        for algo in sorted(a for a in by_algo if a == curve.algo or a.startswith(f"{curve.algo}-")):
            evaluations = [[(steps, value * scale) for steps, value in evaluation_curve(run, metric)]
                           for run in by_algo[algo].values()]
            row = [env, task, algo, str(len(evaluations))]
            for threshold in THRESHOLDS:
                ours = _spread([None if (s := first_crossing(e, threshold)) is None else s / 1e6
                                for e in evaluations], "{:.2f}M", f"none of {len(evaluations)}")
                theirs = _millions(curve.steps_to[threshold]) if threshold in curve.steps_to else "-"
                row.append(f"{ours} / {theirs}")
            for checkpoint in CHECKPOINTS:
                ours = _spread([score_at(e, checkpoint) for e in evaluations], "{:.0f}", "not run that far")
                published_score = score_at(curve.points, checkpoint) if curve.points else None
                row.append(f"{ours} / {'-' if published_score is None else f'{published_score:.0f}'}")
            rows.append(row)
            shown += [curve] * (curve not in shown)
    if not rows:
        return []
    lines = ["## Beside published results", "",
             "Steps to a score: the env steps of a run's first evaluation at or above it (median over the runs that "
             "reached it, min-max, how many did). Score at a budget: a run's last evaluation at or before it. "
             "Published values as their source gives them:", ""]
    lines += [f"- {c.task[0]} / {c.task[1]}, {c.algo}: {c.source}" for c in shown]
    lines += ["", "| " + " | ".join(header) + " |", "| " + " | ".join(["---"] * 3 + ["--:"] * (len(header) - 3)) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return [*lines, ""]


MARKERS = ("D", "s", "^", "v", "P")  # one per published algorithm on a panel


def overlay(ax: Axes, task: TaskKey, published: Sequence[PublishedCurve], color_of: Mapping[str, Any]) -> None:
    """Draw the published points of `task` on a learning-curve panel, for the algorithms the panel shows (by
    name, or a labelled variant `<algo>-<label>` of it; `color_of` maps the panel's algorithms to their colours):
    dashed lines with black-edged markers, one marker per algorithm, in its colour where the panel has it under
    that very name, else black; labelled in the panel's legend."""
    curves = [c for c in published if c.task == task and c.points
              and any(a == c.algo or a.startswith(f"{c.algo}-") for a in color_of)]
    for curve, marker in zip(curves, MARKERS, strict=False):
        steps, values = zip(*curve.points, strict=True)
        ax.plot(steps, values, linestyle="--", marker=marker, markeredgecolor="black",
                color=color_of.get(curve.algo, "black"), label=f"{curve.algo}, published")
    if curves:
        ax.legend(fontsize="small", loc="best")
