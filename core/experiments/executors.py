"""Where and how an experiment's cells run: as training processes, a few at a time, resumably (run_grid, executors).

Each cell is `python -m core.launch <trainer module> ...` (core.experiments.trainers) in its own directory
(core.experiments.grid), so a cell is an ordinary run: TensorBoard, --resume and evaluation work on it as on any
other. A rerun of the same grid skips finished cells and resumes interrupted ones from their last checkpoint; a
failed cell is recorded with its error and the others go on. SIGINT/SIGTERM, or `max_hours` running out, stop
every running cell at its next iteration boundary with a checkpoint (training's own signal handling) and start
no more.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager, redirect_stderr, redirect_stdout, suppress
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from types import FrameType
from typing import Protocol

from tqdm import tqdm

from core.experiments.grid import Cell, ExperimentSpec, cell_state, read_summary, run_dir
from core.experiments.trainers import launched

CellCommand = Callable[[Cell, Path, Path | None], list[str]]
"""(cell, its directory, the run directory to resume or None) -> the command that trains it."""


class CellProcess(Protocol):
    """A started cell, wherever it runs."""

    def poll(self) -> int | None:
        """Its exit status once it has ended, else None."""
        ...

    def stop(self) -> None:
        """Ask it to stop at its next consistent point with a checkpoint (SIGTERM to the training process)."""
        ...


class Executor(Protocol):
    """Where cells run: this machine's processes (LocalExecutor) or a Ray cluster (core.experiments.ray_cluster)."""

    def start(self, argv: list[str], log: Path) -> CellProcess:
        """Start `argv`, its output appended to `log`."""
        ...

    def close(self) -> None:
        """Release what it holds once the grid has ended."""
        ...


class LocalProcess:
    def __init__(self, argv: list[str], log: Path) -> None:
        with log.open("ab") as out:
            # a session of its own: a Ctrl-C at the terminal reaches the grid, which stops the cells itself
            self.process = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)

    def poll(self) -> int | None:
        return self.process.poll()

    def stop(self) -> None:
        if self.process.poll() is None:
            with suppress(ProcessLookupError):
                self.process.send_signal(signal.SIGTERM)


class LocalExecutor:
    """Cells as child processes of this one."""

    def start(self, argv: list[str], log: Path) -> CellProcess:
        return LocalProcess(argv, log)

    def close(self) -> None:
        pass


class FinishedProcess:
    def __init__(self, code: int) -> None:
        self.code = code

    def poll(self) -> int | None:
        return self.code

    def stop(self) -> None:
        pass


class InProcessExecutor:
    """Cells one at a time inside this process, each as its training module's main(args) with its output in
    the cell's log: no Python, torch and env imports per cell, which are most of a short run's time (tuning
    trials). A cell stopped by a signal (checkpointed, as any run) passes the signal on to the grid, which then
    starts no more; an unexpected exception fails the cell with its traceback in the log."""

    def start(self, argv: list[str], log: Path) -> CellProcess:
        module, args = launched(argv)
        with log.open("a") as out, redirect_stdout(out), redirect_stderr(out):
            try:
                code = int(import_module(module).main(args))
            except Exception:
                traceback.print_exc()
                print(f"error: the cell raised {traceback.format_exc().splitlines()[-1]}")
                code = 1
        if code in (128 + signal.SIGINT, 128 + signal.SIGTERM):
            signal.raise_signal(code - 128)
        return FinishedProcess(code)

    def close(self) -> None:
        pass

POLL_S = 0.5
# a run stopped by SIGINT / SIGTERM, checkpointed: it exits 130 / 143, or dies by the signal it re-raises
EXIT_SIGNALLED = (130, 143, -signal.SIGINT, -signal.SIGTERM)


@dataclass
class GridResult:
    """How the cells ended: finished (now or before), failed (with their errors), interrupted (resumable)."""

    done: list[Cell]
    failed: dict[Cell, str]
    interrupted: list[Cell]
    stopped: str | None  # why the grid stopped early: "signal", "max-hours", or None


@dataclass
class _Running:
    cell: Cell
    process: CellProcess
    started: float


