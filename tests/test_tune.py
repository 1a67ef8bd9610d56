"""scripts/tune.py: Optuna studies of tiny MAPPO runs on the signal game (examples.custom_env): the study in
SQLite, a best config that training accepts, a continued study, pruned trials, the IQM score, and bad inputs as
one line."""
from __future__ import annotations

import contextlib
import importlib.util
import io
import shutil
import sys
from pathlib import Path
from typing import Any

import optuna
import pytest
from optuna.trial import FrozenTrial, TrialState

from core.run_config import resolve_config
from core.tuning.objective import iqm
from marl.algos import get_algo

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("tune_script", ROOT / "scripts" / "tune.py")
assert _spec is not None and _spec.loader is not None
tune_script = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tune_script)

ENV = "examples.custom_env:make_env"
SPACE = "algo:\n  lr: {low: 1.0e-4, high: 3.0e-3, log: true}\n  hidden_sizes: {choices: [[16], [32, 32]]}\n"
# 4 envs x 25 steps = 100 env steps an iteration; evaluations at 500 and 1,000
RUN = ["train.n_envs=4", "algo.rollout_steps=25", "algo.ppo_epochs=1", "train.eval_interval=500",
       "train.eval_episodes=2", "train.eval_envs=2", "train.checkpoint_interval=0"]


class PruneAfterTheFirst(optuna.pruners.BasePruner):
    """Prunes every trial but trial 0, at its first report."""

    def prune(self, study: optuna.Study, trial: FrozenTrial) -> bool:
        return trial.number > 0


def prune_after_the_first() -> optuna.pruners.BasePruner:
    return PruneAfterTheFirst()


def tune(out: Path, *args: str) -> tuple[int, str, str]:
    """Exit status, stdout and stderr of tune.py on the signal game with the small space, studied in `out`."""
    out.mkdir(parents=True, exist_ok=True)
    space = out.parent / "space.yaml"
    space.write_text(SPACE)
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = tune_script.main(["--algo", "mappo", "--env", ENV, "--steps", "1000", "--space", str(space),
                                 "--out", str(out), *args, *RUN])
    return code, stdout.getvalue(), stderr.getvalue()


def trials(out: Path) -> list[FrozenTrial]:
    study = optuna.load_study(study_name=f"mappo_{ENV.replace(':', '_')}", storage=f"sqlite:///{out / 'study.db'}")
    return study.get_trials()


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("tune") / "study"
    code, stdout, stderr = tune(out, "--trials", "3")
    assert code == 0, stderr
    return out, stdout


def test_a_study_of_three_trials_writes_its_database_report_and_a_best_config(study: tuple[Path, str]) -> None:
    out, stdout = study
    done = trials(out)
    assert [t.state for t in done] == [TrialState.COMPLETE] * 3
    assert all(t.intermediate_values.keys() == {500, 1000} for t in done)  # each evaluation, reported
    assert all(t.value == t.intermediate_values[1000] for t in done)  # the final evaluation is the score
    best = max(done, key=lambda t: t.value or 0.0)
    table = (out / "top_trials.md").read_text()
    rows = [line for line in table.splitlines() if line.startswith("| ") and line[2].isdigit()]
    assert len(rows) == 3 and rows[0].startswith(f"| 1 | {best.number} | {best.value:.4g} |")
    assert table in stdout and "dashboard: optuna-dashboard sqlite:///" in stdout
    for name in ("optimization_history.png", "param_importances.png"):
        assert (out / name).read_bytes().startswith(b"\x89PNG")
    entry = get_algo("mappo")
    train, algo, env = resolve_config("mappo", ENV, entry.config_class, entry.defaults,
                                      config_file=str(out / "best_config.yaml"))
    assert algo.lr == best.params["algo.lr"]
    assert str(list(algo.hidden_sizes)) == best.params["algo.hidden_sizes"]  # a list choice, labelled as text
    assert (train.n_envs, algo.rollout_steps, train.eval_interval, train.steps) == (4, 25, 500, 200_000)
    assert env == {}


