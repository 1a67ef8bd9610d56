"""The single-agent training run: gymnasium vector envs and a single_agent/ learner on core's loop."""
from __future__ import annotations

from typing import Any

import torch

from core.builtin_callbacks import EpisodeRecorder
from core.evaluation.episodes import Evaluation
from core.trainer import Runner, Trainer
from single_agent.algos import get_algo
from single_agent.evaluation import evaluate
from single_agent.saved_policy import SingleAgentSide
from single_agent.spaces import check_action_space, obs_dim
from single_agent.vec_env import TransitionVecEnv


class SingleAgentTrainer(Trainer):
    """Trains `--algo` on a gymnasium env id; see core.trainer.Trainer for the loop."""

    eval_env: TransitionVecEnv | None

    def _build(self, device: torch.device) -> None:
        train = self.train_cfg
        self.entry = get_algo(self.algo_name)
        self.env = TransitionVecEnv(self.env_name, train.n_envs, train.vec, train.worker_timeout_s, **self.env_kwargs)
        self.eval_env = TransitionVecEnv(self.env_name, min(train.eval_envs, train.eval_episodes), "sync",
                                         **self.env_kwargs)
        check_action_space(self.algo_name, self.env.action_space, self.entry.discrete, self.entry.continuous)
        obs_dim(self.env.observation_space)  # raises for unsupported observation spaces
        self.agent = self.entry.agent_class(self.env.observation_space, self.env.action_space, self.algo_cfg,
                                            device, run=self.run)

    def _make_runner(self) -> Runner:
        return self.entry.runner_class(self.agent, self.env, self.run)

    def _evaluate(self, seed: int) -> Evaluation:
        assert self.eval_env is not None, "evaluation before _build"
        return evaluate(self.agent, self.eval_env, self.train_cfg.eval_episodes, seed=seed)

    def _recorder(self) -> EpisodeRecorder[Any]:
        return SingleAgentSide()
