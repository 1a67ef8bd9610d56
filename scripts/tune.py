#!/usr/bin/env python
"""Tune an algorithm's hyperparameters with Optuna:
python scripts/tune.py --algo qmix --env smac_3m --trials 30 --steps 200000 --seeds 3 (see --help;
`concerto tune` is the same command)."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main(argv: list[str] | None = None) -> int:
    from core.tuning.cli import main as tune_main

    return tune_main(argv)


if __name__ == "__main__":
    from core.startup import prepare_process

    prepare_process()  # before the slow imports
    sys.exit(main())
