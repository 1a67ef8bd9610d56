"""Reports on experiments in marl-eval's raw-data format (results.json): each algorithm's final scores per task
summarised with rliable (IQM, mean, median with 95% stratified-bootstrap CIs, probability of improvement), written
as summary.csv and summary.md, and drawn as learning curves, final-score intervals and performance profiles.

rliable's bootstraps draw from numpy's global RNG (its `random_state` argument is never used by its resampling),
so each bootstrap here runs inside `_seeded`, which seeds that RNG and restores its state afterwards: a report is
reproducible and the caller's random stream is untouched (one report at a time per process: not thread-safe).
Every estimate is seeded on its own, so adding an algorithm leaves the others' intervals unchanged.
"""
from __future__ import annotations

import csv
import json
import math
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from itertools import combinations
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import numpy.typing as npt

from core.errors import MissingDependencyError, UserError
from core.experiments.published import PublishedCurve, overlay, published_section
from core.experiments.results import evaluation_curve
from core.paths import install_hint

if TYPE_CHECKING:
    from matplotlib.axes import Axes

try:  # the optional `experiments` extra (rliable needs matplotlib and scipy); _require() says what to install
    import scipy.stats
    from matplotlib import colormaps
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch
    from matplotlib.ticker import EngFormatter
    from rliable import library as rly
    from rliable import metrics as rl_metrics
except ImportError:
    rly = rl_metrics = None

FloatArray = npt.NDArray[np.float64]
Results = dict[str, Any]  # {env: {task: {algo: {"run_<seed>": {"step_<i>": {...}, "absolute_metrics": {...}}}}}}
TaskKey = tuple[str, str]
Color = tuple[float, float, float, float]

METRIC_LABELS = {"win_rate": "win rate (%)", "return": "episode return"}
PERCENT_METRICS = frozenset({"win_rate"})
STATISTICS = ("IQM", "mean", "median")
CONFIDENCE = 0.95
RECENT_EVALS = 3  # a run's stability: its lowest score over its last this many evaluations


class ResultsError(UserError, ValueError):
    """results.json files that cannot be read or merged."""


class Estimate(NamedTuple):
    point: float
    lo: float
    hi: float


class ScoreSummary(NamedTuple):
    """One algorithm's final scores on one task: statistics over runs, with 95% bootstrap CIs but for min/max."""

    env: str
    task: str
    algo: str
    metric: str
    n_runs: int
    iqm: Estimate
    mean: Estimate
    median: Estimate
    min: float
    max: float
    recent_min: float  # the lowest score of any run over its last RECENT_EVALS evaluations
    n_unfinished: int  # runs scored by their last evaluation because they have not finished (yet)


class RunScore(NamedTuple):
    """One run's final score and its lowest over its last RECENT_EVALS evaluations (a late collapse shows);
    `unfinished_at` is the env step of an unfinished run's last evaluation, its score so far (None: finished)."""

    run: str
    final: float
    recent_min: float
    unfinished_at: int | None = None


class Improvement(NamedTuple):
    """P(a run of `algo_x` scores above a run of `algo_y`, ties counting half) on one task, with its 95% CI."""

    env: str
    task: str
    metric: str
    algo_x: str
    algo_y: str
    probability: Estimate


# ---------------------------------------------------------------- loading


def load_results(dirs: Iterable[str | os.PathLike[str]], labels: Sequence[str | None] = ()) -> Results:
    """Merge the results.json of several experiment directories (or the files themselves). `labels[i]`, where
    given, names the algorithms of `dirs[i]` in the merged results: the label itself if it holds one algorithm,
    else `<algo>-<label>` (so that variants of one algorithm can be compared). A run found twice (same env, task,
    algorithm and run) is an error: one of the two would otherwise be dropped unseen."""
    merged: Results = {}
    origin: dict[tuple[str, ...], Path] = {}
    entries = list(dirs)
    for entry, label in zip(entries, [*labels, *[None] * (len(entries) - len(labels))], strict=True):
        path = Path(entry)
        if path.is_dir():
            path = path / "results.json"
        try:
            data = json.loads(path.read_text())
        except OSError as exc:
            raise ResultsError(f"cannot read {path}: {exc.strerror or exc}") from None
        except ValueError as exc:
            raise ResultsError(f"{path} is not valid JSON: {exc}") from None
        found = [(env, task, algo, runs) for env, tasks in _children(data, path, ())
                 for task, algos in _children(tasks, path, (env,))
                 for algo, runs in _children(algos, path, (env, task))]
        several = len({algo for _, _, algo, _ in found}) > 1
        for env, task, algo, runs in found:
            name = algo if label is None else f"{algo}-{label}" if several else label
            merged_runs = merged.setdefault(env, {}).setdefault(task, {}).setdefault(name, {})
            for run, record in _children(runs, path, (env, task, algo)):
                key = (env, task, name, run)
                if key in origin:
                    raise ResultsError(f"{path}: {'/'.join(key)} is also in {origin[key]}; each run must come "
                                       "from one experiment (label experiments apart with DIR=LABEL)")
                origin[key] = path
                merged_runs[run] = record
    return merged


