"""What a run guarantees: bit-exact resume, signals, non-finite values, hung workers, checkpoint housekeeping, its
caller's global random generators untouched."""
from __future__ import annotations

import json
import os
import pickle
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from core.callbacks import Callback
from core.checkpoint import checkpoint_dirs, load_checkpoint
from core.cli import print_summary
from core.run_config import resolve_config
from core.run_dir import latest_checkpoint
from core.trainer import all_finite
from marl.algos import get_algo
from marl.cli import main as marl_main
from marl.trainer import MarlTrainer
from single_agent.cli import main as single_main

ROOT = Path(__file__).resolve().parent.parent
QUIET = ["--no-progress", "train.eval_episodes=2", "train.eval_envs=2"]


def assert_same_state(a, b, path="state"):
    """Every tensor, array and value of two state trees is identical."""
    if isinstance(a, dict):
        assert set(a) == set(b), (path, set(a) ^ set(b))
        for key in a:
            assert_same_state(a[key], b[key], f"{path}.{key}")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_same_state(x, y, f"{path}[{i}]")
    elif isinstance(a, torch.Tensor):
        assert torch.equal(a, b), path
    elif isinstance(a, np.ndarray):
        assert np.array_equal(a, b, equal_nan=True), path
    else:
        assert a == b, path


def final_state(run_dir: Path) -> dict:
    return load_checkpoint(latest_checkpoint(run_dir))[0]


def only_run(root: Path) -> Path:
    runs = [p for p in root.glob("*/*/*") if p.is_dir()]
    assert len(runs) == 1, runs
    return runs[0]


# one case per family: on-policy and value-based multi-agent (plus COMA), off-policy and on-policy single-agent,
# with sync and subprocess vector envs; `half` is a whole number of iterations. The split run's budget grows at
# its resume, so both runs set their schedules' horizon (smac_3m's MAPPO entropy decay, COMA's growing reverse-KL
# share) to the whole budget.
RESUME_CASES = [
    (marl_main, "mappo", "smac_3m", 800, ["--n-envs", "4", "algo.policy=gru", "train.eval_interval=400"]),
    (marl_main, "qmix", "smac_3m", 1024, ["--n-envs", "4", "train.eval_interval=512"]),
    (marl_main, "coma", "smac_3m", 1024, ["--n-envs", "4"]),
    (single_main, "dqn", "CartPole-v1", 1500, ["--n-envs", "2", "algo.learning_starts=200", "algo.n_step=3"]),
    (single_main, "sac", "Pendulum-v1", 600, ["--n-envs", "2", "--vec", "subproc", "algo.learning_starts=200",
                                              "algo.iteration_steps=200", "algo.hidden_sizes=[32,32]"]),
    (single_main, "ppo", "CartPole-v1", 512, ["--n-envs", "2", "algo.n_steps=128", "algo.anneal=true"]),
]


@pytest.mark.parametrize("main, algo, env, half, extra", RESUME_CASES, ids=[c[1] for c in RESUME_CASES])
def test_resume_is_bit_exact(main, algo, env, half, extra, tmp_path):
    common = ["--algo", algo, "--env", env, *QUIET, *extra, f"train.schedule_steps={2 * half}"]
    assert main([*common, "--steps", str(2 * half), "--logdir", str(tmp_path / "whole")]) == 0
    assert main([*common, "--steps", str(half), "--logdir", str(tmp_path / "split")]) == 0
    split = only_run(tmp_path / "split")
    assert main(["--resume", str(split), "--steps", str(2 * half), "--no-progress"]) == 0
    assert only_run(tmp_path / "split") == split  # the run goes on in its own directory
    assert_same_state(final_state(only_run(tmp_path / "whole")), final_state(split))


