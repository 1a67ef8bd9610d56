"""Command line of scripts/experiment.py: run a grid of training runs, then report on it.

Exit statuses: 0 every cell finished; 1 some cell failed (the others finished; the summary lists it);
2 bad input (one `error:` line); 75 the grid stopped early (--max-hours; rerun the command to continue);
130 / 143 SIGINT / SIGTERM (every running cell checkpointed; rerun to continue).
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from core.cli import Parser
from core.config import load_yaml, parse_overrides
from core.run_config import env_dir_name
from core.errors import EXIT_BAD_INPUT, EXIT_RUN_FAILED, ConfigError, UserError
from core.experiments.grid import Cell, ExperimentSpec, parse_seeds
from core.experiments.results import write_results
from core.experiments.runner import Executor, GridResult, LocalExecutor, default_workers, run_grid

EXIT_INCOMPLETE = 75  # EX_TEMPFAIL: rerun to continue
EXPERIMENT_FILE_KEYS = {"algos", "envs", "seeds", "steps", "overrides", "algo_overrides"}


def parser() -> Parser:
    p = Parser(prog="experiment.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--algos", help="comma-separated algorithms (multi-agent or single-agent)")
    p.add_argument("--envs", help="comma-separated envs")
    p.add_argument("--seeds", default=None, help="a count (5: seeds 0-4) or a list (3,7,9); default 5")
    p.add_argument("--steps", type=int, help="env-step budget of every cell")
    p.add_argument("--out", help="experiment directory (default: experiments/<algos>_<envs>_<steps>)")
    p.add_argument("--workers", type=int, help=f"cells trained at once (default: one per core, {default_workers()})")
    p.add_argument("--max-hours", type=float, help="stop after this long, running cells checkpointed")
    p.add_argument("--device", help="cpu (default), cuda or cuda:N for every cell")
    p.add_argument("--ray", action="store_true", help="run the cells as tasks on a local Ray")
    p.add_argument("--ray-address", help="run the cells on this Ray cluster (e.g. ray://head:10001 or auto)")
    p.add_argument("--config", help="experiment YAML: algos, envs, seeds, steps, overrides, algo_overrides")
    p.add_argument("--report", nargs="+", metavar="DIR", help="only (re)write the report of these experiments")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("overrides", nargs="*", metavar="key=value", help="applied to every cell")
    return p


def spec_from_args(args: argparse.Namespace) -> ExperimentSpec:
    """The grid from the experiment file (if any) with the flags on top."""
    data: dict[str, Any] = load_yaml(args.config) if args.config else {}
    unknown = sorted(set(data) - EXPERIMENT_FILE_KEYS)
    if unknown:
        valid = ", ".join(sorted(EXPERIMENT_FILE_KEYS))
        raise UserError(f"{args.config}: unknown key {unknown[0]}; valid keys: {valid}")
    algos = _names(args.algos) if args.algos else _list(data.get("algos"), "algos")
    envs = _names(args.envs) if args.envs else _list(data.get("envs"), "envs")
    steps = args.steps if args.steps is not None else data.get("steps")
    missing = [flag for flag, value in (("--algos", algos), ("--envs", envs), ("--steps", steps))
               if value is None or value == []]
    if missing:
        raise UserError(f"the following arguments are required: {', '.join(missing)}")
    if not isinstance(steps, int) or steps < 1:
        raise UserError(f"--steps must be a positive integer, got {steps!r}")
    seeds_text = args.seeds if args.seeds is not None else str(data.get("seeds", 5))
    if isinstance(data.get("seeds"), list) and args.seeds is None:
        seeds_text = ",".join(str(s) for s in data["seeds"])
    try:
        seeds = parse_seeds(seeds_text)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    overrides = [*_pairs(data.get("overrides"), "overrides"), *args.overrides]
    per_algo = data.get("algo_overrides") or {}
    if not isinstance(per_algo, Mapping):
        raise UserError(f"{args.config}: algo_overrides must map an algorithm to key: value pairs")
    algo_overrides = {str(a): _pairs(v, f"algo_overrides.{a}") for a, v in per_algo.items()}
    return ExperimentSpec(algos, envs, seeds, steps, overrides, algo_overrides)


def main(argv: list[str] | None, scripts: Mapping[str, Path]) -> int:
    """`scripts` maps every algorithm name to the training script that runs it."""
    try:
        args = parser().parse_intermixed_args(argv)
        if args.report:
            return _report_only([Path(d) for d in args.report], Path(args.out) if args.out else None)
        spec = spec_from_args(args)
        unknown = [a for a in spec.algos if a not in scripts]
        if unknown:
            raise UserError(f"unknown algorithm {unknown[0]!r}; valid algorithms: {', '.join(sorted(scripts))}")
        if args.workers is not None and args.workers < 1:
            raise UserError("--workers must be at least 1")
        threads = _torch_threads(spec.overrides)
        out = Path(args.out) if args.out else _default_out(spec)
        _claim(out, spec)
        executor: Executor = LocalExecutor()
        workers = args.workers or max(1, default_workers() // threads)
        if args.ray or args.ray_address:
            from core.experiments.ray_cluster import RayExecutor
            gpus = 1.0 if (args.device or "cpu").startswith("cuda") else 0.0
            ray_executor = RayExecutor(args.ray_address, cpus=float(threads), gpus=gpus)
            executor, workers = ray_executor, args.workers or ray_executor.capacity()
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT

    def command(cell: Cell, directory: Path, resume: Path | None) -> list[str]:
        base = [sys.executable, str(scripts[cell.algo]), "--steps", str(spec.steps), "--no-progress",
                "--summary-json", str(directory / "summary.json"), *(["--device", args.device] if args.device else [])]
        if resume is not None:
            return [*base, "--resume", str(resume)]
        return [*base, "--algo", cell.algo, "--env", cell.env, "--seed", str(cell.seed),
                "--logdir", str(directory / "run"), *spec.cell_overrides(cell)]

    try:
        result = run_grid(spec, out, command, workers, args.max_hours, not args.no_progress, executor)
    finally:
        executor.close()
    write_results(spec.cells(), out)
    _print_outcome(result, out)
    _write_report([out], out, _protocol(out))
    if result.stopped == "signal":
        return 130
    if result.failed:
        return EXIT_RUN_FAILED
    return EXIT_INCOMPLETE if result.interrupted else 0


def _report_only(dirs: list[Path], out: Path | None) -> int:
    """Re-render one experiment's report in place, or compare several into --out."""
    if out is None and len(dirs) > 1:
        raise UserError("comparing several experiments needs --out DIR for their joint report")
    missing = [d for d in dirs if not (d / "results.json").is_file()]
    if missing:
        raise UserError(f"{missing[0]} has no results.json (not an experiment directory?)")
    target = out or dirs[0]
    protocols = [_protocol(d) for d in dirs]
    return 0 if _write_report(dirs, target, protocols[0] if all(p == protocols[0] for p in protocols) else {}) else 1


