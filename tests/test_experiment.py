"""The experiment runner: grids of ordinary runs, resumable, failures isolated, results in marl-eval's format."""
from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from core.errors import UserError
from core.experiments import report_experiments, run_experiment, trainers
from core.experiments.cli import main, parser, spec_from_args
from core.experiments.executors import run_grid
from core.experiments.grid import Cell, ExperimentSpec, cell_state, parse_seeds
from core.experiments.results import collect, env_task
from core.experiments.trainers import training_modules
from core.paths import CONFIG_DIR

ROOT = Path(__file__).resolve().parent.parent
TINY = ["--envs", "mpe_simple_spread", "--steps", "200", "--no-progress", "algo.rollout_steps=25",
        "train.n_envs=4", "train.eval_interval=100", "train.eval_episodes=2", "train.eval_envs=2"]


def experiment(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "experiment.py"), *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, **kwargs)


def assert_marl_eval_schema(results: dict) -> None:
    """marl-eval's documented raw-data structure (marl-eval does not install here, so its schema is checked):
    environment -> task -> algorithm -> run -> step_1..step_k {step_count, metric: [per episode]} and
    absolute_metrics {metric: [per episode]}."""
    for tasks in results.values():
        for algos in tasks.values():
            for runs in algos.values():
                for run in runs.values():
                    steps = [k for k in run if k != "absolute_metrics"]
                    assert steps == [f"step_{i}" for i in range(1, len(steps) + 1)]
                    counts = [run[k]["step_count"] for k in steps]
                    assert all(isinstance(c, int) for c in counts) and counts == sorted(set(counts))
                    for record in [*(run[k] for k in steps), run.get("absolute_metrics", {})]:
                        metrics = {k: v for k, v in record.items() if k != "step_count"}
                        assert all(isinstance(v, list) and all(isinstance(x, float) for x in v)
                                   for v in metrics.values())
                        assert len({len(v) for v in metrics.values()}) <= 1  # one value per episode each


def test_seeds_are_a_count_or_a_list():
    assert parse_seeds("5") == [0, 1, 2, 3, 4]
    assert parse_seeds("3,7,9") == [3, 7, 9]
    assert parse_seeds("4,") == [4]
    for bad in ("0", "x", "1,1", ""):
        with pytest.raises(ValueError):
            parse_seeds(bad)


def test_env_names_map_to_marl_eval_environment_and_task():
    assert env_task("smac_3m") == ("smac", "3m")
    assert env_task("mpe_simple_spread") == ("mpe", "simple_spread")
    assert env_task("CartPole-v1") == ("gymnasium", "CartPole-v1")
    assert env_task("my_pkg.envs:make") == ("custom", "my_pkg.envs:make")


