"""Can six zealots hold corridor's choke on the built-in simulator? A scripted wall, not a learned policy.

    python benchmarks/smac_corridor_wall.py --episodes 200

At the start of every episode the six zealots are placed shoulder to shoulder across the only opening between
corridor's two regions (the 6-cell gap at y 13, x 10-16; ../shared/smac_maps/corridor.json), where in SC2 a
line of units that stand their ground blocks enemies (units of different players do not push each other there).
Each zealot then stops, or with `--engage R` attacks the nearest zergling within R (its reach is 0.975, so
0.97 attacks only zerglings it can hit without stepping out of the line). Printed: the win rate, how many
zerglings were south of the line at once (the most per episode, averaged), and how far the zealots stand from
their places after `--probe` agent steps (mean over zealots and episodes).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from envs.smac.battle_constants import N_NON_ATTACK_ACTIONS
from envs.smac.vec_env import GROUP, SMACVecEnv

WALL_Y = 13.0
WALL = np.array([complex(10.5 + i, WALL_Y) for i in range(6)], np.complex64)  # the gap spans x 10-16


def hold(episodes: int, engage: float, probe: int, n_envs: int, seed: int) -> tuple[float, float, float]:
    """(win rate, zerglings past the line at once, zealot displacement after `probe` steps) of the wall."""
    venv = SMACVecEnv("corridor", n_envs=n_envs, seed=seed)
    battle, a = venv.core.battle, venv.core.battle.n_agents
    step = venv.reset()
    battle.state.z[:, :a] = WALL
    won: list[float] = []
    past: list[float] = []
    shift: list[float] = []
    most_past = np.zeros(n_envs)
    while len(won) < episodes:
        avail, s = step.group_avail[GROUP], battle.state
        assert avail is not None  # SMAC's actions are discrete
        ally, enemy, enemy_alive = s.z[:, :a], s.z[:, a:], s.alive[:, a:]
        dist = np.where(enemy_alive[:, None, :], np.abs(enemy[:, None, :] - ally[:, :, None]), np.inf)
        nearest = dist.argmin(-1)
        can_fire = np.take_along_axis(avail, (N_NON_ATTACK_ACTIONS + nearest)[..., None], 2)[..., 0]
        actions = np.where(can_fire & (dist.min(-1) < engage), N_NON_ATTACK_ACTIONS + nearest, 1)
        actions = np.where(avail[..., 0] & ~avail[..., 1], 0, actions)  # dead zealots: no-op
        most_past = np.maximum(most_past, (enemy_alive & (enemy.imag < WALL_Y - 1.0)).sum(1))
        probed = (s.steps == probe) & s.alive[:, :a].all(1)
        shift += np.abs(ally[probed] - WALL).mean(1).tolist()
        step = venv.step({GROUP: actions})
        done = step.done
        if done.any():
            won += step.episode_won[done].tolist()
            past += most_past[done].tolist()
            most_past[done] = 0
            battle.state.z[done, :a] = WALL  # every episode starts walled
    return float(np.mean(won[:episodes])), float(np.mean(past[:episodes])), float(np.mean(shift or [np.nan]))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--episodes", type=int, default=200)
    p.add_argument("--probe", type=int, default=20, help="agent step at which the zealots' displacement is read")
    p.add_argument("--n-envs", type=int, default=50)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    print("| zealots | win % | zerglings past the line at once | zealot displacement at step "
          f"{args.probe} |\n|---|--:|--:|--:|")
    for label, engage in (("stop", 0.0), ("stop, attack a zergling in reach", 0.97)):
        win, past, shift = hold(args.episodes, engage, args.probe, args.n_envs, args.seed)
        print(f"| {label} | {100 * win:.1f} | {past:.1f} | {shift:.2f} |", flush=True)


if __name__ == "__main__":
    main()