def _write_report(dirs: list[Path], out: Path, protocol: dict[str, Any]) -> bool:
    """summary.md, summary.csv and the figures; a report that cannot be made is one line, the results stay."""
    from core.experiments.report import report

    try:
        written = report(dirs, out, protocol)
    except UserError as exc:  # no metric to report, clashing runs, rliable missing
        print(f"no report: {exc}", file=sys.stderr)
        return False
    print(f"report: {', '.join(str(p) for p in written if p.suffix == '.md')} (and .csv, .png beside it)")
    return True


def _protocol(out: Path) -> dict[str, Any]:
    """The evaluation protocol the cells ran with (from a cell's saved config): interval, episodes, greedy."""
    for config in sorted((out / "cells").glob("*/*/*/run/*/*/*/config.yaml")):
        train = load_yaml(config).get("train") or {}
        return {"interval": train.get("eval_interval"), "episodes": train.get("eval_episodes"), "greedy": True}
    return {}

def _print_outcome(result: GridResult, out: Path) -> None:
    print(f"{len(result.done)} cells finished, {len(result.failed)} failed, {len(result.interrupted)} to continue; "
          f"results: {out / 'results.json'}")
    for cell, error in result.failed.items():
        print(f"failed: {cell.name}: {error}")
    if result.stopped == "max-hours":
        print("stopped after --max-hours with every running cell checkpointed; rerun the command to continue")
    elif result.stopped == "signal":
        print("stopped by a signal with every running cell checkpointed; rerun the command to continue")


def _torch_threads(overrides: list[str]) -> int:
    """The torch threads each cell trains with (train.torch_threads, default 1): the cores it occupies."""
    try:
        parsed = parse_overrides(overrides)
    except ConfigError as exc:
        raise UserError(str(exc)) from None
    value = parsed.get("train", {}).get("torch_threads", parsed.get("torch_threads", 1))
    if not isinstance(value, int) or value < 1:
        raise UserError(f"train.torch_threads must be a positive integer, got {value!r}")
    return value


def _default_out(spec: ExperimentSpec) -> Path:
    steps = f"{spec.steps // 1000}k" if spec.steps % 1000 == 0 else str(spec.steps)
    envs = "-".join(env_dir_name(e) for e in spec.envs)
    return Path("experiments") / f"{'-'.join(spec.algos)}_{envs}_{steps}"


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


def _names(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    if len(set(names)) != len(names):
        raise UserError(f"a name is given twice in {text!r}")
    return names


def _list(value: Any, key: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UserError(f"experiment file: {key} must be a list of names")
    return value


def _pairs(value: Any, key: str) -> list[str]:
    """key: value mappings of the experiment file as key=value overrides."""
    if value is None:
        return []
    if not isinstance(value, Mapping):
        raise UserError(f"experiment file: {key} must map keys to values")
    return [f"{k}={yaml.safe_dump(v, default_flow_style=True).strip().removesuffix('...').strip()}"
            for k, v in value.items()]
