"""Seeding of Python, NumPy and PyTorch random number generators."""
from __future__ import annotations

import random

import numpy as np
import torch


def seed_everything(seed: int) -> np.random.Generator:
    """Seed `random`, NumPy's legacy global RNG and torch; return a fresh NumPy Generator."""
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)
    return np.random.default_rng(seed)


def rng_state(np_rng: np.random.Generator) -> dict:
    """JSON-serialisable RNG states (torch's state is returned separately as a tensor)."""
    return {"python": _to_json(random.getstate()), "numpy": np_rng.bit_generator.state}


def restore_rng_state(state: dict, np_rng: np.random.Generator, torch_state: torch.Tensor | None) -> None:
    """Inverse of `rng_state` (plus torch's CPU RNG state)."""
    random.setstate(_from_json(state["python"]))
    np_rng.bit_generator.state = state["numpy"]
    if torch_state is not None:
        torch.set_rng_state(torch_state)


def _to_json(value):
    if isinstance(value, tuple):
        return {"__tuple__": [_to_json(v) for v in value]}
    return value


def _from_json(value):
    if isinstance(value, dict) and "__tuple__" in value:
        return tuple(_from_json(v) for v in value["__tuple__"])
    return value
