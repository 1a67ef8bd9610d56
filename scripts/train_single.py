#!/usr/bin/env python
"""Train a single-agent algorithm: python scripts/train_single.py --algo dqn --env CartPole-v1."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.startup import prepare_process

prepare_process()  # before the slow imports

from single_agent.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
