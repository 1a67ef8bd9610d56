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
from core.config import load_yaml
from core.errors import EXIT_BAD_INPUT, EXIT_RUN_FAILED, UserError
from core.experiments.api import ExperimentResult, report_experiments, run_experiment
from core.experiments.executors import default_workers
from core.experiments.grid import ExperimentSpec, parse_seeds

EXIT_INCOMPLETE = 75  # EX_TEMPFAIL: rerun to continue
EXPERIMENT_FILE_KEYS = {"algos", "envs", "seeds", "steps", "overrides", "algo_overrides", "train_config"}


def parser() -> Parser:
    p = Parser(prog="experiment.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--algos", help="comma-separated algorithms (multi-agent or single-agent)")
    p.add_argument("--envs", help="comma-separated envs")
    p.add_argument("--seeds", default=None, help="a count (5: seeds 0-4) or a list (3,7,9; one seed: 7,); default 5")
    p.add_argument("--steps", type=int, help="env-step budget of every cell")
    p.add_argument("--out", help="experiment directory (default: experiments/<algos>_<envs>_<steps>)")
    p.add_argument("--workers", type=int, help=f"cells trained at once (default: one per core, {default_workers()})")
    p.add_argument("--max-hours", type=float, help="stop after this long, running cells checkpointed")
    p.add_argument("--device", help="cpu (default), cuda or cuda:N for every cell")
    p.add_argument("--ray", action="store_true", help="run the cells as tasks on a local Ray")
    p.add_argument("--ray-address", help="run the cells on this Ray cluster (e.g. ray://head:10001 or auto)")
    p.add_argument("--config", help="experiment YAML: algos, envs, seeds, steps, overrides, algo_overrides, "
                                    "train_config")
    p.add_argument("--train-config", metavar="PATH",
                   help="each cell's training config; {algo} and {env} are filled in "
                        "(e.g. 'configs/reference/{algo}_{env}.yaml')")
    p.add_argument("--report", nargs="+", metavar="DIR[=LABEL]",
                   help="only (re)write the report of these experiments; =LABEL renames an experiment's algorithm")
    p.add_argument("--published", metavar="FILE",
                   help="with --report: published results to put beside the runs (steps to 50%%/80%%, scores at "
                        "1M/2M, points on the curves; e.g. benchmarks/published/smac_sc2.yaml)")
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
    steps: Any = args.steps if args.steps is not None else data.get("steps")  # ExperimentSpec checks it
    missing = [flag for flag, value in (("--algos", algos), ("--envs", envs), ("--steps", steps))
               if value is None or value == []]
    if missing:
        raise UserError(f"the following arguments are required: {', '.join(missing)}")
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
    train_config = args.train_config or data.get("train_config")
    if train_config is not None and not isinstance(train_config, str):
        raise UserError(f"{args.config}: train_config must be a path, got {train_config!r}")
    return ExperimentSpec(algos, envs, seeds, steps, overrides, algo_overrides, train_config)


def report_main(argv: list[str] | None = None) -> int:
    """`concerto report DIR [DIR=LABEL ...] [--out DIR] [--published FILE]`: experiment.py --report alone."""
    p = Parser(prog="report", description="(Re)write the report of experiment directories: IQM and intervals, "
                                          "plots; several side by side with --out.")
    p.add_argument("dirs", nargs="+", metavar="DIR[=LABEL]", help="experiment directories; =LABEL renames an "
                                                                   "experiment's algorithm")
    p.add_argument("--out", help="directory of a joint report (needed for several experiments or a label)")
    p.add_argument("--published", metavar="FILE", help="published results to put beside the runs "
                                                        "(e.g. benchmarks/published/smac_sc2.yaml)")
    try:
        args = p.parse_args(argv)
        written = report_experiments(args.dirs, args.out, args.published)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    print(f"report: {_summary_md(written)} (and .csv, .png beside it)")
    return 0


def main(argv: list[str] | None = None) -> int:
    try:
        args = parser().parse_intermixed_args(argv)
        if args.published and not args.report:
            raise UserError("--published goes with --report (it compares a report with published results)")
        if args.report:
            written = report_experiments(args.report, args.out, args.published)
            print(f"report: {_summary_md(written)} (and .csv, .png beside it)")
            return 0
        result = run_experiment(spec_from_args(args), args.out, workers=args.workers, max_hours=args.max_hours,
                                device=args.device, ray=args.ray, ray_address=args.ray_address,
                                progress=not args.no_progress)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    _print_outcome(result)
    if result.stopped == "signal":
        return 130
    if result.failed:
        return EXIT_RUN_FAILED
    return EXIT_INCOMPLETE if result.interrupted else 0


def _summary_md(written: list[Path]) -> str:
    return ", ".join(str(p) for p in written if p.suffix == ".md")


def _print_outcome(result: ExperimentResult) -> None:
    print(f"{len(result.done)} cells finished, {len(result.failed)} failed, {len(result.interrupted)} to continue; "
          f"results: {result.results}")
    for cell, error in result.failed.items():
        print(f"failed: {cell.name}: {error}")
    if result.stopped == "max-hours":
        print("stopped after --max-hours with every running cell checkpointed; rerun the command to continue")
    elif result.stopped == "signal":
        print("stopped by a signal with every running cell checkpointed; rerun the command to continue")
    if result.report:
        print(f"report: {_summary_md(result.report)} (and .csv, .png beside it)")
    else:
        print(f"no report: {result.report_error}", file=sys.stderr)


def _names(text: str) -> list[str]:
    return [n.strip() for n in text.split(",") if n.strip()]


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
