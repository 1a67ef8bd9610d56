"""What a study ends with: the best trial's config as a YAML file for train_*.py --config, a Markdown table of the
top trials, and PNG plots of the optimisation history and of the parameters' importances."""
from __future__ import annotations

import warnings
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from core.config import Yaml12Dumper, parse_overrides
from core.run_config import _route_overrides
from core.tuning.objective import TuneSettings

if TYPE_CHECKING:
    import optuna
    from optuna.trial import FrozenTrial

TOP = 10  # trials in the table


def completed(study: optuna.Study) -> list[FrozenTrial]:
    """The study's completed trials, best first."""
    from optuna.trial import TrialState

    done = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
    return sorted(done, key=lambda t: (-(t.value if t.value is not None else float("-inf")), t.number))


def best_config(trial: FrozenTrial, settings: TuneSettings, algo_config_class: type) -> dict[str, Any]:
    """The train/algo (and env, where the overrides set it) sections of `trial`'s config, without the tuning
    budget: what --config takes."""
    routed = _route_overrides(parse_overrides([*settings.overrides, *trial.user_attrs.get("overrides", [])]),
                              algo_config_class)
    return {section: dict(sorted(routed[section].items())) for section in ("train", "algo", "env")
            if routed.get(section)}


def write_best_config(study: optuna.Study, settings: TuneSettings, algo_config_class: type, train_script: str,
                      path: Path) -> Path | None:
    """The best trial's config at `path`, with a comment saying where it comes from; None without one."""
    ranked = completed(study)
    if not ranked:
        return None
    best = ranked[0]
    header = (f"# {settings.algo} on {settings.env}, tuned by scripts/tune.py: trial {best.number} of study "
              f"{settings.study!r}, {_score(best)} at {settings.steps:,} env steps\n"
              f"# python {train_script} --algo {settings.algo} --env {settings.env} --config {path}\n")
    body = yaml.dump(best_config(best, settings, algo_config_class), Dumper=Yaml12Dumper, sort_keys=False)
    path.write_text(header + body)
    return path


def _score(trial: FrozenTrial) -> str:
    seeds = len(trial.user_attrs.get("scores", [])) or 1
    return f"{_metric(trial)} {trial.value:.4g}" + (f" (IQM over {seeds} seeds)" if seeds > 1 else "")


def top_trials_markdown(study: optuna.Study, settings: TuneSettings, top: int = TOP) -> str:
    """A heading line with the study's trial counts, then a table of its `top` best completed trials."""
    states = Counter(t.state.name.lower() for t in study.get_trials(deepcopy=False))
    counts = ", ".join(f"{n} {state}" for state, n in sorted(states.items()))
    ranked = completed(study)[:top]
    lines = [f"Study `{settings.study}` ({settings.algo} on {settings.env}, {settings.steps:,} env steps, seeds "
             f"{', '.join(map(str, settings.seeds))}): {_trials(sum(states.values()))} ({counts or 'none'}).", ""]
    if not ranked:
        return "\n".join([*lines, "No trial has completed yet."]) + "\n"
    names = sorted({name for t in ranked for name in t.params})
    metric = _metric(ranked[0])
    several = len(settings.seeds) > 1
    head = ["rank", "trial", f"{metric} (IQM)" if several else metric, *(["seeds"] if several else []),
            *(f"`{n}`" for n in names)]
    lines += ["| " + " | ".join(head) + " |", "| " + " | ".join("---" if h == "seeds" else "--:" for h in head) + " |"]
    for rank, t in enumerate(ranked, start=1):
        seeds = [", ".join(f"{s:.3g}" for s in t.user_attrs.get("scores", []))] if several else []
        row = [str(rank), str(t.number), f"{t.value:.4g}", *seeds, *(_fmt(t.params.get(n)) for n in names)]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"


def _metric(trial: FrozenTrial) -> str:
    return str(trial.user_attrs.get("metric", "score"))


def _fmt(value: Any) -> str:
    if value is None:
        return ""
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def write_plots(study: optuna.Study, out: Path) -> tuple[list[Path], list[str]]:
    """optimization_history.png and param_importances.png under `out` (optuna.visualization.matplotlib), and
    notes on what was not drawn and why."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from optuna.exceptions import ExperimentalWarning
        from optuna.visualization.matplotlib import plot_optimization_history, plot_param_importances
    except ImportError as exc:
        return [], [f"no plots: they need matplotlib ({exc}): pip install matplotlib"]
    written: list[Path] = []
    notes: list[str] = []
    done = completed(study)
    target = _metric(done[0]) if done else "score"

    def save(axes: Any, name: str) -> None:
        axes.figure.savefig(out / name, dpi=110, bbox_inches="tight")
        plt.close(axes.figure)
        written.append(out / name)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExperimentalWarning)
        save(plot_optimization_history(study, target_name=target), "optimization_history.png")
        if len(done) < 2:
            notes.append(f"no parameter importances: they need 2 completed trials, the study has {len(done)}")
        else:
            try:
                with warnings.catch_warnings(record=True) as caught:  # e.g. too few trials to tell them apart
                    warnings.simplefilter("always", UserWarning)
                    save(plot_param_importances(study, evaluator=_importance_evaluator(), target_name=target),
                         "param_importances.png")
                notes += [f"parameter importances: {w.message}" for w in caught
                          if not issubclass(w.category, ExperimentalWarning)]
            except (ValueError, RuntimeError) as exc:
                notes.append(f"no parameter importances: {exc}")
    return written, notes


def _importance_evaluator() -> Any:
    """optuna's default (fANOVA) where scikit-learn is installed, else PED-ANOVA, which needs nothing more."""
    import optuna.importance

    try:
        import sklearn  # noqa: F401
    except ImportError:
        return optuna.importance.PedAnovaImportanceEvaluator()
    return optuna.importance.FanovaImportanceEvaluator(seed=0)


def _trials(n: int) -> str:
    return f"{n} trial{'s' if n != 1 else ''}"
