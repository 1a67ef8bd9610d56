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
    MEDIVAC_ENERGY_REGEN, MEDIVAC_HP_PER_ENERGY, MEDIVAC_MAX_ENERGY, MEDIVAC_START_ENERGY, SHIELD_REGEN_DELAY,
    SHIELD_REGEN_PER_SECOND, UnitTable,
)

TICKS_PER_STEP = 8
# Calibration (BENCHMARKS.md, "SMAC simulator fidelity"): collisions and enemy re-targeting every 2 ticks, an
# acquire range of 5 plus both radii, and up to 0.25 units of random jitter in the enemy's nearest-target
# choice put the SMAC paper's heuristic (heuristic_ai) at 88% on 2s3z (paper: 90%) and 46-53% on 3s5z
# (paper: 42%) over seeds 0-2, 600 episodes each.
SENSE_EVERY = 2  # ticks between collision resolutions
RETARGET_EVERY = 2  # ticks between enemy target re-selections (a multiple of SENSE_EVERY)
AI_TARGET_JITTER = 1.0
DENSE_COLLISION_UNITS = 20  # up to this many units per battle, collisions use dense [B, U, U] arithmetic
NEAR_MARGIN = 1.5  # large battles: pairs closer than radii + this are checked for collisions until re-targeting  # random distance added to each candidate when the enemy AI picks a target
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
        self.enemy_of = self.is_ally[:, None] != self.is_ally[None, :]
        self.has_shields = bool((t.shield > 0).any())
        self.has_splash = bool(t.is_line_splash.any())
        self.has_suicide = bool(t.is_suicide.any())
        self.has_medivac = bool(t.is_medivac.any())
        self.has_regen = bool((t.regen_per_tick > 0).any())
        self.delays = sorted(set(t.projectile_ticks.tolist()))
        shape = (n_envs, n_units)
        # A fixed roster has the same stats in every env: one row, broadcast read-only (cheap to read);
        # a generated roster gets writable per-env copies filled at each reset.
        self._eye = np.eye(n_units, dtype=bool)
        self._fixed = isinstance(self.roster, FixedRoster)
        rows = 1 if self._fixed else n_envs
        self.kind = np.zeros((rows, n_units), np.int64)
        for name in PER_UNIT_STATS:
            setattr(self, name, np.zeros((rows, n_units), getattr(t, TABLE_FIELD.get(name, name)).dtype))
        for name in ("reach", "radius_sum", "volley", "hit_damage", "scan_reach"):
            setattr(self, name, np.zeros((rows, n_units, n_units), np.float32))
        self.enemy_reach = np.zeros((rows, self.n_enemies, self.n_agents), np.float32)  # reach[:, a:, :a]
        self.target_penalty = np.zeros((rows, self.n_agents), np.float32)  # enemy AI: medivacs last
        self.collide = np.zeros((rows, n_units, n_units), bool)
        if self._fixed:
            self._set_stats(np.zeros(1, np.int64), self.roster.kinds[None])
            for name in (*PER_UNIT_STATS, "kind", "reach", "radius_sum", "volley", "hit_damage", "scan_reach",
                         "collide", "enemy_reach", "target_penalty"):
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
        self._envs = np.arange(n_envs)[:, None]
        self._flat_base = self._envs * n_units
        self._units = np.arange(n_units)

    # -- episodes ---------------------------------------------------------------------------------------
    def _set_stats(self, idx: np.ndarray, kinds: np.ndarray) -> None:
        """Per-unit and pairwise stats of envs `idx` from their unit types `kinds` [n, U]."""
        t = self.types
        self.kind[idx] = kinds
        for name in PER_UNIT_STATS:
            getattr(self, name)[idx] = getattr(t, TABLE_FIELD.get(name, name))[kinds]
        radius, rng_ = t.radius[kinds], t.range[kinds]
        self.radius_sum[idx] = radius[:, :, None] + radius[:, None, :]
        self.reach[idx] = rng_[:, :, None] + self.radius_sum[idx]
        armored, light = t.armored[kinds][:, None, :], t.light[kinds][:, None, :]
        hit = np.where(armored, t.damage_vs_armored[kinds][:, :, None],
                       np.where(light, t.damage_vs_light[kinds][:, :, None], t.damage_vs_other[kinds][:, :, None]))
        self.hit_damage[idx] = hit
        self.volley[idx] = hit * t.attacks[kinds][:, :, None]
        ground = ~t.is_medivac[kinds]
        self.collide[idx] = ground[:, :, None] & ground[:, None, :] & ~self._eye
        # enemy auto-acquire distance to each ally (stored [.., U, U], used [.., E, A]): scan range + both radii
        self.scan_reach[idx] = SCAN_RANGE + self.radius_sum[idx]
        self.enemy_reach[idx] = self.reach[idx][:, self.n_agents:, : self.n_agents]
        self.target_penalty[idx] = np.where(t.is_medivac[kinds][:, : self.n_agents], 100.0, 0.0)

    def reset(self, mask: np.ndarray) -> None:
        """Start new episodes in the envs where `mask` is true."""
        idx = np.flatnonzero(mask)
        if idx.size == 0:
            return
        kinds, positions = self.roster.sample(self.rng, idx.size)
        if not self._fixed:
            self._set_stats(idx, kinds)
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
                self._sense(attacked_by, retarget)
                if retarget:
                    target = np.where(ally_target >= 0, ally_target, self.ai_target)
                    tidx = np.maximum(target, 0)
                    targeting = target >= 0
                    reach = _gather(self.reach, tidx)
            self._tick(tidx, targeting, reach, goal, has_goal)
        self.last_target = target
        self.steps += 1

    def _sense(self, attacked_by: np.ndarray, retarget: bool = True) -> None:
        """Collision push-apart, then (when `retarget`) enemy target selection from the same distances."""
        diff = self.z[:, None, :] - self.z[:, :, None]  # [B, i, j] = z_j - z_i
        dist = np.abs(diff)
        if self.n_units <= DENSE_COLLISION_UNITS:
            overlap = self.radius_sum - dist
            pairs = (overlap > 0) & self.collide & self.alive[:, :, None] & self.alive[:, None, :]
            if pairs.any():
                w = np.where(pairs, 0.5 * overlap / np.maximum(dist, 1e-6), 0.0).astype(np.float32)
                self._place(self.z - (w * diff).sum(2))
        else:  # large battles: gather only the few overlapping pairs
            flat = np.flatnonzero((dist < self.radius_sum) & self.collide)  # far cheaper than nonzero() here
            b, rest = np.divmod(flat, self.n_units * self.n_units)
            i, j = np.divmod(rest, self.n_units)
            live = self.alive[b, i] & self.alive[b, j]
            if live.any():
                b, i, j = b[live], i[live], j[live]
                d = dist[b, i, j]
                push = diff[b, i, j] * (-0.5 * (self.radius_sum[b, i, j] - d) / np.maximum(d, 1e-6))
                flat, size = b * self.n_units + i, self.n_envs * self.n_units
                shift = np.bincount(flat, push.real, size) + 1j * np.bincount(flat, push.imag, size)
                self._place(self.z + shift.reshape(self.z.shape).astype(np.complex64))
        if retarget:
            self._enemy_ai(dist[:, self.n_agents:, : self.n_agents], attacked_by)

    def _enemy_ai(self, to_ally: np.ndarray, attacked_by: np.ndarray) -> None:
        """Attack-move AI (SMAC_SPEC §5.5/5.7): keep a live target that is in reach or attacking us, else
        acquire the nearest ally within scan range or attacking us (medivacs last). Enemy medivacs follow
        the most damaged friendly unit. `to_ally` [B, E, A] distances; `attacked_by` [B, E, A]."""
        a, envs = self.n_agents, self._envs
        current = self.ai_target[:, a:]
        cidx = np.clip(current, 0, a - 1)  # enemy medivacs hold friendly targets (>= a): never kept here
        d_cur = np.take_along_axis(to_ally, cidx[..., None], axis=2)[..., 0]
        keep = (current >= 0) & (current < a) & self.alive[envs, cidx] & (
            (d_cur <= _gather(self.enemy_reach, cidx))
            | np.take_along_axis(attacked_by, cidx[..., None], axis=2)[..., 0])
        candidate = self.alive[:, None, :a] & ((to_ally < self.scan_reach[:, a:, :a]) | attacked_by)
        jitter = self.rng.random(to_ally.shape, dtype=np.float32)
        score = np.where(candidate, to_ally + self.target_penalty[:, None, :] + AI_TARGET_JITTER * jitter, FAR)
        best = score.argmin(axis=2)
        found = np.take_along_axis(score, best[..., None], axis=2)[..., 0] < FAR
        chosen = np.where(keep, current, np.where(found, best, -1))
        if self.has_medivac:
            frac = np.where(self.alive[:, a:] & ~self.is_medivac[:, a:], self.hp[:, a:] / self.max_hp[:, a:], FAR)
            chosen = np.where(self.is_medivac[:, a:], frac.argmin(axis=1)[:, None] + a, chosen)
        self.ai_target[:, a:] = chosen

    def _tick(self, tidx: np.ndarray, targeting: np.ndarray, reach: np.ndarray, goal: np.ndarray,
              has_goal: np.ndarray) -> None:
        envs = self._envs
        has_target = targeting & self.alive & self.alive[envs, tidx]
        tz = self.z[envs, tidx]
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
            self._heal(ready & self.is_medivac, tidx)
            ready &= ~self.is_medivac
        if ready.any():
            self._attack(ready, tidx)
        self._land_hits()
        self._regenerate()

    def _place(self, new: np.ndarray) -> None:
        """Move to `new` where walkable; blocked units slide along x or y, else stay."""
        new = new.astype(np.complex64, copy=False)
        ok = self.walkable(new.real, new.imag)
        if ok.all():
            self.z = new
            return
        x, y = self.z.real, self.z.imag
        slide_x = ~ok & self.walkable(new.real, y)
        slide_y = ~ok & ~slide_x & self.walkable(x, new.imag)
        self.z = np.where(ok, new, np.where(slide_x, new.real + 1j * y, np.where(slide_y, x + 1j * new.imag, self.z)))

    def walkable(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Whether points lie on walkable in-bounds cells (out of bounds is not walkable)."""
        if self._box is not None:  # the walkable area is one rectangle: four comparisons
            x0, x1, y0, y1 = self._box
            return (x >= x0) & (x < x1) & (y >= y0) & (y < y1)
        cx = np.clip(np.floor(x) + 1, 0, MAP_SIZE + 1)
        cy = np.clip(np.floor(y) + 1, 0, MAP_SIZE + 1)
        return self._walk[(cx * (MAP_SIZE + 2) + cy).astype(np.int64)]

    def _attack(self, fire: np.ndarray, tidx: np.ndarray) -> None:
        """Fire: melee and instant hits land now, projectiles after their travel time (so shots already in
        flight at a target that dies are wasted, as in SC2)."""
        size = self.n_envs * self.n_units
        direct = fire & ~self.is_suicide if self.has_suicide else fire
        volley = _gather(self.volley, tidx)
        if self.delays == [0]:  # no projectiles on this map: every hit lands now
            flat = (self._flat_base + tidx)[direct]
            total = np.bincount(flat, volley[direct], size).reshape(fire.shape)
            n_hits = np.bincount(flat, (self.attacks * direct)[direct], size).reshape(fire.shape)
            if self.has_splash or self.has_suicide:
                splash_dmg, splash_hits = self._splash(fire, tidx)
                total, n_hits = total + splash_dmg, n_hits + splash_hits
            self._apply_damage(total, n_hits)
            self._after_firing(fire)
            return
        for delay in self.delays:
            shots = direct & (self.projectile_ticks == delay) if len(self.delays) > 1 else direct
            if not shots.any():
                continue
            flat = (self._flat_base + tidx)[shots]
            slot = self.pending[delay]
            slot[..., 0] += np.bincount(flat, volley[shots], size).reshape(fire.shape)
            slot[..., 1] += np.bincount(flat, (self.attacks * shots)[shots], size).reshape(fire.shape)
        if self.has_splash or self.has_suicide:
            splash_dmg, splash_hits = self._splash(fire, tidx)
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

    def _splash(self, fire: np.ndarray, tidx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Colossus beam (enemies within splash_radius of the primary target, primary excluded) and baneling
        explosions (enemies within splash_radius of the baneling): damage [B, U] and hit counts [B, U]."""
        envs = self._envs
        line = fire & self.is_line_splash
        boom = fire & self.is_suicide
        centre = np.where(line, self.z[envs, tidx], self.z)  # the target (beam) or the baneling itself
        d = np.abs(self.z[:, None, :] - centre[:, :, None])  # [B, attacker, victim]
        victims = self.enemy_of[None] & self.alive[:, None, :]
        radius = self.splash_radius[:, :, None]
        hit = (line[..., None] & (d < radius) & (self._units[None, None, :] != tidx[..., None])) \
            | (boom[..., None] & (d < radius + self.radius[:, None, :]))
        hit &= victims
        hits = hit * self.attacks[:, :, None]
        return (self.hit_damage * hits).sum(1), hits.sum(1)

    def _apply_damage(self, total: np.ndarray, n_hits: np.ndarray) -> None:
        """Shields absorb first; each hit that reaches hp is reduced by armor (SMAC_SPEC §5.2)."""
        hit = total > 0
        absorbed = np.minimum(self.shield, total)
        overflow = total - absorbed
        hits_on_hp = n_hits * overflow / np.maximum(total, 1e-9)
        self.shield -= absorbed
        self.hp -= np.maximum(overflow - self.armor * hits_on_hp, 0.0)
        self.shield_delay = np.where(hit, SHIELD_REGEN_DELAY / DT, self.shield_delay)
        died = self.alive & (self.hp <= 0)
        if died.any():
            self.hp[died] = 0.0
            self.shield[died] = 0.0
            self.alive &= ~died

    def _heal(self, healing: np.ndarray, tidx: np.ndarray) -> None:
        if not healing.any():
            return
        envs = self._envs
        missing = self.max_hp[envs, tidx] - self.hp[envs, tidx]
        amount = np.clip(np.minimum(self.heal_per_tick, self.energy * MEDIVAC_HP_PER_ENERGY), 0.0, missing) * healing
        flat = (self._flat_base + tidx).ravel()
        self.hp += np.bincount(flat, amount.ravel(), self.n_envs * self.n_units).reshape(self.hp.shape)
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


def _gather(pairwise: np.ndarray, index: np.ndarray) -> np.ndarray:
    """pairwise[b, u, index[b, u]] for a [B, U, U] array and [B, U'] indices (the first U' rows)."""
    return pairwise[np.arange(index.shape[0])[:, None], np.arange(index.shape[1]), index]


def _rectangle(grid: np.ndarray) -> tuple[float, float, float, float] | None:
    """(x0, x1, y0, y1) if the walkable cells form one axis-aligned rectangle, else None."""
    xs, ys = np.nonzero(grid)
    if xs.size == 0:
        return None
    x0, x1, y0, y1 = xs.min(), xs.max() + 1, ys.min(), ys.max() + 1
    return (float(x0), float(x1), float(y0), float(y1)) if grid[x0:x1, y0:y1].all() else None
