"""A trained run as evaluation needs it: its checkpoint's algorithm, env, config, clock and agent state."""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from core.added_keys import saved_env_options, saved_section
from core.checkpoint import STATE_MISMATCH, load_checkpoint, state_mismatch
from core.config import check_keys, from_dict, merge, parse_overrides
from core.errors import ConfigError, UserError
from core.run_config import TrainConfig
from core.run_dir import latest_checkpoint
from core.run_state import Clock, RunState
from core.trainer import EVAL_SEED_OFFSET, Stateful

T = TypeVar("T")


@dataclass(frozen=True)
class SavedRun:
    """What a checkpoint holds for evaluation; `train` is the run's validated train section."""

    checkpoint: Path
    algo: str
    env: str
    train: TrainConfig
    algo_section: dict[str, Any]
    env_options: dict[str, Any]
    clock: Clock
    agent_state: dict[str, Any]

    @property
    def eval_seed(self) -> int:
        """The seed of the run's own evaluations (evaluating with it repeats them)."""
        return self.train.seed + EVAL_SEED_OFFSET

    def algo_config(self, config_class: type[T]) -> T:
        """The run's algorithm config, validated as `config_class`."""
        try:
            return from_dict(config_class, saved_section(config_class, self.algo_section), "algo")
        except ConfigError as exc:
            raise UserError(f"checkpoint {self.checkpoint} has a config this version cannot read: {exc}") from None

    def run_state(self, seed: int) -> RunState:
        """A run state at the checkpoint's clock (schedules such as epsilon where training left them) whose random
        streams derive from `seed`."""
        run = RunState(seed)
        run.clock = dataclasses.replace(self.clock)
        run.seed_globals()
        return run

    def restore(self, agent: Stateful) -> None:
        """Load the trained weights into `agent` (UserError if they do not fit it)."""
        try:
            agent.load_state_dict(self.agent_state)
        except STATE_MISMATCH as exc:
            raise state_mismatch(self.checkpoint, exc) from None


def load_saved_run(path: str | Path) -> SavedRun:
    """The newest checkpoint of a run directory, or the checkpoint directory `path`; UserError if there is none,
    or it is damaged or incomplete."""
    path = Path(path)
    if not path.exists():
        raise UserError(f"no run directory or checkpoint at {path}")
    checkpoint = latest_checkpoint(path)
    state, meta = load_checkpoint(checkpoint)
    config = meta.get("config")
    algo, env = meta.get("algo"), meta.get("env")
    if not (isinstance(algo, str) and isinstance(env, str) and isinstance(config, Mapping)
            and all(isinstance(config.get(k), Mapping) for k in ("train", "algo", "env"))):
        raise UserError(f"checkpoint {checkpoint} is damaged: its metadata lacks the algorithm, env or config")
    if not isinstance(state.get("agent"), Mapping):
        raise UserError(f"checkpoint {checkpoint} is damaged: it holds no agent state")
    try:
        train = from_dict(TrainConfig, config["train"], "train")
        clock = Clock(**meta.get("clock", {}))
    except (ConfigError, TypeError) as exc:
        raise UserError(f"checkpoint {checkpoint} has a config this version cannot read: {exc}") from None
    return SavedRun(checkpoint, algo, env, train, dict(config["algo"]), saved_env_options(env, config["env"]), clock,
                    dict(state["agent"]))


def env_options(saved: SavedRun, overrides: list[str]) -> dict[str, Any]:
    """The run's env options with `env.KEY=VALUE` overrides on top (the only overrides evaluation takes)."""
    parsed = parse_overrides(overrides)
    other = sorted(set(parsed) - {"env"})
    if other or not isinstance(parsed.get("env", {}), dict):
        key = other[0] if other else "env"
        raise UserError(f"unknown override key {key!r}: evaluation takes env options only, as env.KEY=VALUE")
    options = merge(saved.env_options, parsed.get("env", {}))
    check_keys(options, "env")
    return options