def test_results_follow_marl_eval_raw_format_and_a_repeated_step_counts_once(tmp_path):
    cell = Cell("mappo", "smac_3m", 4)
    run = cell.directory(tmp_path) / "run" / "smac_3m" / "mappo" / "20260101-000000-seed4"
    run.mkdir(parents=True)
    (run / "config.yaml").write_text("{}\n")
    lines = [{"env_steps": 100, "return": [1.0, 2.0], "length": [5.0, 6.0], "win": [0.0, 1.0]},
             {"env_steps": 200, "return": [3.0, 4.0], "length": [5.0, 6.0], "win": [1.0, 1.0]},
             {"env_steps": 200, "return": [5.0, 6.0], "length": [5.0, 6.0], "win": [1.0, 0.0]}]  # resumed, again
    (run / "evaluations.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines) + '{"env_st')
    assert collect([cell], tmp_path) == {"smac": {"3m": {"mappo": {"run_4": {
        "step_1": {"step_count": 100, "return": [1.0, 2.0], "win_rate": [0.0, 1.0]},
        "step_2": {"step_count": 200, "return": [5.0, 6.0], "win_rate": [1.0, 0.0]}}}}}}  # unfinished: no absolute
    (cell.directory(tmp_path) / "summary.json").write_text(json.dumps({"signal": None}))
    run_4 = collect([cell], tmp_path)["smac"]["3m"]["mappo"]["run_4"]
    assert run_4["absolute_metrics"] == {"return": [5.0, 6.0], "win_rate": [1.0, 0.0]}


def test_a_grid_runs_every_cell_and_a_failing_cell_does_not_stop_the_others(tmp_path):
    config = tmp_path / "grid.yaml"
    config.write_text("algo_overrides:\n  ippo:\n    algo.lr: 1.0e+30\n")  # every ippo cell diverges in training
    out = tmp_path / "exp"
    result = experiment("--algos", "mappo,ippo", "--seeds", "2", "--workers", "2", "--out", str(out),
                        "--config", str(config), *TINY)
    assert result.returncode == 1, result.stderr
    assert "2 cells finished, 2 failed" in result.stdout
    assert result.stdout.count("failed: ippo/mpe_simple_spread/seed") == 2 and "is nan" in result.stdout
    spec = ExperimentSpec(["mappo", "ippo"], ["mpe_simple_spread"], [0, 1], 200)
    states = {c.name: cell_state(c.directory(out)) for c in spec.cells()}
    assert states == {"mappo/mpe_simple_spread/seed0": "done", "mappo/mpe_simple_spread/seed1": "done",
                      "ippo/mpe_simple_spread/seed0": "failed", "ippo/mpe_simple_spread/seed1": "failed"}
    results = json.loads((out / "results.json").read_text())
    assert_marl_eval_schema(results)
    runs = results["mpe"]["simple_spread"]["mappo"]
    assert set(runs) == {"run_0", "run_1"} and "ippo" not in results["mpe"]["simple_spread"]
    for run in runs.values():
        assert [run[k]["step_count"] for k in ("step_1", "step_2")] == [100, 200]
        assert len(run["absolute_metrics"]["return"]) == 2
    for name in ("summary.md", "summary.csv", "learning_curves.png", "final_scores.png", "performance_profile.png"):
        assert (out / name).stat().st_size > 0, name
    assert "every 100 env steps on 2 episodes with greedy actions" in (out / "summary.md").read_text()
    (out / "summary.md").unlink()
    again = experiment("--report", str(out))
    assert again.returncode == 0 and (out / "summary.md").is_file()
    for seed in (0, 1):  # each cell is an ordinary run: its own config, metrics and checkpoint
        run_dirs = list((out / "cells" / "mpe_simple_spread" / "mappo" / f"seed{seed}" / "run").glob("*/*/*"))
        assert len(run_dirs) == 1 and (run_dirs[0] / "config.yaml").is_file()
        assert "seed: " + str(seed) in (run_dirs[0] / "config.yaml").read_text()
        assert (run_dirs[0] / "checkpoints").is_dir() and (run_dirs[0] / "metrics.csv").is_file()


def test_bad_input_is_one_line_and_exit_2(tmp_path):
    for args, message in [(["--algos", "mappo,nope", *TINY], "unknown algorithm 'nope'"),
                          (["--algos", "mappo", "--seeds", "x", *TINY], "--seeds must be a count"),
                          (["--envs", "smac_3m", "--steps", "10"], "the following arguments are required: --algos"),
                          (["--algos", "mappo", "--envs", "smac_3m", "--steps", "0"], "--steps must be a positive")]:
        result = experiment(*args, "--out", str(tmp_path / "exp"))
        assert result.returncode == 2 and result.stderr.strip().splitlines() == [result.stderr.strip()]
        assert message in result.stderr
    experiment("--algos", "mappo", "--seeds", "1", "--out", str(tmp_path / "other"), *TINY)
    result = experiment("--algos", "ippo", "--seeds", "1", "--out", str(tmp_path / "other"), *TINY)
    assert result.returncode == 2 and "holds another experiment" in result.stderr
    result = experiment("--algos", "mappo", "--seeds", "1", "--out", "/dev/null/exp", *TINY)
    assert result.returncode == 2 and "cannot create the experiment directory" in result.stderr
    result = experiment("--report", str(tmp_path / "missing"))
    assert result.returncode == 2 and "has no results.json" in result.stderr


@pytest.mark.parametrize("args, message", [
    (["--envs", "nope"], "error: mappo on nope: unknown env 'nope'; registered envs: "),
    (["--envs", "no_such_module:make"], "error: mappo on no_such_module:make: env 'no_such_module:make': cannot "
                                        "import no_such_module"),
    (["--envs", "mpe_simple_spread", "algo.lr=abc"], "error: mappo on mpe_simple_spread: algo.lr must be a number, "
                                                     "got 'abc'"),
    (["--envs", "mpe_simple_spread", "algo.nokey=1"], "error: mappo on mpe_simple_spread: unknown key algo.nokey; "
                                                      "valid keys: activation,"),
    (["--envs", "mpe_simple_spread", "env.bogus=1"], "error: mappo on mpe_simple_spread: env mpe_simple_spread does "
                                                     "not accept bogus"),
    (["--algos", "dqn", "--envs", "CartPole-v1", "env.bogus=1"], "error: dqn on CartPole-v1: cannot make gymnasium "
                                                                 "env 'CartPole-v1'"),
    (["--config", "GRID"], "error: ippo on mpe_simple_spread: unknown key algo.nokey"),  # the file's algo_overrides
    (["--config", "GRID", "--train-config", "TRAIN"], "error: mappo on mpe_simple_spread: unknown key algo.lr_typo"),
])
def test_bad_input_of_any_cell_is_refused_before_anything_is_written(tmp_path, capsys, args, message):
    """Every (algo, env) pair's config, overrides and env are checked before the experiment directory exists, so
    that the corrected command is not refused as another experiment."""
    paths = {"GRID": tmp_path / "grid.yaml", "TRAIN": tmp_path / "train.yaml"}
    paths["GRID"].write_text("envs: [mpe_simple_spread, smac_3m]\nalgo_overrides:\n  ippo: {algo.nokey: 1}\n")
    paths["TRAIN"].write_text("algo:\n  lr_typo: 0.1\n")
    argv = ["--algos", "mappo,ippo", "--steps", "100", "--out", str(tmp_path / "exp"), *args]
    assert main([str(paths.get(a, a)) for a in argv]) == 2
    stderr = capsys.readouterr().err
    assert stderr.startswith(message) and stderr.count("\n") == 1, stderr
    assert not (tmp_path / "exp").exists()


def test_a_refused_grid_writes_nothing_at_the_default_out(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UserError, match="unknown env 'nope'"):
        run_experiment(ExperimentSpec(["mappo"], ["nope"], [0], 100), progress=False)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_a_stopped_grid_resumes_only_its_unfinished_cells(tmp_path):
    out = tmp_path / "exp"
    args = ["--algos", "mappo", "--envs", "smac_3m", "--seeds", "3", "--steps", "16000", "--workers", "1",
            "--no-progress", "--out", str(out), "train.checkpoint_interval=1600", "train.eval_interval=8000",
            "train.eval_episodes=2", "train.eval_envs=2", "algo.rollout_steps=25"]
    grid = subprocess.Popen([sys.executable, str(ROOT / "scripts" / "experiment.py"), *args], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = Cell("mappo", "smac_3m", 0).directory(out)
    second = Cell("mappo", "smac_3m", 1).directory(out)
    deadline = time.monotonic() + 240
    while not (cell_state(first) == "done" and list((second / "run").glob("*/*/*/checkpoints/step-*"))):
        assert grid.poll() is None and time.monotonic() < deadline, grid.communicate()
        time.sleep(0.2)
    grid.send_signal(signal.SIGTERM)
    stdout, _ = grid.communicate(timeout=120)
    assert grid.returncode == 130 and "1 cells finished" in stdout and "2 to continue" in stdout
    assert cell_state(second) == "interrupted" and cell_state(Cell("mappo", "smac_3m", 2).directory(out)) == "new"
    finished = (first / "summary.json").stat().st_mtime_ns
    result = experiment(*args)
    assert result.returncode == 0 and "3 cells finished, 0 failed, 0 to continue" in result.stdout
    assert (first / "summary.json").stat().st_mtime_ns == finished  # not run again
    commands = [line for line in (second / "log.txt").read_text().splitlines() if line.startswith("$ ")]
    assert len(commands) == 2 and "--resume" in commands[1]  # the interrupted cell continued ...
    assert len(list((second / "run").glob("*/*/*"))) == 1  # ... in its own run directory
    assert json.loads((second / "summary.json").read_text())["env_steps"] >= 16000


def test_ray_without_ray_installed_is_one_line(tmp_path):
    code = ("import sys; sys.modules['ray'] = None; sys.argv[0] = 'experiment.py'; "
            "import runpy; runpy.run_path('scripts/experiment.py', run_name='__main__')")
    result = subprocess.run([sys.executable, "-c", code, "--algos", "mappo", "--seeds", "1", "--ray",
                             "--out", str(tmp_path / "exp"), *TINY], cwd=ROOT, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip() == ("error: --ray needs Ray: pip install 'concerto-marl[ray]' (in a checkout: pip "
                                     "install -e '.[ray]') (or pip install 'ray>=2.9')")


@pytest.mark.slow
def test_the_same_grid_runs_on_a_local_ray_into_the_same_layout(tmp_path):
    pytest.importorskip("ray")
    out = tmp_path / "exp"
    result = experiment("--algos", "mappo,ippo", "--seeds", "2", "--ray", "--out", str(out), *TINY)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "4 cells finished, 0 failed" in result.stdout
    runs = json.loads((out / "results.json").read_text())["mpe"]["simple_spread"]
    assert {algo: sorted(r) for algo, r in runs.items()} == {"mappo": ["run_0", "run_1"], "ippo": ["run_0", "run_1"]}
    assert all("absolute_metrics" in run for r in runs.values() for run in r.values())


@pytest.mark.slow
def test_max_hours_stops_the_grid_with_its_cells_checkpointed(tmp_path):
    out = tmp_path / "exp"
    result = experiment("--algos", "mappo", "--envs", "smac_3m", "--seeds", "1", "--steps", "2000000",
                        "--max-hours", "0.004", "--no-progress", "--out", str(out), "train.eval_episodes=2",
                        "train.eval_envs=2")  # 14.4 s of a run that would take minutes (its start alone can take 7 s
    # on a busy 2-core machine: 0.002 h once stopped the cell before it had begun)
    assert result.returncode == 75, result.stdout + result.stderr
    assert "0 cells finished, 0 failed, 1 to continue" in result.stdout and "--max-hours" in result.stdout
    assert cell_state(Cell("mappo", "smac_3m", 0).directory(out)) == "interrupted"


class SlowToStop:
    """A cell that takes a few polls to reach its checkpoint after a stop request, counting the requests."""

    def __init__(self) -> None:
        self.stops, self.polls_after_stop = 0, 0

    def poll(self) -> int | None:
        if self.stops:
            self.polls_after_stop += 1
        return 143 if self.polls_after_stop > 6 else None

    def stop(self) -> None:
        self.stops += 1


def test_a_stopping_grid_asks_each_running_cell_to_stop_once(tmp_path):
    """A second SIGTERM more than 2 s after the first makes a run stop at once, without its checkpoint: the grid
    must not repeat the request while a cell is still writing it."""
    cells: list[SlowToStop] = []

    class Executor:
        def start(self, argv: list[str], log: Path) -> SlowToStop:
            cells.append(SlowToStop())
            if len(cells) == 2:  # both running: the grid gets a SIGTERM
                signal.raise_signal(signal.SIGTERM)
            return cells[-1]

        def close(self) -> None:
            pass

    spec = ExperimentSpec(["mappo"], ["smac_3m"], [0, 1], 1000)
    result = run_grid(spec, tmp_path, lambda cell, directory, resume: ["train"], workers=2, progress=False,
                      executor=Executor())
    assert result.stopped == "signal" and len(result.interrupted) == 2
    assert [c.stops for c in cells] == [1, 1]


def test_the_python_api_runs_a_grid_reports_it_and_skips_finished_cells_on_a_rerun(tmp_path):
    spec = ExperimentSpec(["dqn"], ["CartPole-v1"], [0], 300,
                          overrides=["train.eval_interval=150", "train.eval_episodes=2", "algo.learning_starts=100",
                                     "algo.iteration_steps=150"])
    result = run_experiment(spec, tmp_path / "exp", progress=False)
    assert [c.name for c in result.done] == ["dqn/CartPole-v1/seed0"] and not result.failed, result.failed
    assert result.stopped is None and result.results == tmp_path / "exp" / "results.json"
    assert {p.name for p in result.report} >= {"summary.md", "learning_curves.png"}
    run = json.loads(result.results.read_text())["gymnasium"]["CartPole-v1"]["dqn"]["run_0"]
    assert [run[k]["step_count"] for k in ("step_1", "step_2")] == [150, 300]
    log = Cell("dqn", "CartPole-v1", 0).directory(tmp_path / "exp") / "log.txt"
    assert log.read_text().count("$ ") == 1 and "-m core.launch single_agent.cli" in log.read_text()
    again = run_experiment(spec, tmp_path / "exp", progress=False)
    assert len(again.done) == 1 and log.read_text().count("$ ") == 1  # nothing trained twice
    assert report_experiments([tmp_path / "exp"]) == result.report
    with pytest.raises(UserError, match="holds another experiment"):
        run_experiment(ExperimentSpec(["ppo"], ["CartPole-v1"], [0], 300), tmp_path / "exp")


def test_a_spec_rejects_empty_or_repeated_names_and_bad_budgets():
    bad: list[tuple[dict[str, Any], str]] = [
        ({"algos": []}, "--algos is empty"), ({"envs": ["a", "a"]}, "--envs gives 'a' twice"),
        ({"seeds": [-1]}, "non-negative"), ({"steps": 0}, "--steps must be a positive")]
    for kwargs, message in bad:
        with pytest.raises(UserError, match=message):
            ExperimentSpec(**{"algos": ["mappo"], "envs": ["smac_3m"], "seeds": [0], "steps": 10, **kwargs})


def test_each_cell_can_train_from_its_own_config_file(tmp_path, monkeypatch):
    """train_config fills in {algo} and {env}: a grid over maps runs each map's reference recipe. A relative
    configs/... path names the project's own configs from any directory."""
    monkeypatch.chdir(tmp_path)
    relative = ExperimentSpec(["mappo"], ["smac_3m"], [0], 10, train_config="configs/reference/{algo}_{env}.yaml")
    assert relative.config_file(relative.cells()[0]) == CONFIG_DIR / "reference" / "mappo_smac_3m.yaml"
    spec = ExperimentSpec(["mappo", "qmix"], ["smac_3m", "smac_MMM2"], [0], 10,
                          train_config=str(ROOT / "configs/reference/{algo}_{env}.yaml"))
    cell = spec.cells()[-1]
    assert spec.config_file(cell) == ROOT / f"configs/reference/{cell.algo}_{cell.env}.yaml"
    assert spec.to_dict()["train_config"].endswith("{algo}_{env}.yaml")
    assert "train_config" not in ExperimentSpec(["mappo"], ["smac_3m"], [0], 10).to_dict()  # old grids still match
    reference = str(ROOT / "configs/reference/{algo}_{env}.yaml")
    with pytest.raises(UserError, match=r"training config .*mappo_smac_nowhere.yaml .* is not a file"):
        ExperimentSpec(["mappo"], ["smac_nowhere"], [0], 10, train_config=reference)
    with pytest.raises(UserError, match=r"only \{algo\} and \{env\}"):
        ExperimentSpec(["mappo"], ["smac_3m"], [0], 10, train_config=str(tmp_path / "{seed}.yaml"))
    with pytest.raises(UserError, match=r"only \{algo\} and \{env\}"):
        ExperimentSpec(["mappo"], ["smac_3m"], [0], 10, train_config=str(tmp_path / "{algo.x}.yaml"))
    args = parser().parse_intermixed_args(["--algos", "mappo", "--envs", "smac_3m", "--steps", "10",
                                           "--train-config", reference])
    from_flags = spec_from_args(args).config_file(Cell("mappo", "smac_3m", 0))
    assert from_flags is not None and from_flags.name == "mappo_smac_3m.yaml"


def test_trainers_come_from_entry_points_and_a_broken_one_is_one_line(monkeypatch):
    modules = training_modules()
    assert modules["mappo"] == "marl.cli" and modules["dqn"] == "single_agent.cli"
    broken = metadata.EntryPoint("mine", "no_such_module:ALGOS", trainers.GROUP)
    monkeypatch.setattr(trainers.metadata, "entry_points", lambda group: [broken])
    with pytest.raises(UserError, match=r"trainer 'mine' .* loading its entry point failed"):
        training_modules()
    monkeypatch.setattr(trainers.metadata, "entry_points", lambda group: [])
    with pytest.raises(UserError, match="no training entry points are installed"):
        training_modules()


def test_cells_train_with_the_threads_the_grid_reserves_not_their_algorithms_default(tmp_path):
    # TD3 defaults to 2 torch threads; two such cells per two cores spin-wait each other to a crawl
    spec = ExperimentSpec(["td3"], ["Pendulum-v1"], [0], 100, overrides=[
        "algo.learning_starts=50", "algo.iteration_steps=100", "train.eval_interval=100", "train.eval_episodes=1"])
    result = run_experiment(spec, tmp_path / "exp", progress=False)
    assert len(result.done) == 1, result.failed
    (config,) = (Cell("td3", "Pendulum-v1", 0).directory(tmp_path / "exp") / "run").glob("*/*/*/config.yaml")
    assert "torch_threads: 1\n" in config.read_text()


# a two-node Ray cluster on this machine, one CPU a node, token authentication on; it prints its address and
# stops when its standard input closes
TWO_NODES = """
import sys
from ray.cluster_utils import Cluster
node = {"num_cpus": 1, "object_store_memory": 80 * 2**20, "temp_dir": sys.argv[1]}
cluster = Cluster(initialize_head=True, head_node_args={**node, "include_dashboard": False})
cluster.add_node(**node)
cluster.wait_for_nodes()
print(cluster.address, flush=True)
sys.stdin.read()
cluster.shutdown()
"""


@pytest.fixture(scope="module")
def ray_cluster():
    """(the address, the client environment with the cluster's token) of a running two-node cluster."""
    pytest.importorskip("ray")
    env = {**os.environ, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(16)}
    temp_dir = tempfile.mkdtemp(prefix="ray", dir="/tmp")  # short: Ray's socket paths must stay under 108 bytes
    cluster = subprocess.Popen([sys.executable, "-c", TWO_NODES, temp_dir], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    try:
        address = cluster.stdout.readline().strip() if cluster.stdout else ""
        assert address, "the cluster did not start"
        yield address, env
    finally:
        cluster.communicate(timeout=60)
        shutil.rmtree(temp_dir, ignore_errors=True)


@pytest.mark.slow
def test_a_grid_runs_on_a_two_node_cluster_it_joins_with_a_token(tmp_path, ray_cluster):
    address, env = ray_cluster
    out = tmp_path / "exp"
    # each cell needs 1 CPU and both start together: the one-CPU nodes must run one each
    result = experiment("--algos", "mappo", "--seeds", "2", "--ray-address", address, "--out", str(out), *TINY,
                        env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 cells finished, 0 failed" in result.stdout and "error" not in result.stderr
    nodes = set()
    for seed in (0, 1):
        log = Cell("mappo", "mpe_simple_spread", seed).directory(out) / "log.txt"
        nodes |= {line.split()[2] for line in log.read_text().splitlines() if line.startswith("ray node ")}
    assert len(nodes) == 2


def test_a_cluster_refusing_the_token_is_one_line(tmp_path, ray_cluster):
    address, env = ray_cluster
    for client, message in [({**env, "RAY_AUTH_TOKEN": "not-the-token"}, "refused this client's token"),
                            ({**env, "RAY_AUTH_MODE": "disabled"}, "requires token authentication: set "
                                                                    "RAY_AUTH_MODE=token")]:
        result = experiment("--algos", "mappo", "--seeds", "1", "--ray-address", address,
                            "--out", str(tmp_path / "exp"), *TINY, env=client)
        assert result.returncode == 2, result.stdout + result.stderr
        assert result.stderr.startswith(f"error: the Ray cluster at {address} {message}")
        assert result.stderr.count("\n") == 1 and "RAY_AUTH_TOKEN" in result.stderr  # one line: what to set


def test_an_address_where_no_cluster_listens_is_one_line(tmp_path):
    pytest.importorskip("ray")
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "experiment.py"), "--algos", "mappo", "--seeds",
                             "1", "--ray-address", "127.0.0.1:1", "--out", str(tmp_path / "exp"), *TINY], cwd=ROOT,
                            capture_output=True, text=True, timeout=60)  # Ray alone kept trying past 120 s
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("error: no Ray cluster answers at --ray-address 127.0.0.1:1 (")
    assert result.stderr.count("\n") == 1
