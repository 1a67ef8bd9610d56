"""Published results beside an experiment's report (`--report DIR --published FILE`): steps to a win rate,
win rates at a budget, the table in summary.md, the points on the learning curves, and bad files."""
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from matplotlib.figure import Figure

from core.errors import UserError
from core.experiments.published import (
    PublishedCurve,
    first_crossing,
    load_published,
    overlay,
    published_section,
    score_at,
)
from core.experiments.report import write_report

ROOT = Path(__file__).resolve().parent.parent


def win_run(curve: list[float], every: int = 500_000) -> dict[str, Any]:
    """A run evaluated every `every` env steps with these win rates (0-1), 4 episodes each."""
    return {f"step_{i}": {"step_count": every * (i + 1), "win_rate": [v] * 4, "return": [v] * 4}
            for i, v in enumerate(curve)}


RESULTS = {"smac": {"MMM2": {"mappo": {
    "run_0": win_run([0.1, 0.6, 0.9, 0.95]),  # 50% at 1M, 80% at 1.5M
    "run_1": win_run([0.0, 0.2, 0.5, 0.7]),  # 50% at 1.5M, never 80%
    "run_2": win_run([0.0, 0.0]),  # stopped at 1M
}}}}
MAPPO_MMM2 = PublishedCurve(("smac", "MMM2"), "mappo", "a paper's figure 3, read off by eye",
                            [(1e6, 3.0), (2e6, 40.0)], {50.0: 2.3e6, 80.0: None})


def test_steps_to_a_score_and_the_score_at_a_budget():
    evaluations = [(5e5, 10.0), (1e6, 60.0), (1.5e6, 90.0)]
    assert first_crossing(evaluations, 50) == 1e6 and first_crossing(evaluations, 95) is None
    assert score_at(evaluations, 1e6) == 60 and score_at(evaluations, 1.2e6) == 60
    assert score_at(evaluations, 2e6) is None  # the run stopped at 1.5M: it says nothing about 2M


def test_the_table_puts_each_task_beside_its_published_values():
    lines = published_section(RESULTS, [MAPPO_MMM2, PublishedCurve(("smac", "3m"), "qmix", "elsewhere", [])])
    text = "\n".join(lines)
    assert "a paper's figure 3" in text and "elsewhere" not in text  # sources of the rows shown only
    (row,) = [line for line in lines if line.startswith("| smac | MMM2")]
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[3:] == ["3", "1.25M (1.00M-1.50M), 2 of 3 / 2.3M", "1.50M, 1 of 3 / not within the curve",
                         "20 (0-60), 3 of 3 / 3", "82 (70-95), 2 of 3 / 40"]
    variants = {"smac": {"MMM2": {"mappo-before": RESULTS["smac"]["MMM2"]["mappo"], "qmix": {}}}}
    labelled = [line for line in published_section(variants, [MAPPO_MMM2]) if line.startswith("| smac")]
    assert [line.split("|")[3].strip() for line in labelled] == ["mappo-before"]  # a labelled variant matches


def test_the_report_draws_the_published_points_and_lists_them(tmp_path):
    written = write_report(RESULTS, tmp_path, {}, reps=50, published=[MAPPO_MMM2])
    assert "## Beside published results" in (tmp_path / "summary.md").read_text()
    assert tmp_path / "learning_curves.png" in written
    ax = Figure().subplots()
    overlay(ax, ("smac", "MMM2"), [MAPPO_MMM2], {"mappo": "red"})
    (line,) = ax.get_lines()
    assert np.array_equal(line.get_xdata(), [1e6, 2e6]) and np.array_equal(line.get_ydata(), [3, 40])
    legend = ax.get_legend()
    assert legend is not None and legend.get_texts()[0].get_text() == "mappo, published"
    ax = Figure().subplots()
    overlay(ax, ("smac", "MMM2"), [MAPPO_MMM2], {"qmix": "red"})  # no MAPPO run on the panel: nothing drawn
    assert not ax.get_lines()


def test_the_shipped_sc2_file_loads():
    curves = load_published(ROOT / "benchmarks/published/smac_sc2.yaml")
    assert {c.task[1] for c in curves} == {"3s5z", "5m_vs_6m", "MMM2", "corridor"}
    assert all(c.source and c.steps_to[50.0] for c in curves)


@pytest.mark.parametrize("text, message", [
    ("smac_3m: [1, 2]", "must map algorithms"),
    ("smac_3m: {mappo: {points: []}}", "needs a source"),
    ("smac_3m: {mappo: {source: x, point: []}}", "unknown key point"),
    ("smac_3m: {mappo: {source: x, points: [[1, 2, 3]]}}", r"\[env steps, score\] pairs"),
    ("smac_3m: {mappo: {source: x, steps_to: [50]}}", r"steps_to maps a score"),
])
def test_a_bad_file_is_one_line(tmp_path, text, message):
    path = tmp_path / "published.yaml"
    path.write_text(text)
    with pytest.raises(UserError, match=message):
        load_published(path)


def test_published_needs_report_on_the_command_line():
    out = subprocess.run([sys.executable, str(ROOT / "scripts/experiment.py"), "--algos", "mappo", "--envs",
                          "smac_3m", "--steps", "10", "--published", "x.yaml"], capture_output=True, text=True,
                         cwd=ROOT)
    assert out.returncode == 2 and out.stderr.strip() == "error: --published goes with --report (it compares a " \
                                                         "report with published results)"
