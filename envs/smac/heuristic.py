"""The SMAC paper's heuristic ally policy, vectorised over envs and agents.

Each ally attacks the nearest alive enemy (skipping medivacs while other enemies live) and keeps that target
until it dies; medivacs heal the nearest damaged non-medivac ally. `orders()` gives SMAC's `heuristic_ai`
behaviour: raw attack orders at any range (the unit closes in by itself), bypassing action availability.
`act(avail)` is the same policy within the normal action space (SMAC's `heuristic_rest`): when the target is
not yet attackable the ally moves toward it along the dominant axis.
"""
from __future__ import annotations

import numpy as np

from envs.smac.battle import Battle
from envs.smac.battle_constants import N_NON_ATTACK_ACTIONS

FAR = 1e9


class HeuristicPolicy:
    """Targets persist across steps; call `reset(mask)` for envs that start a new episode."""

    def __init__(self, battle: Battle) -> None:
        self.battle = battle
        self.target = np.full((battle.n_envs, battle.n_agents), -1)

    def _targets(self) -> tuple[np.ndarray, np.ndarray]:
        """Update and return (action target index j per agent, its unit index)."""
        s, st = self.battle.state, self.battle.stats
        a, envs = self.battle.n_agents, np.arange(self.battle.n_envs)[:, None]
        medic = st.is_medivac[:, :a]
        enemy_alive = s.alive[:, a:]
        others = enemy_alive & ~st.is_medivac[:, a:]
        prefer = np.where(others.any(1, keepdims=True), others, enemy_alive)
        d_enemy = np.abs(s.z[:, None, a:] - s.z[:, :a, None])
        nearest_enemy = np.where(prefer[:, None, :], d_enemy, FAR).argmin(-1)
        current = np.maximum(self.target, 0)
        keep = (self.target >= 0) & enemy_alive[envs, current]
        target = np.where(keep, current, nearest_enemy)
        unit = target + a
        if medic.any():
            damaged = s.alive[:, :a] & ~medic & (s.hp[:, :a] < st.max_hp[:, :a])
            d_ally = np.abs(s.z[:, None, :a] - s.z[:, :a, None])
            heal = np.where(damaged[:, None, :], d_ally, FAR).argmin(-1)
            target = np.where(medic, heal, target)
            unit = np.where(medic, heal, unit)
        self.target = np.where(medic, -1, target)
        return target, unit

    def orders(self) -> np.ndarray:
        """SMAC's heuristic_ai: attack (or heal) the chosen target whatever its distance; dead agents no-op."""
        s, st, a = self.battle.state, self.battle.stats, self.battle.n_agents
        target, _ = self._targets()
        alive = s.alive[:, :a]
        medic = st.is_medivac[:, :a]
        if medic.any():  # a medivac with nobody to heal stops
            damaged = (alive & (s.hp[:, :a] < st.max_hp[:, :a])).any(1, keepdims=True)
            idle = medic & ~damaged
        else:
            idle = np.zeros_like(alive)
        return np.where(alive, np.where(idle, 1, N_NON_ATTACK_ACTIONS + target), 0)

    def act(self, avail: np.ndarray) -> np.ndarray:
        """The same policy with available actions only [n_envs, A] (heuristic_rest)."""
        z = self.battle.state.z
        envs = np.arange(self.battle.n_envs)[:, None]
        target, unit = self._targets()
        fire = np.take_along_axis(avail, (N_NON_ATTACK_ACTIONS + target)[..., None], axis=2)[..., 0]
        delta = z[envs, unit] - z[:, : self.battle.n_agents]
        horizontal = np.abs(delta.real) > np.abs(delta.imag)
        move = np.where(horizontal, np.where(delta.real > 0, 4, 5), np.where(delta.imag > 0, 2, 3))
        can_move = np.take_along_axis(avail, move[..., None], axis=2)[..., 0]
        actions = np.where(fire, N_NON_ATTACK_ACTIONS + target, np.where(can_move, move, 1))
        return np.where(avail[..., 0] & ~avail[..., 1], 0, actions)  # dead agents: no-op

    def reset(self, mask: np.ndarray) -> None:
        """Forget targets in envs that start a new episode."""
        self.target[mask] = -1
