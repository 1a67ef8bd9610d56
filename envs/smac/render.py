"""Rendering: rgb_array frames of a battle (numpy only) and GIFs of whole episodes (Pillow, optional).

A frame shows the map's terrain (walkable ground with a faint line every 4 cells, obstacles dark) and each unit
as a disc in its team's colour (allies blue, enemies red) with a letter for its type (UNIT_LETTERS: M marine,
R marauder, V medivac, Z zealot, S stalker, C colossus, G zergling, B baneling, H hydralisk, P spine crawler).
A disc is filled from the bottom up to the unit's health fraction (the rest pale), so crowded units never hide
each other's bars; a cyan arc around it, clockwise from 12 o'clock, is its shield. A line in the attacker's
colour joins each unit to what it attacked in the last step (green: a medivac's heal); dead units leave a grey
cross. A panel in the top-left corner gives the episode step and a square per unit, filled while it lives.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from core.evaluation.recording import save_gif
from envs.smac.battle import Battle
from envs.smac.maps import MAP_SIZE

ALLY, ENEMY = np.array([60, 110, 230], np.uint8), np.array([220, 60, 50], np.uint8)
GROUND, BLOCKED = np.array([225, 225, 215], np.uint8), np.array([90, 90, 90], np.uint8)
GRID = np.array([208, 208, 196], np.uint8)
OUTLINE, PANEL, WHITE = (30, 30, 30), (45, 45, 45), (255, 255, 255)
SHIELD, HEAL, DEAD = (40, 200, 240), (40, 200, 60), (150, 150, 150)
MIN_RADIUS = 0.5  # cells: small units are drawn a little larger, so that their letter fits
GRID_EVERY = 4  # cells

UNIT_LETTERS = {"marine": "M", "marauder": "R", "medivac": "V", "zealot": "Z", "stalker": "S", "colossus": "C",
                "zergling": "G", "baneling": "B", "hydralisk": "H", "spine_crawler": "P"}
# glyphs, rows top to bottom: letters 5 pixels wide, digits 3
GLYPHS = {
    "M": "10001 11011 10101 10001 10001", "R": "11110 10001 11110 10010 10001", "V": "10001 10001 10001 01010 00100",
    "Z": "11111 00010 00100 01000 11111", "S": "01111 10000 01110 00001 11110", "C": "01111 10000 10000 10000 01111",
    "G": "01111 10000 10011 10001 01111", "B": "11110 10001 11110 10001 11110", "H": "10001 10001 11111 10001 10001",
    "P": "11110 10001 11110 10000 10000", "0": "111 101 101 101 111", "1": "010 110 010 010 111",
    "2": "111 001 111 100 111", "3": "111 001 011 001 111", "4": "101 101 111 001 001", "5": "111 100 111 001 111",
    "6": "111 100 111 101 111", "7": "111 001 010 010 010", "8": "111 101 111 101 111", "9": "111 101 111 001 111",
}
_MASKS = {c: np.array([[b == "1" for b in row] for row in g.split()]) for c, g in GLYPHS.items()}


def render_frame(battle: Battle, env: int = 0, scale: int = 16) -> np.ndarray:
    """An RGB frame [32*scale, 32*scale, 3] (uint8) of battle `env`; y grows upwards as in SC2."""
    s, st, is_ally = battle.state, battle.stats, battle.is_ally
    size = MAP_SIZE * scale
    walk = battle.map.terrain().walkable
    cells = np.where(walk[..., None], GROUND, BLOCKED)  # [x, y, 3]
    frame = np.repeat(np.repeat(cells, scale, 0), scale, 1).transpose(1, 0, 2)[::-1].copy()  # rows = -y
    lines = np.arange(0, size, GRID_EVERY * scale)
    grid = np.zeros((size, size), bool)
    grid[:, lines] = grid[size - 1 - lines] = True
    frame[grid & (frame == GROUND).all(-1)] = GRID
    xy = np.stack([s.z[env].real * scale, size - s.z[env].imag * scale], -1)  # pixel centres [U, 2]
    names = battle.roster.type_names
    alive = s.alive[env]
    for u in np.flatnonzero(~alive & (st.max_hp[env] > 0)):
        _cross(frame, xy[u], max(3, scale // 4), DEAD)
    for u in np.flatnonzero(alive):
        target = s.last_target[env, u]
        if target >= 0 and s.alive[env, target]:
            colour = HEAL if st.is_medivac[env, u] else tuple(ALLY if is_ally[u] else ENEMY)
            _line(frame, xy[u], xy[target], colour, max(1, scale // 8))
    glyph = max(1, scale // 8)
    radii = np.maximum(st.radius[env], MIN_RADIUS) * scale
    for u in np.flatnonzero(alive):
        (cx, cy), r = xy[u], radii[u]
        team = ALLY if is_ally[u] else ENEMY
        if st.max_shield[env, u] > 0:
            _arc(frame, cx, cy, r + 1, r + 1 + max(2, scale // 6), float(s.shield[env, u] / st.max_shield[env, u]),
                 SHIELD)
        _disc(frame, cx, cy, r + 1, OUTLINE)
        _disc(frame, cx, cy, r, tuple(team // 2 + 127), cy + r - 2 * r * float(s.hp[env, u] / st.max_hp[env, u]),
              tuple(team))
        letter = UNIT_LETTERS.get(names[int(st.kind[env, u])])
        if letter is not None:
            _text(frame, cx - 2.5 * glyph + 1, cy - 2.5 * glyph + 1, letter, OUTLINE, glyph)
            _text(frame, cx - 2.5 * glyph, cy - 2.5 * glyph, letter, WHITE, glyph)
    _panel(frame, int(s.steps[env]), alive, is_ally, glyph + 1)
    return frame


def _fill(frame: np.ndarray, x0: float, y0: float, x1: float, y1: float, colour: tuple[int, ...]) -> None:
    """Fill the pixel rectangle [x0, x1) x [y0, y1), clipped to the frame."""
    h, w = frame.shape[:2]
    xa, xb, ya, yb = max(int(x0), 0), min(int(x1), w), max(int(y0), 0), min(int(y1), h)
    if xa < xb and ya < yb:
        frame[ya:yb, xa:xb] = colour


def _window(frame: np.ndarray, cx: float, cy: float, r: float) -> tuple[slice, slice, np.ndarray, np.ndarray]:
    """The frame's pixels within `r` of (cx, cy): row and column slices, and their centres' offsets dy [h, 1],
    dx [1, w] from it."""
    h, w = frame.shape[:2]
    xa, xb, ya, yb = max(int(cx - r), 0), min(int(cx + r) + 1, w), max(int(cy - r), 0), min(int(cy + r) + 1, h)
    dx, dy = np.arange(xa, max(xa, xb)) + 0.5 - cx, np.arange(ya, max(ya, yb)) + 0.5 - cy
    return slice(ya, max(ya, yb)), slice(xa, max(xa, xb)), dy[:, None], dx[None, :]


def _disc(frame: np.ndarray, cx: float, cy: float, r: float, colour: tuple[int, ...], fill_from: float = np.inf,
          fill: tuple[int, ...] = ()) -> None:
    """A disc of `colour`; pixels below row `fill_from` in `fill` instead (a level: the unit's health)."""
    rows, cols, dy, dx = _window(frame, cx, cy, r)
    inside = dx ** 2 + dy ** 2 <= r * r
    frame[rows, cols][inside] = colour
    if fill:
        frame[rows, cols][inside & (dy + cy >= fill_from)] = fill


def _arc(frame: np.ndarray, cx: float, cy: float, r0: float, r1: float, fraction: float,
         colour: tuple[int, ...]) -> None:
    """The part of the ring r0..r1 that runs clockwise from 12 o'clock through `fraction` of a turn."""
    rows, cols, dy, dx = _window(frame, cx, cy, r1)
    d2 = dx ** 2 + dy ** 2
    turn = (np.arctan2(dx, -dy) / (2 * np.pi)) % 1.0  # 0 at the top, growing clockwise (rows grow downwards)
    frame[rows, cols][(d2 >= r0 * r0) & (d2 <= r1 * r1) & (turn <= fraction)] = colour


def _line(frame: np.ndarray, p: np.ndarray, q: np.ndarray, colour: tuple[int, ...], width: int) -> None:
    h, w = frame.shape[:2]
    n = int(np.abs(q - p).max()) + 1
    xs, ys = np.linspace(p[0], q[0], n).astype(int), np.linspace(p[1], q[1], n).astype(int)
    for d in range(width):
        frame[np.clip(ys + d, 0, h - 1), np.clip(xs, 0, w - 1)] = colour
        frame[np.clip(ys, 0, h - 1), np.clip(xs + d, 0, w - 1)] = colour


def _cross(frame: np.ndarray, centre: np.ndarray, r: int, colour: tuple[int, ...]) -> None:
    corner = np.array([r, r])
    _line(frame, centre - corner, centre + corner, colour, 2)
    _line(frame, centre - corner * (1, -1), centre + corner * (1, -1), colour, 2)


def _text(frame: np.ndarray, x: float, y: float, text: str, colour: tuple[int, ...], k: int) -> None:
    """Draw `text` (characters of GLYPHS) with its top-left corner at (x, y), each glyph pixel k x k."""
    h, w = frame.shape[:2]
    x0, y0 = round(x), round(y)
    for char in text:
        mask = np.repeat(np.repeat(_MASKS[char], k, 0), k, 1)
        if x0 >= 0 and y0 >= 0 and x0 + mask.shape[1] <= w and y0 + mask.shape[0] <= h:
            frame[y0:y0 + mask.shape[0], x0:x0 + mask.shape[1]][mask] = colour
        x0 += mask.shape[1] + k


def _panel(frame: np.ndarray, step: int, alive: np.ndarray, is_ally: np.ndarray, k: int) -> None:
    """Top-left: the episode step, then a row of squares per team (filled: alive)."""
    box, pad = 3 * k, 2 * k
    per_row = max(1, (frame.shape[1] // 2) // (box + k))
    teams = [np.flatnonzero(is_ally), np.flatnonzero(~is_ally)]
    rows = sum(-(-len(t) // per_row) for t in teams)
    width = max(len(str(step)) * 4 * k, min(per_row, max(len(t) for t in teams)) * (box + k)) + 2 * pad - k
    _fill(frame, 0, 0, width, pad + 5 * k + pad + rows * (box + k) + pad - k, PANEL)
    _text(frame, pad, pad, str(step), WHITE, k)
    y = pad + 5 * k + pad
    for team, colour in zip(teams, (tuple(ALLY), tuple(ENEMY)), strict=True):
        for i, u in enumerate(team):
            x, row_y = pad + (i % per_row) * (box + k), y + (i // per_row) * (box + k)
            _fill(frame, x, row_y, x + box, row_y + box, colour)
            if not alive[u]:
                _fill(frame, x + k, row_y + k, x + box - k, row_y + box - k, PANEL)
        y += -(-len(team) // per_row) * (box + k)


def record_episode(env, policy: Callable[[np.ndarray], np.ndarray], path: str | Path, scale: int = 12) -> Path:
    """Play one episode of a StarCraft2Env-like `env` with `policy(avail) -> actions` and save it as a GIF."""
    env.reset()
    frames = [env.render()]
    done = False
    while not done:
        actions = policy(np.asarray(env.get_avail_actions(), bool))
        _, done, _ = env.step(actions)
        frames.append(env.render())
    return save_gif(frames, path)
