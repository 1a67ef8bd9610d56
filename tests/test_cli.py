"""The command line as a user runs it: bad input, custom envs and plugins, logs, checkpoints, resume."""
import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from marl.cli import main

ROOT = Path(__file__).resolve().parent.parent
QUICK = ["--steps", "400", "--n-envs", "2", "--no-progress", "rollout_steps=20", "ppo_epochs=1",
         "train.eval_episodes=2", "train.eval_envs=2", "train.eval_interval=200"]


def cli(*args, cwd=ROOT, prelude=""):
    code = f"{prelude}import sys; from marl.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("args, message", [
    (
        ["--algo", "nope", "--env", "mpe_simple_spread"],
        "unknown algorithm 'nope'; valid algorithms: coma, ippo, iql, mappo, qmix, vdn",
    ),
    (["--algo", "mappo", "--env", "nope"], "unknown env 'nope'; registered envs: "),
    (["--algo", "mappo", "--env", "mpe_simple_spread", "lrr=1"], "unknown override key 'lrr'"),
    (["--algo", "mappo", "--env", "mpe_simple_spread", "algo.lrr=1"], "unknown key algo.lrr; valid keys: "),
    (["--algo", "mappo", "--env", "mpe_simple_spread", "algo.lr=fast"], "algo.lr must be a number, got 'fast'"),
    (["--algo", "mappo", "--env", "mpe_simple_spread", "--steps", "ten"], "argument --steps: invalid int value"),
    (["--algo", "mappo", "--env", "nosuchmodule.sub:make"], "cannot import nosuchmodule.sub"),
    (["--algo", "mappo", "--env", "examples.custom_env:nothing"], "has no attribute 'nothing'"),
    (["--algo", "mappo", "--env", "mpe_simple_spread", "env.colour=1"], "does not accept colour"),
    (["--algo", "mappo", "--env", "mpe_simple_spread", "--device", "cuda:9"], "CUDA is not available"),
    (["--algo", "mappo", "--env", "mpe_simple_spread", "--resume", "/nonexistent"], "no checkpoint found"),
    (["--env", "mpe_simple_spread"], "the following arguments are required: --algo"),
    (["--algo", "mappo", "--env", "smac_3m", "env.reward_sparce=true"], "unknown SMAC option(s) reward_sparce"),
    (["--algo", "mappo", "--env", "smac_4m"], "unknown env 'smac_4m'"),
    (["--algo", "qmix", "--env", "mpe_simple_spread", "env.continuous_actions=true"],
     "qmix needs Discrete actions, but group(s) agent have Box actions"),
])
def test_bad_input_is_one_line_and_exit_2(args, message, tmp_path):
    result = cli(*args, "--logdir", str(tmp_path))
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], result.stderr
    assert "Traceback" not in result.stderr


