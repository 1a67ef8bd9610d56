#!/usr/bin/env python
"""Run a grid of training runs and report on it:
python scripts/experiment.py --algos mappo,qmix --envs smac_3m --seeds 5 --steps 500000."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.experiments.cli import main

if __name__ == "__main__":
    sys.exit(main())
