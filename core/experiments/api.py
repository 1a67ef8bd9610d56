"""The Python API of experiments (scripts/experiment.py is a command line over it):

    from core.experiments import ExperimentSpec, run_experiment, report_experiments

    spec = ExperimentSpec(algos=["mappo", "ippo"], envs=["smac_3m"], seeds=[0, 1, 2, 3, 4], steps=300_000)
    result = run_experiment(spec, "experiments/mappo_vs_ippo", workers=2)
    result.failed, result.results, result.report            # failed cells, results.json, summary.md & figures
    report_experiments(["experiments/a", "experiments/b"], "experiments/a_vs_b")   # compare experiments

Bad input raises core.errors.UserError (its message is the command line's `error:` line).
"""
from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from core.config import load_yaml, parse_overrides
from core.errors import ConfigError, UserError
from core.experiments.executors import (
    Executor,
    GridResult,
    InProcessExecutor,
    LocalExecutor,
    default_workers,
    run_grid,
)
from core.experiments.grid import Cell, ExperimentSpec, run_dir
from core.experiments.results import write_results
from core.experiments.trainers import check_run, installed_algorithm, launch_command, training_modules
from core.run_config import env_dir_name

PathLike = str | os.PathLike[str]
RESULTS_FILE, PROTOCOL_FILE = "results.json", "protocol.yaml"


@dataclass
class ExperimentResult(GridResult):
    """How the grid ended (done / failed / interrupted cells, why it stopped early) and what it wrote."""

    out: Path = Path()
    results: Path = Path()  # results.json
    report: list[Path] = field(default_factory=list)  # summary.md, summary.csv, figures; empty if none was made
    report_error: str | None = None  # why no report was made (no metric yet, rliable missing)