def test_malformed_yaml_and_missing_extra(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("algo:\n  lr: [1\n")
    result = cli("--algo", "mappo", "--env", "mpe_simple_spread", "--config", str(bad), "--logdir", str(tmp_path))
    assert result.returncode == 2 and "malformed YAML" in result.stderr and len(result.stderr.splitlines()) == 1
    result = cli("--algo", "mappo", "--env", "mpe_simple_spread", "--logdir", str(tmp_path),
                 prelude="import sys; sys.modules['mpe2'] = None; ")
    assert result.returncode == 2 and "pip install 'concerto-marl[mpe]'" in result.stderr
    assert len(result.stderr.splitlines()) == 1


def test_custom_env_module_factory_and_callback_plugin_via_cli(tmp_path):
    summary = tmp_path / "summary.json"
    result = cli("--algo", "ippo", "--env", "examples.custom_env:make_env", *QUICK, "--logdir", str(tmp_path),
                 "--callback", "examples.callback_plugin:BestReturnTracker", "--summary-json", str(summary),
                 "env.n_agents=3")
    assert result.returncode == 0, result.stderr
    assert "[BestReturnTracker] best training return" in result.stdout
    assert "test win rate n/a" in result.stdout and "TensorBoard logs:" in result.stdout
    data = json.loads(summary.read_text())
    assert set(data) >= {"env_steps", "wall_s", "steps_per_s", "eval_return_mean", "eval_win_rate", "run_dir"}
    assert data["env_steps"] == 400 and data["eval_win_rate"] is None
    run_dir = Path(data["run_dir"])
    assert (run_dir / "best_return.txt").is_file() and (run_dir / "config.yaml").is_file()
    assert "n_agents: 3" in (run_dir / "config.yaml").read_text()


def test_registered_user_env_trains(tmp_path):
    import envs
    from examples.custom_env import make_env
    envs.register("signal_game_test", make_env, n_agents=2)
    assert main(["--algo", "mappo", "--env", "signal_game_test", *QUICK, "--logdir", str(tmp_path)]) == 0


def test_tensorboard_tags_checkpoints_and_resume(tmp_path):
    summary = tmp_path / "s.json"
    assert main(["--algo", "mappo", "--env", "examples.custom_env:make_env", *QUICK, "--logdir", str(tmp_path),
                 "--summary-json", str(summary), "train.checkpoint_interval=200"]) == 0
    run_dir = Path(json.loads(summary.read_text())["run_dir"])
    events = EventAccumulator(str(run_dir))
    events.Reload()
    tags = set(events.Tags()["scalars"])
    for tag in ("train/episode_return", "eval/return_mean", "loss/policy", "loss/value", "loss/entropy",
                "perf/steps_per_second"):
        assert tag in tags, tags
    steps = [e.step for e in events.Scalars("loss/policy")]
    assert steps == [40 * k for k in range(1, 11)]  # one update per 20 steps x 2 envs
    assert [e.step for e in events.Scalars("eval/return_mean")][-1] == 400
    assert "eval/return_mean" in (run_dir / "metrics.csv").read_text()
    checkpoints = sorted(p.name for p in (run_dir / "checkpoints").iterdir())
    assert checkpoints == ["step-000000200", "step-000000400"]
    tensors = torch.load(run_dir / "checkpoints" / "step-000000400" / "tensors.pt", weights_only=True)
    assert "agent" in tensors
    # resume from the run directory: continues at 400 env steps up to the new budget
    resumed = tmp_path / "r.json"
    assert main(["--algo", "mappo", "--env", "examples.custom_env:make_env", *QUICK, "--steps", "600",
                 "--logdir", str(tmp_path), "--resume", str(run_dir), "--summary-json", str(resumed)]) == 0
    data = json.loads(resumed.read_text())
    assert data["env_steps"] == 600 and data["run_dir"] == str(run_dir)  # the run goes on in its own directory
    resumed_events = EventAccumulator(data["run_dir"])
    resumed_events.Reload()
    assert [e.step for e in resumed_events.Scalars("loss/policy")] == [40 * k for k in range(1, 16)]


def test_the_concerto_command_runs_each_program_behind_one_name(tmp_path, capsys):
    """`concerto COMMAND` is the command line of each script: its help lists them, an unknown one is one line
    (exit 2), and a run trained with `concerto train` is played again with `concerto evaluate`."""
    from core.command import COMMANDS
    from core.command import main as concerto

    assert concerto(["--help"]) == 0
    listed = capsys.readouterr().out
    assert all(f"  {name}" in listed for name in COMMANDS)
    assert concerto(["trian"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "error: unknown command 'trian'; commands: train, train-single, evaluate, experiment, report, tune "
        "(concerto --help)"]
    assert concerto(["train", "--algo", "qmix", "--env", "smac_3m", "--steps", "64", "--n-envs", "2",
                     "--no-progress", "--logdir", str(tmp_path), "train.eval_episodes=2", "train.eval_envs=2"]) == 0
    run = next(tmp_path.glob("smac_3m/qmix/*"))
    summary = tmp_path / "evaluation.json"
    assert concerto(["evaluate", str(run), "--episodes", "2", "--summary-json", str(summary)]) == 0
    assert json.loads(summary.read_text())["episodes"] == 2
    assert concerto(["tune", "--algo", "nosuch", "--env", "smac_3m", "--steps", "100"]) == 2
    assert "unknown algorithm 'nosuch'" in capsys.readouterr().err
    for name in ("train", "report"):  # each command's help names it, not the script behind it
        with pytest.raises(SystemExit) as exit_status:
            concerto([name, "--help"])
        assert exit_status.value.code == 0 and capsys.readouterr().out.startswith(f"usage: concerto {name} ")
