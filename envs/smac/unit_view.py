"""Read-only stand-ins for the SC2 protobuf objects that smac's `StarCraft2Env` hands out.

smac's `agents`/`enemies`/`get_unit_by_id` return raw SC2 units and `get_agent_action` returns raw SC2
commands; the drop-in returns these small typed snapshots instead, with the attributes client code reads.
"""
from __future__ import annotations

import enum
from typing import Literal, NamedTuple

# SC2's default unit-type ids (pysc2 `units.py`): the enemies' types
SC2_UNIT_TYPE_IDS = {"colossus": 4, "baneling": 9, "marine": 48, "marauder": 51, "medivac": 54, "zealot": 73,
                     "stalker": 74, "spine_crawler": 98, "zergling": 105,
                     "hydralisk": 107}
# The agents are the maps' custom *_RL unit types, which SC2 numbers after its own types in the alphabetical order
# of their names: a SMAC map's ally types are consecutive ids from the smallest (smac's `_min_unit_type`), and
# smacv2's 10gen maps define all nine below. The real ids depend on the SC2 build (smac and smacv2 only use
# differences from the smallest); here they start at RL_UNIT_TYPE_BASE.
RL_UNIT_NAMES = ("baneling", "colossus", "hydralisk", "marauder", "marine", "medivac", "stalker", "zealot",
                 "zergling")
RL_UNIT_TYPE_BASE = 1970


class Direction(enum.IntEnum):
    """smac's move directions, in the order of actions 2-5."""

    NORTH = 0
    SOUTH = 1
    EAST = 2
    WEST = 3


class Point(NamedTuple):
    x: float
    y: float


class UnitView(NamedTuple):
    """One unit at the current step, as the SC2 raw unit smac exposes (a copy: later steps do not change it).

    `tag` is the unit's slot (agents 0..n_agents-1, then enemies), stable for an episode; `unit_type` is the
    agents' RL id or the enemies' SC2 id (see RL_UNIT_NAMES); a dead unit keeps its last position and
    reads health 0, as in smac."""

    tag: int
    unit_type: int
    name: str  # "marine", "stalker", ...
    owner: int  # 1: agents, 2: enemies (SC2's player ids)
    pos: Point
    health: float
    health_max: float
    shield: float
    shield_max: float
    energy: float
    weapon_cooldown: float  # game loops until the weapon is ready (0 when ready)
    radius: float


class AgentCommand(NamedTuple):
    """The order an action gives (smac returns it as an SC2 raw command): moves carry a target point,
    attacks and heals a target unit's tag."""

    ability: Literal["stop", "move", "attack", "heal"]
    unit_tag: int
    target_pos: Point | None = None
    target_tag: int | None = None