def test_a_checkpoint_outside_its_run_resumes_into_a_new_run_and_touches_nothing_else(tmp_path, capsys):
    """A copied checkpoint (beside a user's own config.yaml and metrics.csv), and one moved into another run's
    checkpoints/, each continue in a new run directory under --logdir that names where they came from, bit for
    bit as the run would have continued in place; the folders around them are left byte for byte as they were."""
    common = ["--algo", "mappo", "--env", "mpe_simple_spread", *QUIET, "--n-envs", "2", "algo.rollout_steps=25"]
    assert marl_main([*common, "--steps", "100", "--logdir", str(tmp_path / "orig")]) == 0
    assert marl_main([*common, "--steps", "50", "--logdir", str(tmp_path / "other")]) == 0
    run, other = only_run(tmp_path / "orig"), only_run(tmp_path / "other")
    checkpoint = latest_checkpoint(run)
    user = tmp_path / "exp"
    (user / "sub").mkdir(parents=True)
    for name, text in (("config.yaml", "mine: 1\n"), ("metrics.csv", "a,b\n1,2\n"), ("notes.txt", "notes\n")):
        (user / name).write_text(text)
    copies = [user / "sub" / "mycopy", other / "checkpoints" / checkpoint.name]
    for copy in copies:
        shutil.copytree(checkpoint, copy)
    before = {p: p.read_bytes() for p in [*user.rglob("*"), *other.rglob("*")] if p.is_file()}
    assert marl_main(["--resume", str(run), "--steps", "200", "--no-progress"]) == 0  # in place, for reference
    for i, copy in enumerate(copies):
        logdir = tmp_path / f"new{i}"
        capsys.readouterr()
        assert marl_main(["--resume", str(copy), "--steps", "200", "--no-progress", "--logdir", str(logdir)]) == 0
        assert "is not inside the run directory that wrote it" in capsys.readouterr().out
        resumed = only_run(logdir)
        assert json.loads((resumed / "run.json").read_text())["resumed_from"] == str(copy.resolve())
        assert_same_state(final_state(run), final_state(resumed))
    assert {p: p.read_bytes() for p in [*user.rglob("*"), *other.rglob("*")] if p.is_file()} == before


def test_a_larger_budget_at_resume_keeps_the_schedules_horizon_and_says_so(tmp_path, capsys):
    """Budget-annealed schedules keep the horizon the run started with (saved in the checkpoint) and hold their
    final values past it, with one line saying so; train.schedule_steps set from the start makes a run split by
    a budget change equal to one uninterrupted run."""
    common = ["--algo", "mappo", "--env", "smac_3m", *QUIET, "--n-envs", "2", "algo.rollout_steps=25",
              "algo.entropy_coef=0.1", "algo.entropy_final=0.0", "algo.lr_anneal=true"]
    assert marl_main([*common, "--steps", "100", "--logdir", str(tmp_path / "short")]) == 0
    run = only_run(tmp_path / "short")
    capsys.readouterr()
    assert marl_main(["--resume", str(run), "--steps", "200", "--no-progress"]) == 0
    notes = [line for line in capsys.readouterr().out.splitlines() if "schedules over the run" in line]
    assert notes == ["note: the schedules over the run (algo.lr_anneal, algo.entropy_final) end at 100 env steps "
                     "and hold their final values to the budget of 200; train.schedule_steps=N sets their horizon"]
    rows = [line.split(",") for line in (run / "metrics.csv").read_text().splitlines()[1:]]
    coefs = {int(step): float(value) for step, _, tag, value in rows if tag == "schedule/entropy_coef"}
    assert coefs[50] == pytest.approx(0.05) and coefs[150] == coefs[200] == 0.0
    assert final_state(run)["agent"]["optimizer"]["param_groups"][0]["lr"] == 0.0
    assert marl_main([*common, "--steps", "200", "--logdir", str(tmp_path / "whole")]) == 0
    assert marl_main([*common, "--steps", "100", "train.schedule_steps=200", "--logdir", str(tmp_path / "split")]) == 0
    split = only_run(tmp_path / "split")
    assert marl_main(["--resume", str(split), "--steps", "200", "--no-progress"]) == 0
    assert_same_state(final_state(only_run(tmp_path / "whole")), final_state(split))


@pytest.mark.parametrize("damage, expected, message", [
    (lambda run: (run / "metrics.csv").unlink() or (run / "metrics.csv").mkdir(), 2, "cannot write the run directory"),
    (lambda run: (run / "run.json").write_text("[1"), 0, "is not inside the run directory that wrote it"),
])
def test_a_damaged_run_directory_is_one_line_or_a_new_run(damage, expected, message, tmp_path, capsys):
    """A run directory that cannot be written is one line (exit 2); one whose run.json is unreadable is no longer
    known as the checkpoint's run, so the resume goes to a new run directory."""
    common = ["--algo", "mappo", "--env", "mpe_simple_spread", *QUIET, "--n-envs", "1", "algo.rollout_steps=25"]
    assert marl_main([*common, "--steps", "50", "--logdir", str(tmp_path / "runs")]) == 0
    run = only_run(tmp_path / "runs")
    damage(run)
    capsys.readouterr()
    status = marl_main(["--resume", str(run), "--steps", "100", "--no-progress", "--logdir", str(tmp_path / "new")])
    out, err = capsys.readouterr()
    assert status == expected, err
    if expected == 2:
        assert err.count("\n") == 1 and err.startswith("error: ") and message in err, err
    else:
        assert message in out and len(list((tmp_path / "new").glob("*/*/*"))) == 1


