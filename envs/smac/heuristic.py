"""The SMAC paper's heuristic ally policy, vectorised over envs and agents.

Each ally attacks the nearest alive enemy (skipping medivacs while other enemies live) and keeps that target
until it dies; while the target is out of shooting range the ally moves toward it along the dominant axis.
Medivacs heal the nearest damaged non-medivac ally the same way.
"""
from __future__ import annotations

import numpy as np

from envs.smac.battle import N_NON_ATTACK_ACTIONS
from envs.smac.core import SMACBatch

FAR = 1e9


class HeuristicPolicy:
    """Call `act(avail)` once per step with the vector env's current avail array [n_envs, A, n_actions]."""

    def __init__(self, core: SMACBatch) -> None:
        self.core = core
        self.target = np.full((core.n_envs, core.n_agents), -1)

    def act(self, avail: np.ndarray) -> np.ndarray:
        core, b = self.core, self.core.battle
        a, envs = core.n_agents, np.arange(core.n_envs)[:, None]
        t = b.table
        medic = t.is_medivac[:a]
        pos = b.pos[:, :a]
        enemy_alive = b.alive[:, a:]
        others = enemy_alive & ~t.is_medivac[a:]
        prefer = np.where(others.any(1, keepdims=True), others, enemy_alive)
        d_enemy = np.linalg.norm(b.pos[:, None, a:] - pos[:, :, None], axis=-1)
        nearest_enemy = np.where(prefer[:, None, :], d_enemy, FAR).argmin(-1)
        # keep the current enemy target while it lives
        current = np.where(self.target >= 0, self.target, 0)
        keep = (self.target >= 0) & enemy_alive[envs, current]
        target = np.where(keep, current, nearest_enemy)
        unit = target + a  # unit index of the target
        if medic.any():
            damaged = b.alive[:, :a] & ~medic & (b.hp[:, :a] < t.hp[:a])
            d_ally = np.linalg.norm(pos[:, None, :] - pos[:, :, None], axis=-1)
            heal = np.where(damaged[:, None, :], d_ally, FAR).argmin(-1)
            target = np.where(medic, heal, target)
            unit = np.where(medic, heal, unit)
        self.target = np.where(medic, -1, target)
        fire = np.take_along_axis(avail, (N_NON_ATTACK_ACTIONS + target)[..., None], axis=2)[..., 0]
        delta = b.pos[envs, unit] - pos
        horizontal = np.abs(delta[..., 0]) > np.abs(delta[..., 1])
        move = np.where(horizontal, np.where(delta[..., 0] > 0, 4, 5), np.where(delta[..., 1] > 0, 2, 3))
        can_move = np.take_along_axis(avail, move[..., None], axis=2)[..., 0]
        actions = np.where(fire, N_NON_ATTACK_ACTIONS + target, np.where(can_move, move, 1))
        actions = np.where(avail[..., 0] & ~avail[..., 1], 0, actions)  # dead agents: no-op
        return actions

    def reset(self, mask: np.ndarray) -> None:
        """Forget targets in envs that start a new episode."""
        self.target[mask] = -1