def _children(node: object, path: Path, where: tuple[str, ...]) -> Iterator[tuple[str, Any]]:
    """A results.json level's (key, value) pairs; anything but an object there is the user's error."""
    if not isinstance(node, dict):
        levels = ("env", "task", "algorithm", "run")
        raise ResultsError(f"{path}: {'/'.join(where) or 'the top level'} should map {levels[len(where)]} names "
                           f"to objects, got {type(node).__name__}")
    yield from node.items()


def _runs(results: Results) -> Iterator[tuple[str, str, str, list[tuple[str, Mapping[str, Any]]]]]:
    """(env, task, algorithm, its (name, run) pairs) in sorted order, runs by seed: the bootstraps see the same
    order always."""

    def run_order(name: str) -> tuple[int, int, str]:
        seed = name.removeprefix("run_")
        return (0, int(seed), "") if seed.isdigit() else (1, 0, name)

    for env in sorted(results):
        for task in sorted(results[env]):
            for algo in sorted(results[env][task]):
                runs = results[env][task][algo]
                yield env, task, algo, [(name, runs[name]) for name in sorted(runs, key=run_order)]


def _steps(run: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """A run's evaluations in step order."""
    names = [name for name in run if name.startswith("step_")]
    return [run[name] for name in sorted(names, key=lambda name: int(name.removeprefix("step_")))]


def _episode_mean(record: Mapping[str, Any] | None, metric: str) -> float | None:
    """The mean of `metric` over an evaluation's episodes; None where the evaluation lacks it."""
    values = record.get(metric) if record else None
    return float(np.mean(values)) if values else None


def run_scores(results: Results, metric: str) -> dict[TaskKey, dict[str, list[RunScore]]]:
    """Per (env, task) and algorithm, each run's mean of `metric` over its final evaluation's episodes
    (`absolute_metrics`, else its last evaluation: an unfinished run) and its lowest such mean over its last
    RECENT_EVALS evaluations. Runs without the metric are left out."""
    scores: dict[TaskKey, dict[str, list[RunScore]]] = {}
    for env, task, algo, runs in _runs(results):
        rows = []
        for name, run in runs:
            steps = _steps(run)
            finished = bool(run.get("absolute_metrics"))
            final = _episode_mean(run["absolute_metrics"] if finished else (steps[-1] if steps else None), metric)
            if final is not None:
                recent = [v for step in steps[-RECENT_EVALS:] if (v := _episode_mean(step, metric)) is not None]
                unfinished_at = None if finished else int(steps[-1].get("step_count", 0))
                rows.append(RunScore(name, final, min([final, *recent]), unfinished_at))
        if rows:
            scores.setdefault((env, task), {})[algo] = rows
    return scores


def final_scores(results: Results, metric: str) -> dict[TaskKey, dict[str, FloatArray]]:
    """Per (env, task) and algorithm, each run's final score (see run_scores)."""
    return {key: {algo: np.array([r.final for r in rows], dtype=np.float64) for algo, rows in by_algo.items()}
            for key, by_algo in run_scores(results, metric).items()}


def learning_curves(results: Results, metric: str) -> dict[TaskKey, dict[str, tuple[FloatArray, FloatArray]]]:
    """Per (env, task) and algorithm: the env steps of each evaluation (mean over runs) and every run's mean
    `metric` per evaluation [n_runs, n_evals], cut to the evaluations that every run has reached."""
    curves: dict[TaskKey, dict[str, tuple[FloatArray, FloatArray]]] = {}
    for env, task, algo, runs in _runs(results):
        points = []
        for _, run in runs:
            run_points = evaluation_curve(run, metric)
            if run_points:
                points.append(run_points)
        if points:
            n = min(map(len, points))
            table = np.array([run_points[:n] for run_points in points], dtype=np.float64)  # [runs, evals, 2]
            curves.setdefault((env, task), {})[algo] = (table[:, :, 0].mean(axis=0), table[:, :, 1])
    return curves


# ---------------------------------------------------------------- statistics


def _require() -> None:
    if rly is None:
        raise MissingDependencyError(f"experiment reports need rliable and matplotlib: {install_hint('experiments')}")


@contextmanager
def _seeded(seed: int) -> Iterator[None]:
    """numpy's global RNG, which rliable resamples from, seeded with `seed` inside and restored after."""
    state = np.random.get_state()
    np.random.seed(seed)
    try:
        yield
    finally:
        np.random.set_state(state)


def bootstrap(scores: FloatArray | list[FloatArray], func: Callable[..., Any], reps: int = 2000,
              seed: int = 0) -> tuple[FloatArray, FloatArray]:
    """rliable's point estimates `func(scores)` [k] and their 95% percentile stratified-bootstrap CIs [2, k]
    (lower, upper). `scores` is [n_runs, n_tasks] (tasks are the strata), or a list of such, resampled independently."""
    _require()
    with _seeded(seed):
        points, intervals = rly.get_interval_estimates({"scores": scores}, func, reps=reps,
                                                       confidence_interval_size=CONFIDENCE)
    point = np.atleast_1d(np.asarray(points["scores"], dtype=np.float64))
    return point, np.asarray(intervals["scores"], dtype=np.float64).reshape(2, -1)


def aggregates(scores: FloatArray) -> FloatArray:
    """IQM, mean and median of a task's run scores [n_runs, 1]. The median is over runs: rliable's
    aggregate_median is the median over tasks of per-task means, which for one task is just the mean."""
    return np.array([rl_metrics.aggregate_iqm(scores), rl_metrics.aggregate_mean(scores), np.median(scores)])


def summarize(results: Results, metric: str, reps: int = 2000, seed: int = 0) -> list[ScoreSummary]:
    """IQM, mean and median over runs of each algorithm's final `metric` per task with 95% CIs, and min and max."""
    rows = []
    for (env, task), by_algo in run_scores(results, metric).items():
        for algo, runs in by_algo.items():
            scores = np.array([r.final for r in runs], dtype=np.float64)
            points, intervals = bootstrap(scores[:, None], aggregates, reps, seed)
            iqm, mean, median = (Estimate(float(p), float(lo), float(hi))
                                 for p, lo, hi in zip(points, *intervals, strict=True))
            rows.append(ScoreSummary(env, task, algo, metric, len(scores), iqm, mean, median,
                                     float(scores.min()), float(scores.max()), min(r.recent_min for r in runs),
                                     sum(r.unfinished_at is not None for r in runs)))
    return rows


def probability_of_improvement(scores_x: FloatArray, scores_y: FloatArray) -> float:
    """rliable's `metrics.probability_of_improvement` (P(X > Y) per task, ties counting half, averaged over tasks;
    scores [n_runs, n_tasks]) counted directly instead of by scipy's Mann-Whitney U: equal to it (tested), and
    about 20 times faster, which matters as the bootstrap calls it `reps` times for every pair of algorithms."""
    x, y = scores_x[:, None, :], scores_y[None, :, :]
    wins = np.sum(x > y, axis=(0, 1)) + 0.5 * np.sum(x == y, axis=(0, 1))  # counted: identical runs give 0.5 exactly
    return float(np.mean(wins / (len(scores_x) * len(scores_y))))


def probabilities_of_improvement(results: Results, metric: str, reps: int = 2000,
                                 seed: int = 0) -> list[Improvement]:
    """The probability of improvement for every ordered pair of algorithms on each task, with 95% CIs from
    resampling both algorithms' runs independently. P(Y > X) is 1 - P(X > Y) on the same resamples, so each
    unordered pair is bootstrapped once."""
    rows = []
    for (env, task), by_algo in final_scores(results, metric).items():
        for x, y in combinations(by_algo, 2):
            point, ((lo,), (hi,)) = bootstrap([by_algo[x][:, None], by_algo[y][:, None]],
                                              probability_of_improvement, reps, seed)
            p = float(point[0])
            rows.append(Improvement(env, task, metric, x, y, Estimate(p, float(lo), float(hi))))
            rows.append(Improvement(env, task, metric, y, x, Estimate(1 - p, 1 - float(hi), 1 - float(lo))))
    return rows


def primary_metrics(results: Results, metric_order: Sequence[str]) -> dict[TaskKey, str]:
    """Each task's first metric in `metric_order` that it reports (win rate for SMAC, return for CartPole)."""
    return _first_metrics(((key, metric) for metric in metric_order for key in final_scores(results, metric)),
                          metric_order)


def _first_metrics(reported: Iterable[tuple[TaskKey, str]], metric_order: Sequence[str]) -> dict[TaskKey, str]:
    """Each task's first metric in `metric_order` among the (task, metric) pairs `reported`, tasks sorted."""
    primary: dict[TaskKey, str] = {}
    for key, metric in reported:
        if metric in metric_order and (key not in primary
                                       or metric_order.index(metric) < metric_order.index(primary[key])):
            primary[key] = metric
    return dict(sorted(primary.items()))


# ---------------------------------------------------------------- tables


def _label(metric: str) -> str:
    return METRIC_LABELS.get(metric, metric)


def _scale(metric: str) -> float:
    return 100.0 if metric in PERCENT_METRICS else 1.0


def _fmt(value: float, metric: str) -> str:
    return f"{100 * value:.1f}%" if metric in PERCENT_METRICS else f"{value:.2f}"


def _fmt_estimate(estimate: Estimate, metric: str) -> str:
    return f"{_fmt(estimate.point, metric)} [{_fmt(estimate.lo, metric)}, {_fmt(estimate.hi, metric)}]"


def write_summary_csv(summaries: Sequence[ScoreSummary], path: Path) -> Path:
    """One row per env/task/algorithm/metric; values in the metric's own units (win rate as a fraction)."""
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["env", "task", "algo", "metric", "n_runs", "n_unfinished", "iqm", "iqm_lo", "iqm_hi", "mean",
                         "mean_lo", "mean_hi", "median", "median_lo", "median_hi", "min", "max", "recent_min"])
        for s in summaries:
            values = (*s.iqm, *s.mean, *s.median, s.min, s.max, s.recent_min)
            writer.writerow([s.env, s.task, s.algo, s.metric, s.n_runs, s.n_unfinished,
                             *(round(v, 6) for v in values)])
    return path


