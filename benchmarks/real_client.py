"""A real client's own training code beside ours, on the same task and budget: EPyMARL's (or pymarl's) learner
on the built-in simulator through the `smac` stand-in (envs/smac/compat), or on a Level-Based Foraging task
through lbforaging itself; then this project's same algorithm on the same env.

    python benchmarks/real_client.py --client-dir PATH/epymarl --client-python PATH/client-venv/bin/python \
        --steps 50000                                               # QMIX on smac_3m
    python benchmarks/real_client.py --client-dir PATH/epymarl --client-python PATH/client-venv/bin/python \
        --algo mappo --env lbf_8x8-2p-2f-coop --steps 1000000

Nothing is fetched: PATH is a checkout of uoe-agents/epymarl (or oxwhirl/pymarl), left unchanged, and the
client's Python has its requirements (README: "Real clients"; lbforaging too for LBF). The client runs
`src/main.py --config=ALGO` with its stock configs: `--env-config=sc2 with env_args.map_name=MAP` and the
stand-in directory on PYTHONPATH for `smac_<map>`, `--env-config=gymma with
env_args.key=lbforaging:Foraging-<task>-v3 env_args.time_limit=50` for `lbf_<task>`. EPyMARL imports `smaclite`
when its env registry loads, even for sc2; where that package is not installed, this harness registers an empty
module under the name before starting it (the smaclite env type is then unavailable; nothing else changes).
Prints one row per side: the last test score (SMAC: the client's `test_battle_won_mean` and our final greedy win
rate; LBF: the mean test return, summed over agents on both sides, over --test-episodes greedy episodes) and env
steps per second of the whole run (wall clock, start-up included).
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
ALGOS = ("qmix", "vdn", "iql", "mappo", "ippo", "coma")  # named alike in EPyMARL's src/config/algs
SCORE = {"smac_": re.compile(r"test_battle_won_mean:\s+([0-9.]+)"),
         "lbf_": re.compile(r"test_return_mean:\s+([-0-9.]+)")}


def client_env_args(env: str) -> list[str]:
    """The client's --env-config and its `with` arguments for `env`."""
    if env.startswith("smac_"):
        return ["--env-config=sc2", "with", f"env_args.map_name={env[len('smac_'):]}"]
    return ["--env-config=gymma", "with", f"env_args.key=lbforaging:Foraging-{env[len('lbf_'):]}-v3",
            "env_args.time_limit=50"]


def run_client(client_dir: Path, python: str, algo: str, env_name: str, steps: int, test_episodes: int,
               ) -> dict[str, float]:
    """The client's `algo` on `env_name`: its last test score and env steps/s."""
    with tempfile.TemporaryDirectory() as tmp:
        launcher = Path(tmp) / "launch.py"
        launcher.write_text(LAUNCHER)
        env = {**os.environ, "PYTHONPATH": str(clients_path())}
        interval = max(steps // 5, 1) if env_name.startswith("smac_") else 50_000  # LBF: EPyMARL's gymma interval
        args = [python, str(launcher), f"--config={algo}", *client_env_args(env_name), f"t_max={steps}",
                "use_cuda=False", f"test_nepisode={test_episodes}", f"test_interval={interval}",
                f"log_interval={interval}"]
        start = time.perf_counter()
        out = subprocess.run(args, cwd=client_dir, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - start
    log = out.stdout + out.stderr
    if out.returncode != 0:
        tail = "\n".join(log.splitlines()[-15:])
        raise SystemExit(f"error: the client exited with status {out.returncode}:\n{tail}")
    scores = SCORE["smac_" if env_name.startswith("smac_") else "lbf_"].findall(log)
    if not scores:
        raise SystemExit("error: the client's log has no test score (did it run a test?)")
    return {"score": float(scores[-1]), "steps_per_s": steps / wall, "wall_s": wall}


def run_ours(algo: str, env_name: str, steps: int, test_episodes: int) -> dict[str, float]:
    """This project's `algo` (its defaults) on `env_name`: the final greedy score and env steps/s."""
    with tempfile.TemporaryDirectory() as tmp:
        summary = Path(tmp) / "summary.json"
        start = time.perf_counter()
        out = subprocess.run([sys.executable, str(ROOT / "scripts" / "train_marl.py"), "--algo", algo, "--env",
                              env_name, "--steps", str(steps), "--logdir", tmp, "--no-progress",
                              "--summary-json", str(summary), f"train.eval_episodes={test_episodes}"],
                             capture_output=True, text=True)
        wall = time.perf_counter() - start
        if out.returncode != 0:
            raise SystemExit(f"error: our {algo} exited with status {out.returncode}: {out.stderr.strip()[-500:]}")
        result = json.loads(summary.read_text())
    score = result["eval_win_rate"] if env_name.startswith("smac_") else result["eval_return_mean"]
    return {"score": score, "steps_per_s": result["env_steps"] / wall, "wall_s": wall}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--client-dir", required=True, type=Path, help="checkout of epymarl or pymarl (unchanged)")
    p.add_argument("--client-python", required=True, help="the Python of the client's own environment")
    p.add_argument("--algo", default="qmix", help=f"one of {', '.join(ALGOS)}")
    p.add_argument("--env", default="smac_3m", help="smac_<map> or lbf_<task>")
    p.add_argument("--steps", type=int, default=50_000)
    p.add_argument("--test-episodes", type=int, default=32)
    args = p.parse_args()
    problem = None
    if args.algo not in ALGOS:
        problem = f"--algo {args.algo}: the client runs {', '.join(ALGOS)}"
    elif not args.env.startswith(("smac_", "lbf_")):
        problem = f"--env {args.env}: smac_<map> or lbf_<task>"
    elif not (args.client_dir / "src" / "main.py").is_file():
        problem = f"{args.client_dir} is not a pymarl/EPyMARL checkout (no src/main.py)"
    elif shutil.which(args.client_python) is None:
        problem = f"--client-python {args.client_python} is not an executable"
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        sys.exit(EXIT_BAD_INPUT)
    client = run_client(args.client_dir, args.client_python, args.algo, args.env, args.steps, args.test_episodes)
    ours = run_ours(args.algo, args.env, args.steps, args.test_episodes)
    smac = args.env.startswith("smac_")
    shown = "{:.1%}" if smac else "{:.3f}"
    where = "its code, stand-in smac" if smac else "its code, lbforaging"
    print(f"| {args.env}, {args.steps:,} env steps | test {'win rate' if smac else 'return'} | env steps/s | "
          f"wall s |\n|---|--:|--:|--:|")
    for side, result in ((f"{args.client_dir.name} {args.algo} ({where})", client), (f"Concerto {args.algo}", ours)):
        print(f"| {side} | {shown.format(result['score'])} | {result['steps_per_s']:,.0f} | {result['wall_s']:.0f} |")


if __name__ == "__main__":
    main()
