"""Collect the cells' evaluations into results.json, in marl-eval's raw-data format:

    {environment: {task: {algorithm: {"run_<seed>": {"step_<i>": {"step_count": env steps,  # i from 1
                                                               "return": [per episode], "win_rate": [...]},
                                                    ...,
                                                    "absolute_metrics": {the final evaluation's metrics}}}}}}

`win_rate` holds each episode's 0/1 outcome, where the env reports wins. A cell contributes once it has
evaluations; `absolute_metrics` only once it finished.
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from core.experiments.grid import Cell, read_summary, run_dir

METRICS = {"return": "return", "win": "win_rate"}  # evaluations.jsonl key -> marl-eval metric name


def env_task(env: str) -> tuple[str, str]:
    """marl-eval's (environment, task) for an env name: smac_3m -> (smac, 3m), mpe_simple_spread -> (mpe,
    simple_spread), a gymnasium id or a user's module:factory -> (gymnasium / custom, the name)."""
    if ":" in env:
        return "custom", env
    if "_" in env:
        environment, task = env.split("_", 1)
        return environment, task
    return "gymnasium", env


def evaluations(cell_dir: Path) -> list[dict[str, Any]]:
    """The cell's evaluations in step order; a step evaluated twice (a resumed run repeating it) counts once,
    with its latest values."""
    run = run_dir(cell_dir)
    if run is None:
        return []
    by_step: dict[int, dict[str, Any]] = {}
    try:
        lines = (run / "evaluations.jsonl").read_text().splitlines()
    except OSError:
        return []
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:  # a line cut short by a kill
            continue
        by_step[int(record["env_steps"])] = record
    return [by_step[k] for k in sorted(by_step)]


def collect(cells: list[Cell], out: Path) -> dict[str, Any]:
    """results.json's content for `cells` under the experiment directory `out`."""
    results: dict[str, Any] = {}
    for cell in cells:
        directory = cell.directory(out)
        records = evaluations(directory)
        if not records:
            continue
        run: dict[str, Any] = {}
        for i, record in enumerate(records, start=1):  # step_1 ... step_k, as marl-eval documents
            run[f"step_{i}"] = {"step_count": record["env_steps"],
                                **{name: record[key] for key, name in METRICS.items() if key in record}}
        if read_summary(directory) is not None:
            final = records[-1]
            run["absolute_metrics"] = {name: final[key] for key, name in METRICS.items() if key in final}
        environment, task = env_task(cell.env)
        results.setdefault(environment, {}).setdefault(task, {}).setdefault(cell.algo, {})[f"run_{cell.seed}"] = run
    return results


def write_results(cells: list[Cell], out: Path) -> Path:
    path = out / "results.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(collect(cells, out), indent=1) + "\n")
    tmp.replace(path)
    return path


def evaluation_curve(run: Mapping[str, Any], metric: str) -> list[tuple[float, float]]:
    """A run of results.json as (env steps, mean `metric` over the episodes) per evaluation, in step order,
    leaving out evaluations without the metric."""
    names = sorted((n for n in run if n.startswith("step_")), key=lambda n: int(n.removeprefix("step_")))
    return [(float(run[n]["step_count"]), float(np.mean(run[n][metric]))) for n in names if run[n].get(metric)]
