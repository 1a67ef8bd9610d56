"""Experiment reports: statistics against hand-computed values and rliable's own, reproducible intervals,
merging results, and the files a report writes."""
import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from matplotlib.image import imread
from rliable import metrics

from core.errors import UserError
from core.experiments.api import report_experiments
from core.experiments.report import (
    ResultsError,
    bootstrap,
    final_scores,
    learning_curves,
    load_results,
    primary_metrics,
    probabilities_of_improvement,
    probability_of_improvement,
    run_scores,
    summarize,
    write_report,
)

REPS = 200  # enough resamples for the properties tested, fast enough for the fast suite


def run(final: float | None, curve: tuple[float, ...] = (0.0, 1.0), win: bool = False) -> dict[str, Any]:
    """A run whose evaluations average `curve` at steps 100, 200, ... and whose final evaluation averages `final`
    (two episodes, final +- 1; None: an unfinished run without absolute_metrics)."""
    record: dict[str, Any] = {}
    for i, value in enumerate(curve):
        record[f"step_{i}"] = {"step_count": 100 * (i + 1), "return": [value - 1, value + 1]}
        if win:
            record[f"step_{i}"]["win_rate"] = [float(value > 0.5), 0.0]
    if final is not None:
        record["absolute_metrics"] = {"return": [final - 1, final + 1], **({"win_rate": [1.0, 0.0]} if win else {})}
    return record


def runs(finals: list[float], **kwargs: Any) -> dict[str, Any]:
    return {f"run_{seed}": run(final, **kwargs) for seed, final in enumerate(finals)}


SCORES = [10.0, 0.0, 100.0, 4.0, 2.0, 9.0, 1.0, 5.0]  # sorted: 0 1 | 2 4 5 9 | 10 100


def test_statistics_match_hand_computed_values_and_rliable() -> None:
    results = {"gymnasium": {"CartPole-v1": {"ppo": runs(SCORES)}}}
    scores = final_scores(results, "return")[("gymnasium", "CartPole-v1")]["ppo"]
    np.testing.assert_allclose(np.sort(scores), sorted(SCORES))
    (row,) = summarize(results, "return", reps=REPS)
    assert row.n_runs == 8
    assert row.iqm.point == pytest.approx((2 + 4 + 5 + 9) / 4)  # the middle 4 of 8 runs
    assert row.mean.point == pytest.approx(sum(SCORES) / 8)
    assert row.median.point == pytest.approx((4 + 5) / 2)
    assert (row.min, row.max) == (0.0, 100.0)
    assert row.iqm.point == pytest.approx(metrics.aggregate_iqm(scores[:, None]))
    assert row.mean.point == pytest.approx(metrics.aggregate_mean(scores[:, None]))
    # rliable's median is over tasks of per-task means; over runs it is its median of the transposed matrix
    assert row.median.point == pytest.approx(metrics.aggregate_median(scores[None, :]))


def test_intervals_contain_the_estimate_are_reproducible_and_leave_numpy_rng_alone() -> None:
    results = {"smac": {"3m": {"mappo": runs(SCORES), "qmix": runs([s / 2 for s in SCORES])}}}
    np.random.seed(123)
    expected = np.random.random()
    np.random.seed(123)
    first = summarize(results, "return", reps=REPS)
    assert np.random.random() == expected  # the caller's stream goes on as if no bootstrap had run
    assert summarize(results, "return", reps=REPS) == first
    for row in first:
        for estimate in (row.iqm, row.mean, row.median):
            assert estimate.lo <= estimate.point <= estimate.hi
            assert estimate.lo < estimate.hi  # the runs differ, so the resamples do
    # each algorithm is resampled on its own seed: another algorithm does not move its interval
    alone = summarize({"smac": {"3m": {"qmix": results["smac"]["3m"]["qmix"]}}}, "return", reps=REPS)
    assert alone == [row for row in first if row.algo == "qmix"]
    assert summarize(results, "return", reps=REPS, seed=1) != first


def test_probability_of_improvement() -> None:
    low = [1.0, 2.0, 3.0, 4.0]
    results = {"smac": {"3m": {"a": runs([5.0, 6.0, 7.0]), "b": runs(low), "c": runs(low)}}}
    found = {(i.algo_x, i.algo_y): i.probability for i in probabilities_of_improvement(results, "return", reps=REPS)}
    assert set(found) == {(x, y) for x in "abc" for y in "abc" if x != y}
    assert tuple(found["a", "b"]) == (1.0, 1.0, 1.0)  # every run of a beats every run of b, in every resample
    assert tuple(found["b", "a"]) == (0.0, 0.0, 0.0)
    assert found["b", "c"].point == 0.5  # identical data
    assert found["b", "c"].lo <= 0.5 <= found["b", "c"].hi
    assert found["c", "b"].point == 0.5


@settings(max_examples=50, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(1, 6), st.integers(1, 3)), elements=st.sampled_from([0.0, 1.0, 2.0])),
       arrays(np.float64, st.tuples(st.integers(1, 6), st.just(1)), elements=st.sampled_from([0.0, 1.0, 2.0])))