def run_experiment(spec: ExperimentSpec, out: PathLike | None = None, *, workers: int | None = None,
                   max_hours: float | None = None, device: str | None = None, ray: bool = False,
                   ray_address: str | None = None, progress: bool = True, callbacks: Sequence[str] = (),
                   report: bool = True, in_process: bool = False) -> ExperimentResult:
    """Train every unfinished cell of `spec` under `out` (default experiments/<algos>_<envs>_<steps>), then write
    results.json and (unless not `report`) the report. A rerun with the same spec skips finished cells and resumes
    interrupted ones; `out` holding another spec is refused. Every algorithm's config on every env (the files,
    the overrides, the env's name and options) is checked before `out` is written. Cells run as processes on this
    machine (`workers` at a time, default one per core over train.torch_threads), or as tasks on a local Ray
    (`ray`) or the cluster at `ray_address`, or one after another in this process (`in_process`:
    core.experiments.executors.InProcessExecutor). `callbacks` are callback plugins (--callback specs) every cell
    trains with. Each cell's train.experiment is the name of `out` (W&B groups the cells' runs by it)."""
    modules = training_modules()
    unknown = [a for a in spec.algos if a not in modules]
    if unknown:
        raise UserError(f"unknown algorithm {unknown[0]!r}; valid algorithms: {', '.join(sorted(modules))}")
    if workers is not None and workers < 1:
        raise UserError("--workers must be at least 1")
    # every cell trains with the torch threads the executor reserves for it: 1 unless the overrides say
    # otherwise (SAC/TD3/DDPG default to 2, which two workers on two cores would oversubscribe many times over)
    threads = {a: _torch_threads([*spec.overrides, *spec.algo_overrides.get(a, [])]) for a in spec.algos}
    most = max(threads.values())
    _check_cells(spec, device)
    directory = Path(out) if out is not None else default_out(spec)
    _claim(directory, spec)
    executor: Executor = LocalExecutor()
    if in_process:
        if ray or ray_address:
            raise UserError("cells run either in this process or on Ray, not both")
        executor, workers = InProcessExecutor(), 1
    elif ray or ray_address:
        from core.experiments.ray_cluster import RayExecutor

        gpus = 1.0 if (device or "cpu").startswith("cuda") else 0.0
        ray_executor = RayExecutor(ray_address, cpus=float(most), gpus=gpus, log=directory / "ray.log")
        executor, workers = ray_executor, workers or ray_executor.capacity()
    workers = workers or max(1, default_workers() // most)

    def command(cell: Cell, cell_dir: Path, resume: Path | None) -> list[str]:
        base = ["--steps", str(spec.steps), "--no-progress", "--summary-json", str(cell_dir / "summary.json"),
                "--logdir", str(cell_dir / "run"), *(["--device", device] if device else []),
                *(f"--callback={c}" for c in callbacks)]
        if resume is not None:
            return launch_command(modules[cell.algo], [*base, "--resume", str(resume)])
        config = spec.config_file(cell)
        return launch_command(modules[cell.algo], [
            *base, "--algo", cell.algo, "--env", cell.env, "--seed", str(cell.seed),
            *(["--config", str(config.resolve())] if config else []),
            f"train.torch_threads={threads[cell.algo]}",
            f"train.experiment={json.dumps(directory.resolve().name)}",  # quoted: a name such as 2024 stays text
            *spec.cell_overrides(cell)])

    try:
        grid = run_grid(spec, directory, command, workers, max_hours, progress, executor)
    finally:
        executor.close()
    result = ExperimentResult(**vars(grid), out=directory, results=write_results(spec.cells(), directory))
    if not report:
        return result
    try:
        result.report = report_experiments([directory])
    except UserError as exc:  # no metric to report yet, rliable missing: the results stay
        result.report_error = str(exc)
    return result


def report_experiments(dirs: Sequence[PathLike], out: PathLike | None = None,
                       published: PathLike | None = None) -> list[Path]:
    """(Re)write the report (summary.md, summary.csv, figures) of one experiment in place, or of several
    compared side by side into `out`; returns the files written. `DIR=LABEL` names DIR's algorithm LABEL in
    the report (`<algo>-LABEL` where DIR holds several), so that variants of one algorithm can be compared.
    A report written into `out` (not an experiment directory) also keeps the merged results.json and the
    evaluation protocol there, so that it can be reported on again, or merged with another experiment, once the
    experiment directories are gone. `published` is a file of published results to compare with
    (core/experiments/published.py): steps to 50% and 80% and scores at 1M and 2M steps, points on the curves."""
    from core.experiments.published import load_published
    from core.experiments.report import load_results, report, write_report

    if not dirs:
        raise UserError("no experiment directory to report on")
    paths, labels = zip(*(_labelled(d) for d in dirs), strict=True)
    if out is None and len(paths) > 1:
        raise UserError("comparing several experiments needs --out DIR for their joint report")
    if out is None and labels[0] is not None:
        raise UserError("a labelled experiment's report needs --out DIR (its own report keeps its names)")
    missing = [d for d in paths if not (d / RESULTS_FILE).is_file()]
    if missing:
        raise UserError(f"{missing[0]} has no results.json (not an experiment directory?)")
    protocols = [evaluation_protocol(d) for d in paths]
    protocol = protocols[0] if all(p == protocols[0] for p in protocols) else {}
    curves = load_published(published) if published is not None else []
    if out is None or (Path(out) / "cells").is_dir():  # an experiment's own report: its cells hold the data
        return report(paths, Path(out) if out is not None else paths[0], protocol, labels=labels, published=curves)
    merged, target = load_results(paths, labels), Path(out)
    target.mkdir(parents=True, exist_ok=True)
    (target / RESULTS_FILE).write_text(json.dumps(merged) + "\n")
    (target / PROTOCOL_FILE).write_text(yaml.safe_dump(protocol, sort_keys=True))
    return [*write_report(merged, target, protocol, published=curves), target / RESULTS_FILE, target / PROTOCOL_FILE]


def _labelled(entry: PathLike) -> tuple[Path, str | None]:
    """DIR or DIR=LABEL (a directory whose name holds "=" is taken whole)."""
    text = os.fspath(entry)
    directory, sep, label = text.rpartition("=")
    if not sep or Path(text).exists():
        return Path(text), None
    if not label:
        raise UserError(f"an empty label in {text!r}: use DIR=LABEL")
    return Path(directory), label


def evaluation_protocol(out: Path) -> dict[str, Any]:
    """The evaluation protocol the cells ran with (from a cell's saved config): interval, episodes, greedy; a
    joint report's directory holds it in protocol.yaml."""
    for cell_dir in sorted((out / "cells").glob("*/*/*")):
        run = run_dir(cell_dir)
        if run is not None:
            train = load_yaml(run / "config.yaml").get("train") or {}
            return {"interval": train.get("eval_interval"), "episodes": train.get("eval_episodes"), "greedy": True}
    if (out / PROTOCOL_FILE).is_file():
        return dict(load_yaml(out / PROTOCOL_FILE))
    return {}


def default_out(spec: ExperimentSpec) -> Path:
    steps = f"{spec.steps // 1000}k" if spec.steps % 1000 == 0 else str(spec.steps)
    envs = "-".join(env_dir_name(e) for e in spec.envs)
    return Path("experiments") / f"{'-'.join(spec.algos)}_{envs}_{steps}"


def _torch_threads(overrides: list[str]) -> int:
    """The torch threads a cell with these overrides trains with (train.torch_threads, default 1 whatever the
    algorithm's own default): the cores it occupies."""
    try:
        parsed = parse_overrides(overrides)
    except ConfigError as exc:
        raise UserError(str(exc)) from None
    value = parsed.get("train", {}).get("torch_threads", parsed.get("torch_threads", 1))
    if not isinstance(value, int) or value < 1:
        raise UserError(f"train.torch_threads must be a positive integer, got {value!r}")
    return value


def _check_cells(spec: ExperimentSpec, device: str | None) -> None:
    """UserError, naming the algorithm and env, for input that the runs of an (algorithm, env) pair would refuse
    as they start (the seed changes nothing checked)."""
    algorithms = {algo: installed_algorithm(algo) for algo in spec.algos}
    for env in spec.envs:
        for algo in spec.algos:
            cell = Cell(algo, env, spec.seeds[0])
            config = spec.config_file(cell)
            try:
                check_run(algo, env, algorithms[algo], str(config) if config else None,
                          {"steps": spec.steps, "device": device}, spec.cell_overrides(cell))
            except UserError as exc:
                raise UserError(f"{algo} on {env}: {exc}") from None


def _claim(out: Path, spec: ExperimentSpec) -> None:
    """Write the grid to out/experiment.yaml, or check that a rerun asks for the same grid."""
    path = out / "experiment.yaml"
    if path.is_file():
        saved = load_yaml(path)
        if saved != spec.to_dict():
            raise UserError(f"{out} holds another experiment ({path}); rerun with its settings or choose --out")
        return
    try:
        out.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(spec.to_dict(), sort_keys=False))
    except OSError as exc:
        raise UserError(f"cannot create the experiment directory --out {out}: {exc.strerror or exc}") from None
