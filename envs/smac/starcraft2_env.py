"""Drop-in replacement for smac's `StarCraft2Env` on the built-in simulator (no StarCraft II needed).

Same constructor arguments where they make sense without SC2 and the same methods, so a pymarl-style loop
runs unchanged:

    env = StarCraft2Env(map_name="3m")
    env.reset()
    reward, terminated, info = env.step([...])   # one int per agent; unavailable actions raise
"""
from __future__ import annotations

import numpy as np

from envs.smac.single import SingleBattle

IGNORED = frozenset({"step_mul", "move_amount", "difficulty", "game_version", "replay_dir", "replay_prefix",
                     "window_size_x", "window_size_y", "heuristic_rest", "debug"})


class StarCraft2Env:
    def __init__(self, map_name: str = "8m", seed: int | None = None, continuing_episode: bool = False,
                 episode_limit: int | None = None, **kwargs) -> None:
        flags = {k: v for k, v in kwargs.items() if k not in IGNORED}
        self.battle = SingleBattle(map_name, seed, episode_limit, **flags)
        self.map_name = map_name
        self._seed = seed
        self.continuing_episode = continuing_episode
        self.n_agents, self.n_enemies = self.battle.core.n_agents, self.battle.core.n_enemies
        self.n_actions = self.battle.n_actions
        self.episode_limit = self.battle.core.limit
        self.battles_won = self.battles_game = self.battles_draw = self.timeouts = self.restarts = 0
        self._episode_steps = 0

    # -- episode ----------------------------------------------------------------------------------------
    def reset(self):
        """Start a new battle; returns (obs list, state) like smac."""
        self.battle.reset()
        self._episode_steps = 0
        return self.get_obs(), self.get_state()

    def step(self, actions):
        """Returns (reward, terminated, info) like smac; timeouts are terminal, as in smac's default."""
        out = self.battle.step(np.asarray([int(a) for a in actions]))
        self._episode_steps += 1
        info = {"battle_won": False, "dead_allies": int(out.dead_allies[0]), "dead_enemies": int(out.dead_enemies[0])}
        terminated = bool(out.ended[0])
        if terminated:
            self.battles_game += 1
            if out.won[0]:
                self.battles_won += 1
                info["battle_won"] = True
            elif not (self.battle.core.battle.alive[0].any()):
                self.battles_draw += 1
        elif out.timeout[0]:
            terminated = True
            self.battles_game += 1
            self.timeouts += 1
            if self.continuing_episode:
                info["episode_limit"] = True
        return float(out.reward[0]), terminated, info

    # -- observations -----------------------------------------------------------------------------------
    def get_obs(self) -> list[np.ndarray]:
        return [o.copy() for o in self.battle.obs]

    def get_obs_agent(self, agent_id: int) -> np.ndarray:
        return self.battle.obs[agent_id].copy()

    def get_obs_size(self) -> int:
        return self.battle.core.features.obs_size

    def get_state(self) -> np.ndarray:
        return self.battle.state.copy()

    def get_state_size(self) -> int:
        return self.battle.core.features.state_size

    def get_avail_actions(self) -> list[list[int]]:
        return [row.astype(int).tolist() for row in self.battle.avail]

    def get_avail_agent_actions(self, agent_id: int) -> list[int]:
        return self.battle.avail[agent_id].astype(int).tolist()

    def get_total_actions(self) -> int:
        return self.n_actions

    def get_env_info(self) -> dict:
        return {"state_shape": self.get_state_size(), "obs_shape": self.get_obs_size(), "n_actions": self.n_actions,
                "n_agents": self.n_agents, "episode_limit": self.episode_limit}

    def get_stats(self) -> dict:
        return {"battles_won": self.battles_won, "battles_game": self.battles_game,
                "battles_draw": self.battles_draw, "win_rate": self.battles_won / max(self.battles_game, 1),
                "timeouts": self.timeouts, "restarts": self.restarts}

    def get_visibility_matrix(self) -> np.ndarray:
        b = self.battle.core.battle
        dist = np.abs(b.z[0, None, :] - b.z[0, : self.n_agents, None])
        return (dist < 9.0) & b.alive[0, None, :] & b.alive[0, : self.n_agents, None]

    def seed(self) -> int | None:
        return self._seed

    def render(self, mode: str = "rgb_array") -> np.ndarray:
        from envs.smac.render import render_frame

        return render_frame(self.battle.core, 0)

    def close(self) -> None:
        pass

    def save_replay(self) -> None:
        """No-op: the simulator has no SC2 replays (use envs.smac.render.save_gif)."""