def protocol_text(protocol: Mapping[str, Any], reps: int, seed: int) -> str:
    """The "Evaluation protocol" paragraph: `interval` (env steps between evaluations), `episodes` (per
    evaluation) and `greedy` (bool) become a sentence, any other key is listed as it is."""
    known = ("interval", "episodes", "greedy")
    how = ""
    if "interval" in protocol:
        interval = protocol["interval"]
        how += f" every {interval:,} env steps" if isinstance(interval, int) else f" every {interval} env steps"
    if "episodes" in protocol:
        how += f" on {protocol['episodes']} episodes"
    if "greedy" in protocol:
        how += " with greedy actions" if protocol["greedy"] else " with actions sampled from the policy"
    sentences = [f"Each run was evaluated{how}."] if how else []
    sentences += [
        "A run's final score is its mean over the episodes of its final evaluation (its last one if it did not "
        f"finish); \"min of last {RECENT_EVALS}\" is the lowest score of any run over its last {RECENT_EVALS} "
        "evaluations (a run that collapses late shows there).",
        "IQM is the mean of the middle 50% of runs (the 25% trimmed mean); the median is over runs; intervals are "
        f"{CONFIDENCE:.0%} percentile stratified-bootstrap confidence intervals over runs ({reps} resamples, "
        f"seed {seed}), computed with rliable.",
        "P(X > Y) is the probability that a run of X scores above a run of Y, ties counting half.",
    ]
    other = [f"{key} = {value}" for key, value in protocol.items() if key not in known]
    if other:
        sentences.append(f"Other settings: {'; '.join(other)}.")
    return " ".join(sentences)


