"""SMAC observations, global state and available actions, bit-for-bit in SMAC's layout (SMAC_SPEC.md §2-3).

All functions are vectorised over envs (an optional index array selects a subset) and agents.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.errors import UserError
from envs.smac.battle import Battle
from envs.smac.battle_constants import MOVE_STEPS, N_NON_ATTACK_ACTIONS
from envs.smac.maps import MAP_SIZE
from envs.smac.units import UNIT_TYPES

SIGHT_RANGE = 9.0
SHOOT_RANGE = 6.0
N_PATHING, N_HEIGHT = 8, 9
# smac's surrounding points (get_surrounding_points, move_amount 2): 2 x move_amount along the axes (N, S, E, W),
# move_amount along the diagonals (NE, SW, SE, NW), then the unit's own cell (heights only)
SURROUNDING = np.array([[0, 4], [0, -4], [4, 0], [-4, 0], [2, 2], [-2, -2], [2, -2], [-2, 2], [0, 0]])


@dataclass(frozen=True)
class FeatureFlags:
    """The subset of SMAC's constructor flags that shape observations and state."""

    obs_all_health: bool = True  # other units' health (and shields) in each agent's observation
    obs_own_health: bool = True  # the agent's own health (and shield)
    obs_last_action: bool = False  # allies' last actions in each agent's observation
    obs_timestep_number: bool = False  # the step / episode limit at the end of each observation
    state_last_action: bool = True  # every ally's last action in the global state
    state_timestep_number: bool = False  # the step / episode limit at the end of the state
    obs_instead_of_state: bool = False  # the state is the agents' observations concatenated
    obs_own_pos: bool = False  # smacv2: own x/32, y/32 in the own features
    use_unit_ranges: bool = False  # smacv2: each unit's own sight and shoot range instead of 9 and 6
    min_attack_range: float = 2.0  # smacv2: shoot range = max(weapon range, this) with use_unit_ranges
    obs_pathing_grid: bool = False  # the walkable flag at 8 points around the agent (smac's move features)
    obs_terrain_height: bool = False  # the terrain height at those points and the agent's own cell
    sighted_enemies: bool = False  # smacv2: enemies show only once the team has sighted them (envs.smac.sighting)
    obs_starcraft: bool = True  # smacv2: False leaves the observation only obs_timestep_number's t / limit, for
    # every agent (the SMACv2 paper's open-loop test: a policy that sees the time alone)


