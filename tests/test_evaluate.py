"""scripts/evaluate.py: saved MAPPO, QMIX and DQN runs played again (their numbers checked against the runs' own
last evaluations), GIF/MP4 recordings with one frame per step plus the first, and bad inputs as one line."""
from __future__ import annotations

import importlib.util
import json
import math
import shutil
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from core.checkpoint import read_metadata
from core.evaluation.report import mean_interval, wilson_interval
from examples.custom_env import SignalGame

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("evaluate_script", ROOT / "scripts" / "evaluate.py")
assert _spec is not None and _spec.loader is not None
evaluate_script = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(evaluate_script)


class PaintedSignalGame(SignalGame):
    """examples.custom_env's game with an rgb_array render whose colour counts the steps."""

    metadata: dict[str, Any] = {**SignalGame.metadata, "render_modes": ["rgb_array"], "render_fps": 4}

    def __init__(self, render_mode: str | None = None, max_steps: int = 10) -> None:
        super().__init__(max_steps=max_steps)
        self.render_mode = render_mode

    def render(self) -> np.ndarray:
        return np.full((6, 8, 3), 20 * self._t, np.uint8)


def make_painted(render_mode: str | None = None, max_steps: int = 10) -> PaintedSignalGame:
    return PaintedSignalGame(render_mode, max_steps)


def _train(run: Any, tmp: Path, *args: str) -> Path:
    summary = run([*args, "--no-progress", "--logdir", str(tmp), "train.eval_episodes=4", "train.eval_envs=2"])
    return Path(summary["run_dir"])


@pytest.fixture(scope="module")
def mappo_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from marl.cli import run
    return _train(run, tmp_path_factory.mktemp("mappo"), "--algo", "mappo", "--env", "smac_3m", "--steps", "1000",
                  "--n-envs", "4", "rollout_steps=50", "ppo_epochs=1")


@pytest.fixture(scope="module")
def qmix_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from marl.cli import run
    return _train(run, tmp_path_factory.mktemp("qmix"), "--algo", "qmix", "--env", "smac_3m", "--steps", "600",
                  "--n-envs", "2", "learning_starts=4", "batch_size=4", "rollout_steps=8")


@pytest.fixture(scope="module")
def dqn_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from single_agent.cli import run
    return _train(run, tmp_path_factory.mktemp("dqn"), "--algo", "dqn", "--env", "CartPole-v1", "--steps", "1000",
                  "--n-envs", "2", "learning_starts=200", "iteration_steps=500", "batch_size=32", "buffer_size=1000",
                  "hidden_sizes=[32]")


@pytest.fixture(scope="module")
def painted_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from marl.cli import run
    return _train(run, tmp_path_factory.mktemp("painted"), "--algo", "mappo", "--env",
                  "tests.test_evaluate:make_painted", "--steps", "200", "--n-envs", "2", "rollout_steps=20",
                  "ppo_epochs=1")


def evaluate(*args: str | Path) -> tuple[int, dict[str, Any] | None]:
    """Exit status and summary of evaluate.py with `args` (--summary-json added next to the first path)."""
    out = Path(str(args[0])).parent / "summary.json"
    out.unlink(missing_ok=True)
    code = evaluate_script.main([*map(str, args), "--summary-json", str(out)])
    return code, json.loads(out.read_text()) if code == 0 else None


def last_eval(run_dir: Path) -> dict[str, float]:
    newest = sorted((run_dir / "checkpoints").glob("step-*"))[-1]
    return read_metadata(newest)["eval"]


def gif_frames(path: Path) -> tuple[int, tuple[int, int]]:
    from PIL import Image
    with Image.open(path) as im:
        return int(getattr(im, "n_frames", 1)), im.size


def test_intervals_by_hand() -> None:
    lo, hi = wilson_interval(5, 10)
    assert (lo, hi) == (pytest.approx(0.236593, abs=1e-6), pytest.approx(0.763407, abs=1e-6))
    assert wilson_interval(0, 10) == (0.0, pytest.approx(0.277533, abs=1e-6))
    assert wilson_interval(10, 10) == (pytest.approx(0.722467, abs=1e-6), 1.0)
    interval = mean_interval([1.0, 2.0, 3.0])  # sd 1: 2 +- 1.96 / sqrt(3)
    assert interval is not None
    assert interval == (pytest.approx(2 - 1.131585, abs=1e-6), pytest.approx(2 + 1.131585, abs=1e-6))
    assert mean_interval([4.0]) is None


