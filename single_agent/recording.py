"""A one-env gymnasium vector env that records the frames of the episodes it plays."""
from __future__ import annotations

from typing import Any

import gymnasium as gym

from core.evaluation.recording import FrameLog
from single_agent.vec_env import TransitionVecEnv


class RecordingWrapper(gym.Wrapper):
    """Hands the env's frame to `log` after each reset and step (before the vector env's auto-reset); it goes
    around Snapshot, whose step would turn a missing renderer into a RuntimeError."""

    def __init__(self, env: gym.Env, log: FrameLog) -> None:
        super().__init__(env)
        self.log = log

    def reset(self, **kwargs: Any) -> Any:
        result = self.env.reset(**kwargs)
        self.log.begin(self.env.render, self.env.metadata)
        return result

    def step(self, action: Any) -> Any:
        result = self.env.step(action)
        self.log.add(self.env.render, ended=bool(result[2] or result[3]))
        return result


def recording_vec_env(env_id: str, log: FrameLog, **env_kwargs: Any) -> TransitionVecEnv:
    """One copy of gymnasium env `env_id`, made with render_mode='rgb_array', recording into `log`. Use it inside
    core.evaluation.recording.quiet_sdl."""
    return TransitionVecEnv(env_id, 1, "sync", wrappers=[lambda env: RecordingWrapper(env, log)],
                            **{**env_kwargs, "render_mode": "rgb_array"})
