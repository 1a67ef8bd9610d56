"""Rendering: rgb_array frames of a battle (numpy only) and GIFs of whole episodes (Pillow, optional).

Units are filled circles coloured by team (allies blue, enemies red) and sized by radius, with a health bar
above each; a line joins each unit to the target it attacked in the last step.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from core.errors import MissingDependencyError
from envs.smac.battle import Battle
from envs.smac.maps import MAP_SIZE

ALLY, ENEMY = np.array([60, 110, 230], np.uint8), np.array([220, 60, 50], np.uint8)
GROUND, BLOCKED = np.array([225, 225, 215], np.uint8), np.array([90, 90, 90], np.uint8)


def render_frame(battle: Battle, env: int = 0, scale: int = 16) -> np.ndarray:
    """An RGB frame [32*scale, 32*scale, 3] (uint8) of battle `env`; y grows upwards as in SC2."""
    s, st, is_ally = battle.state, battle.stats, battle.is_ally
    size = MAP_SIZE * scale
    walk = battle.map.terrain().walkable
    cells = np.where(walk[..., None], GROUND, BLOCKED)  # [x, y, 3]
    frame = np.repeat(np.repeat(cells, scale, 0), scale, 1).transpose(1, 0, 2)[::-1].copy()  # rows = -y
    px = np.arange(size) + 0.5
    for u in np.flatnonzero(s.alive[env]):
        cx, cy = s.z[env, u].real * scale, size - s.z[env, u].imag * scale
        r = st.radius[env, u] * scale
        target = s.last_target[env, u]
        if target >= 0 and s.alive[env, target]:
            tx, ty = s.z[env, target].real * scale, size - s.z[env, target].imag * scale
            n = int(max(abs(tx - cx), abs(ty - cy))) + 1
            xs = np.clip(np.linspace(cx, tx, n).astype(int), 0, size - 1)
            ys = np.clip(np.linspace(cy, ty, n).astype(int), 0, size - 1)
            frame[ys, xs] = (ALLY if is_ally[u] else ENEMY) // 2 + 100
        inside = (px[None, :] - cx) ** 2 + (px[:, None] - cy) ** 2 <= r * r
        frame[inside] = ALLY if is_ally[u] else ENEMY
        frac = s.hp[env, u] / st.max_hp[env, u]
        top = int(cy - r - 4)
        x0, x1 = int(cx - r), int(cx + r)
        if 0 <= top < size - 2:
            frame[top:top + 2, max(x0, 0):min(x1, size)] = (40, 40, 40)
            frame[top:top + 2, max(x0, 0):min(int(x0 + frac * (x1 - x0)), size)] = (40, 200, 60)
    return frame


def save_gif(frames: list[np.ndarray], path: str | Path, fps: int = 8) -> Path:
    """Write frames as an animated GIF (needs Pillow)."""
    try:
        from PIL import Image
    except ImportError:
        raise MissingDependencyError("saving GIFs needs Pillow: pip install pillow") from None
    path = Path(path)
    images = [Image.fromarray(f) for f in frames]
    images[0].save(path, save_all=True, append_images=images[1:], duration=int(1000 / fps), loop=0)
    return path


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