def test_mappo_defaults_repeat_the_runs_last_evaluation_and_the_gif_has_a_frame_per_step(mappo_run: Path,
                                                                                          capsys: Any) -> None:
    gif = mappo_run / "battle.gif"
    code, summary = evaluate(mappo_run, "--gif", gif)
    assert code == 0 and summary is not None
    saved = last_eval(mappo_run)
    assert summary["episodes"] == 4 and summary["policy"] == "greedy"
    assert summary["return_mean"] == pytest.approx(saved["eval/return_mean"], abs=1e-9)
    assert summary["win_rate"] == pytest.approx(saved["eval/win_rate"]) and 0.0 <= summary["win_rate"] <= 1.0
    assert summary["episode_length_mean"] == pytest.approx(saved["eval/episode_length"])
    lo, hi = summary["win_rate_ci95"]
    assert 0.0 <= lo <= summary["win_rate"] <= hi <= 1.0
    assert summary["wins"] == sum(summary["per_episode"]["win"])
    video = summary["video"]
    assert video["episodes"] == 1 and video["frames"] == video["lengths"][0] + 1
    assert gif_frames(gif) == (video["lengths"][0] + 1, (512, 512))  # the step counter keeps every frame distinct
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines[1:]] == ["return", "win rate", "episode length", "video"]
    assert f"({summary['wins']} of 4;" in lines[2]


def test_qmix_stochastic_on_shorter_episodes_and_several_recorded(qmix_run: Path) -> None:
    checkpoint = sorted((qmix_run / "checkpoints").glob("step-*"))[-1]
    code, summary = evaluate(checkpoint, "--stochastic", "--episodes", "5", "--seed", "3", "env.episode_limit=6",
                             "--gif", qmix_run / "q.gif", "--record-episodes", "2")
    assert code == 0 and summary is not None
    assert summary["episodes"] == 5 and summary["policy"] == "stochastic" and summary["seed"] == 3
    assert summary["env_options"] == {"fixed_enemy_order": False, "episode_limit": 6}
    assert max(summary["per_episode"]["length"]) <= 6
    assert len(summary["video"]["lengths"]) == 2 and max(summary["video"]["lengths"]) <= 6
    assert gif_frames(qmix_run / "q.gif")[0] == sum(summary["video"]["lengths"]) + 2
    code, greedy = evaluate(qmix_run)
    assert code == 0 and greedy is not None
    assert greedy["return_mean"] == pytest.approx(last_eval(qmix_run)["eval/return_mean"], abs=1e-9)


def test_dqn_on_cartpole_returns_one_per_step(dqn_run: Path) -> None:
    code, summary = evaluate(dqn_run, "--episodes", "3")
    assert code == 0 and summary is not None
    assert summary["episodes"] == 3 and summary["win_rate"] is None and summary["video"] is None
    assert summary["per_episode"]["return"] == summary["per_episode"]["length"]  # CartPole pays 1 per step
    assert math.isfinite(summary["return_mean"])


def test_dqn_gif(dqn_run: Path) -> None:
    pytest.importorskip("pygame")
    code, summary = evaluate(dqn_run, "--episodes", "1", "--gif", dqn_run / "pole.gif")
    assert code == 0 and summary is not None
    n_frames, size = gif_frames(dqn_run / "pole.gif")
    assert size == (600, 400) and summary["video"]["fps"] == 50
    # Pillow merges identical neighbours (the cart can stay put for a step at 600 px)
    assert summary["video"]["frames"] == summary["video"]["lengths"][0] + 1 >= n_frames > 1


def test_mp4(mappo_run: Path) -> None:
    imageio = pytest.importorskip("imageio.v2")
    pytest.importorskip("imageio_ffmpeg")
    code, summary = evaluate(mappo_run, "--episodes", "2", "--mp4", mappo_run / "battle.mp4")
    assert code == 0 and summary is not None
    with imageio.get_reader(mappo_run / "battle.mp4") as reader:
        assert reader.count_frames() == summary["video"]["lengths"][0] + 1
        assert reader.get_meta_data()["size"] == (512, 512)


def test_a_users_env_that_renders_is_recorded(painted_run: Path) -> None:
    code, summary = evaluate(painted_run, "--episodes", "2", "--gif", painted_run / "game.gif", "env.max_steps=7")
    assert code == 0 and summary is not None
    assert summary["per_episode"]["length"] == [7, 7] and summary["video"]["fps"] == 4
    assert gif_frames(painted_run / "game.gif") == (8, (8, 6))


def one_error_line(capsys: Any, code: int, message: str) -> None:
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith("error: ") and err.count("\n") == 1 and message in err, err


