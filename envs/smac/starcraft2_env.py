"""Drop-in replacement for smac's `StarCraft2Env` on the built-in simulator (no StarCraft II needed).

Same constructor arguments where they make sense without SC2 and the same methods, so a pymarl-style loop
runs unchanged:

    env = StarCraft2Env(map_name="3m")
    env.reset()
    reward, terminated, info = env.step([...])   # one int per agent; unavailable actions raise
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from envs.smac.core import make_batch
from envs.smac.features import SIGHT_RANGE

IGNORED = frozenset({"step_mul", "move_amount", "difficulty", "game_version", "replay_dir", "replay_prefix",
                     "window_size_x", "window_size_y", "heuristic_rest", "debug"})


class Seen(NamedTuple):
    """What the agents see at the current step."""

    obs: np.ndarray  # [n_agents, obs_size]
    state: np.ndarray  # [state_size]
    avail: np.ndarray  # [n_agents, n_actions] bool


class StarCraft2Env:
    """One battle (a SMACBatch of one env) behind smac's methods; it does not auto-reset."""

    def __init__(self, map_name: str = "8m", seed: int | None = None, continuing_episode: bool = False,
                 episode_limit: int | None = None, **kwargs: Any) -> None:
        flags = {k: v for k, v in kwargs.items() if k not in IGNORED}
        self.core = make_batch(map_name, 1, seed, episode_limit, flags)
        self.map_name = map_name
        self._seed = seed
        self.continuing_episode = continuing_episode
        self.n_agents, self.n_enemies = self.core.n_agents, self.core.n_enemies
        self.n_actions = self.core.n_actions
        self.episode_limit = self.core.limit
        self.battles_won = self.battles_game = self.battles_draw = self.timeouts = self.restarts = 0
        self._episode_steps = 0
        self._done = True
        self._seen: Seen | None = None

    def reseed(self, seed: int) -> None:
        """Restart the simulator's random stream from `seed` (not in smac, whose seed is fixed at construction;
        the PettingZoo face's reset(seed) uses it)."""
        self.core.seed(seed)

    # -- episode ----------------------------------------------------------------------------------------
    def reset(self) -> tuple[list[np.ndarray], np.ndarray]:
        """Start a new battle; returns (obs list, state) like smac."""
        self.core.reset(np.ones(1, bool))
        self._done = False
        self._episode_steps = 0
        self._observe()
        return self.get_obs(), self.get_state()

    def step(self, actions: Sequence[int] | np.ndarray) -> tuple[float, bool, dict[str, Any]]:
        """Returns (reward, terminated, info) like smac; timeouts are terminal, as in smac's default."""
        if self._done:
            raise RuntimeError("the episode is over; call reset()")
        acts = np.asarray([int(a) for a in actions], dtype=np.int64).reshape(1, -1)
        self.core.check_actions(acts, self._current().avail[None])
        out = self.core.step(acts)
        self._done = bool(out.ended[0] or out.timeout[0])
        self._observe()
        self._episode_steps += 1
        info: dict[str, Any] = {"battle_won": False, "dead_allies": int(out.dead_allies[0]),
                                "dead_enemies": int(out.dead_enemies[0])}
        terminated = bool(out.ended[0])
        if terminated:
            self.battles_game += 1
            if out.won[0]:
                self.battles_won += 1
                info["battle_won"] = True
            elif not self.core.battle.state.alive[0].any():
                self.battles_draw += 1
        elif out.timeout[0]:
            terminated = True
            self.battles_game += 1
            self.timeouts += 1
            if self.continuing_episode:
                info["episode_limit"] = True
        return float(out.reward[0]), terminated, info

    def _observe(self) -> None:
        obs, state, avail = self.core.observe()
        self._seen = Seen(obs[0], state[0], avail[0])

    def _current(self) -> Seen:
        if self._seen is None:
            raise RuntimeError("no battle yet; call reset()")
        return self._seen

    # -- observations -----------------------------------------------------------------------------------
    def get_obs(self) -> list[np.ndarray]:
        return [o.copy() for o in self._current().obs]

    def get_obs_agent(self, agent_id: int) -> np.ndarray:
        return self._current().obs[agent_id].copy()

    def get_obs_size(self) -> int:
        return self.core.features.obs_size

    def get_state(self) -> np.ndarray:
        return self._current().state.copy()

    def get_state_size(self) -> int:
        return self.core.features.state_size

    def get_avail_actions(self) -> list[list[int]]:
        return [row.astype(int).tolist() for row in self._current().avail]

    def get_avail_agent_actions(self, agent_id: int) -> list[int]:
        return self._current().avail[agent_id].astype(int).tolist()

    def get_total_actions(self) -> int:
        return self.n_actions

    def get_env_info(self) -> dict[str, int]:
        return {"state_shape": self.get_state_size(), "obs_shape": self.get_obs_size(), "n_actions": self.n_actions,
                "n_agents": self.n_agents, "episode_limit": self.episode_limit}

    def get_stats(self) -> dict[str, float]:
        return {"battles_won": self.battles_won, "battles_game": self.battles_game,
                "battles_draw": self.battles_draw, "win_rate": self.battles_won / max(self.battles_game, 1),
                "timeouts": self.timeouts, "restarts": self.restarts}

    def get_visibility_matrix(self) -> np.ndarray:
        s = self.core.battle.state
        dist = np.abs(s.z[0, None, :] - s.z[0, : self.n_agents, None])
        return (dist < SIGHT_RANGE) & s.alive[0, None, :] & s.alive[0, : self.n_agents, None]

    def seed(self) -> int | None:
        return self._seed

    def render(self, mode: str = "rgb_array") -> np.ndarray:
        from envs.smac.render import render_frame

        return render_frame(self.core.battle, 0)

    def close(self) -> None:
        pass

    def save_replay(self) -> None:
        """No-op: the simulator has no SC2 replays (use envs.smac.render.save_gif)."""