def run_grid(spec: ExperimentSpec, out: Path, command: CellCommand, workers: int, max_hours: float | None = None,
             progress: bool = True, executor: Executor | None = None) -> GridResult:
    """Train every unfinished cell of `spec` under `out`, at most `workers` at a time, on `executor` (default:
    processes on this machine)."""
    executor = executor or LocalExecutor()
    out.mkdir(parents=True, exist_ok=True)
    cells = spec.cells()
    done = [c for c in cells if cell_state(c.directory(out)) == "done"]
    pending = [c for c in cells if c not in done]
    failed: dict[Cell, str] = {}
    running: list[_Running] = []
    deadline = None if max_hours is None else time.monotonic() + max_hours * 3600
    stopped: str | None = None
    bar = tqdm(total=len(cells), initial=len(done), unit="cell", disable=not progress, dynamic_ncols=True)
    with _stop_requests() as requested:
        while pending or running:
            if stopped is None:
                if requested():
                    stopped = "signal"
                elif deadline is not None and time.monotonic() >= deadline:
                    stopped = "max-hours"
                if stopped is not None:  # once: a cell asked again while it checkpoints stops without one
                    for r in running:
                        r.process.stop()
                    pending = []
            while pending and len(running) < workers:
                cell = pending.pop(0)
                running.append(_start(cell, out, command, executor))
            time.sleep(POLL_S)
            for r in [r for r in running if r.process.poll() is not None]:
                running.remove(r)
                outcome = _finish(r, out)
                if outcome is None:
                    done.append(r.cell)
                    bar.update(1)
                elif outcome != "interrupted":
                    failed[r.cell] = outcome
                    bar.update(1)
            if progress:  # reads each running cell's latest evaluation: only for a bar that shows it
                bar.set_postfix_str(_status(done, failed, running, out), refresh=True)
    bar.close()
    interrupted = [c for c in cells if c not in done and c not in failed]
    return GridResult(done, failed, interrupted, stopped)


def _start(cell: Cell, out: Path, command: CellCommand, executor: Executor) -> _Running:
    directory = cell.directory(out)
    directory.mkdir(parents=True, exist_ok=True)
    resume = run_dir(directory) if cell_state(directory) in ("interrupted", "failed") else None
    if resume is not None and not (resume / "checkpoints").is_dir():
        resume = None
    _write_status(directory, "running")
    argv = command(cell, directory, resume)
    with (directory / "log.txt").open("a") as log:
        log.write(f"$ {' '.join(argv)}\n")
    started = time.monotonic()  # before start: an in-process cell has finished when it returns
    return _Running(cell, executor.start(argv, directory / "log.txt"), started)


def _finish(r: _Running, out: Path) -> str | None:
    """Record how a cell's process ended: None (finished), "interrupted" (signalled, resumable) or its error."""
    directory = r.cell.directory(out)
    code = r.process.poll()
    if code == 0 and read_summary(directory) is not None:
        _write_status(directory, "done", seconds=time.monotonic() - r.started)
        return None
    if code in EXIT_SIGNALLED:
        _write_status(directory, "interrupted")
        return "interrupted"
    error = _last_line(directory / "log.txt") or f"exit status {code}"
    _write_status(directory, "failed", error=error, returncode=code)
    return error


def _write_status(directory: Path, state: str, **extra: object) -> None:
    (directory / "status.json").write_text(json.dumps({"state": state, **extra}) + "\n")


def _last_line(path: Path) -> str:
    try:
        lines = [line.strip() for line in path.read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        return ""
    return lines[-1] if lines else ""


def _status(done: list[Cell], failed: dict[Cell, str], running: list[_Running], out: Path) -> str:
    """done / running / failed counts and each running cell's latest evaluation."""
    parts = [f"done {len(done)}", f"running {len(running)}", f"failed {len(failed)}"]
    for r in running:
        latest = _latest_eval(r.cell.directory(out))
        parts.append(f"{r.cell.name}: {latest}" if latest else r.cell.name)
    return " | ".join(parts)


def _latest_eval(cell_dir: Path) -> str:
    run = run_dir(cell_dir)
    if run is None:
        return ""
    last = _last_line(run / "evaluations.jsonl")
    try:
        record = json.loads(last)
    except ValueError:
        return ""
    wins = record.get("win")
    score = (f"win {sum(wins) / len(wins):.0%}" if wins else
             f"return {sum(record['return']) / max(len(record['return']), 1):.3g}")
    return f"{score} @ {record['env_steps']:,}"


@contextmanager
def _stop_requests() -> Iterator[Callable[[], bool]]:
    """SIGINT/SIGTERM set a flag the loop polls (the cells are stopped by the grid, not killed with it)."""
    received: list[int] = []

    def handler(signum: int, frame: FrameType | None) -> None:
        received.append(signum)

    previous = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield lambda: bool(received)
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


def default_workers() -> int:
    """One cell per core (each trains with one torch thread by default)."""
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)
