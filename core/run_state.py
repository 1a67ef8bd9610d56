"""The one owner of a run's time and randomness: the clock and every random stream, saved with checkpoints.

The training loop advances the clock (runners report the steps they took and never write counters);
agents and runners read it for schedules (epsilon, learning-rate annealing) and phases (train_freq). Every
random stream derives from the run seed: Python's `random`, NumPy's legacy global RNG, torch's global RNG
(CPU and CUDA), and named NumPy Generators for exploration and replay sampling. `state_dict()` holds all of
it, so a resumed run continues bit for bit. The global generators hold the run's states only inside `active()`,
so that a run leaves its caller's streams as they were.
"""
from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterator, Sized
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import torch

STREAMS = ("explore", "sample")  # named NumPy streams: exploration noise/epsilon draws, replay/warm-up sampling


@dataclass
class Clock:
    """Training progress, counted by the training loop only."""

    env_steps: int = 0      # steps of one env copy
    vector_steps: int = 0   # steps of the whole vector env
    iterations: int = 0     # collect-and-train iterations
    episodes: int = 0       # training episodes finished
    total_steps: int = 0    # the env-step budget
    horizon: int = 0        # env steps over which budget-relative schedules run (their 100%); 0: the budget

    def advance(self, n_env_steps: int, finished: Sized | None = None) -> None:
        """Count one vector step of `n_env_steps` env steps in which the `finished` training episodes ended (a
        runner's `OnStep`, so code driving a runner outside the trainer can pass this method)."""
        self.env_steps += n_env_steps
        self.vector_steps += 1
        self.episodes += len(finished) if finished is not None else 0

    @property
    def progress(self) -> float:
        """Fraction of the schedules' horizon done, in [0, 1] (0 when there is neither horizon nor budget)."""
        span = self.horizon or self.total_steps
        return min(self.env_steps / span, 1.0) if span > 0 else 0.0


class GlobalStates(NamedTuple):
    """The states of the process-wide generators: Python's `random`, NumPy's legacy RNG, torch's CPU generator
    and its CUDA ones (None while CUDA is not initialised: they are then seeded from the CPU one's seed)."""

    python: tuple[Any, ...]
    numpy: dict[str, Any]
    torch: torch.Tensor
    cuda: list[torch.Tensor] | None

    @classmethod
    def capture(cls) -> GlobalStates:
        cuda = torch.cuda.get_rng_state_all() if torch.cuda.is_available() and torch.cuda.is_initialized() else None
        return cls(random.getstate(), np.random.get_state(legacy=False), torch.get_rng_state(), cuda)

    def apply(self) -> None:
        """Make these the global generators' states (CUDA ones saved on a machine without CUDA are dropped)."""
        random.setstate(self.python)
        np.random.set_state(self.numpy)
        torch.set_rng_state(self.torch)
        if self.cuda is not None and torch.cuda.is_available():
            torch.cuda.set_rng_state_all(self.cuda)
        elif self.cuda is None:  # as torch.manual_seed leaves them (applied lazily when CUDA starts)
            torch.cuda.manual_seed_all(torch.initial_seed())

    def state_dict(self) -> dict[str, Any]:
        state = {"python": self.python, "numpy_legacy": self.numpy, "torch": self.torch}
        if self.cuda is not None:
            state["torch_cuda"] = {str(i): s for i, s in enumerate(self.cuda)}
        return state

    @classmethod
    def from_state_dict(cls, state: dict[str, Any]) -> GlobalStates:
        cuda = state.get("torch_cuda")
        return cls(state["python"], state["numpy_legacy"], state["torch"],
                   None if cuda is None else [cuda[str(i)] for i in range(len(cuda))])


class RunState:
    """Clock and random streams of one run (see module docstring)."""

    def __init__(self, seed: int = 0, total_steps: int = 0) -> None:
        self.seed = seed
        self.clock = Clock(total_steps=total_steps)
        self.rngs = {name: np.random.default_rng([seed, i]) for i, name in enumerate(STREAMS)}
        self._globals: GlobalStates | None = None  # the run's global states while swapped out (None: unseeded)
        self._caller: GlobalStates | None = None  # the caller's while the run's are in

    def rng(self, stream: str) -> np.random.Generator:
        return self.rngs[stream]

    def seed_globals(self) -> None:
        """Seed Python's, NumPy's legacy and torch's global generators from the run seed."""
        random.seed(self.seed)
        np.random.seed(self.seed)
        torch.manual_seed(self.seed)

    @contextmanager
    def active(self) -> Iterator[None]:
        """The global generators hold the run's states inside (seeded from the run seed on the first entry) and
        the caller's again after, so that a run neither changes nor depends on them. Nested entries do nothing."""
        if self._caller is not None:
            yield
            return
        self._caller = caller = GlobalStates.capture()
        if self._globals is None:
            self.seed_globals()
        else:
            self._globals.apply()
        try:
            yield
        finally:
            self._globals = GlobalStates.capture()
            caller.apply()
            self._caller = None

    def state_dict(self) -> dict[str, Any]:
        """Clock and every stream's state (JSON values, arrays and tensors; see core.checkpoint)."""
        assert self._caller is not None, "the global generators hold the run's states only inside active()"
        return {"clock": dataclasses.asdict(self.clock),
                "streams": {name: rng.bit_generator.state for name, rng in self.rngs.items()},
                **GlobalStates.capture().state_dict()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        assert self._caller is not None, "the global generators hold the run's states only inside active()"
        total = self.clock.total_steps  # the budget is the resumed run's own, not the checkpoint's
        self.clock = Clock(**{**state["clock"], "total_steps": total})
        for name, rng in self.rngs.items():
            rng.bit_generator.state = state["streams"][name]
        GlobalStates.from_state_dict(state).apply()

