"""How a saved single-agent run is played again (core.evaluation.play.Side): gymnasium vector envs, the learner of
the run's algorithm with its trained weights, single_agent.evaluation's loop."""
from __future__ import annotations

from typing import Any

import torch

from core.evaluation.episodes import Evaluation
from core.evaluation.recording import FrameLog
from core.evaluation.saved_run import SavedRun
from single_agent.algos import get_algo
from single_agent.evaluation import evaluate
from single_agent.recording import recording_vec_env
from single_agent.vec_env import TransitionVecEnv


class SingleAgentSide:
    """gymnasium env ids (or module:EnvId) and single_agent/ learners."""

    def make_env(self, name: str, n_envs: int, options: dict[str, Any]) -> TransitionVecEnv:
        return TransitionVecEnv(name, n_envs, "sync", **options)

    def recording_env(self, name: str, log: FrameLog, options: dict[str, Any]) -> TransitionVecEnv:
        return recording_vec_env(name, log, **options)

    def space_difference(self, env: TransitionVecEnv, reference: TransitionVecEnv) -> str | None:
        for field, mine, theirs in (("observation space", env.observation_space, reference.observation_space),
                                    ("action space", env.action_space, reference.action_space)):
            if mine != theirs:
                return f"its {field} is {mine}, not {theirs}"
        return None

    def make_agent(self, saved: SavedRun, env: TransitionVecEnv, device: torch.device, seed: int) -> Any:
        entry = get_algo(saved.algo)
        agent = entry.agent_class(env.observation_space, env.action_space, saved.algo_config(entry.config_class),
                                  device, run=saved.run_state(seed))
        saved.restore(agent)
        return agent

    def evaluate(self, agent: Any, env: TransitionVecEnv, n_episodes: int, seed: int, deterministic: bool
                 ) -> Evaluation:
        return evaluate(agent, env, n_episodes, seed=seed, deterministic=deterministic)
