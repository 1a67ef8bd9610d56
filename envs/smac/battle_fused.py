"""`Battle.step` compiled with numba: one pass over the envs, each env's 8 ticks run through unit by unit.

The numpy step in `battle.py` is the reference; this is its fast path, equal to it bit for bit
(`tests/test_smac_fused.py`). It repeats the reference's arithmetic in its dtypes: float32 for positions and
stats, float64 where numpy promotes (damage summed by `np.bincount`), numpy's complex64 `abs` (max * sqrt(fma(ratio,
ratio, 1))), collision sums in `_sum_last`'s order, and the enemy AI's jitter drawn from the same generator in the
same order. Whole-batch conditions of the reference (`ready.any()` before firing, `arriving.any()` before hits
land) change nothing in an env without shots, so each env is advanced on its own; work whose result the
reference throws away (distances between teammates far apart, zero steps of units that stay) is skipped.

It covers SMAC's attack-move battles without medivacs, splash, suicide or colossi, in-battle pathing, or more
than `DENSE_COLLISION_UNITS` units (`stepper`): 3m, 8m, 2s3z, 3s5z, 5m_vs_6m, 8m_vs_9m, the stalker maps,
3s5z_vs_3s6z and 2s_vs_1sc. The other maps take the reference.
"""
from __future__ import annotations

import functools
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from numba import njit

from envs.smac.battle_constants import (
    AI_TARGET_JITTER,
    CHASE_MARGIN,
    DENSE_COLLISION_UNITS,
    DT,
    FAR,
    MAX_PUSH,
    MOVE_AMOUNT,
    MOVE_STEPS,
    N_NON_ATTACK_ACTIONS,
    RETARGET_EVERY,
    SENSE_EVERY,
    TICKS_PER_STEP,
)
from envs.smac.maps import MAP_SIZE
from envs.smac.units import SHIELD_REGEN_DELAY, SHIELD_REGEN_PER_SECOND

if TYPE_CHECKING:
    from envs.smac.battle import Battle, BattleStep

# literals of the reference's arithmetic (the tuning constants come in `Tuning`)
F0, F1, HALF = np.float32(0.0), np.float32(1.0), np.float32(0.5)
EPS6, EPS9 = np.float32(1e-6), np.float32(1e-9)


class Tuning(NamedTuple):
    """The constants of `battle_constants.py` and `units.py` that the kernel uses, passed as an argument: numba's
    on-disk cache freezes a compiled function's imported globals, so a retuned constant would otherwise be missed."""

    ticks: int
    sense_every: int
    n_non_attack: int
    grid: int  # side of the padded walkable grid
    far: np.float32
    chase: np.float32
    jitter: np.float32
    push_max: np.float32
    shield_step: np.float32  # shield regenerated per tick
    shield_wait: np.float32  # ticks from a hit until shields regenerate
    move_x: np.ndarray  # float32 offsets of the four move actions (N, S, E, W)
    move_y: np.ndarray


def tuning() -> Tuning:
    """Today's constants, as the reference reads them (Python floats as float32 under numpy's rules)."""
    return Tuning(ticks=TICKS_PER_STEP, sense_every=SENSE_EVERY, n_non_attack=N_NON_ATTACK_ACTIONS,
                  grid=MAP_SIZE + 2, far=np.float32(FAR), chase=np.float32(CHASE_MARGIN),
                  jitter=np.float32(AI_TARGET_JITTER), push_max=np.float32(MAX_PUSH),
                  shield_step=np.float32(SHIELD_REGEN_PER_SECOND * DT),
                  shield_wait=np.float32(SHIELD_REGEN_DELAY / DT),
                  move_x=(np.float32(MOVE_AMOUNT) * MOVE_STEPS.real).astype(np.float32),
                  move_y=(np.float32(MOVE_AMOUNT) * MOVE_STEPS.imag).astype(np.float32))


