#!/usr/bin/env python
"""Train a multi-agent algorithm: python scripts/train_marl.py --algo mappo --env mpe_simple_spread."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.startup import prepare_process

prepare_process()  # before the slow imports

from marl.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
