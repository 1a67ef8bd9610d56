"""The battle's time step, calibration and action layout: the constants that the battles (`battle.py`) and
their engine (`engine.py`) read."""
from __future__ import annotations

import numpy as np

TICKS_PER_STEP = 8
# Collisions are resolved and the enemy AI picks its targets every 2 ticks (8 times per game second): how often
# SC2 does either is undocumented; the rate was set with the calibration of BENCHMARKS.md, "SMAC simulator
# fidelity". The targeting rules themselves are SC2's (SC2_FACTS.md).
SENSE_EVERY = 2  # ticks between collision resolutions and enemy target re-selections
DENSE_COLLISION_UNITS = 20  # up to this many units per battle, collisions use dense [B, U, U] arithmetic
D2_MARGIN = 0.05  # slack on the pre-selection of colliding pairs, far above its float32 rounding (~1e-3)
DT = 1.0 / 16.0
MOVE_AMOUNT = 2.0
# Weapon defaults of SC2's core data (envs/smac/SC2_FACTS.md): automatic targeting scans max(MIN_SCAN_RANGE,
# weapon range) (plus both units' radii); every attack's cooldown gets a random extra delay, uniform in
# RANDOM_DELAY seconds.
MIN_SCAN_RANGE = 5.0
RANDOM_DELAY = (-0.0625, 0.125)
MOVE_DIRECTIONS = np.array([[0.0, 1.0], [0.0, -1.0], [1.0, 0.0], [-1.0, 0.0]])  # N, S, E, W
MOVE_STEPS = (MOVE_DIRECTIONS @ np.array([1, 1j])).astype(np.complex64)
N_NON_ATTACK_ACTIONS = 6  # no-op, stop, 4 moves
FAR = 1e9
MAX_PUSH = 0.5  # longest collision shift per resolution on maps with inner walls (a wall is one cell or more)
CHASE_MARGIN = 0.01  # a chasing unit closes to this far inside its reach (exactly at it, float32 can stall it)
BEAM_HALF_WIDTH = 0.15  # the Colossus beam is a 2.8 x 0.3 line (SMAC_SPEC §5.2, smaclite's beam)
NO_THREAT_RANK = 100.0  # added to the distance of an ally that cannot hit back: every threat ranks before it