def test_the_summary_line_takes_any_run_directory(capsys):
    summary = {"env_steps": 1, "wall_s": 1.0, "steps_per_s": 1.0, "eval_return_mean": None, "eval_win_rate": None,
               "run_dir": "/r"}
    print_summary(summary, "mappo", "smac_3m")
    assert "tensorboard --logdir /r)" in capsys.readouterr().out


def test_resume_refuses_another_experiment_and_applies_allowed_changes(tmp_path, capsys):
    common = ["--algo", "mappo", "--env", "smac_3m", *QUIET, "--n-envs", "2", "algo.rollout_steps=50"]
    assert marl_main([*common, "--steps", "100", "--logdir", str(tmp_path)]) == 0
    run = only_run(tmp_path)
    for change, named in ((["env.reward_sparse=true"], "env options"), (["--n-envs", "3"], "train.n_envs"),
                          (["--seed", "4"], "train.seed"), (["--algo", "qmix"], "--algo qmix"),
                          (["algo.hidden_sizes=[32]"], "network shape")):
        capsys.readouterr()
        assert marl_main(["--resume", str(run), "--steps", "200", *change]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("error: ") and named in err[0], err
    assert marl_main(["--resume", str(run), "--steps", "200", "--no-progress", "algo.lr=3e-4"]) == 0
    state = final_state(run)
    assert state["agent"]["optimizer"]["param_groups"][0]["lr"] == 3e-4  # the optimiser's lr, not only the config
    assert "lr: 0.0003" in (run / "config.yaml").read_text()


class PoisonWeights(Callback):
    """Puts a NaN into the agent's first parameter after the third update."""

    def on_update_end(self, trainer, metrics):
        if trainer.updates == 3:
            with torch.no_grad():
                next(iter(trainer.agent.nets.parameters())).view(-1)[0] = float("nan")


def test_nonfinite_weights_stop_the_run_and_no_checkpoint_holds_them(tmp_path, capsys):
    args = ["--algo", "qmix", "--env", "smac_3m", *QUIET, "--n-envs", "2", "--steps", "2000",
            "train.checkpoint_interval=32", "algo.learning_starts=1000", "algo.rollout_steps=8",
            "--logdir", str(tmp_path),
            "--callback", "tests.test_run_guarantees:PoisonWeights"]
    assert marl_main(args) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: non-finite value in nets.") and "env step 64" in err[0], err
    run = only_run(tmp_path)
    saved = checkpoint_dirs(run)
    assert [p.name for p in saved] == ["step-000000032"] and f"last good checkpoint: {saved[0]}" in err[0]
    state, _ = load_checkpoint(saved[0])
    assert all(torch.isfinite(t).all() for t in state["agent"]["nets"].values())


def test_all_finite_sees_one_bad_element_among_tensors_of_any_dtype():
    """The trainer's per-iteration check (one pass per device; Adam's step counts stay on the cpu under cuda)."""
    tensors = [torch.zeros(3), torch.ones(2, 2, dtype=torch.float64), torch.tensor(5.0)]
    assert all_finite(tensors) and all_finite([])
    tensors[1][1, 0] = float("inf")
    assert not all_finite(tensors)


def test_logger_keeps_nonfinite_scalars(tmp_path):
    from core.logger import RunLogger
    logger = RunLogger(tmp_path)
    logger.log_scalars({"loss/x": float("nan"), "loss/y": float("inf")}, 7)
    logger.close()
    rows = (tmp_path / "metrics.csv").read_text().splitlines()
    assert any(r.startswith("7,") and r.endswith("loss/x,nan") for r in rows)
    assert any(r.startswith("7,") and r.endswith("loss/y,inf") for r in rows)


def test_checkpoints_are_pruned_and_stale_temporaries_removed(tmp_path):
    args = ["--algo", "mappo", "--env", "smac_3m", *QUIET, "--n-envs", "2", "algo.rollout_steps=25",
            "train.checkpoint_interval=50", "train.keep_checkpoints=2", "--logdir", str(tmp_path)]
    assert marl_main([*args, "--steps", "300"]) == 0
    run = only_run(tmp_path)
    assert [p.name for p in checkpoint_dirs(run)] == ["step-000000250", "step-000000300"]
    stale = run / "checkpoints" / ".step-000000350.tmp-x"
    stale.mkdir()
    (stale / "tensors.pt").write_bytes(b"half")
    assert marl_main(["--resume", str(run), "--steps", "350", "--no-progress"]) == 0
    assert not stale.exists()


class RunsCode:
    """Pickles to a call that creates `marker` when unpickled: what a tensors-only load must never run."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return Path.touch, (self.marker,)


@pytest.mark.parametrize("damage, message", [
    (lambda c: (c / "tensors.pt").write_bytes(b""), "tensors.pt cannot be read"),
    (lambda c: (c / "tensors.pt").write_bytes(os.urandom(64)), "tensors.pt cannot be read"),
    (lambda c: (c / "metadata.json").write_text("{oops"), "metadata.json cannot be read"),
    (lambda c: (c / "arrays.npz").write_bytes(b"PK\x03\x04 broken"), "arrays.npz cannot be read"),
    (lambda c: (c / "metadata.json").write_text('{"format": 1}'), "not a checkpoint this version can resume"),
    (lambda c: (c / "tensors.pt").write_bytes(pickle.dumps(RunsCode(c / "ran"))), "not a tensors-only checkpoint"),
])
def test_damaged_checkpoints_give_one_line(damage, message, tmp_path, capsys):
    """Each refusal is one line, and a pickle that would run code on load is refused without running it."""
    args = ["--algo", "qmix", "--env", "smac_3m", *QUIET, "--n-envs", "2", "--steps", "64", "--logdir", str(tmp_path)]
    assert marl_main(args) == 0
    run = only_run(tmp_path)
    damage(latest_checkpoint(run))
    capsys.readouterr()
    assert marl_main(["--resume", str(run), "--steps", "128"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: checkpoint ") and message in err[0], err
    assert not (latest_checkpoint(run) / "ran").exists()


# -- signals and hung workers, end to end in subprocesses ------------------------------------------------------

SIGNAL_AT = {  # phase -> Python run before the CLI that sends the signal (`once()`: the first time) at that moment
    "setup": "import marl.trainer as m; b = m.MarlTrainer._build\n"
             "def build(self, d): once(); return b(self, d)\nm.MarlTrainer._build = build",
    "rollout": "import marl.onpolicy as m; c = m.OnPolicyCollector.collect; n = [0]\n"
               "def collect(self, on_step):\n"
               "    def step(k, f):\n"
               "        n[0] += 1\n"
               "        if n[0] == 30: once()\n"
               "        on_step(k, f)\n"
               "    return c(self, step)\nm.OnPolicyCollector.collect = collect",
    "update": "import marl.algos.mappo as m; u = m.MAPPO.update\n"
              "def update(self, b): once(); return u(self, b)\nm.MAPPO.update = update",
    "evaluation": "import marl.trainer as m; e = m.evaluate\n"
                  "def evaluate(*a, **k): once(); return e(*a, **k)\nm.evaluate = evaluate",
    "checkpoint write": "import core.trainer as m; s = m.save_checkpoint\n"
                        "def save(*a, **k): once(); return s(*a, **k)\nm.save_checkpoint = save",
    "twice": "import marl.onpolicy as m; c = m.OnPolicyCollector.collect\n"
             "def collect(self, on_step): once(); kill(); return c(self, on_step)\n"
             "m.OnPolicyCollector.collect = collect",
}


def killer(signum: int) -> str:
    """Python defining kill() (send `signum` to this process) and once() (the same, the first time only)."""
    return (f"def kill(): os.kill(os.getpid(), {int(signum)})\n"
            "def once(fired=[]):\n    if not fired: fired.append(1); kill()\n")


def run_cli(args, prelude="", timeout=180, **kw):
    code = f"import os, signal, sys\n{prelude}\nfrom marl.cli import main\nsys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, **kw)


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("phase", list(SIGNAL_AT))
def test_signal_stops_at_a_consistent_point_with_a_checkpoint(phase, signum, tmp_path):
    args = ["--algo", "mappo", "--env", "smac_3m", *QUIET, "--n-envs", "2", "--steps", "400",
            "algo.rollout_steps=50", "train.eval_interval=200", "train.checkpoint_interval=200",
            "--logdir", str(tmp_path)]
    result = run_cli(args, killer(signum) + SIGNAL_AT[phase])
    assert result.returncode == 128 + signum, result.stderr
    assert "Traceback" not in result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith(f"interrupted by {signal.Signals(signum).name}")
    if phase == "setup":
        assert "before training started; nothing was saved" in last
        return
    run = only_run(tmp_path)
    checkpoint = latest_checkpoint(run)
    assert f"checkpoint: {checkpoint}" in last and "--resume" in last
    steps = int(checkpoint.name.split("-")[1])
    assert 0 < steps < 400 and steps % 100 == 0  # an iteration boundary
    assert marl_main(["--resume", str(run), "--no-progress"]) == 0


@pytest.mark.slow
def test_sigterm_then_resume_equals_an_uninterrupted_run(tmp_path):
    common = ["--algo", "qmix", "--env", "smac_3m", *QUIET, "--n-envs", "2", "--steps", "512",
              "train.eval_interval=160"]
    result = run_cli([*common, "--logdir", str(tmp_path / "split")], killer(signal.SIGTERM) + SIGNAL_AT["evaluation"])
    assert result.returncode == 143, result.stderr
    split = only_run(tmp_path / "split")
    assert int(latest_checkpoint(split).name.split("-")[1]) == 160
    assert marl_main(["--resume", str(split), "--no-progress"]) == 0
    assert marl_main([*common, "--logdir", str(tmp_path / "whole")]) == 0
    assert_same_state(final_state(only_run(tmp_path / "whole")), final_state(split))


@pytest.mark.slow
def test_hung_worker_times_out_with_one_line(tmp_path):
    args = ["--algo", "mappo", "--env", "tests.fault_envs:hanging_env", "env.hang_at=47", "--vec", "subproc",
            *QUIET, "--n-envs", "2", "--steps", "400", "algo.rollout_steps=20", "train.worker_timeout_s=2",
            "train.checkpoint_interval=40", "--logdir", str(tmp_path)]
    result = run_cli(args, timeout=120)
    assert result.returncode == 1, result.stderr
    err = result.stderr.strip().splitlines()
    assert len(err) == 1 and "did not answer within train.worker_timeout_s=2 s while stepping" in err[0], err
    assert "last good checkpoint: " in err[0] and "step-000000080" in err[0]


@pytest.mark.slow
def test_ctrl_c_with_a_hung_worker_exits_promptly(tmp_path):
    marker = tmp_path / "hung"
    args = ["--algo", "mappo", "--env", "tests.fault_envs:hanging_env", "env.hang_at=7", f"env.marker={marker}",
            "--vec", "subproc", *QUIET, "--n-envs", "2", "--steps", "400", "algo.rollout_steps=20",
            "--logdir", str(tmp_path)]
    code = "import sys\nfrom marl.cli import main\nsys.exit(main(sys.argv[1:]))"
    proc = subprocess.Popen([sys.executable, "-c", code, *args], cwd=ROOT, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)  # a guard, not a timed assertion: the note reports the figure
    assert proc.returncode == 130, err
    assert "interrupted by SIGINT while env 0, 1 did not answer (stepping)" in err and "Traceback" not in err


SINGLE = ["--algo", "dqn", "--env", "tests.fault_envs:ConcertoFaulty-v0", "--no-progress", "--n-envs", "2",
          "--steps", "400", "train.eval_episodes=1", "train.eval_envs=1", "algo.iteration_steps=100",
          "train.checkpoint_interval=100"]


@pytest.mark.parametrize("vec", ["sync", "subproc"])
def test_single_agent_nan_reward_and_env_errors_are_one_line(vec, tmp_path, capsys):
    argv = [*SINGLE, "--vec", vec, "env.fault=nan_reward", "env.fault_at=120", "--logdir", str(tmp_path)]
    assert single_main(argv) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "env 0 returned a non-finite reward (nan)" in err[0], err
    assert "last good checkpoint: " in err[0] and "step-000000200" in err[0]
    assert single_main([*SINGLE, "--vec", vec, "env.fault=raise", "env.fault_at=120", "--logdir",
                        str(tmp_path / "raise")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "scripted env failure (tests/fault_envs.py:" in err[0] and "while stepping" in err[0]


@pytest.mark.slow
def test_single_agent_hung_async_worker_times_out(tmp_path):
    code = "import sys\nfrom single_agent.cli import main\nsys.exit(main(sys.argv[1:]))"
    args = [*SINGLE, "--vec", "subproc", "env.fault=hang", "env.fault_at=120", "train.worker_timeout_s=2",
            "--logdir", str(tmp_path)]
    result = subprocess.run([sys.executable, "-c", code, *args], cwd=ROOT, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 1, result.stderr
    err = result.stderr.strip().splitlines()
    assert len(err) == 1 and "did not answer within train.worker_timeout_s=2 s while stepping" in err[0], err


class RaisesMidRun(Callback):
    def on_update_end(self, trainer, metrics):
        if trainer.updates == 2:
            raise KeyError("plugin bug")


class RaisesAtStart(Callback):
    def on_train_start(self, trainer):
        raise ValueError("bad plugin setting")


@pytest.mark.parametrize("plugin, status, message", [
    ("RaisesMidRun", 1, "callback RaisesMidRun.on_update_end raised KeyError: 'plugin bug' "
                        "(tests/test_run_guarantees.py:"),
    ("RaisesAtStart", 2, "callback RaisesAtStart.on_train_start raised ValueError: bad plugin setting "
                         "(tests/test_run_guarantees.py:"),
])
def test_callback_errors_name_the_users_line(plugin, status, message, tmp_path, capsys):
    args = ["--algo", "mappo", "--env", "smac_3m", *QUIET, "--n-envs", "2", "--steps", "400", "algo.rollout_steps=50",
            "--callback", f"tests.test_run_guarantees:{plugin}", "--logdir", str(tmp_path)]
    assert marl_main(args) == status
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err


def test_prune_keeps_the_newest_and_the_best_evaluated(tmp_path):
    from core.checkpoint import prune, save_checkpoint
    for step, score in ((100, 0.2), (200, 0.9), (300, None), (400, 0.5), (500, None)):
        save_checkpoint(tmp_path / "checkpoints" / f"step-{step:09d}", {}, {"score": score})
    prune(tmp_path, keep=2)
    assert [p.name for p in checkpoint_dirs(tmp_path)] == ["step-000000200", "step-000000400", "step-000000500"]


@pytest.mark.parametrize("args, status, message", [
    (["--env", "tests.test_hostile_inputs:hostile", "env.fault=huge_reward", "env.at=3"], 1,
     "non-finite reward for agent player_1 (inf)"),
    (["--env", "smac_3m", "env.seed=5"], 2, "env.seed is not an env option here"),
    (["--env", "smac_3m", "env.reward_scale_rate=1e400"], 2, "env.reward_scale_rate must be a finite number, got inf"),
    (["--env", "smac_3m", "env.reward_scale=false", "env.reward_death_value=1e308"], 2,
     "the reward options make the largest episode reward inf"),
    (["--env", "smac_3m", "env.episode_limit=0"], 2, "episode limit must be at least 1 step, got 0"),
    (["--env", "smac_3m", "--summary-json", "/dev/full"], 1, "the run finished but --summary-json /dev/full could "
                                                              "not be written"),
])
def test_env_option_overflow_and_unwritable_outputs_are_one_line(args, status, message, tmp_path, capsys):
    assert marl_main(["--algo", "mappo", *QUIET, "--n-envs", "2", "--steps", "100", "algo.rollout_steps=25", *args,
                      "--logdir", str(tmp_path)]) == status
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and message in err[0], err


class SaveMidIteration(Callback):
    """Asks for a checkpoint in the middle of the second iteration."""

    def on_step(self, trainer, n_env_steps):
        if trainer.env_steps == 60:
            assert trainer.save_checkpoint().name == "step-000000100"


def test_a_checkpoint_asked_for_mid_iteration_is_written_at_its_end(tmp_path):
    args = ["--algo", "mappo", "--env", "smac_3m", *QUIET, "--n-envs", "2", "--steps", "200", "algo.rollout_steps=25",
            "--callback", "tests.test_run_guarantees:SaveMidIteration", "train.keep_checkpoints=0",
            "--logdir", str(tmp_path)]
    assert marl_main(args) == 0
    assert [p.name for p in checkpoint_dirs(only_run(tmp_path))] == ["step-000000100", "step-000000200"]


@pytest.mark.slow
def test_signals_at_startup_and_while_callbacks_close_are_honoured(tmp_path):
    args = ["--algo", "mappo", "--env", "smac_3m", *QUIET, "--n-envs", "2", "--steps", "100", "algo.rollout_steps=25",
            "--logdir", str(tmp_path)]
    proc = subprocess.Popen([sys.executable, str(ROOT / "scripts" / "train_marl.py"), *args], cwd=ROOT,
                            stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    time.sleep(0.3)  # still importing
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert err.strip().splitlines() == ["interrupted by SIGINT before training started; nothing was saved"]
    at_end = "import core.trainer as m; c = m.Trainer._close_callbacks\n" \
             "def close(self): once(); return c(self)\nm.Trainer._close_callbacks = close"
    result = run_cli(args, killer(signal.SIGTERM) + at_end)
    assert result.returncode == 143 and "checkpoint: " in result.stderr.strip().splitlines()[-1], result.stderr


@pytest.mark.slow
def test_a_repeated_signal_stops_an_env_hung_in_this_process(tmp_path):
    marker = tmp_path / "hung"
    args = ["--algo", "mappo", "--env", "tests.fault_envs:hanging_env", "env.hang_at=7", f"env.marker={marker}",
            *QUIET, "--n-envs", "2", "--steps", "400", "algo.rollout_steps=20", "--logdir", str(tmp_path)]
    code = "import sys\nfrom marl.cli import main\nsys.exit(main(sys.argv[1:]))"
    proc = subprocess.Popen([sys.executable, "-c", code, *args], cwd=ROOT, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)  # recorded: the env never returns to let the loop act on it
    time.sleep(3)
    proc.send_signal(signal.SIGINT)  # asked again after the grace period: stop at once
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted by SIGINT again" in err and "without a new checkpoint" in err and "Traceback" not in err


class DrawsFromGlobals(Callback):
    """Draws from Python's, NumPy's and torch's global generators at every step, as user code may."""

    def __init__(self) -> None:
        self.draws: list[tuple[float, float, float]] = []

    def on_step(self, trainer, n_env_steps):
        self.draws.append((random.random(), float(np.random.random()), float(torch.rand(1))))


def global_states() -> dict:
    return {"python": random.getstate(), "numpy": np.random.get_state(legacy=False), "torch": torch.get_rng_state()}


def tiny_mappo(run_dir: Path, callback: Callback) -> MarlTrainer:
    entry = get_algo("mappo")
    train, algo, env = resolve_config("mappo", "smac_3m", entry.config_class, entry.defaults,
                                      cli_train={"steps": 16, "n_envs": 2, "progress": False},
                                      overrides=["rollout_steps=8", "train.eval_episodes=1", "train.eval_envs=1"])
    return MarlTrainer("mappo", "smac_3m", train, algo, env, run_dir, [callback])


def test_building_training_and_evaluating_a_run_leave_the_callers_random_states_as_they_were(tmp_path):
    random.seed(1), np.random.seed(2), torch.manual_seed(3)
    caller = global_states()
    trainer = tiny_mappo(tmp_path / "run", DrawsFromGlobals())
    assert_same_state(global_states(), caller)
    try:
        trainer.train()
        assert_same_state(global_states(), caller)
        trainer.evaluate()
        assert_same_state(global_states(), caller)
    finally:
        trainer.close()
    assert torch.initial_seed() == 3


def test_a_run_is_the_same_whatever_its_caller_draws_between_building_and_training(tmp_path):
    runs = []
    for name, caller_draws in (("quiet", 0), ("busy", 3)):
        callback = DrawsFromGlobals()
        trainer = tiny_mappo(tmp_path / name, callback)
        for _ in range(caller_draws):
            random.random(), np.random.random(), torch.rand(1)
        try:
            trainer.train()
        finally:
            trainer.close()
        runs.append((final_state(tmp_path / name), callback.draws))
    (quiet, quiet_draws), (busy, busy_draws) = runs
    assert quiet_draws and quiet_draws == busy_draws
    assert_same_state(quiet, busy)
