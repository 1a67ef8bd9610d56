"""Every ```python and ```bash block of the documentation site runs, on small budgets, so the docs cannot rot.

A block preceded by a `<!-- no-test -->` line is skipped: only where it cannot run here (an install into a new
virtualenv, another project's checkout, a run directory named by placeholder). docs/benchmarks/ holds records of
past grids (their commands name experiment directories that are not committed) and is not run.
"""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
BLOCK = re.compile(r"(?:(<!-- no-test -->)\n)?```(python|bash)\n(.*?)```", re.S)
SMALL = [  # budgets cut to a smoke run: (pattern, replacement)
    (r"--steps \d+", "--steps 400"), (r"--seeds \d+", "--seeds 1"), (r"--trials \d+", "--trials 1"),
    (r"steps=[\d_]+", "steps=400"), (r"seeds=\[[\d, ]+\]", "seeds=[0]"), (r"--episodes \d+", "--episodes 2"),
]
SMALL_TRAIN = ["train.eval_interval=200", "train.eval_episodes=2", "train.n_envs=2"]


def blocks() -> list[tuple[str, str, str]]:
    """(id, language, code) of every runnable block."""
    found = []
    for page in sorted(DOCS.rglob("*.md")):
        if "benchmarks" in page.relative_to(DOCS).parts:
            continue
        for i, match in enumerate(BLOCK.finditer(page.read_text())):
            if not match.group(1):
                found.append((f"{page.relative_to(DOCS)}#{i}", match.group(2), match.group(3)))
    return found


def small(code: str) -> str:
    for pattern, replacement in SMALL:
        code = re.sub(pattern, replacement, code)
    return code


def commands(code: str) -> list[list[str]]:
    """The shell lines of a block (continuations joined, comments dropped), as argv lists with small budgets."""
    out = []
    for line in code.replace("\\\n", " ").splitlines():
        argv = shlex.split(small(line), comments=True)
        if not argv:
            continue
        if argv[0] in ("python", ".venv/bin/python"):
            argv[0] = sys.executable
            script = argv[1]
            argv[1] = str(ROOT / script) if script.startswith("scripts/") else script
            if script.endswith(("train_marl.py", "train_single.py")):
                argv += ["--no-progress"] + ["--steps", "400"] * ("--steps" not in argv) + SMALL_TRAIN
            elif script.endswith(("experiment.py", "tune.py")):
                argv += ["--steps", "400"] * ("--steps" not in argv) + SMALL_TRAIN
        elif argv[0].startswith(".venv/bin/"):
            argv[0] = str(Path(sys.executable).parent / Path(argv[0]).name)
        out.append(argv)
    return out


def env() -> dict[str, str]:
    """This checkout on the path; W&B offline (runs with train.loggers=[...,wandb] stay on disk)."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
            "WANDB_MODE": "offline"}


@pytest.mark.slow
@pytest.mark.parametrize(("name", "lang", "code"), blocks(), ids=[b[0] for b in blocks()])
def test_doc_example_runs(name, lang, code, tmp_path):
    if lang == "python":
        script = tmp_path / "example.py"
        script.write_text(small(code))
        runs = [[sys.executable, str(script)]]
    else:
        runs = commands(code)
    for argv in runs:
        if Path(argv[0]).name == "tensorboard":  # a server: check it starts, not that it serves forever
            argv = [*argv, "--help"]
        done = subprocess.run(argv, cwd=tmp_path, env=env(), capture_output=True, text=True, timeout=170)
        assert done.returncode == 0, f"{name}: {shlex.join(argv)}\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"


def test_every_page_has_examples_and_skips_are_few():
    assert len(blocks()) >= 10
    skipped = sum(text.count("<!-- no-test -->") for text in (p.read_text() for p in DOCS.rglob("*.md")))
    assert skipped <= 6, "a skipped example is an example nobody checks: make it run on a small budget instead"