def test_rerunning_the_command_continues_the_study(study: tuple[Path, str], tmp_path: Path) -> None:
    out = tmp_path / "study"
    shutil.copytree(study[0], out)
    code, _, stderr = tune(out, "--trials", "3", "--steps", "2000")  # another budget: another study
    assert code == 2 and "was tuned with steps 1000; rerun with its settings" in stderr
    code, stdout, stderr = tune(out, "--trials", "3")
    assert code == 0, stderr
    assert "(3 trials so far)" in stdout
    numbers = [t.number for t in trials(out) if t.state == TrialState.COMPLETE]
    assert numbers == [0, 1, 2, 3, 4, 5]
    assert sorted(p.name for p in (out / "trials").iterdir()) == [f"{n:04d}" for n in range(6)]


def test_a_pruned_trial_stops_its_run_and_is_recorded_as_pruned(tmp_path: Path) -> None:
    code, stdout, stderr = tune(tmp_path / "study", "--trials", "2", "--pruner", f"{__name__}:prune_after_the_first")
    assert code == 0, stderr
    first, second = trials(tmp_path / "study")
    assert (first.state, second.state) == (TrialState.COMPLETE, TrialState.PRUNED)
    assert second.intermediate_values.keys() == {500}  # stopped after its first evaluation
    assert "trial 1: pruned at step 500" in stdout
    (summary,) = (tmp_path / "study" / "trials" / "0001").glob("cells/*/*/seed0/summary.json")
    assert '"env_steps": 500' in summary.read_text()


def test_the_score_is_the_interquartile_mean() -> None:
    assert iqm([3.0]) == 3.0
    assert iqm([1.0, 2.0, 6.0]) == 3.0  # fewer than four: the mean
    assert iqm([0.0, 1.0, 2.0, 100.0]) == 1.5  # the middle two
    assert iqm([5.0, 1.0, 2.0, 3.0, 4.0, 0.0, 9.0, 7.0]) == 3.5  # 2, 3, 4, 5


def test_without_optuna_it_says_what_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "optuna", None)
    code, _, stderr = tune(tmp_path / "study", "--trials", "3")
    assert code == 2 and stderr.startswith("error: tuning needs Optuna") and "pip install" in stderr
    assert len(stderr.splitlines()) == 1


def test_ray_without_ray_says_what_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)
    code, _, stderr = tune(tmp_path / "study", "--trials", "3", "--ray")
    assert (code, stderr) == (2, "error: --ray needs Ray: pip install 'concerto-marl[ray]' (in a checkout: pip install "
                                 "-e '.[ray]') (or pip install 'ray>=2.9')\n")


