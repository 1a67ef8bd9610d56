"""Batched battle dynamics for SMAC scenarios: n_envs battles of one map advanced by whole-batch numpy calls.

Arrays are shaped [n_envs, n_units] with allies first (agent ids 0..A-1) and enemies after; positions are
complex numbers (x + iy), so a distance is one `abs` and a displacement one multiplication. One agent step
runs 8 ticks of 1/16 normal-speed second (SMAC's step_mul=8). Every tick each unit closes on its target or
goal, fires when its weapon is ready and in reach, and regenerates; every `SENSE_EVERY` ticks the pairwise
view is refreshed: enemy target selection (attack-move AI) and collision push-apart. There is no Python loop
over envs or units.
"""
from __future__ import annotations

import numpy as np

from envs.smac.maps import MAP_SIZE, SMACMap
from envs.smac.roster import FixedRoster
from envs.smac.units import (
    MEDIVAC_ENERGY_REGEN,
    MEDIVAC_HP_PER_ENERGY,
    MEDIVAC_MAX_ENERGY,
    MEDIVAC_START_ENERGY,
    SHIELD_REGEN_DELAY,
    SHIELD_REGEN_PER_SECOND,
    UnitTable,
)

TICKS_PER_STEP = 8
# Calibration (BENCHMARKS.md, "SMAC simulator fidelity"): collisions and enemy re-targeting every 2 ticks, an
# acquire range of 5 plus both radii, and up to 1 unit of random jitter in the enemy's nearest-target
# choice put the SMAC paper's heuristic (heuristic_ai) at 88% on 2s3z (paper: 90%) and 46-53% on 3s5z
# (paper: 42%) over seeds 0-2, 600 episodes each.
SENSE_EVERY = 2  # ticks between collision resolutions
RETARGET_EVERY = 2  # ticks between enemy target re-selections (a multiple of SENSE_EVERY)
AI_TARGET_JITTER = 1.0  # random distance added to each candidate when the enemy AI picks a target
DENSE_COLLISION_UNITS = 20  # up to this many units per battle, collisions use dense [B, U, U] arithmetic
D2_MARGIN = 0.05  # slack on the pre-selection of colliding pairs, far above its float32 rounding (~1e-3)
DT = 1.0 / 16.0
MOVE_AMOUNT = 2.0
SCAN_RANGE = 5.0  # enemy auto-acquire range (plus both units' radii)
MOVE_DIRECTIONS = np.array([[0.0, 1.0], [0.0, -1.0], [1.0, 0.0], [-1.0, 0.0]])  # N, S, E, W
MOVE_STEPS = (MOVE_DIRECTIONS @ np.array([1, 1j])).astype(np.complex64)
N_NON_ATTACK_ACTIONS = 6  # no-op, stop, 4 moves
FAR = 1e9
# per-unit stat arrays [n_envs, n_units] copied from the unit-type table at reset (name -> table field)
TABLE_FIELD = {"max_hp": "hp", "max_shield": "shield"}
PER_UNIT_STATS = ("max_hp", "max_shield", "armor", "attacks", "range", "radius", "cooldown_ticks", "speed_per_tick",
                  "armored", "light", "obs_max_cooldown", "heal_per_tick", "is_medivac", "is_line_splash",
                  "is_suicide", "splash_radius", "regen_per_tick", "projectile_ticks")
# pairwise stat tables [n_envs, n_units, n_units]: [b, i, j] is unit i's value against unit j
PAIRWISE_STATS = ("reach", "radius_sum", "volley", "hit_damage", "scan_reach", "collide_d2")


