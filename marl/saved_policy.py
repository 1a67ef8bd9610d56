"""How a saved multi-agent run is played again (core.evaluation.play.Side): envs from the registry, the agent of
the run's algorithm with its trained weights, marl.evaluation's loop."""
from __future__ import annotations

from typing import Any

import torch

from core.evaluation.episodes import Evaluation
from core.evaluation.recording import FrameLog
from core.evaluation.saved_run import SavedRun
from envs.recording import recording_vec_env
from envs.registry import check_env_options, make_vec
from envs.vec_env import VecEnv
from marl.agent import Agent
from marl.algos import get_algo
from marl.evaluation import evaluate


class MarlSide:
    """Multi-agent envs (registered names, package.module:factory) and marl/ agents."""

    def make_env(self, name: str, n_envs: int, options: dict[str, Any]) -> VecEnv:
        check_env_options(options)
        return make_vec(name, n_envs, "sync", **options)

    def recording_env(self, name: str, log: FrameLog, options: dict[str, Any]) -> VecEnv:
        return recording_vec_env(name, log, **options)

    def space_difference(self, env: VecEnv, reference: VecEnv) -> str | None:
        spec, ref = env.spec, reference.spec
        if [g.name for g in spec.groups] != [g.name for g in ref.groups]:
            return f"agent groups {[g.name for g in spec.groups]}, not {[g.name for g in ref.groups]}"
        for g, r in zip(spec.groups, ref.groups, strict=True):
            if g.n_agents != r.n_agents:
                return f"group {g.name} has {g.n_agents} agents, not {r.n_agents}"
            if g.obs_shape != r.obs_shape:
                return f"group {g.name}'s observations have shape {g.obs_shape}, not {r.obs_shape}"
            if g.action_space != r.action_space:
                return f"group {g.name}'s action space is {g.action_space}, not {r.action_space}"
        if spec.state_shape != ref.state_shape:
            return f"the state shape is {spec.state_shape}, not {ref.state_shape}"
        return None

    def make_agent(self, saved: SavedRun, env: VecEnv, device: torch.device, seed: int) -> Agent:
        entry = get_algo(saved.algo)
        agent: Agent = entry.agent_class(env.spec, saved.algo_config(entry.config_class), device,
                                           run=saved.run_state(seed))
        saved.restore(agent)
        return agent

    def evaluate(self, agent: Agent, env: VecEnv, n_episodes: int, seed: int, deterministic: bool) -> Evaluation:
        return evaluate(agent, env, n_episodes, seed=seed, deterministic=deterministic)
