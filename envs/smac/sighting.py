"""smacv2's memory of sighted enemies (its `enemy_tags` and `obs_enemies`, at prob_obs_enemy = 1).

In smacv2 an agent's observation shows an enemy only after the team has sighted it. Each get_obs() call lets
the alive agents take turns in a random order. On its turn an agent marks every enemy in its sight range that
nobody has sighted yet as sighted, by itself. From then on every agent may see that enemy. So agents whose
turn came earlier in the same call do not see it yet.

An enemy is forgotten when it dies, or when the agent that sighted it dies (smacv2's step()). A dead enemy
within an alive agent's sight is sighted again: its position stays where it fell.

smacv2 also zeroes an agent's whole enemy block each time its loop meets an enemy the agent may not see. The
enemies before the last such one are therefore hidden as well. `shown` reproduces this.
"""
from __future__ import annotations

import numpy as np

NO_TURN = np.inf  # a turn key for an agent that takes no turn in a call


class EnemySighting:
    """Which agent first sighted each enemy, per env ([n_envs, n_enemies]; -1: not sighted)."""

    def __init__(self, n_envs: int, n_enemies: int, seed: int | None) -> None:
        self.owner = np.full((n_envs, n_enemies), -1, np.int64)
        self.seed(seed)

    def seed(self, seed: int | None) -> None:
        """The random turn order has its own stream, so the battles do not depend on how often one observes."""
        self.rng = np.random.default_rng(None if seed is None else [seed, 1])

    def random_turns(self, n: int, n_agents: int) -> np.ndarray:
        """A random turn order per env [n, A], as smacv2's get_obs shuffles its agents."""
        return self.rng.random((n, n_agents))

    def reset(self, mask: np.ndarray) -> None:
        self.owner[mask] = -1

    def forget(self, alive: np.ndarray, n_agents: int) -> None:
        """smacv2's step(): forget enemies that are dead or whose sighting agent is dead (`alive` [B, U])."""
        sighted = self.owner >= 0
        owner_alive = np.take_along_axis(alive[:, :n_agents], np.where(sighted, self.owner, 0), axis=1)
        self.owner[~alive[:, n_agents:] | (sighted & ~owner_alive)] = -1

    def sight(self, idx: np.ndarray | slice, in_sight: np.ndarray, turns: np.ndarray) -> np.ndarray:
        """One get_obs() call for envs `idx`. `in_sight` [n, A, E] says which enemies each alive agent has in
        its sight range, dead enemies included. Agents take their turns in increasing `turns` [n, A]; an
        agent with NO_TURN takes none. Records the new sightings and returns, for each agent, the enemies it
        may see on its turn [n, A, E]."""
        owner = self.owner[idx]
        sighted = owner >= 0
        keys = np.where(in_sight & ~sighted[:, None, :], turns[:, :, None], NO_TURN)
        first = keys.min(axis=1)  # [n, E]: the turn that sights an enemy now (NO_TURN: none)
        self.owner[idx] = np.where(np.isfinite(first), keys.argmin(axis=1), owner)
        return sighted[:, None, :] | ((turns[:, :, None] >= first[:, None, :]) & np.isfinite(first)[:, None, :])

    @staticmethod
    def shown(may_see: np.ndarray) -> np.ndarray:
        """The enemies whose features an agent's observation keeps [..., E]: those it may see that come after
        the last enemy it may not see."""
        n_enemies = may_see.shape[-1]
        last_hidden = np.where(may_see, -1, np.arange(n_enemies)).max(axis=-1, keepdims=True)
        return may_see & (np.arange(n_enemies) > last_hidden)
