#!/usr/bin/env python
"""Run a grid of training runs and report on it:
python scripts/experiment.py --algos mappo,qmix --envs smac_3m --seeds 5 --steps 500000."""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.experiments.cli import main  # noqa: E402
from marl.algos import ALGOS as MARL_ALGOS  # noqa: E402
from single_agent.algos import ALGOS as SINGLE_ALGOS  # noqa: E402

SCRIPTS = {**{a: ROOT / "scripts" / "train_single.py" for a in SINGLE_ALGOS},
           **{a: ROOT / "scripts" / "train_marl.py" for a in MARL_ALGOS}}

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], SCRIPTS))
