"""StarCraft II unit stats for the built-in simulator, in normal-speed units (SMAC_SPEC.md §5.2).

Weapon cooldowns are listed in SC2 "faster" seconds and converted (x1.4) to normal seconds, so that one
agent step (8 game loops) is 0.5 normal-speed seconds, as in SMAC. Speeds are normal-speed values from the
SMAC map data.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

FASTER_TO_NORMAL = 1.4
LOOPS_PER_SECOND = 16.0  # normal-speed game loops per second


@dataclass(frozen=True)
class UnitType:
    name: str
    race: str  # "T", "P", "Z"
    hp: float
    shield: float = 0.0
    armor: float = 0.0
    damage: float = 0.0
    attacks: int = 1
    bonus_armored: float = 0.0
    bonus_light: float = 0.0
    range: float = 0.0
    cooldown_faster: float = 1.0  # seconds between attacks at "faster" speed
    speed: float = 2.25  # normal-speed distance per second
    sight: float = 9.0
    radius: float = 0.5
    armored: bool = False
    light: bool = False
    obs_max_cooldown: float = 15.0  # SMAC's unit_max_cooldown, for the state's cooldown feature
    heal_per_second: float = 0.0  # medivac
    splash: str = ""  # "line" (colossus beam) or "suicide" (baneling)
    splash_radius: float = 0.0  # the beam's half-length (a line across the attack, centred on the target), or
    # the explosion's radius
    steps_over_ground: bool = False  # walks over other ground units: collides only with units that do too
    walks_cliffs: bool = False  # walks up and down cliffs (Terrain.cliff_walkable)
    regen_per_second: float = 0.0  # zerg
    projectile_ticks: int = 0  # ticks between firing and the hit landing (ranged projectiles)
    damage_point: float = 0.167  # seconds from an attack's start to its shot; a new order before it cancels the
    # attack (SC2's default; envs/smac/SC2_FACTS.md)
    range_slop: float = 1.0  # an attack under way goes on until its target is this far beyond weapon range
    air: bool = False  # flies (SC2's Air plane): only weapons that hit air reach it
    hits_air: bool = False  # its weapon may target air units (the weapon's TargetFilters lack Ground)

    @property
    def cooldown(self) -> float:
        """Seconds (normal speed) between attacks."""
        return self.cooldown_faster * FASTER_TO_NORMAL


UNIT_TYPES: dict[str, UnitType] = {u.name: u for u in (
    # weapons' periods, damage points, range slop and whether they hit air: Liberty's, the only mod SMAC's maps
    # load, and the stalker, colossus and baneling damage too (envs/smac/SC2_FACTS.md)
    UnitType("marine", "T", hp=45, damage=6, range=5, cooldown_faster=0.8608 / FASTER_TO_NORMAL, damage_point=0.05,
             speed=2.25, sight=9, radius=0.375, light=True, obs_max_cooldown=15, hits_air=True),
    UnitType("marauder", "T", hp=125, armor=1, damage=10, bonus_armored=10, range=6, cooldown_faster=1.07,
             damage_point=0.0, speed=2.25, sight=10, radius=0.5625, armored=True, obs_max_cooldown=25,
             projectile_ticks=2),
    UnitType("medivac", "T", hp=150, armor=1, range=4, damage_point=0.0, speed=2.75, sight=11, radius=0.75,
             armored=True, obs_max_cooldown=200, heal_per_second=9.0, air=True),
    UnitType("stalker", "P", hp=80, shield=80, armor=1, damage=10, bonus_armored=4, range=6,
             cooldown_faster=1.44 / FASTER_TO_NORMAL, speed=2.9531, sight=10, radius=0.625, armored=True,
             obs_max_cooldown=35, projectile_ticks=3, hits_air=True),
    UnitType("zealot", "P", hp=100, shield=50, armor=1, damage=8, attacks=2, range=0.1, cooldown_faster=0.86,
             damage_point=0.0, speed=2.25, sight=9, radius=0.5, light=True, obs_max_cooldown=22),
    UnitType("colossus", "P", hp=200, shield=150, armor=1, damage=20, range=6, cooldown_faster=2.2 / FASTER_TO_NORMAL,
             damage_point=0.0832, range_slop=0.0, speed=2.25, sight=10, radius=1.0, armored=True,
             obs_max_cooldown=24, splash="line", splash_radius=1.4, steps_over_ground=True, walks_cliffs=True),
    UnitType("zergling", "Z", hp=35, damage=5, range=0.1, cooldown_faster=0.497, speed=2.9531, sight=8,
             radius=0.375, light=True, obs_max_cooldown=11, regen_per_second=0.38),
    UnitType("baneling", "Z", hp=30, damage=20, bonus_light=15, range=0.25, cooldown_faster=1.0, speed=2.5,
             damage_point=0.0, sight=8, radius=0.375, obs_max_cooldown=1, splash="suicide", splash_radius=2.2,
             regen_per_second=0.38),
    UnitType("hydralisk", "Z", hp=80, damage=12, range=5, cooldown_faster=0.59, damage_point=0.208, speed=2.25,
             sight=9, radius=0.625, light=True, obs_max_cooldown=10, regen_per_second=0.38, projectile_ticks=2,
             hits_air=True),
    # a structure that never moves (2s_vs_1sc's enemy): stock SC2 4.10 data from the map files; its weapon's
    # damage point and range slop are Liberty's ImpalerTentacle's
    UnitType("spine_crawler", "Z", hp=300, armor=2, damage=25, bonus_armored=5, range=7, cooldown_faster=1.32,
             damage_point=0.3332, range_slop=0.0, speed=0.0, sight=11, radius=0.875, armored=True,
             obs_max_cooldown=1, regen_per_second=0.38),
)}

MEDIVAC_MAX_ENERGY = 200.0
MEDIVAC_START_ENERGY = 50.0
MEDIVAC_HP_PER_ENERGY = 3.0
MEDIVAC_ENERGY_REGEN = 0.5625  # per normal second
SHIELD_REGEN_PER_SECOND = 2.0
SHIELD_REGEN_DELAY = 10.0  # seconds since the last hit


@dataclass(frozen=True)
class UnitTable:
    """Per-unit stat arrays for one battle roster (allies then enemies), ready for vectorised use."""

    hp: np.ndarray
    shield: np.ndarray
    armor: np.ndarray
    damage_vs_armored: np.ndarray  # per attack, bonus included
    damage_vs_light: np.ndarray
    damage_vs_other: np.ndarray
    attacks: np.ndarray
    range: np.ndarray
    cooldown_ticks: np.ndarray
    speed_per_tick: np.ndarray
    radius: np.ndarray
    armored: np.ndarray
    light: np.ndarray
    obs_max_cooldown: np.ndarray
    heal_per_tick: np.ndarray
    is_medivac: np.ndarray
    is_line_splash: np.ndarray
    is_suicide: np.ndarray
    splash_radius: np.ndarray
    regen_per_tick: np.ndarray
    projectile_ticks: np.ndarray
    damage_point_ticks: np.ndarray
    range_slop: np.ndarray
    steps_over_ground: np.ndarray
    walks_cliffs: np.ndarray
    air: np.ndarray
    hits_air: np.ndarray

    @classmethod
    def build(cls, names: list[str], dt: float) -> UnitTable:
        units = [UNIT_TYPES[n] for n in names]

        def arr(fn, dtype=np.float32):
            return np.array([fn(u) for u in units], dtype=dtype)

        return cls(
            hp=arr(lambda u: u.hp), shield=arr(lambda u: u.shield), armor=arr(lambda u: u.armor),
            damage_vs_armored=arr(lambda u: u.damage + u.bonus_armored),
            damage_vs_light=arr(lambda u: u.damage + u.bonus_light),
            damage_vs_other=arr(lambda u: u.damage), attacks=arr(lambda u: u.attacks),
            range=arr(lambda u: u.range), cooldown_ticks=arr(lambda u: u.cooldown / dt),
            speed_per_tick=arr(lambda u: u.speed * dt), radius=arr(lambda u: u.radius),
            armored=arr(lambda u: u.armored, bool), light=arr(lambda u: u.light, bool),
            obs_max_cooldown=arr(lambda u: u.obs_max_cooldown), heal_per_tick=arr(lambda u: u.heal_per_second * dt),
            is_medivac=arr(lambda u: u.heal_per_second > 0, bool),
            is_line_splash=arr(lambda u: u.splash == "line", bool),
            is_suicide=arr(lambda u: u.splash == "suicide", bool), splash_radius=arr(lambda u: u.splash_radius),
            regen_per_tick=arr(lambda u: u.regen_per_second * dt),
            projectile_ticks=arr(lambda u: u.projectile_ticks, np.int64),
            damage_point_ticks=arr(lambda u: u.damage_point / dt), range_slop=arr(lambda u: u.range_slop),
            steps_over_ground=arr(lambda u: u.steps_over_ground, bool),
            walks_cliffs=arr(lambda u: u.walks_cliffs, bool), air=arr(lambda u: u.air, bool),
            hits_air=arr(lambda u: u.hits_air, bool),
        )
