"""train.video_interval: greedy episodes recorded during training as GIFs in the run directory and as animated
images in TensorBoard, multi-agent and single-agent; an env that cannot render is refused before training."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces
from tensorboard.backend.event_processing.event_accumulator import IMAGES, EventAccumulator

from core.builtin_callbacks import VIDEO_TAG
from core.evaluation.recording import quiet_sdl

SDL_VARIABLES = ("SDL_AUDIODRIVER", "SDL_VIDEODRIVER")
SDL_SEEN: list[tuple[str | None, ...]] = []  # the SDL variables at each frame a PaintedEnv renders


class PaintedEnv(gym.Env):
    """One observation, two actions, reward 1 per step; each frame's colour counts the steps."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 4}

    def __init__(self, render_mode: str | None = None) -> None:
        self.observation_space = spaces.Box(0.0, 1.0, (1,), np.float32)
        self.action_space = spaces.Discrete(2)
        self.render_mode = render_mode
        self.t = 0

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        super().reset(seed=seed)
        self.t = 0
        return np.zeros(1, np.float32), {}

    def step(self, action: Any) -> Any:
        self.t += 1
        return np.zeros(1, np.float32), 1.0, False, False, {}

    def render(self) -> np.ndarray:
        SDL_SEEN.append(tuple(os.environ.get(key) for key in SDL_VARIABLES))
        return np.full((4, 6, 3), 30 * self.t, np.uint8)


gym.register("ConcertoPainted-v0", entry_point=f"{__name__}:PaintedEnv", max_episode_steps=5)


def gif_frames(path: Path) -> int:
    from PIL import Image
    with Image.open(path) as im:
        return int(getattr(im, "n_frames", 1))


def run_dir(logdir: Path) -> Path:
    (config,) = logdir.glob("*/*/*/config.yaml")
    return config.parent


def images(run: Path) -> list[tuple[int, int, int, bytes]]:
    """(step, width, height, encoded image) of every video summary in the run's event file."""
    events = EventAccumulator(str(run), size_guidance={IMAGES: 0})
    events.Reload()
    return [(e.step, e.width, e.height, e.encoded_image_string) for e in events.Images(VIDEO_TAG)]


def test_a_multi_agent_run_records_every_interval_and_at_the_end(tmp_path: Path) -> None:
    from marl.cli import run
    # 2 envs x 20 steps = 40 env steps an iteration: the 100 boundary is crossed at 120, the run ends at 200
    run(["--algo", "mappo", "--env", "tests.test_evaluate:make_painted", "--steps", "200", "--n-envs", "2",
         "--no-progress", "--logdir", str(tmp_path), "rollout_steps=20", "ppo_epochs=1", "train.eval_episodes=2",
         "train.eval_envs=1", "train.video_interval=100"])
    directory = run_dir(tmp_path)
    gifs = sorted((directory / "videos").iterdir())
    assert [g.name for g in gifs] == ["step-000000120.gif", "step-000000200.gif"]
    assert [gif_frames(g) for g in gifs] == [11, 11]  # a 10-step episode: the first frame and one per step
    logged = images(directory)
    assert [(step, w, h) for step, w, h, _ in logged] == [(120, 8, 6), (200, 8, 6)]
    assert [gif for *_, gif in logged] == [g.read_bytes() for g in gifs]
    assert all(gif.startswith(b"GIF89a") for *_, gif in logged)


def test_a_single_agent_run_records_too(tmp_path: Path) -> None:
    from single_agent.cli import run
    run(["--algo", "dqn", "--env", f"{__name__}:ConcertoPainted-v0", "--steps", "60", "--n-envs", "1",
         "--no-progress", "--logdir", str(tmp_path), "learning_starts=10", "iteration_steps=20", "batch_size=8",
         "hidden_sizes=[8]", "train.eval_episodes=1", "train.eval_interval=0", "train.video_interval=40"])
    directory = run_dir(tmp_path)
    gifs = sorted((directory / "videos").iterdir())
    assert [g.name for g in gifs] == ["step-000000040.gif", "step-000000060.gif"]
    assert [gif_frames(g) for g in gifs] == [6, 6]  # 5 steps to the time limit
    assert [step for step, *_ in images(directory)] == [40, 60]


def test_an_env_that_cannot_render_is_refused_before_training(tmp_path: Path, capsys: Any) -> None:
    from marl.cli import main
    code = main(["--algo", "mappo", "--env", "examples.custom_env:make_env", "--steps", "200", "--n-envs", "2",
                 "--no-progress", "--logdir", str(tmp_path), "rollout_steps=20", "train.video_interval=100"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert err == ["error: env examples.custom_env:make_env cannot be recorded: it does not implement render()"]
    assert not list(tmp_path.glob("*/*/*/checkpoints"))


def test_a_negative_interval_is_bad_input(tmp_path: Path, capsys: Any) -> None:
    from marl.cli import main
    code = main(["--algo", "mappo", "--env", "examples.custom_env:make_env", "--logdir", str(tmp_path),
                 "train.video_interval=-1"])
    assert code == 2 and capsys.readouterr().err.strip() == "error: train.video_interval must be >= 0, got -1"


def test_sdl_dummies_are_set_only_while_a_run_records_and_a_users_choice_is_kept(tmp_path: Path,
                                                                                 monkeypatch: Any) -> None:
    from single_agent.cli import run
    for key in ("DISPLAY", "WAYLAND_DISPLAY", "SDL_AUDIODRIVER"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("SDL_VIDEODRIVER", "offscreen")
    SDL_SEEN.clear()
    run(["--algo", "dqn", "--env", f"{__name__}:ConcertoPainted-v0", "--steps", "20", "--n-envs", "1",
         "--no-progress", "--logdir", str(tmp_path), "learning_starts=10", "iteration_steps=20", "batch_size=8",
         "hidden_sizes=[8]", "train.eval_episodes=1", "train.eval_interval=0", "train.video_interval=20"])
    assert SDL_SEEN and set(SDL_SEEN) == {("dummy", "offscreen")}
    assert "SDL_AUDIODRIVER" not in os.environ and os.environ["SDL_VIDEODRIVER"] == "offscreen"


def test_quiet_sdl_leaves_the_environment_as_it_was_even_after_a_failure(monkeypatch: Any) -> None:
    for key in ("DISPLAY", "WAYLAND_DISPLAY", *SDL_VARIABLES):
        monkeypatch.delenv(key, raising=False)
    with pytest.raises(RuntimeError), quiet_sdl():
        assert [os.environ.get(key) for key in SDL_VARIABLES] == ["dummy", "dummy"]
        raise RuntimeError
    assert not set(SDL_VARIABLES) & set(os.environ)
    monkeypatch.setenv("DISPLAY", ":0")
    with quiet_sdl():
        assert [os.environ.get(key) for key in SDL_VARIABLES] == ["dummy", None]
    assert not set(SDL_VARIABLES) & set(os.environ)
