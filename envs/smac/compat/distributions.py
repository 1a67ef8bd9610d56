"""smacv2's episode distributions (`smacv2.env.starcraft2.distributions`), written for the simulator.

smacv2's StarCraftCapabilityEnvWrapper builds one distribution per key of its capability config (team_gen,
start_positions, ...), draws from each at every reset and passes the merged draws to
`StarCraft2Env.reset(episode_config)`. The same keys and classes exist here, drawing as smacv2 defines them
(SMAC_SPEC.md §1.4), for client code that draws its own episode configs. Each distribution draws from its own
numpy generator (`seed`; smacv2's are unseeded).

The simulator plays the teams (`team_gen`) and start positions these draw; `attack`, `health` and `enemy_mask`
draws can be made but are refused by `reset` (not simulated).
"""
from __future__ import annotations

import itertools
import math
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any

import numpy as np

from core.errors import UnknownNameError

Seed = int | list[int] | None
Draw = dict[str, dict[str, Any]]  # {env key: {"item": ..., "id": ...} or team_gen's {"ally_team", "enemy_team", "id"}}
OFFSET = 2.0  # surrounded: each enemy group's inner end lies this far from the centre along both axes
CORNER_SIGNS = np.array([[-1, -1], [-1, 1], [1, 1], [1, -1]], float)  # the four diagonals, smacv2's order


class Distribution(ABC):
    """One of smacv2's distributions: `generate()` draws one episode's entry of the episode config."""

    def __init__(self, config: Mapping[str, Any], seed: Seed = None) -> None:
        self.config = config
        self.rng = np.random.default_rng(seed)

    @abstractmethod
    def generate(self) -> Draw:
        """One draw, as smacv2's: {env key: {...}}."""

    @property
    def n_tasks(self) -> float:
        """How many distinct draws there are (inf for continuous or unbounded ones)."""
        return math.inf


DISTRIBUTION_MAP: dict[str, type[Distribution]] = {}


def register_distribution(key: str, cls: type[Distribution]) -> None:
    DISTRIBUTION_MAP[key] = cls


def get_distribution(key: str) -> type[Distribution]:
    if key not in DISTRIBUTION_MAP:
        raise UnknownNameError(f"unknown distribution {key!r}; known: {', '.join(sorted(DISTRIBUTION_MAP))}")
    return DISTRIBUTION_MAP[key]


class FixedDistribution(Distribution):
    """One of `items`: in order with test_mode, else uniformly at random; the item's members are shuffled."""

    def __init__(self, config: Mapping[str, Any], seed: Seed = None) -> None:
        super().__init__(config, seed)
        self.env_key, self.test_mode, self.items = config["env_key"], config["test_mode"], config["items"]
        self.index = 0

    def generate(self) -> Draw:
        if self.test_mode:
            index, self.index = self.index, (self.index + 1) % len(self.items)
        else:
            index = int(self.rng.integers(len(self.items)))
        item = list(self.items[index])
        self.rng.shuffle(item)
        return {self.env_key: {"item": item, "id": index}}

    @property
    def n_tasks(self) -> float:
        return len(self.items)


class AllTeamsDistribution(Distribution):
    """A uniformly drawn multiset of n_units unit types (not all exception types), shuffled; the enemy team is
    the same team."""

    def __init__(self, config: Mapping[str, Any], seed: Seed = None) -> None:
        super().__init__(config, seed)
        self.env_key = config["env_key"]
        self.exceptions = set(config.get("exception_unit_types", ()))
        self.teams = list(itertools.combinations_with_replacement(config["unit_types"], config["n_units"]))

    def generate(self) -> Draw:
        while True:
            index = int(self.rng.integers(len(self.teams)))
            if not set(self.teams[index]) <= self.exceptions:
                break
        team = list(self.teams[index])
        self.rng.shuffle(team)
        return {self.env_key: {"ally_team": team, "enemy_team": list(team), "id": index}}

    @property
    def n_tasks(self) -> float:
        return len(self.teams)


class WeightedTeamsDistribution(Distribution):
    """Each ally's type drawn with `weights` (redrawn while the team is all exception types); the enemy team is
    the ally team, cut to n_enemies or extended by a team drawn the same way."""

    def __init__(self, config: Mapping[str, Any], seed: Seed = None) -> None:
        super().__init__(config, seed)
        self.env_key, self.n_units, self.n_enemies = config["env_key"], config["n_units"], config["n_enemies"]
        self.units, self.weights = list(config["unit_types"]), np.asarray(config["weights"], float)
        self.exceptions = set(config.get("exception_unit_types", ()))

    def _team(self, size: int) -> list[str]:
        while True:
            team = [self.units[i] for i in self.rng.choice(len(self.units), size, p=self.weights)]
            if not set(team) <= self.exceptions:
                return team

    def generate(self) -> Draw:
        team = self._team(self.n_units)
        extra = self._team(self.n_enemies - self.n_units) if self.n_enemies > self.n_units else []
        return {self.env_key: {"ally_team": team, "enemy_team": (team + extra)[: self.n_enemies], "id": 0}}