def _md_table(header: Sequence[str], rows: Iterable[Sequence[object]], numeric_from: int) -> list[str]:
    """A Markdown table whose columns from `numeric_from` on are right-aligned."""
    align = ["---" if i < numeric_from else "--:" for i in range(len(header))]
    return [f"| {' | '.join(map(str, row))} |" for row in (header, align, *rows)]


def write_summary_md(summaries: Sequence[ScoreSummary], improvements: Sequence[Improvement],
                     runs: Mapping[str, Mapping[TaskKey, Mapping[str, Sequence[RunScore]]]],
                     protocol: Mapping[str, Any], path: Path, reps: int = 2000, seed: int = 0,
                     beside: Sequence[str] = ()) -> Path:
    """Per metric: a Markdown table of final scores, the probabilities of improvement and every run's scores;
    then `beside` (published_section's lines) and the evaluation protocol. `runs` is run_scores per metric."""
    lines = ["# Experiment report", ""]
    for metric in dict.fromkeys(s.metric for s in summaries):
        rows = [(s.env, s.task, s.algo, f"{s.n_runs} ({s.n_unfinished} unfinished)" if s.n_unfinished else s.n_runs,
                 *(_fmt_estimate(e, metric) for e in (s.iqm, s.mean, s.median)),
                 _fmt(s.min, metric), _fmt(s.max, metric), _fmt(s.recent_min, metric))
                for s in summaries if s.metric == metric]
        lines += [f"## Final {_label(metric)}", "",
                  *_md_table(["env", "task", "algorithm", "runs", *(f"{name} [95% CI]" for name in STATISTICS),
                              "min", "max", f"min of last {RECENT_EVALS}"], rows, numeric_from=3), ""]
        pairs = [(i.env, i.task, i.algo_x, i.algo_y, _fmt_estimate(i.probability, "probability"))
                 for i in improvements if i.metric == metric]
        if pairs:
            lines += [f"### Probability of improvement in {metric.replace('_', ' ')}", "",
                      *_md_table(["env", "task", "X", "Y", "P(X > Y) [95% CI]"], pairs, numeric_from=4), ""]
        per_run = [(env, task, algo, r.run, _fmt(r.final, metric), _fmt(r.recent_min, metric),
                    "finished" if r.unfinished_at is None else f"unfinished: last evaluated at {r.unfinished_at:,}")
                   for (env, task), by_algo in runs.get(metric, {}).items() for algo, rows in by_algo.items()
                   for r in rows]
        lines += [f"### Every run's {metric.replace('_', ' ')}", "",
                  *_md_table(["env", "task", "algorithm", "run", "final", f"min of last {RECENT_EVALS}", "status"],
                             per_run, numeric_from=4), ""]
        if any(s.n_unfinished for s in summaries if s.metric == metric):
            lines += ["An unfinished run (the grid was stopped; rerun its command to continue) counts with its last "
                      "evaluation as its final score.", ""]
    lines += [*beside, "## Evaluation protocol", "", protocol_text(protocol, reps, seed), ""]
    path.write_text("\n".join(lines))
    return path


