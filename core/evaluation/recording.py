"""Recording episodes: the frames an env renders, split into episodes, and GIF/MP4 writers.

An env wrapper (envs.recording for PettingZoo envs, single_agent.recording for gymnasium ones) hands every
frame to a `FrameLog` right after reset and after each step, before a vector env's same-step auto-reset, so an
episode of T steps gives T + 1 frames, its last showing how it ended.
"""
from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

import gymnasium as gym
import numpy as np

from core.errors import MissingDependencyError, UserError
from core.paths import install_hint

VideoKind = Literal["gif", "mp4"]
DEFAULT_FPS = 8.0  # envs that do not say (metadata "render_fps"): about a StarCraft step's game time
MIN_GIF_FRAME_MS = 20  # browsers play shorter GIF frames at 100 ms
INSTALL_HINT = f"{install_hint('video')} (or pip install pillow imageio imageio-ffmpeg)"


class FrameLog:
    """Frames of the episodes an env plays: `begin` at a reset, `add` after each step, each given the env's
    `render`. An episode is kept once it ends; one cut short by a reset (an adapter probing the env) is dropped."""

    def __init__(self, env_name: str) -> None:
        self.env_name = env_name
        self.episodes: list[list[np.ndarray]] = []
        self._current: list[np.ndarray] | None = None
        self.fps = DEFAULT_FPS

    def begin(self, render: Callable[[], Any], metadata: Any = None) -> None:
        fps = metadata.get("render_fps") if isinstance(metadata, dict) else None
        if isinstance(fps, (int, float)) and fps > 0:
            self.fps = float(fps)
        self._current = [self._capture(render)]

    def add(self, render: Callable[[], Any], ended: bool) -> None:
        assert self._current is not None, "a step before the first reset"
        self._current.append(self._capture(render))
        if ended:
            self.episodes.append(self._current)
            self._current = None

    def _capture(self, render: Callable[[], Any]) -> np.ndarray:
        """A copy of the rendered frame as uint8 [H, W, 3] (alpha dropped); UserError for an env that cannot
        render an RGB image, MissingDependencyError for a renderer that is not installed."""
        try:
            frame = render()
        except NotImplementedError:
            raise UserError(f"env {self.env_name} cannot be recorded: it does not implement render()") from None
        except (ImportError, gym.error.DependencyNotInstalled) as exc:  # pygame: classic control, MPE
            raise MissingDependencyError(f"rendering env {self.env_name} needs a package that is missing "
                                         f"({str(exc).splitlines()[0]}): pip install pygame") from None
        if isinstance(frame, np.ndarray) and frame.ndim == 3 and frame.shape[2] in (3, 4) and frame.size:
            if frame.dtype != np.uint8:
                frame = np.clip(frame, 0, 255)
            return np.array(frame[..., :3], dtype=np.uint8)
        what = f"an array of shape {frame.shape}" if isinstance(frame, np.ndarray) else type(frame).__name__
        raise UserError(f"env {self.env_name} cannot be recorded: its render() returned {what}, not an RGB image "
                        "(recording needs an env that renders rgb_array frames, render_mode='rgb_array')")


@contextmanager
def quiet_sdl() -> Iterator[None]:
    """Around a recording env's life: pygame-based renderers (classic control, MPE) get SDL's dummy sound device,
    and on a machine without a display its dummy video driver (rgb_array frames need no window), unless the user
    chose them: otherwise SDL's probes print `error: ...` lines of their own (no sound device; XDG_RUNTIME_DIR not
    set). The variables it sets are removed after, so the process's environment is as it was."""
    dummies = ["SDL_AUDIODRIVER"]
    if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        dummies.append("SDL_VIDEODRIVER")
    added = [key for key in dummies if key not in os.environ]
    os.environ.update(dict.fromkeys(added, "dummy"))
    try:
        yield
    finally:
        for key in added:
            os.environ.pop(key, None)


def video_kind(path: str | Path, kind: VideoKind) -> VideoKind:
    """Check that frames can be written as `kind` (Pillow for GIF; imageio with ffmpeg for MP4) before anything
    runs: MissingDependencyError naming what to install."""
    try:
        if kind == "gif":
            importlib.import_module("PIL.Image")
        else:
            importlib.import_module("imageio")
            importlib.import_module("imageio_ffmpeg").get_ffmpeg_exe()
    except (ImportError, RuntimeError) as exc:
        needs = "Pillow" if kind == "gif" else "imageio with imageio-ffmpeg"
        raise MissingDependencyError(f"writing {path} as {kind.upper()} needs {needs} ({exc}): {INSTALL_HINT}"
                                     ) from None
    return kind


def write_video(frames: list[np.ndarray], path: str | Path, fps: float, kind: VideoKind) -> Path:
    """Write RGB frames (all of one size) as an animated GIF (looping) or an H.264 MP4."""
    path = Path(path)
    if kind == "gif":
        from PIL import Image

        images = [Image.fromarray(f) for f in frames]
        duration = max(MIN_GIF_FRAME_MS, round(1000 / fps))
        images[0].save(path, save_all=True, append_images=images[1:], duration=duration, loop=0)
        return path
    import imageio.v2 as imageio

    # macro_block_size 2: H.264 needs even sizes; other sizes are padded rather than rescaled
    imageio.mimwrite(path, [_even(f) for f in frames], format="FFMPEG", fps=fps, macro_block_size=2)
    return path


def save_gif(frames: list[np.ndarray], path: str | Path, fps: float = DEFAULT_FPS) -> Path:
    """Write frames as an animated GIF (MissingDependencyError without Pillow)."""
    return write_video(frames, path, fps, video_kind(path, "gif"))


def _even(frame: np.ndarray) -> np.ndarray:
    """`frame` padded by edge pixels to even height and width."""
    h, w = frame.shape[:2]
    return np.pad(frame, ((0, h % 2), (0, w % 2), (0, 0)), mode="edge") if h % 2 or w % 2 else frame
