"""Built-in names for the mpe2 multi-particle envs (optional extra `mpe`): mpe_<scenario>."""
from __future__ import annotations

import functools
import importlib
import inspect
from typing import Any

from core.errors import MissingDependencyError, UserError
from core.paths import install_hint
from envs.registry import register

# scenario -> mpe2 module
SCENARIOS = {
    "simple": "simple_v3",
    "simple_adversary": "simple_adversary_v3",
    "simple_crypto": "simple_crypto_v3",
    "simple_push": "simple_push_v3",
    "simple_reference": "simple_reference_v3",
    "simple_speaker_listener": "simple_speaker_listener_v4",
    "simple_spread": "simple_spread_v3",
    "simple_tag": "simple_tag_v3",
    "simple_world_comm": "simple_world_comm_v3",
}


def make_mpe(scenario: str, **kwargs: Any):
    """Build mpe2's `<scenario>` parallel env; a missing mpe2 raises MissingDependencyError."""
    try:
        module = importlib.import_module(f"mpe2.{SCENARIOS[scenario]}")
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.split(".")[0] == "mpe2":
            raise MissingDependencyError(
                f"env mpe_{scenario} needs the mpe2 package: {install_hint('mpe')} (or pip install mpe2)"
            ) from None
        raise
    params = inspect.signature(getattr(module, "raw_env", module.parallel_env)).parameters
    if not any(p.kind is p.VAR_KEYWORD for p in params.values()):
        unknown = sorted(set(kwargs) - set(params))
        if unknown:
            raise UserError(f"env mpe_{scenario} does not accept {', '.join(unknown)}; "
                            f"valid options: {', '.join(params)}")
    return module.parallel_env(**kwargs)


for _scenario in SCENARIOS:
    register(f"mpe_{_scenario}", functools.partial(make_mpe, _scenario))
