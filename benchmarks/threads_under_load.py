"""Training wall time of a single-agent learner with each torch thread setting, alone and beside busy processes.

    python benchmarks/threads_under_load.py --algo sac --env Pendulum-v1 --steps 6000 --busy 2 --repeats 2

Each cell is a fresh process training `--steps` env steps (no periodic evaluation): ours with 1 torch thread,
with 2 threads and GNU OpenMP's default spin (300,000 iterations before an idle worker sleeps; our default
before core.startup), with 2 threads and the spin shortened to 1,000 (libgomp's own value when it has more
threads than cores), our default (2 threads, OpenMP's passive wait policy set by core.startup.prepare_process:
idle workers sleep at once), and stable-baselines3 with the same
settings (benchmarks/single_vs_sb3.py; torch's default threads). "Beside busy" runs the cell next to `--busy`
processes that spin on the CPU, what two other trainings on a 2-core machine do. Cells are interleaved over the
repeats; the table holds each cell's median training seconds. Needs the `bench` extra (stable-baselines3).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SETTINGS = {  # name -> (extra command-line overrides, environment variables)
    "1 thread": (["train.torch_threads=1"], {}),
    "2 threads, libgomp's default spin": (["train.torch_threads=2"], {"GOMP_SPINCOUNT": "300000"}),
    "2 threads, short spin": (["train.torch_threads=2"], {"GOMP_SPINCOUNT": "1000"}),
    "default (2 threads, passive wait)": ([], {}),  # the SAC config's torch_threads: 2
}
SB3 = """
import json, sys, time
sys.path.insert(0, {root!r})
from benchmarks.single_vs_sb3 import sb3_model
from core.run_config import resolve_config
from single_agent.algos import get_algo
entry = get_algo({algo!r})
train, cfg, _ = resolve_config({algo!r}, {env!r}, entry.config_class, entry.defaults, None, {{}}, [])
model = sb3_model({algo!r}, {env!r}, cfg, train.n_envs, {steps}, 0)
start = time.perf_counter()
model.learn({steps})
print(json.dumps({{"wall_s": time.perf_counter() - start}}))
"""


def ours(algo: str, env: str, steps: int, overrides: list[str], env_vars: dict[str, str]) -> float:
    """Training seconds of one run of ours (the summary's wall_s: the loop, without start-up)."""
    with tempfile.TemporaryDirectory() as tmp:
        summary = Path(tmp) / "summary.json"
        subprocess.run([sys.executable, str(ROOT / "scripts" / "train_single.py"), "--algo", algo, "--env", env,
                        "--steps", str(steps), "--no-progress", "--logdir", tmp, "--summary-json", str(summary),
                        "train.eval_interval=0", "train.eval_episodes=1", *overrides],
                       check=True, stdout=subprocess.DEVNULL, env={**os.environ, **env_vars})
        return float(json.loads(summary.read_text())["wall_s"])


def sb3(algo: str, env: str, steps: int) -> float:
    """Seconds of stable-baselines3's `learn` with our resolved settings."""
    code = SB3.format(root=str(ROOT), algo=algo, env=env, steps=steps)
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    return float(json.loads(out.strip().splitlines()[-1])["wall_s"])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--algo", default="sac", choices=["sac", "td3", "ddpg"])
    p.add_argument("--env", default="Pendulum-v1")
    p.add_argument("--steps", type=int, default=6000)
    p.add_argument("--busy", type=int, default=2, help="spinning processes beside each loaded cell")
    p.add_argument("--repeats", type=int, default=2)
    args = p.parse_args()
    cells = [*SETTINGS, "stable-baselines3"]
    times: dict[tuple[str, bool], list[float]] = {}
    for _ in range(args.repeats):
        for loaded in (False, True):
            spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
                        for _ in range(args.busy if loaded else 0)]
            try:
                for cell in cells:
                    wall = (sb3(args.algo, args.env, args.steps) if cell == "stable-baselines3" else
                            ours(args.algo, args.env, args.steps, *SETTINGS[cell]))
                    times.setdefault((cell, loaded), []).append(wall)
                    print(f"{cell:26s} {'beside busy' if loaded else 'alone':12s} {wall:7.1f} s", flush=True)
            finally:
                for spinner in spinners:
                    spinner.kill()
    print(f"\n| {args.algo} on {args.env}, {args.steps:,} steps | alone (s) | beside {args.busy} busy (s) |")
    print("|---|---|---|")
    for cell in cells:
        alone_s, loaded_s = (statistics.median(times[cell, flag]) for flag in (False, True))
        print(f"| {cell} | {alone_s:.1f} | {loaded_s:.1f} |")


if __name__ == "__main__":
    main()
