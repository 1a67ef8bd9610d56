#!/usr/bin/env python
"""Evaluate a trained policy and record it: python scripts/evaluate.py runs/smac_3m/mappo/<run> --gif battle.gif
(see --help). Multi-agent and single-agent runs alike: the checkpoint's algorithm picks the side."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

if TYPE_CHECKING:
    from core.evaluation.play import Side


def side_of(algo: str) -> Side[Any]:
    """The side (multi-agent or single-agent) that trains `algo`."""
    from core.errors import UnknownNameError
    from marl.algos import ALGOS as MARL_ALGOS
    from marl.saved_policy import MarlSide
    from single_agent.algos import ALGOS as SINGLE_ALGOS
    from single_agent.saved_policy import SingleAgentSide

    if algo in MARL_ALGOS:
        return MarlSide()
    if algo in SINGLE_ALGOS:
        return SingleAgentSide()
    raise UnknownNameError(f"the checkpoint is for algorithm {algo!r}, which this version does not know; known: "
                           f"{', '.join(sorted({*MARL_ALGOS, *SINGLE_ALGOS}))}")


def main(argv: list[str] | None = None) -> int:
    from core.evaluation.cli import main as evaluate_main

    return evaluate_main(argv, side_of)


if __name__ == "__main__":
    from core.signals import exit_on_signal_at_startup

    exit_on_signal_at_startup()  # before the slow imports
    sys.exit(main())