@pytest.mark.parametrize("args, space, message", [
    (["--algo", "nope"], None, "error: unknown algorithm 'nope'; valid algorithms: coma, ddpg, dqn, ippo, iql, "
                               "mappo, ppo, qmix, sac, td3, vdn"),
    (["--env", "nope_env"], None, "error: unknown env 'nope_env'"),
    (["--trials", "0"], None, "error: --trials must be between 1 and 100,000, got 0"),
    (["--workers", "0"], None, "error: --workers must be at least 1, got 0"),
    (["--seeds", "0"], None, "error: --seeds must be at least 1"),
    (["algo.lr=0.001"], None, "error: algo.lr is both searched"),
    (["train.seed=3"], None, "error: train.seed is set by the tuning command: use --steps and --seeds"),
    (["--storage", "nope://x"], None, "error: cannot open the study 'mappo_examples.custom_env_make_env' in "
                                      "--storage nope://x"),
    (["--pruner", "hyperband"], None, "error: unknown pruner 'hyperband'; use median, none or package.module:"
                                      "factory"),
    (["--pruner", f"{__name__}:PruneAfterTheFirst.prune"], None, "must look like package.module:name"),
    (["algo.nope=1"], None, "error: unknown key algo.nope; valid keys: activation,"),
    (["env.n_signal=3"], None, "error: env 'examples.custom_env:make_env' does not accept n_signal; valid options: "
                               "n_agents, n_signals, max_steps"),
    ([], "algo:\n  lr_typo: {low: 0.1, high: 0.2}\n", "unknown key algo.lr_typo in the search space; valid algo "
                                                        "keys: activation, advantage_norm,"),
    ([], "algo:\n  critic_input: {choices: [obs]}\n", "algo.critic_input cannot be searched: the algorithm fixes"),
    ([], "train:\n  steps: {low: 10, high: 20}\n", "train.steps cannot be searched: the tuning command sets it"),
    ([], "algo:\n  clip: {low: -1.0, high: 0.3}\n", "algo.clip=-1.0 is not a valid value: algo.clip must be > 0"),
    ([], "algo:\n  lr: {low: 0.0, high: 0.1, log: true}\n", "log-uniform needs low > 0"),
    ([], "algo:\n  lr: {low: 0.1, high: 0.2, spread: 2}\n", "algo.lr: unknown field 'spread'"),
    ([], "env:\n  n_agents: {choices: [2, 3]}\n", "unknown section 'env'; a search space has sections algo and "
                                                  "train"),
])
def test_bad_input_is_one_line(tmp_path: Path, args: list[str], space: str | None, message: str) -> None:
    extra = list(args)
    if space is not None:
        (tmp_path / "bad.yaml").write_text(space)
        extra += ["--space", str(tmp_path / "bad.yaml")]
    code, _, stderr = tune(tmp_path / "study", "--trials", "3", *extra)
    assert code == 2, stderr
    assert len(stderr.splitlines()) == 1 and message in stderr
    assert not (tmp_path / "study" / "study.db").exists()


def test_values_valid_alone_that_the_config_refuses_together_fail_their_trial_and_the_study_goes_on(
        tmp_path: Path) -> None:
    """The experiment runner refuses a bad config before its runs start; in a study that is one failed trial."""
    space = tmp_path / "space.yaml"
    space.write_text("algo:\n  batch_size: {choices: [256, 512]}\n  buffer_size: {choices: [100, 200]}\n")
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(io.StringIO()):
        code = tune_script.main(["--algo", "dqn", "--env", "CartPole-v1", "--steps", "200", "--trials", "2",
                                 "--space", str(space), "--out", str(tmp_path / "study")])
    assert code == 1
    assert stdout.getvalue().count("failed: dqn on CartPole-v1: algo: batch_size") == 2, stdout.getvalue()


@pytest.mark.slow
def test_several_seeds_and_workers_share_one_study(tmp_path: Path) -> None:
    out = tmp_path / "study"
    code, _, stderr = tune(out, "--trials", "2", "--seeds", "2", "--workers", "2")
    assert code == 0, stderr
    done = trials(out)
    assert [t.state for t in done] == [TrialState.COMPLETE] * 2
    assert done[0].params != done[1].params  # each worker's sampler has its own seed
    for t in done:  # the score is the IQM (here the mean) of the seeds' final evaluations
        scores = t.user_attrs["scores"]
        assert len(scores) == 2 and t.value == pytest.approx(sum(scores) / 2)
        assert sorted(p.name for p in (out / "trials" / f"{t.number:04d}").glob("cells/*/*/seed*")) == [
            "seed0", "seed1"]


def test_every_algorithm_has_a_valid_default_space(tmp_path: Path) -> None:
    from core.tuning.space import check_values, default_space, load_space
    from marl.algos import ALGOS as MARL
    from single_agent.algos import ALGOS as SINGLE

    entries: list[tuple[str, Any]] = [*MARL.items(), *SINGLE.items()]
    for name, entry in entries:
        params = load_space(default_space(name), entry.config_class, entry.defaults)
        assert {p.name.split(".")[0] for p in params} <= {"algo", "train"}

        def check(extra: list[str], name: str = name, entry: Any = entry) -> None:
            resolve_config(name, "any_env", entry.config_class, entry.defaults, overrides=extra,
                           config_dir=tmp_path)  # the algorithm's own defaults only

        check_values(params, check, default_space(name))