def test_fast_probability_of_improvement_equals_rliable(x: np.ndarray, y: np.ndarray) -> None:
    y = np.repeat(y, x.shape[1], axis=1)
    assert probability_of_improvement(x, y) == pytest.approx(metrics.probability_of_improvement(x, y))
    assert probability_of_improvement(x, x) == 0.5


def test_bootstrap_is_rliable_with_a_seed() -> None:
    scores = np.arange(12.0).reshape(6, 2)
    point, interval = bootstrap(scores, metrics.aggregate_iqm, reps=REPS, seed=7)
    assert point.shape == (1,) and interval.shape == (2, 1)
    assert point[0] == pytest.approx(metrics.aggregate_iqm(scores))
    assert np.array_equal(bootstrap(scores, metrics.aggregate_iqm, reps=REPS, seed=7)[1], interval)


def test_final_scores_fall_back_to_the_last_evaluation_and_skip_a_missing_metric() -> None:
    curve = tuple(float(i) for i in range(12))  # step_10 and step_11 come after step_9, not after step_1
    results = {"smac": {"3m": {"qmix": {"run_0": run(None, curve), "run_1": run(50.0)}}},
               "gymnasium": {"CartPole-v1": {"ppo": runs([3.0])}}}
    assert final_scores(results, "return")[("smac", "3m")]["qmix"].tolist() == [11.0, 50.0]
    assert [r.unfinished_at for r in run_scores(results, "return")[("smac", "3m")]["qmix"]] == [1200, None]
    assert [(s.task, s.n_runs, s.n_unfinished) for s in summarize(results, "return", reps=REPS)] == [
        ("CartPole-v1", 1, 0), ("3m", 2, 1)]
    assert final_scores(results, "win_rate") == {}
    assert summarize(results, "win_rate") == []
    assert probabilities_of_improvement(results, "win_rate") == []


def test_a_late_collapse_shows_in_the_lowest_of_the_last_three_evaluations() -> None:
    results = {"smac": {"3m": {"coma": {"run_0": run(90.0, (0.0, 95.0, 5.0, 100.0, 90.0)),
                                        "run_1": run(80.0, (0.0, 80.0, 85.0, 90.0, 80.0))}}}}
    by_run = run_scores(results, "return")[("smac", "3m")]["coma"]
    assert [(r.run, r.final, r.recent_min) for r in by_run] == [("run_0", 90.0, 5.0), ("run_1", 80.0, 80.0)]
    (row,) = summarize(results, "return", reps=REPS)
    assert (row.min, row.recent_min) == (80.0, 5.0)


def test_learning_curves_keep_the_evaluations_every_run_reached() -> None:
    results = {"smac": {"3m": {"qmix": {"run_0": run(1.0, (1.0, 2.0, 3.0)), "run_1": run(1.0, (3.0, 4.0))}}}}
    steps, scores = learning_curves(results, "return")[("smac", "3m")]["qmix"]
    assert steps.tolist() == [100.0, 200.0]
    assert scores.tolist() == [[1.0, 2.0], [3.0, 4.0]]


def write(path: Path, results: dict[str, Any]) -> Path:
    path.mkdir(parents=True)
    (path / "results.json").write_text(json.dumps(results))
    return path


def test_load_results_merges_experiments_and_rejects_a_run_found_twice(tmp_path: Path) -> None:
    one = write(tmp_path / "one", {"smac": {"3m": {"mappo": runs([1.0])}}})
    two = write(tmp_path / "two", {"smac": {"3m": {"mappo": {"run_7": run(2.0)}, "qmix": runs([3.0])}},
                                   "gymnasium": {"CartPole-v1": {"ppo": runs([4.0])}}})
    merged = load_results([one, two / "results.json"])
    assert sorted(merged["smac"]["3m"]["mappo"]) == ["run_0", "run_7"]
    assert set(merged["smac"]["3m"]) == {"mappo", "qmix"} and "gymnasium" in merged
    with pytest.raises(ValueError, match=r"smac/3m/mappo/run_0 is also in .*one"):
        load_results([one, write(tmp_path / "three", {"smac": {"3m": {"mappo": runs([9.0])}}})])
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "results.json").write_text("{")
    with pytest.raises(ResultsError, match="not valid JSON"):
        load_results([tmp_path / "bad"])
    with pytest.raises(ResultsError, match="cannot read"):
        load_results([tmp_path / "missing"])
    with pytest.raises(ResultsError, match="smac/3m should map algorithm names"):
        load_results([write(tmp_path / "flat", {"smac": {"3m": [1, 2]}})])
    labelled = load_results([one, two, tmp_path / "three"], labels=[None, "v2", "tuned"])  # variants of one algorithm
    assert set(labelled["smac"]["3m"]) == {"mappo", "mappo-v2", "qmix-v2", "tuned"}