def stepper(battle: Battle) -> BattleStep | None:
    """`step` with this battle's fixed arguments bound, if the compiled step covers the battle, else None
    (`Battle.step` then runs the numpy reference).

    Covered: SMAC's attack-move battles of up to DENSE_COLLISION_UNITS units without medivacs, splash,
    banelings, colossi or in-battle pathing, where the kernel senses at every second tick as the reference
    does, and where this numpy's complex `abs` is the one `_cabs` reproduces."""
    covered = (battle.n_units <= DENSE_COLLISION_UNITS and battle.paths is None
               and not battle.roster.hunts_closest
               and not (battle.has_medivac or battle.has_splash or battle.has_suicide or battle.has_stepping_over)
               and SENSE_EVERY == RETARGET_EVERY and TICKS_PER_STEP % SENSE_EVERY == 0)
    if not (covered and _abs_matches_numpy()):
        return None
    box = tuple(np.float32(v) for v in (battle._box or (0, 0, 0, 0)))  # (x0, x1, y0, y1)
    return functools.partial(step, k=tuning(), box=box, delays=np.array(battle.delays, np.int64))


def step(battle: Battle, actions: np.ndarray, k: Tuning, box: tuple[np.float32, ...], delays: np.ndarray) -> None:
    """`Battle.step` for a battle that `stepper` covers: the same state afterwards, bit for bit. `k`, `box` (the
    walkable rectangle, if the map's area is one) and `delays` (projectile delays) are fixed per battle."""
    s, st, p = battle.state, battle.stats, battle.pairs
    # the reference draws jitter [B, E, A] at each of the step's senses: one draw of them all is the same stream
    jitter = battle.rng.random((k.ticks // k.sense_every, battle.n_envs, battle.n_enemies, battle.n_agents),
                               dtype=np.float32)
    _step(k, np.ascontiguousarray(actions, np.int64), battle.n_agents, jitter,
          s.z.view(np.float32), s.hp, s.shield, s.cooldown, s.shield_delay, s.alive, s.ai_target, s.last_target,
          s.hit_in, s.steps, s.attack_point.view(np.float32).reshape(-1, 2), s.pending,
          st.radius, st.armor, st.attacks, st.speed_per_tick, st.cooldown_ticks, st.regen_per_tick, st.max_hp,
          st.max_shield, st.projectile_ticks, p.reach, p.volley, p.scan_ea, battle._box is not None, box,
          battle._walk, battle.has_shields, battle.has_regen, delays)


@functools.cache
def _abs_matches_numpy() -> bool:
    """Whether `_cabs` equals this numpy's complex64 `abs` (its vectorised loop with a fused multiply-add; a
    numpy or CPU without them computes it otherwise, and the reference then runs)."""
    rng = np.random.default_rng(0)
    scale = rng.choice(np.array([1e-3, 1.0, 30.0], np.float32), (2, 4096))
    parts = (rng.standard_normal((2, 4096)) * scale).astype(np.float32)
    z = (parts[0] + 1j * parts[1]).astype(np.complex64)
    return bool(np.array_equal(_abs_all(z), np.abs(z)))


@njit(fastmath={"contract"}, cache=True, error_model="numpy")
def _one_plus_square(r):
    """fma(r, r, 1) in float32: numpy's vectorised complex abs computes this with one rounding."""
    return r * r + F1


@njit(cache=True, error_model="numpy", inline="always")
def _cabs(x, y):
    """numpy's complex64 `abs` of x + iy, to the last bit."""
    x, y = abs(x), abs(y)
    big, small = max(x, y), min(x, y)
    if big == F0 or small == np.float32(np.inf):
        return big
    return np.sqrt(_one_plus_square(small / big)) * big


@njit(cache=True, error_model="numpy")
def _abs_all(z):
    """`_cabs` of every element of a complex64 array."""
    out = np.empty(z.size, np.float32)
    for i in range(z.size):
        out[i] = _cabs(z[i].real, z[i].imag)
    return out


@njit(cache=True, error_model="numpy", inline="always")
def _walkable(x, y, use_box, box, walk, grid):
    """`Battle.walkable` of one point."""
    if use_box:
        return x >= box[0] and x < box[1] and y >= box[2] and y < box[3]
    cx = min(max(int(np.floor(x)) + 1, 0), grid - 1)
    cy = min(max(int(np.floor(y)) + 1, 0), grid - 1)
    return walk[cx * grid + cy]


@njit(cache=True, error_model="numpy", inline="always")
def _place(z, b, u, nx, ny, use_box, box, walk, grid):
    """`Battle._place` of one unit: move to (nx, ny) where walkable, else slide along x or y, else stay."""
    x, y = z[b, 2 * u], z[b, 2 * u + 1]
    if _walkable(nx, ny, use_box, box, walk, grid):
        z[b, 2 * u], z[b, 2 * u + 1] = nx, ny
    elif _walkable(nx, y, use_box, box, walk, grid):
        z[b, 2 * u] = nx
    elif _walkable(x, ny, use_box, box, walk, grid):
        z[b, 2 * u + 1] = ny


@njit(cache=True, error_model="numpy", inline="always")
def _apply_damage(k, b, total, hits, eps, hp, shield, shield_delay, alive, armor, has_shields):
    """`Battle._apply_damage` of env b. `total` and `hits` are float64 (summed by np.bincount) or float32
    (projectiles landing), `eps` of their dtype: the arithmetic runs in the dtype numpy promotes to."""
    zero = eps - eps
    for j in range(hp.shape[1]):
        t, n = total[j], hits[j]
        if has_shields:
            absorbed = min(shield[b, j], t)
            overflow = t - absorbed
            on_hp = n * overflow / max(t, eps)
            shield[b, j] = shield[b, j] - absorbed
            hp[b, j] = hp[b, j] - max(overflow - armor[b, j] * on_hp, zero)
            if t > 0:
                shield_delay[b, j] = k.shield_wait
        else:
            hp[b, j] = hp[b, j] - max(t - armor[b, j] * n, zero)
    for j in range(hp.shape[1]):
        if alive[b, j] and hp[b, j] <= 0:
            hp[b, j] = F0
            shield[b, j] = F0
            alive[b, j] = False


@njit(cache=True, error_model="numpy", inline="always")
def _may_touch(dx, dy, reach):
    """False only where two units at offset (dx, dy) certainly do not overlap: float32 `abs` is within a few ulp
    of the exact length, which the float64 squares give to 1e-16; the margin is far above both."""
    if reach <= F0:
        return False
    bound = np.float64(reach) * (1.0 + 1e-5)
    return np.float64(dx) * dx + np.float64(dy) * dy < bound * bound


@njit(cache=True, error_model="numpy", inline="always")
def _push_apart(k, b, n_agents, z, alive, radius, use_box, box, walk, dist, live_radius, term_x, term_y, pushed):
    """`_push_apart_dense` of env b; leaves the distances before the push in `dist`.

    The pair (i, j) is computed once: its distance and weight are symmetric to the bit, and j's push on i is
    the exact negation of i's push on j. A unit that overlaps nothing is pushed by a sum of zeros: it stays."""
    n = alive.shape[1]
    for i in range(n):
        live_radius[i] = radius[b, i] if alive[b, i] else -k.far
        pushed[i] = False
    for i in range(n):
        dist[i, i] = F0
        term_x[i, i], term_y[i, i] = F0, F0
        for j in range(i + 1, n):
            dx, dy = z[b, 2 * j] - z[b, 2 * i], z[b, 2 * j + 1] - z[b, 2 * i + 1]
            reach = live_radius[i] + live_radius[j]
            if (i < n_agents) == (j < n_agents) and not _may_touch(dx, dy, reach):
                term_x[i, j], term_y[i, j], term_x[j, i], term_y[j, i] = F0, F0, F0, F0
                continue  # teammates apart: no push, and the enemy AI needs no distance between them
            d = _cabs(dx, dy)
            dist[i, j], dist[j, i] = d, d
            overlap = reach - d
            if overlap > F0:
                w = overlap / max(d, EPS6)
                term_x[i, j], term_y[i, j] = w * dx, w * dy
                term_x[j, i], term_y[j, i] = -term_x[i, j], -term_y[i, j]
                pushed[i], pushed[j] = True, True
            else:
                term_x[i, j], term_y[i, j], term_x[j, i], term_y[j, i] = F0, F0, F0, F0
    m = n - n % 4
    for i in range(n):  # the sum over j of the pushes on i, in `_sum_last`'s order
        if not pushed[i]:
            continue
        sx, sy = F0, F0
        if m:
            x0, x1, x2, x3 = term_x[i, 0], term_x[i, 1], term_x[i, 2], term_x[i, 3]
            y0, y1, y2, y3 = term_y[i, 0], term_y[i, 1], term_y[i, 2], term_y[i, 3]
            for j in range(4, m, 4):
                x0, x1, x2, x3 = x0 + term_x[i, j], x1 + term_x[i, j + 1], x2 + term_x[i, j + 2], x3 + term_x[i, j + 3]
                y0, y1, y2, y3 = y0 + term_y[i, j], y1 + term_y[i, j + 1], y2 + term_y[i, j + 2], y3 + term_y[i, j + 3]
            sx, sy = (x0 + x2) + (x1 + x3), (y0 + y2) + (y1 + y3)
        if m < n:
            rx, ry = term_x[i, m], term_y[i, m]
            for j in range(m + 1, n):
                rx, ry = rx + term_x[i, j], ry + term_y[i, j]
            sx, sy = (rx, ry) if m == 0 else (sx + rx, sy + ry)
        sx, sy = HALF * sx, HALF * sy
        if not use_box:  # `_limit_push`
            length = _cabs(sx, sy)
            if length > k.push_max:
                f = k.push_max / max(length, EPS9)
                sx, sy = sx * f, sy * f
        _place(z, b, i, z[b, 2 * i] - sx, z[b, 2 * i + 1] - sy, use_box, box, walk, k.grid)


@njit(cache=True, error_model="numpy", inline="always")
def _enemy_ai(k, b, sense, n_agents, jitter, dist, alive, ai_target, ally_target, hit_in, reach_table, scan_ea):
    """`Battle._enemy_ai` of env b (no medivacs), from the distances before this sense's push."""
    for u in range(n_agents, alive.shape[1]):
        e = u - n_agents
        current = ai_target[b, u]
        c = min(max(current, 0), n_agents - 1)
        keep = current >= 0 and current < n_agents and alive[b, c] \
            and (dist[u, c] <= reach_table[b, u, c] or (ally_target[c] == u and hit_in[b, c] < 0))
        best, best_score = 0, F0
        for i in range(n_agents):
            d = dist[u, i]
            score = d if (d < scan_ea[b, e, i] or (ally_target[i] == u and hit_in[b, i] < 0)) else k.far
            score = score + (F0 if alive[b, i] else k.far)  # (+ the target penalty, 0 without medivacs)
            score = score + k.jitter * jitter[sense, b, e, i]
            if i == 0 or score < best_score:
                best, best_score = i, score
        ai_target[b, u] = current if keep else (best if best_score < k.far else -1)


@njit(cache=True, error_model="numpy", inline="always")
def _tick(k, b, z, alive, cooldown, speed, target, tidx, reach, goal_x, goal_y, has_goal, use_box, box, walk,
          new_x, new_y, moves, ready):
    """`Battle._tick`'s movement of env b; marks in `ready` the units that fire (in reach, weapon ready).

    A unit that is dead, in reach of its target or without an order stays where it is (the reference moves
    it by a zero step)."""
    for u in range(alive.shape[1]):
        moves[u], ready[u] = False, False
        if not alive[b, u]:
            continue
        x, y = z[b, 2 * u], z[b, 2 * u + 1]
        t = tidx[u]
        if target[u] >= 0 and alive[b, t]:
            dx, dy = z[b, 2 * t] - x, z[b, 2 * t + 1] - y
            length = _cabs(dx, dy)
            if length <= reach[u]:  # in reach: fire when the weapon is ready
                ready[u] = cooldown[b, u] <= 0
                continue
            step = length - (reach[u] - k.chase)  # chase to just inside reach
        elif has_goal[u]:
            dx, dy = goal_x[u] - x, goal_y[u] - y
            length = _cabs(dx, dy)
            step = length
        else:
            continue
        f = min(max(step, F0), speed[b, u]) / max(length, EPS9)
        new_x[u], new_y[u], moves[u] = x + dx * f, y + dy * f, True
    for u in range(alive.shape[1]):
        if moves[u]:
            _place(z, b, u, new_x[u], new_y[u], use_box, box, walk, k.grid)


@njit(cache=True, error_model="numpy")
def _step(k, actions, n_agents, jitter, z, hp, shield, cooldown, shield_delay, alive, ai_target, last_target,
          hit_in, steps, attack_point, pending, radius, armor, attacks, speed, cooldown_ticks, regen, max_hp,
          max_shield, projectile_ticks, reach_table, volley_table, scan_ea, use_box, box, walk, has_shields,
          has_regen, delays):
    """One agent step of every env; see `Battle.step` (the reference) for what each stage does."""
    n_envs, n = hp.shape
    instant = delays.size == 1 and delays[0] == 0  # no projectiles: every hit lands when fired
    ally_target, target, tidx = np.empty(n, np.int64), np.empty(n, np.int64), np.empty(n, np.int64)
    reach, goal_x, goal_y = np.empty(n, np.float32), np.empty(n, np.float32), np.empty(n, np.float32)
    new_x, new_y, live_radius = np.empty(n, np.float32), np.empty(n, np.float32), np.empty(n, np.float32)
    has_goal, moves, ready = np.empty(n, np.bool_), np.empty(n, np.bool_), np.empty(n, np.bool_)
    dist = np.empty((n, n), np.float32)
    term_x, term_y, pushed = np.empty((n, n), np.float32), np.empty((n, n), np.float32), np.empty(n, np.bool_)
    total, hits = np.empty(n, np.float64), np.empty(n, np.float64)
    land, land_hits = np.empty(n, np.float32), np.empty(n, np.float32)
    for b in range(n_envs):
        for u in range(n):  # orders: allies' from the actions, enemies' the attack-move point
            if u < n_agents:
                act = actions[b, u]
                move = min(max(act - 2, 0), 3)
                goal_x[u], goal_y[u] = z[b, 2 * u] + k.move_x[move], z[b, 2 * u + 1] + k.move_y[move]
                has_goal[u] = act >= 2 and act < k.n_non_attack
                ally_target[u] = act - k.n_non_attack + n_agents if act >= k.n_non_attack else -1
                if ally_target[u] != last_target[b, u]:  # a new target: no hit on it yet
                    hit_in[b, u] = k.far
            else:
                goal_x[u], goal_y[u] = attack_point[b, 0], attack_point[b, 1]
                has_goal[u] = True
                ally_target[u] = -1
        for tick in range(k.ticks):
            if tick % k.sense_every == 0:
                _push_apart(k, b, n_agents, z, alive, radius, use_box, box, walk, dist, live_radius, term_x, term_y,
                            pushed)
                _enemy_ai(k, b, tick // k.sense_every, n_agents, jitter, dist, alive, ai_target, ally_target,
                          hit_in, reach_table, scan_ea)
                for u in range(n):
                    target[u] = ally_target[u] if ally_target[u] >= 0 else ai_target[b, u]
                    tidx[u] = max(target[u], 0)
                    reach[u] = reach_table[b, u, tidx[u]]
            _tick(k, b, z, alive, cooldown, speed, target, tidx, reach, goal_x, goal_y, has_goal, use_box, box,
                  walk, new_x, new_y, moves, ready)
            if ready.any():  # `_attack`: hits summed per target in float64, in unit order, as np.bincount does
                for d in delays:
                    total[:] = 0.0
                    hits[:] = 0.0
                    for u in range(n):
                        if ready[u] and (delays.size == 1 or projectile_ticks[b, u] == d):
                            total[tidx[u]] += np.float64(volley_table[b, u, tidx[u]])
                            hits[tidx[u]] += np.float64(attacks[b, u])
                    if instant:
                        _apply_damage(k, b, total, hits, np.float64(1e-9), hp, shield, shield_delay, alive, armor,
                                      has_shields)
                    else:
                        for j in range(n):
                            pending[d, b, j, 0] = pending[d, b, j, 0] + total[j]
                            pending[d, b, j, 1] = pending[d, b, j, 1] + hits[j]
                for u in range(n):
                    if ready[u]:
                        cooldown[b, u] = cooldown_ticks[b, u]
                        if u < n_agents:
                            hit_in[b, u] = min(hit_in[b, u], projectile_ticks[b, u])
            if not instant:  # `_land_hits`
                if pending[0, b, :, 0].any():
                    for j in range(n):
                        land[j] = pending[0, b, j, 0] * (F1 if alive[b, j] else F0)
                        land_hits[j] = pending[0, b, j, 1] * (F1 if alive[b, j] else F0)
                    _apply_damage(k, b, land, land_hits, EPS9, hp, shield, shield_delay, alive, armor, has_shields)
                for d in range(pending.shape[0] - 1):
                    pending[d, b] = pending[d + 1, b]
                pending[pending.shape[0] - 1, b] = F0
            for u in range(n):  # `_regenerate`
                cooldown[b, u] = cooldown[b, u] - F1
                if u < n_agents:
                    hit_in[b, u] = hit_in[b, u] - F1
                if has_shields:
                    if alive[b, u] and shield_delay[b, u] <= 0:
                        shield[b, u] = min(shield[b, u] + k.shield_step, max_shield[b, u])
                    shield_delay[b, u] = shield_delay[b, u] - F1
                if has_regen and alive[b, u]:
                    hp[b, u] = min(hp[b, u] + regen[b, u], max_hp[b, u])
        for u in range(n):
            last_target[b, u] = target[u]
        steps[b] += 1
