"""Experiments: grids of ordinary training runs (cells), run resumably, collected into marl-eval's results
format and reported with rliable's statistics. The Python API is in core.experiments.api."""
from core.experiments.api import ExperimentResult, report_experiments, run_experiment
from core.experiments.grid import Cell, ExperimentSpec

__all__ = ["Cell", "ExperimentResult", "ExperimentSpec", "report_experiments", "run_experiment"]
