"""The multi-agent training run: multi-agent vector envs, a marl/ algorithm and its runner on core's loop."""
from __future__ import annotations

import torch

from core.builtin_callbacks import EpisodeRecorder
from core.errors import UserError
from core.evaluation.episodes import Evaluation
from core.trainer import Runner, Trainer
from envs.registry import check_env_options, make_vec
from envs.spec import EnvSpec
from envs.vec_env import VecEnv
from marl.agent import Agent
from marl.algos import AlgoEntry, get_algo
from marl.evaluation import evaluate
from marl.saved_policy import MarlSide


class MarlTrainer(Trainer):
    """Trains `--algo` on a registered multi-agent env; see core.trainer.Trainer for the loop."""

    agent: Agent
    eval_env: VecEnv | None

    def _build(self, device: torch.device) -> None:
        train = self.train_cfg
        self.entry = get_algo(self.algo_name)
        check_env_options(self.env_kwargs)
        self.env = make_vec(self.env_name, train.n_envs, train.vec, seed=train.seed,
                            worker_timeout_s=train.worker_timeout_s, **self.env_kwargs)
        self.eval_env = make_vec(self.env_name, min(train.eval_envs, train.eval_episodes), "sync", **self.env_kwargs)
        _check_spaces(self.algo_name, self.entry, self.env.spec)
        self.agent = self.entry.agent_class(self.env.spec, self.algo_cfg, device, run=self.run)

    def _make_runner(self) -> Runner:
        return self.entry.runner_class(self.agent, self.env, self.run)

    def _evaluate(self, seed: int) -> Evaluation:
        assert self.eval_env is not None, "evaluation before _build"
        return evaluate(self.agent, self.eval_env, self.train_cfg.eval_episodes, seed=seed)

    def _recorder(self) -> EpisodeRecorder[VecEnv]:
        return MarlSide()


def _check_spaces(algo: str, entry: AlgoEntry, spec: EnvSpec) -> None:
    if entry.discrete_only:
        box = [g.name for g in spec.groups if not g.discrete]
        if box:
            raise UserError(f"{algo} needs Discrete actions, but group(s) {', '.join(box)} have Box actions; "
                            "use mappo or ippo")