class Features:
    """Computes obs [n, A, obs_size], state [n, state_size] and avail [n, A, n_actions] from a Battle."""

    def __init__(self, battle: Battle, flags: FeatureFlags) -> None:
        self.b = battle
        self.flags = flags
        m = battle.map
        self.n_agents, self.n_enemies = battle.n_agents, battle.n_enemies
        self.n_actions = N_NON_ATTACK_ACTIONS + self.n_enemies
        self.bits = m.unit_type_bits
        self.ally_shield = int(m.ally_race == "P")
        self.enemy_shield = int(m.enemy_race == "P")
        ally_ids, enemy_ids = m.type_ids()
        names = battle.roster.type_names
        self.ally_onehot = np.zeros((len(names), self.bits), np.float32)  # per unit type
        self.enemy_onehot = np.zeros((len(names), self.bits), np.float32)
        for k, name in enumerate(names):
            if self.bits and name in ally_ids:
                self.ally_onehot[k, ally_ids[name]] = 1.0
            if self.bits and name in enemy_ids:
                self.enemy_onehot[k, enemy_ids[name]] = 1.0
        health = flags.obs_all_health
        own_health = flags.obs_own_health or health
        self.nf_en = 4 + (1 + self.enemy_shield if health else 0) + self.bits
        self.nf_al = 4 + (1 + self.ally_shield if health else 0) + self.bits \
            + (self.n_actions if flags.obs_last_action else 0)
        self.nf_own = (1 + self.ally_shield if own_health else 0) + self.bits + 2 * int(flags.obs_own_pos)
        self.n_move = 4 + N_PATHING * flags.obs_pathing_grid + N_HEIGHT * flags.obs_terrain_height
        terrain = m.terrain()
        self.walkable = terrain.walkable.ravel()
        self.height = terrain.height.ravel()
        self.obs_size = self.n_move + self.n_enemies * self.nf_en + (self.n_agents - 1) * self.nf_al + self.nf_own \
            + int(flags.obs_timestep_number)
        if not flags.obs_starcraft:
            if not flags.obs_timestep_number:
                raise UserError("obs_starcraft=false leaves the observation only the timestep: set "
                                "obs_timestep_number=true too (as smacv2 needs)")
            self.obs_size = 1
        self.nf_al_state = 4 + self.ally_shield + self.bits
        self.nf_en_state = 3 + self.enemy_shield + self.bits
        if flags.obs_instead_of_state:
            self.state_size = self.obs_size * self.n_agents
        else:
            self.state_size = self.n_agents * self.nf_al_state + self.n_enemies * self.nf_en_state \
                + (self.n_agents * self.n_actions if flags.state_last_action else 0) + int(flags.state_timestep_number)
        a = self.n_agents
        self.others = np.array([[k for k in range(a) if k != i] for i in range(a)], dtype=np.int64).reshape(a, a - 1)
        types = battle.types
        self.type_sight = np.array([UNIT_TYPES[n].sight for n in names], np.float32)
        self.type_shoot = np.maximum(types.range, flags.min_attack_range)

    # -- actions ----------------------------------------------------------------------------------------
    def can_move(self, idx: np.ndarray | slice) -> np.ndarray:
        """[n, A, 4]: moving N/S/E/W lands on a walkable in-bounds cell (SMAC's can_move, move_amount/2 = 1)."""
        probe = self.b.state.z[idx, : self.n_agents, None] + MOVE_STEPS
        return self.b.walkable_at(probe.reshape(len(probe), -1)).reshape(probe.shape)

    @staticmethod
    def surrounding_cells(z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """smac's 8 surrounding points and own cell of units at `z` [...]: flat cell indices x * 32 + y
        [..., 9] and whether each point is on the map (off it, smac reads pathing 1 and height 1)."""
        x = np.floor(z.real).astype(np.int64)[..., None] + SURROUNDING[:, 0]
        y = np.floor(z.imag).astype(np.int64)[..., None] + SURROUNDING[:, 1]
        on_map = (x >= 0) & (x < MAP_SIZE) & (y >= 0) & (y < MAP_SIZE)
        return np.where(on_map, x * MAP_SIZE + y, 0), on_map

    def surrounding(self, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(pathing [..., 8], height [..., 9]) around units at `z`, as smac's get_surrounding_pathing and
        get_surrounding_height compute them."""
        cells, on_map = self.surrounding_cells(z)
        pathing = np.where(on_map[..., :N_PATHING], self.walkable[cells[..., :N_PATHING]], True)
        return pathing.astype(np.float32), np.where(on_map, self.height[cells], 1.0)

    def relative(self, idx: np.ndarray | slice) -> np.ndarray:
        """Positions of every unit relative to each agent, complex [n, A, U]."""
        z = self.b.state.z[idx]
        return z[:, None, :] - z[:, : self.n_agents, None]

    def ranges(self, idx: np.ndarray | slice) -> tuple[np.ndarray | float, np.ndarray | float]:
        """(sight, shoot) range of each agent: SMAC's 9 and 6, or with use_unit_ranges each unit's own
        ([n, A, 1], broadcasting against [n, A, U] distances)."""
        if not self.flags.use_unit_ranges:
            return SIGHT_RANGE, SHOOT_RANGE
        kinds = self.b.stats.kind[idx, : self.n_agents, None]
        return self.type_sight[kinds], self.type_shoot[kinds]

    def onehot(self, idx: np.ndarray | slice) -> np.ndarray:
        """Unit-type one-hot [n, U, bits] (allies and enemies use their own orders)."""
        kinds, a = self.b.stats.kind[idx], self.n_agents
        return np.concatenate([self.ally_onehot[kinds[:, :a]], self.enemy_onehot[kinds[:, a:]]], axis=1)

    def avail(self, idx: np.ndarray | slice, dist: np.ndarray) -> np.ndarray:
        """Available actions [n, A, n_actions]; `dist` is abs(relative(idx))."""
        s, a = self.b.state, self.n_agents
        alive = s.alive[idx, :a]
        _, shoot = self.ranges(idx)
        out = np.zeros((len(dist), a, self.n_actions), bool)
        out[:, :, 0] = ~alive
        out[:, :, 1] = alive
        out[:, :, 2:6] = self.can_move(idx) & alive[..., None]
        enemy_ok = s.alive[idx, None, a:] & (dist[:, :, a:] <= shoot)
        medic = self.b.stats.is_medivac[idx, :a]
        if medic.any():
            ally_ok = s.alive[idx, None, :a] & ~medic[:, None, :] & (dist[:, :, :a] <= shoot)
            heal = np.zeros_like(enemy_ok)
            width = min(a, self.n_enemies)
            heal[:, :, :width] = ally_ok[:, :, :width]
            enemy_ok = np.where(medic[:, :, None], heal, enemy_ok)
        out[:, :, N_NON_ATTACK_ACTIONS:] = enemy_ok & alive[..., None]
        return out

    # -- observations -----------------------------------------------------------------------------------
    def obs(self, idx: np.ndarray | slice, rel: np.ndarray, dist: np.ndarray, avail: np.ndarray,
            last_action: np.ndarray, steps: np.ndarray, limit: int, out: np.ndarray | None = None,
            enemy_shown: np.ndarray | None = None) -> np.ndarray:
        """Observations [n, A, obs_size] (float32), every column written through views of `out` (no copy).
        Each feature is written already multiplied by its unit's visibility (numpy is slow to mask the
        short feature axis afterwards). `rel` and `dist` are divided by the sight range in place.
        `enemy_shown` [n, A, E] further hides enemies (smacv2's sighting memory)."""
        s, st, a, e, flags = self.b.state, self.b.stats, self.n_agents, self.n_enemies, self.flags
        n = len(dist)
        if not flags.obs_starcraft:  # smacv2's open-loop observation: the time alone, dead agents included
            out = np.empty((n, a, 1), np.float32) if out is None else out
            out[:, :, 0] = (steps[idx] / limit)[:, None]
            return out
        alive = s.alive[idx]
        sight, _ = self.ranges(idx)
        visible = (alive[:, None, :] & (dist < sight) & alive[:, :a, None]).astype(np.float32)  # [n, A, U]
        if enemy_shown is not None:
            visible[:, :, a:] *= enemy_shown
        # rel / sight without numpy's slow complex division (which multiplies by 1 / sight, as here)
        xy = rel.view(np.float32)
        xy *= np.float32(1.0) / np.float32(sight)
        dist /= sight
        health = s.hp[idx] / st.max_hp[idx]
        shield = s.shield[idx] / np.maximum(st.max_shield[idx], 1.0)
        onehot = self.onehot(idx) if self.bits else None
        out = np.empty((n, a, self.obs_size), np.float32) if out is None else out
        out[:, :, :4] = avail[:, :, 2:6]
        col = 4
        if flags.obs_pathing_grid or flags.obs_terrain_height:
            pathing, height = self.surrounding(s.z[idx, :a])
            if flags.obs_pathing_grid:
                out[:, :, col:col + N_PATHING] = pathing
                col += N_PATHING
            if flags.obs_terrain_height:
                out[:, :, col:col + N_HEIGHT] = height
                col += N_HEIGHT
        en = out[:, :, col:col + e * self.nf_en].reshape(n, a, e, self.nf_en)
        col += e * self.nf_en
        self._write_unit_features(en, visible[:, :, a:], avail[:, :, N_NON_ATTACK_ACTIONS:], dist[:, :, a:],
                                  rel[:, :, a:], health[:, None, a:], shield[:, None, a:], self.enemy_shield,
                                  None if onehot is None else onehot[:, None, a:])
        if a > 1:
            rows, others = np.arange(a)[:, None], self.others
            al = out[:, :, col:col + (a - 1) * self.nf_al].reshape(n, a, a - 1, self.nf_al)
            vis = visible[:, rows, others]
            k = self._write_unit_features(al, vis, vis, dist[:, rows, others], rel[:, rows, others],
                                          health[:, others], shield[:, others], self.ally_shield,
                                          None if onehot is None else onehot[:, others])
            if flags.obs_last_action:
                np.multiply(last_action[:, others], vis[..., None], out=al[..., k:k + self.n_actions])
        col += (a - 1) * self.nf_al
        if flags.obs_own_health or flags.obs_all_health:
            out[:, :, col] = health[:, :a]
            col += 1
            if self.ally_shield:
                out[:, :, col] = shield[:, :a]
                col += 1
        if flags.obs_own_pos:  # smacv2's order: health, shield, position, type
            z = s.z[idx, :a] / MAP_SIZE
            out[:, :, col], out[:, :, col + 1] = z.real, z.imag
            col += 2
        if onehot is not None:
            out[:, :, col:col + self.bits] = onehot[:, :a]
        col += self.bits
        if flags.obs_timestep_number:
            out[:, :, col] = (steps[idx] / limit)[:, None]
        if self.bits or self.n_move > 4 or flags.obs_own_pos or flags.obs_timestep_number:
            out[~alive[:, :a]] = 0.0  # the rest of a dead agent's row is zero already (no vision, hp 0)
        return out

    def _write_unit_features(self, block: np.ndarray, visible: np.ndarray, first: np.ndarray, dist: np.ndarray,
                             rel: np.ndarray, health: np.ndarray, shield: np.ndarray, has_shield: int,
                             onehot: np.ndarray | None) -> int:
        """Fill the per-unit feature block [n, A, k, nf] of the observation (first column: attackable for
        enemies, visible for allies), masked by `visible` [n, A, k]; returns the next free field."""
        np.multiply(first, visible, out=block[..., 0])
        np.multiply(dist, visible, out=block[..., 1])
        np.multiply(rel.real, visible, out=block[..., 2])
        np.multiply(rel.imag, visible, out=block[..., 3])
        k = 4
        if self.flags.obs_all_health:
            np.multiply(health, visible, out=block[..., k])
            k += 1
            if has_shield:
                np.multiply(shield, visible, out=block[..., k])
                k += 1
        if onehot is not None:
            np.multiply(onehot, visible[..., None], out=block[..., k:k + self.bits])
        return k + self.bits

    def state(self, idx: np.ndarray | slice, obs: np.ndarray, last_action: np.ndarray, steps: np.ndarray, limit: int
              ) -> np.ndarray:
        """Global state [n, state_size] (float32); a dead unit's features are zero."""
        flags = self.flags
        if flags.obs_instead_of_state:
            return obs.reshape(len(obs), -1)
        s, st, a, e = self.b.state, self.b.stats, self.n_agents, self.n_enemies
        n, u = len(obs), self.b.n_units
        live = s.alive[idx].astype(np.float32)
        health = s.hp[idx] / st.max_hp[idx] * live
        shield = s.shield[idx] / np.maximum(st.max_shield[idx], 1.0) * live
        cooldown = np.where(st.is_medivac[idx], s.energy[idx] / 200.0,
                            np.maximum(s.cooldown[idx], 0.0) / st.obs_max_cooldown[idx]) * live
        xy = (s.z[idx].view(np.float32) - MAP_SIZE / 2) / MAP_SIZE  # relative to the map centre, [n, 2U]
        centre = (xy * np.repeat(live, 2, axis=1)).reshape(n, u, 2)
        onehot = self.onehot(idx) * live[..., None] if self.bits else None
        out = np.empty((n, self.state_size), np.float32)
        al = out[:, : a * self.nf_al_state].reshape(n, a, self.nf_al_state)
        al[..., 0] = health[:, :a]
        al[..., 1] = cooldown[:, :a]
        al[..., 2:4] = centre[:, :a]
        k = 4
        if self.ally_shield:
            al[..., k] = shield[:, :a]
            k += 1
        if onehot is not None:
            al[..., k:] = onehot[:, :a]
        col = a * self.nf_al_state
        en = out[:, col:col + e * self.nf_en_state].reshape(n, e, self.nf_en_state)
        en[..., 0] = health[:, a:]
        en[..., 1:3] = centre[:, a:]
        k = 3
        if self.enemy_shield:
            en[..., k] = shield[:, a:]
            k += 1
        if onehot is not None:
            en[..., k:] = onehot[:, a:]
        col += e * self.nf_en_state
        if flags.state_last_action:
            out[:, col:col + a * self.n_actions] = last_action.reshape(n, -1)
            col += a * self.n_actions
        if flags.state_timestep_number:
            out[:, col] = steps[idx] / limit
        return out