@pytest.mark.parametrize("extra, message", [
    (["--env", "smac_8m"], "env smac_8m has other spaces than smac_3m, which the policy was trained on: group agent "
                           "has 8 agents, not 3"),
    (["--gif", "a.gif", "--mp4", "a.mp4"], "argument --mp4: not allowed with argument --gif"),
    (["lr=1"], "unknown override key 'lr': evaluation takes env options only, as env.KEY=VALUE"),
    (["env.colour=1"], "colour"),
    (["env.seed=1"], "env.seed is not an env option here"),
    (["--episodes", "0"], "--episodes must be between 1 and"),
    (["--device", "gpu"], "--device must be cpu, cuda, cuda:N or mps"),
])
def test_bad_input_on_a_marl_run(mappo_run: Path, extra: list[str], message: str, capsys: Any) -> None:
    one_error_line(capsys, evaluate_script.main([str(mappo_run), *extra]), message)


def test_bad_runs_and_checkpoints(mappo_run: Path, dqn_run: Path, painted_run: Path, tmp_path: Path,
                                  capsys: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    one_error_line(capsys, evaluate_script.main([str(tmp_path / "nope")]), "no run directory or checkpoint at")
    one_error_line(capsys, evaluate_script.main([str(tmp_path)]), f"no checkpoint found at {tmp_path}")
    damaged = tmp_path / "damaged"
    shutil.copytree(sorted((mappo_run / "checkpoints").glob("step-*"))[-1], damaged)
    (damaged / "tensors.pt").write_bytes(b"not a checkpoint")
    one_error_line(capsys, evaluate_script.main([str(damaged)]), f"checkpoint {damaged} is damaged: tensors.pt")
    foreign = tmp_path / "foreign"
    shutil.copytree(sorted((mappo_run / "checkpoints").glob("step-*"))[-1], foreign)
    meta = json.loads((foreign / "metadata.json").read_text())
    wider = {**meta["config"], "algo": {**meta["config"]["algo"], "hidden_sizes": [32, 32]}}  # not the weights' 64
    (foreign / "metadata.json").write_text(json.dumps({**meta, "config": wider}))
    one_error_line(capsys, evaluate_script.main([str(foreign)]), f"checkpoint {foreign} does not match this algorithm")
    (foreign / "metadata.json").write_text(json.dumps({**meta, "algo": "mystery"}))
    one_error_line(capsys, evaluate_script.main([str(foreign)]), "algorithm 'mystery', which this version does not")
    one_error_line(capsys, evaluate_script.main([str(dqn_run), "--env", "Acrobot-v1"]),
                   "env Acrobot-v1 has other spaces than CartPole-v1, which the policy was trained on: its observation")
    one_error_line(capsys, evaluate_script.main([str(painted_run), "--env", "examples.custom_env:make_env", "--gif",
                                                 str(tmp_path / "x.gif")]),
                   "env examples.custom_env:make_env cannot be recorded: it does not implement render()")
    monkeypatch.setitem(sys.modules, "imageio", None)  # the video extra not installed
    one_error_line(capsys, evaluate_script.main([str(mappo_run), "--mp4", str(tmp_path / "x.mp4")]),
                   "pip install 'concerto-marl[video]' (in a checkout: pip install -e '.[video]')")


def test_smac_frames_show_health_levels_shields_and_the_step() -> None:
    from envs.smac import StarCraft2Env
    from envs.smac.render import ALLY, SHIELD, render_frame

    env = StarCraft2Env(map_name="2s3z", seed=0)  # agent 0 is a stalker: radius 0.625, shields
    env.reset()
    battle = env.core.battle
    battle.state.z[0, 0] = 16 + 16j  # the middle of the map, away from the others (drawing only reads it)
    first = render_frame(battle, 0)
    battle.state.hp[0, 0] = battle.stats.max_hp[0, 0] / 2
    frame = render_frame(battle, 0)
    r = 0.625 * 16
    x, y = battle.state.z[0, 0].real * 16, 512 - battle.state.z[0, 0].imag * 16
    pale = tuple(ALLY // 2 + 127)
    assert tuple(frame[int(y - r / 2), int(x - 0.7 * r)]) == pale  # the upper half is empty at half health
    assert tuple(frame[int(y + r / 2), int(x - 0.7 * r)]) == tuple(ALLY)
    assert tuple(first[int(y - r / 2), int(x - 0.7 * r)]) == tuple(ALLY)  # full health: full disc
    assert tuple(frame[int(y - r - 2), int(x)]) == SHIELD  # the full shield's ring, at 12 o'clock
    env.step([1] * 5)
    assert not np.array_equal(render_frame(battle, 0)[:20, :20], frame[:20, :20])  # the step counter moved on
