"""Playing a saved run again: rebuild its env and policy, evaluate N episodes and, when asked, record more in one
env copy. The flow is the same for both sides; each supplies its env and agent through a `Side` (marl.saved_policy,
single_agent.saved_policy), so core imports neither."""
from __future__ import annotations

from contextlib import ExitStack, closing
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol, TypeVar

import numpy as np
import torch

from core.errors import UserError
from core.evaluation.episodes import Evaluation
from core.evaluation.recording import FrameLog, quiet_sdl
from core.evaluation.saved_run import SavedRun


@dataclass(frozen=True)
class EvalRequest:
    """What to play: `episodes` episodes of `env` over `n_envs` copies; then, if `record_episodes`, that many
    in one recorded copy with the same seed."""

    env: str
    env_kwargs: dict[str, Any]
    episodes: int
    n_envs: int
    seed: int
    deterministic: bool
    device: torch.device
    record_episodes: int = 0


class Recording(NamedTuple):
    """The recorded episodes: their frames (T + 1 for an episode of T steps), lengths and playback rate."""

    episodes: list[list[np.ndarray]]
    lengths: list[int]
    fps: float


class Played(NamedTuple):
    evaluation: Evaluation
    recording: Recording | None


class Closeable(Protocol):
    def close(self) -> None: ...


EnvT = TypeVar("EnvT", bound=Closeable)


class Side(Protocol[EnvT]):
    """How one side builds envs and agents for a saved run, as its trainer does."""

    def make_env(self, name: str, n_envs: int, options: dict[str, Any]) -> EnvT: ...

    def recording_env(self, name: str, log: FrameLog, options: dict[str, Any]) -> EnvT: ...

    def space_difference(self, env: EnvT, reference: EnvT) -> str | None:
        """The first space in which `env` differs from `reference` (its groups, observations, actions, state),
        None if there is none."""
        ...

    def make_agent(self, saved: SavedRun, env: EnvT, device: torch.device, seed: int) -> Any:
        """The run's agent for `env`, its trained weights loaded."""
        ...

    def evaluate(self, agent: Any, env: EnvT, n_episodes: int, seed: int, deterministic: bool) -> Evaluation: ...


def play(side: Side[EnvT], saved: SavedRun, request: EvalRequest) -> Played:
    """Evaluate the saved policy as `request` says; an env other than the run's (or other options) must have the
    spaces the policy was trained in."""
    with ExitStack() as stack:
        env = stack.enter_context(closing(side.make_env(request.env, request.n_envs, request.env_kwargs)))
        if (request.env, request.env_kwargs) != (saved.env, saved.env_options):
            trained = stack.enter_context(closing(side.make_env(saved.env, 1, saved.env_options)))
            _check_same_spaces(side, env, trained, f"env {request.env}", f"{saved.env}, which the policy was "
                               "trained on")
        agent = side.make_agent(saved, env, request.device, request.seed)
        evaluation = side.evaluate(agent, env, request.episodes, request.seed, request.deterministic)
        if not request.record_episodes:
            return Played(evaluation, None)
        log = FrameLog(request.env)
        stack.enter_context(quiet_sdl())
        one = stack.enter_context(closing(side.recording_env(request.env, log, request.env_kwargs)))
        _check_same_spaces(side, one, env, f"the recorded copy of {request.env}", "its vector env")
        recorded = side.evaluate(agent, one, request.record_episodes, request.seed, request.deterministic)
        lengths = [int(n) for n in recorded.episodes["length"]]
        return Played(evaluation, Recording(log.episodes[: request.record_episodes], lengths, log.fps))


def _check_same_spaces(side: Side[EnvT], env: EnvT, reference: EnvT, what: str, reference_what: str) -> None:
    difference = side.space_difference(env, reference)
    if difference is not None:
        raise UserError(f"{what} has other spaces than {reference_what}: {difference}")
