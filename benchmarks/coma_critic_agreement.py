"""Does a trained COMA actor follow its critic? For each saved run: on a batch of the run's own exploratory
episodes, how often the actor's most likely action is the critic's best one, the critic's gap between its two
best actions, and the actor's softmax entropy (steps of living agents with more than one available action).

    python benchmarks/coma_critic_agreement.py experiments/coma_xeon_smac_3m/cells/smac_3m/coma/seed*/run/*/*/*

A saturated actor that no longer follows its critic shows as low agreement with gaps well above the actors'
temperature (BENCHMARKS.md, "COMA: the saturated actor cannot follow its critic").
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import envs
from core.evaluation.saved_run import load_saved_run
from marl.algos.coma import COMA, COMAConfig, masked_entropy
from marl.episodes import OnPolicyEpisodeRunner


def agreement(path: str, seed: int) -> dict[str, float]:
    saved = load_saved_run(path)
    venv = envs.make_vec(saved.env, n_envs=8, seed=seed)
    agent = COMA(venv.spec, saved.algo_config(COMAConfig), run=saved.run_state(seed))
    saved.restore(agent)
    view = agent.critic_view(OnPolicyEpisodeRunner(agent, venv, agent.run).next_batch(agent.run.clock.advance))
    counted = view.acting & (view.avail.sum(-1) > 1)
    q_avail = view.q.masked_fill(~view.avail, -torch.inf)
    best_two = q_avail.topk(2, dim=-1).values
    agree = view.logits.masked_fill(~view.avail, -torch.inf).argmax(-1) == q_avail.argmax(-1)
    return {"agree": float(agree[counted].float().mean()),
            "gap": float((best_two[..., 0] - best_two[..., 1])[counted].median()),
            "entropy": float(masked_entropy(view.logits, view.avail)[counted].mean()), "steps": int(counted.sum())}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("runs", nargs="+", help="COMA run directories or checkpoints (a run's latest checkpoint)")
    p.add_argument("--seed", type=int, default=123, help="seed of the episodes collected")
    args = p.parse_args()
    print("| run | actor's argmax = critic's | critic's top-2 gap (median) | actor entropy (nats) | steps |")
    print("| --- | --: | --: | --: | --: |")
    for run in args.runs:
        r = agreement(run, args.seed)
        print(f"| {run} | {r['agree']:.0%} | {r['gap']:.2f} | {r['entropy']:.3f} | {r['steps']} |")


if __name__ == "__main__":
    main()
