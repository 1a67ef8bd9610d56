"""`python -m core.launch MODULE [ARG ...]`: run MODULE's `main(ARGS)` as a training process.

How the experiment layer starts a cell: MODULE is a training entry point registered in the `concerto.trainers`
group (core.experiments.trainers), and a signal arriving while torch and the envs are still being imported exits
with one line and status 130/143, as the scripts/ entry points do.
"""
from __future__ import annotations

import sys

from core.startup import prepare_process


def main(argv: list[str]) -> int:
    prepare_process()  # before the slow imports
    if not argv:
        print("usage: python -m core.launch MODULE [ARG ...]", file=sys.stderr)
        return 2
    from importlib import import_module

    return int(import_module(argv[0]).main(argv[1:]))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