def test_report_experiments_reads_dir_equals_label(tmp_path: Path) -> None:
    base = write(tmp_path / "base", {"smac": {"3m": {"coma": runs([10.0, 20.0])}}})
    variant = write(tmp_path / "variant", {"smac": {"3m": {"coma": runs([30.0, 40.0])}}})
    files = report_experiments([base, f"{variant}=coma+entropy"], tmp_path / "both")
    assert "| smac | 3m | coma+entropy | 2 |" in (tmp_path / "both" / "summary.md").read_text()
    assert [f.name for f in files][:2] == ["summary.csv", "summary.md"]
    with pytest.raises(UserError, match="empty label"):
        report_experiments([base, f"{variant}="], tmp_path / "x")


def test_a_joint_report_keeps_its_data_and_can_be_reported_on_again(tmp_path: Path) -> None:
    base = write(tmp_path / "base", {"smac": {"3m": {"coma": runs([10.0, 20.0])}}})
    variant = write(tmp_path / "variant", {"smac": {"3m": {"coma": runs([30.0, 40.0])}}})
    joint = tmp_path / "joint"
    files = report_experiments([base, f"{variant}=coma+entropy"], joint)
    assert {"results.json", "protocol.yaml"} <= {f.name for f in files}
    first = (joint / "summary.md").read_text()
    for gone in (base, variant):  # the experiments are gone; their report is not
        shutil.rmtree(gone)
    report_experiments([joint], tmp_path / "again")
    assert (tmp_path / "again" / "summary.md").read_text() == first
    more = write(tmp_path / "more", {"smac": {"3m": {"qmix": runs([50.0, 60.0])}}})
    report_experiments([joint, more], joint)  # merged again into the same report
    assert "| smac | 3m | qmix | 2 |" in (joint / "summary.md").read_text()
    assert set(json.loads((joint / "results.json").read_text())["smac"]["3m"]) == {"coma", "coma+entropy", "qmix"}


def test_write_report_writes_every_file(tmp_path: Path) -> None:
    curve = (0.0, 0.5, 1.0)
    results = {"smac": {"3m": {"mappo": runs([8.0, 9.0, 10.0], curve=curve, win=True),
                               "qmix": runs([5.0, 6.0, 7.0], curve=curve, win=True)}},
               "gymnasium": {"CartPole-v1": {"ppo": runs([400.0, 500.0], curve=curve)}}}
    assert primary_metrics(results, ("win_rate", "return")) == {  # what each task's figure panel shows
        ("gymnasium", "CartPole-v1"): "return", ("smac", "3m"): "win_rate"}
    protocol = {"interval": 10000, "episodes": 32, "greedy": True, "n_envs": 8}
    files = write_report(results, tmp_path / "report", protocol, metric_order=("win_rate", "return", "length"),
                         reps=REPS)
    assert [f.name for f in files] == ["summary.csv", "summary.md", "learning_curves.png", "final_scores.png",
                                       "performance_profile.png"]
    with files[0].open() as f:
        rows = list(csv.DictReader(f))
    assert [(r["task"], r["algo"], r["metric"]) for r in rows] == [
        ("3m", "mappo", "win_rate"), ("3m", "qmix", "win_rate"),  # CartPole reports no wins, nothing reports length
        ("CartPole-v1", "ppo", "return"), ("3m", "mappo", "return"), ("3m", "qmix", "return")]
    assert float(rows[0]["mean"]) == 0.5 and rows[0]["n_runs"] == "3"
    md = files[1].read_text()
    assert "| smac | 3m | mappo | 3 | 50.0% [50.0%, 50.0%] |" in md
    assert "| smac | 3m | mappo | qmix | 1.00 [1.00, 1.00] |" in md  # in return: every mappo run beats qmix's
    assert "every 10,000 env steps on 32 episodes with greedy actions" in md
    assert "Other settings: n_envs = 8." in md
    for png in files[2:]:
        image = imread(png)
        assert image.ndim == 3 and image.shape[0] > 200 and image.shape[1] > 400
        assert image.std() > 0  # something was drawn
    with pytest.raises(ResultsError, match="no run reports any of the metrics length"):
        write_report(results, tmp_path / "none", {}, metric_order=("length",), reps=REPS)


def test_reports_need_no_pyplot() -> None:
    """The module draws on its own Agg canvases: importing it selects no backend for the user's process."""
    code = "import sys, core.experiments.report; assert 'matplotlib.pyplot' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).parent.parent)


def test_the_report_marks_unfinished_runs(tmp_path: Path) -> None:
    results = {"smac": {"3m": {"qmix": {"run_0": run(None, (1.0, 2.0, 3.0)), "run_1": run(4.0)}}}}
    files = write_report(results, tmp_path, {}, metric_order=("return",), reps=REPS)
    md = files[1].read_text()
    assert "| smac | 3m | qmix | 2 (1 unfinished) |" in md
    assert "| smac | 3m | qmix | run_0 | 3.00 | 1.00 | unfinished: last evaluated at 300 |" in md
    assert "| smac | 3m | qmix | run_1 | 4.00 | 0.00 | finished |" in md
    assert "counts with its last evaluation as its final score" in md
    with files[0].open() as f:
        assert next(csv.DictReader(f))["n_unfinished"] == "1"
