"""A real client's own training code on the built-in simulator, beside ours: EPyMARL's (or pymarl's) QMIX on
3m through the `smac` stand-in (envs/smac/compat), then this project's QMIX on smac_3m, same env-step budget.

    python benchmarks/real_client.py --client-dir PATH/epymarl --client-python PATH/client-venv/bin/python \
        --steps 50000

Nothing is fetched: PATH is a checkout of uoe-agents/epymarl (or oxwhirl/pymarl), left unchanged, and the
client's Python has its requirements (README: "Real clients"). The client runs `src/main.py --config=qmix
--env-config=sc2 with env_args.map_name=3m t_max=STEPS use_cuda=False` with the stand-in directory on
PYTHONPATH and its stock configs. EPyMARL imports `smaclite` when its env registry loads, even for sc2; where
that package is not installed, this harness registers an empty module under the name before starting it (the
smaclite env type is then unavailable; nothing else changes). Prints one row per side: test win rate (the
client's last `test_battle_won_mean`, over test_nepisode greedy episodes; ours: the final greedy evaluation
over 32 episodes) and env steps per second of the whole run (wall clock, start-up included).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.errors import EXIT_BAD_INPUT  # noqa: E402
from envs.smac.compat import clients_path  # noqa: E402

LAUNCHER = """\
import importlib.util, runpy, sys, types
if importlib.util.find_spec("smaclite") is None:  # EPyMARL imports it at start-up even for sc2
    sys.modules["smaclite"] = types.ModuleType("smaclite")
sys.argv = ["src/main.py"] + sys.argv[1:]
sys.path.insert(0, "src")
runpy.run_path("src/main.py", run_name="__main__")
"""
WON = re.compile(r"test_battle_won_mean:\s+([0-9.]+)")


def run_client(client_dir: Path, python: str, steps: int, map_name: str, test_episodes: int) -> dict[str, float]:
    """The client's QMIX through the stand-in: its last test win rate and env steps/s."""
    with tempfile.TemporaryDirectory() as tmp:
        launcher = Path(tmp) / "launch.py"
        launcher.write_text(LAUNCHER)
        env = {**os.environ, "PYTHONPATH": str(clients_path())}
        args = [python, str(launcher), "--config=qmix", "--env-config=sc2", "with", f"env_args.map_name={map_name}",
                f"t_max={steps}", "use_cuda=False", f"test_nepisode={test_episodes}",
                f"test_interval={max(steps // 5, 1)}", f"log_interval={max(steps // 5, 1)}"]
        start = time.perf_counter()
        out = subprocess.run(args, cwd=client_dir, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - start
    log = out.stdout + out.stderr
    if out.returncode != 0:
        tail = "\n".join(log.splitlines()[-15:])
        raise SystemExit(f"error: the client exited with status {out.returncode}:\n{tail}")
    won = WON.findall(log)
    if not won:
        raise SystemExit("error: the client's log has no test_battle_won_mean (did it run a test?)")
    return {"win_rate": float(won[-1]), "steps_per_s": steps / wall, "wall_s": wall}


def run_ours(steps: int, map_name: str) -> dict[str, float]:
    """This project's QMIX (its defaults) on smac_<map>: the final greedy win rate and env steps/s."""
    with tempfile.TemporaryDirectory() as tmp:
        summary = Path(tmp) / "summary.json"
        start = time.perf_counter()
        out = subprocess.run([sys.executable, str(ROOT / "scripts" / "train_marl.py"), "--algo", "qmix", "--env",
                              f"smac_{map_name}", "--steps", str(steps), "--logdir", tmp, "--no-progress",
                              "--summary-json", str(summary)], capture_output=True, text=True)
        wall = time.perf_counter() - start
        if out.returncode != 0:
            raise SystemExit(f"error: our QMIX exited with status {out.returncode}: {out.stderr.strip()[-500:]}")
        result = json.loads(summary.read_text())
    return {"win_rate": result["eval_win_rate"], "steps_per_s": result["env_steps"] / wall, "wall_s": wall}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--client-dir", required=True, type=Path, help="checkout of epymarl or pymarl (unchanged)")
    p.add_argument("--client-python", required=True, help="the Python of the client's own environment")
    p.add_argument("--steps", type=int, default=50_000)
    p.add_argument("--map", default="3m")
    p.add_argument("--test-episodes", type=int, default=32)
    args = p.parse_args()
    problem = None
    if not (args.client_dir / "src" / "main.py").is_file():
        problem = f"{args.client_dir} is not a pymarl/EPyMARL checkout (no src/main.py)"
    elif shutil.which(args.client_python) is None:
        problem = f"--client-python {args.client_python} is not an executable"
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        sys.exit(EXIT_BAD_INPUT)
    client = run_client(args.client_dir, args.client_python, args.steps, args.map, args.test_episodes)
    ours = run_ours(args.steps, args.map)
    print(f"| {args.map}, {args.steps:,} env steps | test win rate | env steps/s | wall s |\n|---|--:|--:|--:|")
    print(f"| {args.client_dir.name} QMIX (its code, stand-in smac) | {client['win_rate']:.1%} | "
          f"{client['steps_per_s']:,.0f} | {client['wall_s']:.0f} |")
    print(f"| Concerto QMIX | {ours['win_rate']:.1%} | {ours['steps_per_s']:,.0f} | {ours['wall_s']:.0f} |")


if __name__ == "__main__":
    main()
