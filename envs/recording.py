"""A one-env vector env that records the frames of the episodes it plays (PettingZoo envs: MPE, the built-in
StarCraft simulator's PettingZoo face, a user's env that renders rgb_array frames)."""
from __future__ import annotations

import inspect
from typing import Any

from pettingzoo.utils.conversions import aec_to_parallel
from pettingzoo.utils.env import AECEnv, ParallelEnv
from pettingzoo.utils.wrappers import BaseParallelWrapper

from core.evaluation.recording import FrameLog
from envs.registry import env_factory, resolve
from envs.sync_vec_env import SyncVecEnv


class RecordingParallelEnv(BaseParallelWrapper):
    """Hands the wrapped env's frame to `log` after each reset and step (before an adapter's auto-reset)."""

    def __init__(self, env: ParallelEnv, log: FrameLog) -> None:
        super().__init__(env)
        self.log = log

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        result = self.env.reset(seed=seed, options=options)
        self.log.begin(self.env.render, self.env.metadata)
        return result

    def step(self, actions: dict[Any, Any]) -> Any:
        result = self.env.step(actions)
        obs, _, terms, truncs, _ = result
        finished = {a for a in obs if terms.get(a, False) or truncs.get(a, False)}
        self.log.add(self.env.render, ended=not set(self.env.agents) - finished)  # the adapter's end-of-episode rule
        return result


def recording_vec_env(name: str, log: FrameLog, **env_kwargs: Any) -> SyncVecEnv:
    """One copy of env `name` (built with render_mode='rgb_array' where its factory takes it) recording into
    `log`; a single env, so that the frames come from one episode at a time. Use it inside
    core.evaluation.recording.quiet_sdl."""
    if _takes_render_mode(resolve(name).factory):
        env_kwargs = {**env_kwargs, "render_mode": "rgb_array"}
    factory = env_factory(name, **env_kwargs)

    def make() -> RecordingParallelEnv:
        env = factory()
        return RecordingParallelEnv(aec_to_parallel(env) if isinstance(env, AECEnv) else env, log)

    return SyncVecEnv([make], name=name)


def _takes_render_mode(factory: Any) -> bool:
    try:
        params = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return False
    return "render_mode" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())
