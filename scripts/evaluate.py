#!/usr/bin/env python
"""Evaluate a trained policy and record it: python scripts/evaluate.py runs/smac_3m/mappo/<run> --gif battle.gif
(see --help). Multi-agent and single-agent runs alike: the checkpoint's algorithm picks the side
(`concerto evaluate` is the same command)."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main(argv: list[str] | None = None) -> int:
    from core.evaluation.cli import main as evaluate_main

    return evaluate_main(argv)


if __name__ == "__main__":
    from core.startup import prepare_process

    prepare_process()  # before the slow imports
    sys.exit(main())