class Battle:
    """State and dynamics of `n_envs` battles on `smac_map`; see module docstring.

    Unit stats are per env and unit slot ([n_envs, n_units], pairwise ones [n_envs, n_units, n_units]) so that
    procedurally generated rosters can give every episode its own team; `roster` draws types and positions.
    """

    def __init__(self, smac_map: SMACMap, n_envs: int, rng: np.random.Generator, roster=None) -> None:
        self.map = smac_map
        self.n_envs = n_envs
        self.rng = rng
        self.roster = roster or FixedRoster(smac_map)
        self.n_agents, self.n_enemies = smac_map.n_agents, smac_map.n_enemies
        self.n_units = n_units = self.n_agents + self.n_enemies
        self.types = t = UnitTable.build(self.roster.type_names, DT)  # stats per unit type
        self.is_ally = np.arange(n_units) < self.n_agents
        padded = np.zeros((MAP_SIZE + 2, MAP_SIZE + 2), bool)
        padded[1:-1, 1:-1] = smac_map.pathing()
        self._walk = padded.ravel()  # cell (cx, cy) -> index (cx + 1) * (MAP_SIZE + 2) + cy + 1
        self._box = _rectangle(padded[1:-1, 1:-1])
        if self._box is not None:  # bounds of interleaved (x, y) floats, long enough for [n, 4 * n_units] points
            x0, x1, y0, y1 = self._box
            self._box_lo = np.tile(np.array([x0, y0], np.float32), 4 * (self.n_agents + self.n_enemies))
            self._box_hi = np.tile(np.array([x1, y1], np.float32), 4 * (self.n_agents + self.n_enemies))
        self.enemy_of = self.is_ally[:, None] != self.is_ally[None, :]
        self.has_shields = bool((t.shield > 0).any())
        self.has_splash = bool(t.is_line_splash.any())
        self.has_suicide = bool(t.is_suicide.any())
        self.has_medivac = bool(t.is_medivac.any())
        self.has_regen = bool((t.regen_per_tick > 0).any())
        self.delays = sorted(set(t.projectile_ticks.tolist()))
        shape = (n_envs, n_units)
        # Per-unit stats are contiguous [n_envs, n_units] arrays (numpy is several times slower on broadcast
        # operands with a short inner axis). Pairwise tables of a fixed roster, the same in every env, are one
        # [U, U] block broadcast read-only; a generated roster gets per-env rows, all filled at each reset.
        self._eye = np.eye(n_units, dtype=bool)
        self._fixed = isinstance(self.roster, FixedRoster)
        self.kind = np.zeros(shape, np.int64)
        for name in PER_UNIT_STATS:
            setattr(self, name, np.zeros(shape, getattr(t, TABLE_FIELD.get(name, name)).dtype))
        self.target_penalty = np.zeros((n_envs, self.n_agents), np.float32)  # enemy AI: medivacs last
        rows = 1 if self._fixed else n_envs
        for name in PAIRWISE_STATS:
            setattr(self, name, np.zeros((rows, n_units, n_units), np.float32))
        if self._fixed:
            kinds = self.roster.kinds[None]
            self._set_unit_stats(slice(None), kinds)
            self._set_pair_stats(np.zeros(1, np.int64), kinds)
            for name in PAIRWISE_STATS:
                value = getattr(self, name)
                setattr(self, name, np.broadcast_to(value, (n_envs, *value.shape[1:])))
        self.z = np.zeros(shape, np.complex64)  # float32 precision is ample on a 32 x 32 map
        self.hp, self.shield, self.energy = (np.zeros(shape, np.float32) for _ in range(3))
        self.cooldown, self.shield_delay = np.zeros(shape, np.float32), np.zeros(shape, np.float32)
        self.alive = np.zeros(shape, bool)
        self.ai_target = np.full(shape, -1)
        self.last_target = np.full(shape, -1)  # what each unit attacked/healed in the last step (rendering)
        self.steps = np.zeros(n_envs, np.int64)
        self.attack_point = np.full(n_envs, complex(*smac_map.attack_point), np.complex64)  # enemy attack-move goal
        # damage in flight: pending[k] lands k ticks from now (ranged projectiles)
        self.pending = np.zeros((max(self.delays) + 1, *shape, 2), np.float32)  # [..., (damage, hits)]
        self._units = np.arange(n_units)
        # flat indices: unit (b, j) is z.ravel()[_flat_base[b] + j]; pair (b, u, j) of a [B, U, U] array is
        # [_pair_env[b, u] + j], of a pairwise stat [_pair_stat[b, u] + j] (stat tables: see _pairwise)
        self._flat_base = np.arange(n_envs)[:, None] * n_units
        self._ones = np.ones(n_units, np.complex64)
        if n_units > DENSE_COLLISION_UNITS:  # scratch buffers of _push_apart_sparse
            self._d2 = np.empty((n_envs, n_units, n_units), np.float32)
            self._close = np.empty((n_envs, n_units, n_units), bool)
        self._pair_env = (self._flat_base + self._units) * n_units
        self._pair_stat = self._units[None] * n_units if self._fixed else self._pair_env
        a, e = self.n_agents, self.n_enemies
        self._pair_ea = self._pair_env[:, a:, None] + np.arange(a)  # [B, E, A]: pairs (enemy, ally)
        self._ea_base = np.arange(n_envs * e).reshape(n_envs, e) * a  # [B, E, A] array: row (b, e) starts here
        # enemy auto-acquire distance to each ally, contiguous [B, E, A] (refreshed at reset when generated)
        self.scan_ea = np.ascontiguousarray(self.scan_reach[:, a:, :a])

    # -- saving -----------------------------------------------------------------------------------------
    def state_dict(self) -> dict[str, np.ndarray]:
        """Copies of every array that can change during battles (public and writeable: unit state, and the
        per-env stats of generated rosters); private arrays are fixed indices or scratch buffers."""
        return {name: value.copy() for name, value in vars(self).items()
                if not name.startswith("_") and isinstance(value, np.ndarray) and value.flags.writeable}

    def load_state_dict(self, state: dict[str, np.ndarray]) -> None:
        mine = self.state_dict()
        if set(state) != set(mine) or any(state[k].shape != mine[k].shape for k in mine):
            raise ValueError("saved battle state does not match this map and number of envs")
        for name, value in state.items():
            setattr(self, name, value.astype(mine[name].dtype, copy=True))

    # -- episodes ---------------------------------------------------------------------------------------
    def _set_unit_stats(self, idx: np.ndarray | slice, kinds: np.ndarray) -> None:
        """Per-unit stats of envs `idx` from their unit types `kinds` [n, U] (n may be 1, broadcast)."""
        t = self.types
        self.kind[idx] = kinds
        for name in PER_UNIT_STATS:
            getattr(self, name)[idx] = getattr(t, TABLE_FIELD.get(name, name))[kinds]
        self.target_penalty[idx] = np.where(t.is_medivac[kinds][:, : self.n_agents], 100.0, 0.0)

    def _set_pair_stats(self, idx: np.ndarray, kinds: np.ndarray) -> None:
        """Pairwise stat tables of envs `idx` from their unit types `kinds` [n, U]."""
        t = self.types
        radius, rng_ = t.radius[kinds], t.range[kinds]
        self.radius_sum[idx] = radius[:, :, None] + radius[:, None, :]
        self.reach[idx] = rng_[:, :, None] + self.radius_sum[idx]
        armored, light = t.armored[kinds][:, None, :], t.light[kinds][:, None, :]
        hit = np.where(armored, t.damage_vs_armored[kinds][:, :, None],
                       np.where(light, t.damage_vs_light[kinds][:, :, None], t.damage_vs_other[kinds][:, :, None]))
        self.hit_damage[idx] = hit
        self.volley[idx] = hit * t.attacks[kinds][:, :, None]
        ground = ~t.is_medivac[kinds]
        collide = ground[:, :, None] & ground[:, None, :] & ~self._eye
        # large battles pre-select colliding pairs on approximate squared distances (see _push_apart_sparse)
        self.collide_d2[idx] = np.where(collide, (self.radius_sum[idx] + D2_MARGIN) ** 2, -1.0)
        # enemy auto-acquire distance to each ally (stored [.., U, U], used [.., E, A]): scan range + both radii
        self.scan_reach[idx] = SCAN_RANGE + self.radius_sum[idx]

    def reset(self, mask: np.ndarray) -> None:
        """Start new episodes in the envs where `mask` is true."""
        idx = np.flatnonzero(mask)
        if idx.size == 0:
            return
        kinds, positions = self.roster.sample(self.rng, idx.size)
        if not self._fixed:
            self._set_unit_stats(idx, kinds)
            self._set_pair_stats(idx, kinds)
            self.scan_ea[idx] = self.scan_reach[idx, self.n_agents:, : self.n_agents]
        self.z[idx] = positions @ np.array([1, 1j])
        if self.roster.attack_ally_centroid:  # generated scenarios: advance on where the allies start
            self.attack_point[idx] = self.z[idx, : self.n_agents].mean(1)
        self.hp[idx] = self.max_hp[idx]
        self.shield[idx] = self.max_shield[idx]
        self.energy[idx] = np.where(self.is_medivac[idx], MEDIVAC_START_ENERGY, 0.0)
        self.cooldown[idx] = self.rng.uniform(0, 1, (idx.size, self.n_units))
        self.shield_delay[idx] = 0.0
        self.alive[idx] = True
        self.ai_target[idx] = -1
        self.last_target[idx] = -1
        self.pending[:, idx] = 0.0
        self.steps[idx] = 0

    # -- one agent step -------------------------------------------------------------------------------
    def step(self, actions: np.ndarray) -> None:
        """Advance every env by one agent step given ally actions [n_envs, n_agents] (already validated)."""
        a, shape = self.n_agents, (self.n_envs, self.n_units)
        attack = actions >= N_NON_ATTACK_ACTIONS
        j = actions - N_NON_ATTACK_ACTIONS
        ally_target = np.full(shape, -1)
        ally_target[:, :a] = np.where(attack, np.where(self.is_medivac[:, :a], j, j + a), -1)
        moving = (actions >= 2) & ~attack
        goal = np.empty(shape, np.complex64)
        goal[:, :a] = self.z[:, :a] + MOVE_AMOUNT * MOVE_STEPS[np.clip(actions - 2, 0, 3)]
        goal[:, a:] = self.attack_point[:, None]
        has_goal = np.ones(shape, bool)
        has_goal[:, :a] = moving
        attacked_by = ally_target[:, None, :a] == self._units[None, a:, None]  # [B, E, A], fixed this step
        for tick in range(TICKS_PER_STEP):
            if tick % SENSE_EVERY == 0:
                retarget = tick % RETARGET_EVERY == 0
                self._sense(attacked_by, ally_target, retarget)
                if retarget:
                    target = np.where(ally_target >= 0, ally_target, self.ai_target)
                    tidx = np.maximum(target, 0)
                    targeting = target >= 0
                    flat_t, pair_t = self._flat_base + tidx, self._pair_stat + tidx
                    reach = self._pairwise(self.reach, pair_t)
            self._tick(flat_t, pair_t, targeting, reach, goal, has_goal)
        self.last_target = target
        self.steps += 1

    def _pairwise(self, table: np.ndarray, pair: np.ndarray) -> np.ndarray:
        """table[b, u, j] of a pairwise stat table [B, U, U] at flat pair indices (from `_pair_stat`); a fixed
        roster's table is one broadcast [U, U] block."""
        return np.take(table[0] if self._fixed else table, pair)

    def _sense(self, attacked_by: np.ndarray, ally_target: np.ndarray, retarget: bool = True) -> None:
        """Collision push-apart, then (when `retarget`) enemy target selection from the distances before it."""
        if self.n_units <= DENSE_COLLISION_UNITS:
            to_ally = self._push_apart_dense()
        else:
            a = self.n_agents
            to_ally = np.abs(self.z[:, None, :a] - self.z[:, a:, None]) if retarget else None
            self._push_apart_sparse()
        if retarget:
            self._enemy_ai(to_ally, attacked_by, ally_target)

    def _push_apart_dense(self) -> np.ndarray:
        """Collisions from all pairwise distances; returns the enemy-to-ally distances [B, E, A]."""
        u = self.n_units
        diff = _cols(self.z, u) - _rows(self.z, u)  # [B, i, j] = z_j - z_i
        dist = np.abs(diff)
        # units that do not collide (dead, air) get a hugely negative radius, so they never overlap;
        # a unit's pair with itself has diff 0, so it pushes nothing
        live = self.alive & ~self.is_medivac if self.has_medivac else self.alive
        radius = np.where(live, self.radius, -FAR)
        overlap = _rows(radius, u) + _cols(radius, u) - dist
        w = np.maximum(overlap, 0.0) / np.maximum(dist, 1e-6)
        # the sum over j as one matrix-vector product over every (env, unit) row: numpy's sum over a short
        # axis, and a batched matmul, are several times slower
        push = ((w * diff).reshape(-1, u) @ self._ones).reshape(self.z.shape)
        self._place(self.z - 0.5 * push)
        return np.take(dist, self._pair_ea)

    def _push_apart_sparse(self) -> None:
        """Collisions in large battles: approximate squared distances of all pairs from one batched matmul,
        [x, y, |z|^2, 1] . [-2x, -2y, 1, |z|^2], pre-select the few pairs that may overlap; exact distances
        decide among those."""
        z, u = self.z, self.n_units
        x, y = z.real, z.imag
        norm, ones = x * x + y * y, np.ones_like(x)
        d2 = np.matmul(np.stack([x, y, norm, ones], -1), np.stack([-2 * x, -2 * y, ones, norm], 1), out=self._d2)
        close = np.less(d2, self.collide_d2, out=self._close)  # reused buffers: no page faults on fresh MBs
        pair = np.flatnonzero(close)  # (b * U + i) * U + j; far cheaper than nonzero() here
        unit_i, j = np.divmod(pair, u)  # flat indices b * U + i of the first unit
        i = unit_i % u
        unit_j = unit_i - i + j
        diff = np.take(z, unit_j) - np.take(z, unit_i)
        d = np.abs(diff)
        overlap = self._pairwise(self.radius_sum, pair if not self._fixed else i * u + j) - d
        hit = (overlap > 0) & np.take(self.alive, unit_i) & np.take(self.alive, unit_j)
        if hit.any():
            push = diff[hit] * (-0.5 * overlap[hit] / np.maximum(d[hit], 1e-6))
            unit_i, size = unit_i[hit], self.n_envs * u
            shift = np.bincount(unit_i, push.real, size) + 1j * np.bincount(unit_i, push.imag, size)
            self._place(self.z + shift.reshape(self.z.shape).astype(np.complex64))

    def _enemy_ai(self, to_ally: np.ndarray, attacked_by: np.ndarray, ally_target: np.ndarray) -> None:
        """Attack-move AI (SMAC_SPEC §5.5/5.7): keep a live target that is in reach or attacking us, else
        acquire the nearest ally within scan range or attacking us (medivacs last). Enemy medivacs follow
        the most damaged friendly unit. `to_ally` [B, E, A] distances (contiguous); `attacked_by` [B, E, A]
        is `ally_target` [B, U] (allies' targets) as a mask."""
        a, e = self.n_agents, self.n_enemies
        current = self.ai_target[:, a:]
        # enemy medivacs hold friendly targets (>= a): never kept here
        cidx = np.minimum(np.maximum(current, 0), a - 1)
        keep = (current >= 0) & (current < a) & np.take(self.alive, self._flat_base + cidx) & (
            (np.take(to_ally, self._ea_base + cidx) <= self._pairwise(self.reach, self._pair_stat[:, a:] + cidx))
            | (np.take(ally_target, self._flat_base + cidx) == self._units[a:]))
        # candidates (live allies in scan range or attacking us) score distance + penalty + jitter < FAR
        score = np.where((to_ally < self.scan_ea) | attacked_by, to_ally, FAR)
        score += _cols(np.where(self.alive[:, :a], self.target_penalty, FAR), e)  # dead allies: FAR
        score += AI_TARGET_JITTER * self.rng.random(score.shape, dtype=np.float32)
        best = score.argmin(axis=2)
        found = np.take(score, self._ea_base + best) < FAR
        chosen = np.where(keep, current, np.where(found, best, -1))
        if self.has_medivac:
            frac = np.where(self.alive[:, a:] & ~self.is_medivac[:, a:], self.hp[:, a:] / self.max_hp[:, a:], FAR)
            chosen = np.where(self.is_medivac[:, a:], frac.argmin(axis=1)[:, None] + a, chosen)
        self.ai_target[:, a:] = chosen

    def _tick(self, flat_t: np.ndarray, pair_t: np.ndarray, targeting: np.ndarray, reach: np.ndarray,
              goal: np.ndarray, has_goal: np.ndarray) -> None:
        """One world tick; each unit's target is at flat index `flat_t` (pair index `pair_t`)."""
        has_target = targeting & self.alive & np.take(self.alive, flat_t)
        tz = np.take(self.z, flat_t)
        in_range = has_target & (np.abs(tz - self.z) <= reach)
        # move: chase a target out of reach, else head for the goal (move order / attack-move point)
        chase = has_target & ~in_range
        offset = np.where(chase, tz, goal) - self.z
        length = np.abs(offset)
        wants = self.alive & (chase | (~has_target & has_goal))
        step = np.minimum(np.maximum(length - reach * chase, 0.0), self.speed_per_tick) * wants / np.maximum(length, 1e-9)
        self._place(self.z + offset * step)
        # fire (or heal) when in reach and ready
        ready = in_range & (self.cooldown <= 0)
        if self.has_medivac:
            self._heal(ready & self.is_medivac, flat_t)
            ready &= ~self.is_medivac
        if ready.any():
            self._attack(ready, flat_t, pair_t)
        self._land_hits()
        self._regenerate()

    def _place(self, new: np.ndarray) -> None:
        """Move to `new` where walkable; blocked units slide along x or y, else stay."""
        new = np.ascontiguousarray(new, np.complex64)
        if self._box is not None and self._inside_xy(new).all():  # the common case, without a per-unit reduction
            self.z = new
            return
        ok = self.walkable_at(new)
        if ok.all():
            self.z = new
            return
        x, y = self.z.real, self.z.imag
        slide_x = ~ok & self.walkable(new.real, y)
        slide_y = ~ok & ~slide_x & self.walkable(x, new.imag)
        self.z = np.where(ok, new, np.where(slide_x, new.real + 1j * y, np.where(slide_y, x + 1j * new.imag, self.z)))

    def walkable_at(self, z: np.ndarray) -> np.ndarray:
        """walkable() of contiguous complex positions [n, m] (up to 4 * n_units per row)."""
        if self._box is None:
            return self.walkable(z.real, z.imag)
        return self._inside_xy(z).view(np.uint16) == 0x0101  # both x and y inside (one byte each)

    def _inside_xy(self, z: np.ndarray) -> np.ndarray:
        """[n, 2m] bools: each interleaved x and y of contiguous complex positions [n, m] lies within the
        walkable rectangle (faster than comparing strided .real/.imag views)."""
        xy = z.view(np.float32)
        width = xy.shape[-1]
        return (xy >= self._box_lo[:width]) & (xy < self._box_hi[:width])

    def walkable(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Whether points lie on walkable in-bounds cells (out of bounds is not walkable)."""
        if self._box is not None:  # the walkable area is one rectangle: four comparisons
            x0, x1, y0, y1 = self._box
            return (x >= x0) & (x < x1) & (y >= y0) & (y < y1)
        cx = np.clip(np.floor(x) + 1, 0, MAP_SIZE + 1)
        cy = np.clip(np.floor(y) + 1, 0, MAP_SIZE + 1)
        return self._walk[(cx * (MAP_SIZE + 2) + cy).astype(np.int64)]

    def _attack(self, fire: np.ndarray, flat_t: np.ndarray, pair_t: np.ndarray) -> None:
        """Fire: melee and instant hits land now, projectiles after their travel time (so shots already in
        flight at a target that dies are wasted, as in SC2)."""
        size = self.n_envs * self.n_units
        direct = fire & ~self.is_suicide if self.has_suicide else fire
        volley = self._pairwise(self.volley, pair_t)
        if self.delays == [0]:  # no projectiles on this map: every hit lands now
            flat = flat_t[direct]
            total = np.bincount(flat, volley[direct], size).reshape(fire.shape)
            n_hits = np.bincount(flat, self.attacks[direct], size).reshape(fire.shape)
            if self.has_splash or self.has_suicide:
                splash_dmg, splash_hits = self._splash(fire, flat_t)
                total, n_hits = total + splash_dmg, n_hits + splash_hits
            self._apply_damage(total, n_hits)
            self._after_firing(fire)
            return
        for delay in self.delays:
            shots = direct & (self.projectile_ticks == delay) if len(self.delays) > 1 else direct
            if not shots.any():
                continue
            flat = flat_t[shots]
            slot = self.pending[delay]
            slot[..., 0] += np.bincount(flat, volley[shots], size).reshape(fire.shape)
            slot[..., 1] += np.bincount(flat, self.attacks[shots], size).reshape(fire.shape)
        if self.has_splash or self.has_suicide:
            splash_dmg, splash_hits = self._splash(fire, flat_t)
            self.pending[0, ..., 0] += splash_dmg
            self.pending[0, ..., 1] += splash_hits
        self._after_firing(fire)

    def _after_firing(self, fire: np.ndarray) -> None:
        self.cooldown = np.where(fire, self.cooldown_ticks, self.cooldown)
        if self.has_suicide:
            boom = fire & self.is_suicide
            self.hp[boom] = 0.0
            self.alive &= ~boom

    def _land_hits(self) -> None:
        """Apply the damage arriving this tick, then advance the projectiles in flight by one tick."""
        if self.delays == [0]:
            return
        arriving = self.pending[0]
        if arriving[..., 0].any():
            self._apply_damage(arriving[..., 0] * self.alive, arriving[..., 1] * self.alive)
        if len(self.pending) > 1:
            self.pending[:-1] = self.pending[1:]
        self.pending[-1] = 0.0

    def _splash(self, fire: np.ndarray, flat_t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Colossus beam (enemies within splash_radius of the primary target, primary excluded) and baneling
        explosions (enemies within splash_radius of the baneling): damage [B, U] and hit counts [B, U]."""
        line = fire & self.is_line_splash
        boom = fire & self.is_suicide
        centre = np.where(line, np.take(self.z, flat_t), self.z)  # the target (beam) or the baneling itself
        d = np.abs(self.z[:, None, :] - centre[:, :, None])  # [B, attacker, victim]
        victims = self.enemy_of[None] & self.alive[:, None, :]
        radius = self.splash_radius[:, :, None]
        hit = (line[..., None] & (d < radius) & (self._flat_base[..., None] + self._units != flat_t[..., None])) \
            | (boom[..., None] & (d < radius + self.radius[:, None, :]))
        hit &= victims
        hits = hit * self.attacks[:, :, None]
        return (self.hit_damage * hits).sum(1), hits.sum(1)

    def _apply_damage(self, total: np.ndarray, n_hits: np.ndarray) -> None:
        """Shields absorb first; each hit that reaches hp is reduced by armor (SMAC_SPEC §5.2)."""
        if not self.has_shields:
            self.hp -= np.maximum(total - self.armor * n_hits, 0.0)
            self._deaths()
            return
        hit = total > 0
        absorbed = np.minimum(self.shield, total)
        overflow = total - absorbed
        hits_on_hp = n_hits * overflow / np.maximum(total, 1e-9)
        self.shield -= absorbed
        self.hp -= np.maximum(overflow - self.armor * hits_on_hp, 0.0)
        self.shield_delay = np.where(hit, SHIELD_REGEN_DELAY / DT, self.shield_delay)
        self._deaths()

    def _deaths(self) -> None:
        died = self.alive & (self.hp <= 0)
        if died.any():
            self.hp[died] = 0.0
            self.shield[died] = 0.0
            self.alive &= ~died

    def _heal(self, healing: np.ndarray, flat_t: np.ndarray) -> None:
        if not healing.any():
            return
        missing = np.take(self.max_hp, flat_t) - np.take(self.hp, flat_t)
        amount = np.clip(np.minimum(self.heal_per_tick, self.energy * MEDIVAC_HP_PER_ENERGY), 0.0, missing) * healing
        self.hp += np.bincount(flat_t.ravel(), amount.ravel(), self.n_envs * self.n_units).reshape(self.hp.shape)
        self.energy -= amount / MEDIVAC_HP_PER_ENERGY

    def _regenerate(self) -> None:
        self.cooldown -= 1.0
        if self.has_shields:
            regen = self.alive & (self.shield_delay <= 0)
            self.shield = np.where(regen, np.minimum(self.shield + SHIELD_REGEN_PER_SECOND * DT, self.max_shield), self.shield)
            self.shield_delay -= 1.0
        if self.has_medivac:
            self.energy = np.where(self.alive & self.is_medivac,
                                   np.minimum(self.energy + MEDIVAC_ENERGY_REGEN * DT, MEDIVAC_MAX_ENERGY), self.energy)
        if self.has_regen:
            self.hp = np.where(self.alive, np.minimum(self.hp + self.regen_per_tick, self.max_hp), self.hp)


def _rows(x: np.ndarray, n: int) -> np.ndarray:
    """[B, U] -> [B, U, n] with [b, i, j] = x[b, i], contiguous (faster to compute on than a broadcast)."""
    return np.repeat(x, n, axis=1).reshape(*x.shape, n)


def _cols(x: np.ndarray, n: int) -> np.ndarray:
    """[B, U] -> [B, n, U] with [b, i, j] = x[b, j], contiguous."""
    return np.repeat(x[:, None, :], n, axis=1)


def _rectangle(grid: np.ndarray) -> tuple[float, float, float, float] | None:
    """(x0, x1, y0, y1) if the walkable cells form one axis-aligned rectangle, else None."""
    xs, ys = np.nonzero(grid)
    if xs.size == 0:
        return None
    x0, x1, y0, y1 = xs.min(), xs.max() + 1, ys.min(), ys.max() + 1
    return (float(x0), float(x1), float(y0), float(y1)) if grid[x0:x1, y0:y1].all() else None