class PerAgentUniformDistribution(Distribution):
    """A value per agent, uniform in [lower_bound, upper_bound) (each a vector): item [n_units, len(bound)]."""

    def __init__(self, config: Mapping[str, Any], seed: Seed = None) -> None:
        super().__init__(config, seed)
        self.env_key, self.n_units = config["env_key"], config["n_units"]
        self.low, self.high = np.asarray(config["lower_bound"], float), np.asarray(config["upper_bound"], float)

    def generate(self) -> Draw:
        item = self.rng.uniform(self.low, self.high, (self.n_units, len(self.low)))
        return {self.env_key: {"item": item, "id": 0}}


class MaskDistribution(Distribution):
    """enemy_mask: item [n_units, n_enemies], 0 with mask_probability (that enemy hidden from that agent)."""

    def generate(self) -> Draw:
        shape = (self.config["n_units"], self.config["n_enemies"])
        mask = (self.rng.random(shape) >= self.config["mask_probability"]).astype(np.int64)
        return {"enemy_mask": {"item": mask, "id": 0}}


class ReflectPositionDistribution(Distribution):
    """Allies uniform in the left half (x below map_x / 2 - 1); each enemy mirrors the ally with its index in
    x = map_x / 2, and enemies beyond n_units are uniform in the right half."""

    def generate(self) -> Draw:
        a, e, mx, my = (self.config[k] for k in ("n_units", "n_enemies", "map_x", "map_y"))
        allies = self.rng.uniform((0.0, 0.0), (mx / 2 - 1, my), (a, 2))
        mirrored = np.stack([mx - allies[:, 0], allies[:, 1]], axis=1)
        extra = self.rng.uniform((mx / 2, 0.0), (mx, my), (max(e - a, 0), 2))
        return _positions(allies, np.concatenate([mirrored, extra])[:e])


class SurroundedPositionDistribution(Distribution):
    """Allies at the centre; the enemies in 1-4 groups (sizes multinomial, consecutive enemies), each group at a
    uniform point on its own diagonal between a map corner and the centre offset by 2 toward it."""

    def generate(self) -> Draw:
        a, e, mx, my = (self.config[k] for k in ("n_units", "n_enemies", "map_x", "map_y"))
        centre = np.array([mx / 2, my / 2])
        n_groups = int(self.rng.integers(1, 5))
        sizes = self.rng.multinomial(e, np.full(n_groups, 1 / n_groups))
        t = self.rng.uniform(size=n_groups)[:, None]
        diagonals = CORNER_SIGNS[self.rng.choice(4, n_groups, replace=False)]
        inner, corner = centre + OFFSET * diagonals, centre + centre * diagonals
        groups = t * inner + (1 - t) * corner
        return _positions(np.tile(centre, (a, 1)), np.repeat(groups, sizes, axis=0))


class SurroundedAndReflectPositionDistribution(Distribution):
    """surrounded with probability 1 - p, else reflect_position."""

    def __init__(self, config: Mapping[str, Any], seed: Seed = None) -> None:
        super().__init__(config, seed)
        self.surrounded = SurroundedPositionDistribution(config, int(self.rng.integers(2**63)))
        self.reflect = ReflectPositionDistribution(config, int(self.rng.integers(2**63)))

    def generate(self) -> Draw:
        return (self.surrounded if self.rng.random() > self.config["p"] else self.reflect).generate()


def _positions(allies: np.ndarray, enemies: np.ndarray) -> Draw:
    return {"ally_start_positions": {"item": allies, "id": 0}, "enemy_start_positions": {"item": enemies, "id": 0}}


for _key, _cls in (("fixed", FixedDistribution), ("all_teams", AllTeamsDistribution),
                   ("weighted_teams", WeightedTeamsDistribution), ("per_agent_uniform", PerAgentUniformDistribution),
                   ("mask", MaskDistribution), ("reflect_position", ReflectPositionDistribution),
                   ("surrounded", SurroundedPositionDistribution),
                   ("surrounded_and_reflect", SurroundedAndReflectPositionDistribution)):
    register_distribution(_key, _cls)