# ---------------------------------------------------------------- figures


def algo_colors(results: Results) -> dict[str, Color]:
    """One fixed colour per algorithm, by sorted name from a qualitative palette, shared by every figure."""
    algos = sorted({algo for *_, algo, _ in _runs(results)})
    palette = colormaps["tab10" if len(algos) <= 10 else "tab20"]
    return {algo: palette(i % palette.N) for i, algo in enumerate(algos)}


def _grid(n: int, ncols: int, panel: tuple[float, float]) -> tuple[Figure, list[Axes]]:
    """A figure of `n` panels, `ncols` a row, on its own Agg canvas (no pyplot, no global backend)."""
    cols = max(1, min(n, ncols))
    rows = max(1, math.ceil(n / cols))
    fig = Figure(figsize=(panel[0] * cols, panel[1] * rows), layout="constrained")
    FigureCanvasAgg(fig)
    axes = list(fig.subplots(rows, cols, squeeze=False).ravel())
    for ax in axes[n:]:
        ax.set_visible(False)
    return fig, axes[:n]


def _save(fig: Figure, colors: Mapping[str, Color], algos: Iterable[str], title: str, path: Path) -> Path:
    """Add the title and a legend of `algos` below the panels, and write the PNG."""
    shown = sorted(set(algos))
    fig.suptitle(title)
    if shown:
        # as many columns as the widest entry (about 0.08 in per character at 10 pt, plus its patch) allows
        entry_in = 0.6 + 0.08 * max(map(len, shown))
        ncols = max(1, min(len(shown), int(fig.get_figwidth() // entry_in)))
        fig.set_figheight(fig.get_figheight() + 0.25 * (math.ceil(len(shown) / ncols) - 1))  # rows beyond one
        fig.legend([Patch(color=colors[a]) for a in shown], shown, loc="outside lower center", ncols=ncols)
    fig.savefig(path, dpi=100, bbox_inches="tight")
    return path


def plot_learning_curves(results: Results, path: Path, colors: Mapping[str, Color],
                         metric_order: Sequence[str] = ("win_rate", "return"), reps: int = 2000,
                         seed: int = 0, published: Sequence[PublishedCurve] = ()) -> Path:
    """Per task, the IQM over runs of its primary metric against env steps, with a 95% bootstrap CI band, and the
    `published` points of its primary metric where given."""
    primary = primary_metrics(results, metric_order)
    curves = {metric: learning_curves(results, metric) for metric in set(primary.values())}
    fig, axes = _grid(len(primary), ncols=3, panel=(4.5, 3.2))
    shown = []
    for ax, ((env, task), metric) in zip(axes, primary.items(), strict=True):
        scale = _scale(metric)
        for algo, (steps, scores) in curves[metric].get((env, task), {}).items():
            # rliable's IQM over runs, one value per evaluation: each evaluation is a stratum of the bootstrap
            iqm, (lo, hi) = bootstrap(scores, lambda s: scipy.stats.trim_mean(s, 0.25, axis=0), reps, seed)
            ax.plot(steps, iqm * scale, color=colors[algo], marker="o" if len(steps) == 1 else None)
            ax.fill_between(steps, lo * scale, hi * scale, color=colors[algo], alpha=0.2, linewidth=0)
            shown.append(algo)
        if metric in PERCENT_METRICS:  # published points are win rates (published.py)
            overlay(ax, (env, task), published, {a: colors[a] for a in curves[metric].get((env, task), {})})
        ax.set(title=f"{env} / {task}", xlabel="env steps", ylabel=_label(metric))
        ax.xaxis.set_major_formatter(EngFormatter(sep=""))  # 250k, 1M: long step counts overlap
        ax.grid(alpha=0.3)
    return _save(fig, colors, shown, "Learning curves: IQM over runs, 95% bootstrap CI", path)


def plot_final_scores(summaries: Sequence[ScoreSummary], path: Path, colors: Mapping[str, Color],
                      metric_order: Sequence[str] = ("win_rate", "return")) -> Path:
    """Per task (a row) and statistic (a column: IQM, mean, median), each algorithm's point estimate of its primary
    metric on its 95% CI bar."""
    primary = _first_metrics((((s.env, s.task), s.metric) for s in summaries), metric_order)
    tasks = list(primary)
    by_task = {key: [s for s in summaries if (s.env, s.task) == key and s.metric == primary[key]] for key in tasks}
    height = 1.2 + 0.35 * max((len(rows) for rows in by_task.values()), default=1)
    fig, axes = _grid(3 * len(tasks), ncols=3, panel=(3.6, height))
    for row, key in enumerate(tasks):
        rows = sorted(by_task[key], key=lambda s: s.algo)
        scale = _scale(rows[0].metric)
        for col, name in enumerate(STATISTICS):
            ax = axes[3 * row + col]
            estimates = [(s.iqm, s.mean, s.median)[col] for s in rows]
            for y, (s, estimate) in enumerate(zip(rows, estimates, strict=True)):
                ax.barh(y, (estimate.hi - estimate.lo) * scale, left=estimate.lo * scale, height=0.6,
                        color=colors[s.algo], alpha=0.75)
                ax.vlines(estimate.point * scale, y - 0.35, y + 0.35, color="black", linewidth=1.5)
            ax.set_yticks(range(len(rows)), [s.algo for s in rows] if col == 0 else [])
            ax.set_ylim(-0.6, len(rows) - 0.4)
            low, high = min(e.lo for e in estimates) * scale, max(e.hi for e in estimates) * scale
            pad = 0.05 * (high - low) or 0.5
            ax.set_xlim(low - pad, high + pad)
            ax.set(title=f"{key[0]} / {key[1]}: {name}", xlabel=_label(rows[0].metric))
            ax.grid(axis="x", alpha=0.3)
    algos = [s.algo for rows in by_task.values() for s in rows]
    return _save(fig, colors, algos, "Final scores: point estimate and 95% bootstrap CI over runs", path)


def plot_performance_profiles(results: Results, path: Path, colors: Mapping[str, Color],
                              metric_order: Sequence[str] = ("win_rate", "return"), reps: int = 2000,
                              seed: int = 0) -> Path:
    """Per task, rliable's score distribution of its primary metric: the fraction of runs scoring above each
    threshold tau, with a 95% bootstrap CI band."""
    primary = primary_metrics(results, metric_order)
    scores = {metric: final_scores(results, metric) for metric in set(primary.values())}
    fig, axes = _grid(len(primary), ncols=3, panel=(4.5, 3.2))
    shown = []
    for ax, ((env, task), metric) in zip(axes, primary.items(), strict=True):
        by_algo = scores[metric][env, task]
        pooled = np.concatenate(list(by_algo.values()))
        lo, hi = (0.0, 1.0) if metric in PERCENT_METRICS else (float(pooled.min()), float(pooled.max()))
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        taus = np.linspace(lo, hi, 101)
        for algo, runs in by_algo.items():
            with _seeded(seed):
                # rliable's score distribution (fraction of runs > tau), vectorised over tau
                profiles, intervals = rly.create_performance_profile(
                    {algo: runs[:, None]}, taus, reps=reps, confidence_interval_size=CONFIDENCE,
                    custom_profile_func=lambda s, t: (s.reshape(-1, 1) > np.asarray(t)).mean(axis=0))
            ax.plot(taus * _scale(metric), profiles[algo], color=colors[algo])
            ax.fill_between(taus * _scale(metric), *intervals[algo], color=colors[algo], alpha=0.2, linewidth=0)
            shown.append(algo)
        ax.set(title=f"{env} / {task}", xlabel=f"{_label(metric)} threshold τ", ylabel="fraction of runs > τ",
               ylim=(-0.02, 1.02))
        ax.grid(alpha=0.3)
    return _save(fig, colors, shown, "Performance profiles: score distributions over runs, 95% bootstrap CI", path)


# ---------------------------------------------------------------- the report


def write_report(results: Results, out_dir: str | os.PathLike[str], protocol: Mapping[str, Any],
                 metric_order: Sequence[str] = ("win_rate", "return"), reps: int = 2000,
                 seed: int = 0, published: Sequence[PublishedCurve] = ()) -> list[Path]:
    """Write summary.csv and summary.md for every metric in `metric_order` that the results report, and the
    figures (learning_curves.png, final_scores.png, performance_profile.png) for each task's first such metric;
    `published` win rates (published.py) go beside the results in summary.md and on the learning curves.
    Returns the files written."""
    _require()
    summaries = [row for metric in metric_order for row in summarize(results, metric, reps, seed)]
    if not summaries:
        raise ResultsError(f"no run reports any of the metrics {', '.join(metric_order)}")
    improvements = [row for metric in metric_order for row in probabilities_of_improvement(results, metric, reps,
                                                                                           seed)]
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    colors = algo_colors(results)
    return [
        write_summary_csv(summaries, out / "summary.csv"),
        write_summary_md(summaries, improvements, {m: run_scores(results, m) for m in metric_order}, protocol,
                         out / "summary.md", reps, seed, published_section(results, published)),
        plot_learning_curves(results, out / "learning_curves.png", colors, metric_order, reps, seed, published),
        plot_final_scores(summaries, out / "final_scores.png", colors, metric_order),
        plot_performance_profiles(results, out / "performance_profile.png", colors, metric_order, reps, seed),
    ]


def report(dirs: Iterable[str | os.PathLike[str]], out_dir: str | os.PathLike[str],
           protocol: Mapping[str, Any] | None = None, metric_order: Sequence[str] = ("win_rate", "return"),
           reps: int = 2000, seed: int = 0, labels: Sequence[str | None] = (),
           published: Sequence[PublishedCurve] = ()) -> list[Path]:
    """Load and merge the experiments' results.json (see load_results for `labels`) and write their report into
    `out_dir`, with `published` results beside them."""
    return write_report(load_results(dirs, labels), out_dir, protocol or {}, metric_order, reps, seed, published)
