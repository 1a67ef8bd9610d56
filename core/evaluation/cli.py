"""Command line: python scripts/evaluate.py RUN_DIR_OR_CHECKPOINT [--episodes N] [--seed S] [--stochastic]
[--gif PATH | --mp4 PATH] [--env NAME] [--summary-json PATH] [env.KEY=VALUE ...].

Exit statuses as for training (core.cli): 0 done; 2 bad input (one `error: ...` line: a missing run, a damaged
checkpoint, an env with other spaces, a missing renderer or video extra); 1 a failure while playing; 130 / 143
signals. Each side (multi-agent, single-agent) builds its envs and policy through a core.evaluation.play.Side, which
the script picks by the checkpoint's algorithm: core imports neither side.
"""
from __future__ import annotations

import argparse
import json
import re
from collections.abc import Callable
from typing import Any

from core.cli import Parser, run_main, writable
from core.errors import ConcertoError, RunError, UnknownNameError, UserError, describe_exception
from core.evaluation.play import EvalRequest, Side, play
from core.evaluation.recording import INSTALL_HINT, VideoKind, video_kind, write_video
from core.evaluation.report import report_lines, summarize
from core.evaluation.saved_run import env_options, load_saved_run
from core.experiments.trainers import trainer_module
from core.precision import cpu_threads, training_float_modes
from core.run_config import DEVICE_PATTERN
from core.trainer import device

MAX_EPISODES = 1_000_000
MAX_RECORDED = 100  # episodes a video holds (their frames are kept in memory until written)

EPILOG = f"""\
overrides: env.KEY=VALUE pairs set env options on top of the run's own (e.g. env.episode_limit=100).

Prints the mean return with a 95% confidence interval (mean +- 1.96 sd/sqrt(n)), the win rate where the env
reports wins (95% Wilson interval) and the mean episode length. The defaults (the run's evaluation episodes and
seed, greedy actions) repeat the run's own last evaluation. Recording needs Pillow (GIF) or imageio with
imageio-ffmpeg (MP4): {INSTALL_HINT}.
"""


def parser() -> Parser:
    p = Parser(prog="evaluate.py", description="Evaluate a trained policy (multi-agent or single-agent) from its run "
               "directory or a checkpoint, and record it.", epilog=EPILOG,
               formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run", nargs="?", metavar="RUN_DIR_OR_CHECKPOINT",  # "?": else argparse calls the overrides required
                   help="a run directory (its newest checkpoint is used) or a checkpoint directory "
                        "(<run>/checkpoints/step-N)")
    p.add_argument("--episodes", type=int, help="episodes to play (default: the run's train.eval_episodes)")
    p.add_argument("--seed", type=int, help="seed of the episodes (default: the run's evaluation seed)")
    p.add_argument("--stochastic", action="store_true",
                   help="sample actions as in training at the checkpoint (the policy's distribution; value-based "
                        "agents: epsilon-greedy) instead of the greedy actions")
    video = p.add_mutually_exclusive_group()
    video.add_argument("--gif", metavar="PATH", help="record episodes as an animated GIF (see --record-episodes)")
    video.add_argument("--mp4", metavar="PATH", help="record episodes as an MP4 video (the 'video' extra)")
    p.add_argument("--record-episodes", type=int, default=1, metavar="K",
                   help="episodes recorded with --gif/--mp4, one after another (default 1): the first K episodes of "
                        "a separate one-env run of the same policy with the same seed, so the video shows the start "
                        "of the evaluation; they do not count in the statistics")
    p.add_argument("--env", help="evaluate on another env with the same spaces (e.g. another smac map of equal sizes); "
                                 "the run's env options apply, overrides on top")
    p.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N (default cpu)")
    p.add_argument("--summary-json", metavar="PATH", help="write the statistics and every episode's values here")
    p.add_argument("overrides", nargs="*", metavar="env.KEY=VALUE")
    return p


def run(argv: list[str] | None, side_of: Callable[[str], Side[Any]]) -> dict[str, Any]:
    """Evaluate the run named in `argv`, its env and agent built by `side_of(algo)`; return the summary."""
    args = parser().parse_intermixed_args(argv)
    if args.run is None:
        raise UserError("the following argument is required: RUN_DIR_OR_CHECKPOINT")
    _check_ranges(args)
    saved = load_saved_run(args.run)
    side = side_of(saved.algo)
    episodes = args.episodes or saved.train.eval_episodes
    kind: VideoKind | None = "gif" if args.gif else "mp4" if args.mp4 else None
    video = args.gif or args.mp4
    if kind is not None:
        video_kind(video, kind)
        writable(video, f"--{kind}")
    summary_path = writable(args.summary_json, "--summary-json") if args.summary_json else None
    request = EvalRequest(env=args.env or saved.env, env_kwargs=env_options(saved, args.overrides),
                          episodes=episodes, n_envs=min(saved.train.eval_envs, episodes),
                          seed=saved.eval_seed if args.seed is None else args.seed,
                          deterministic=not args.stochastic, device=device(args.device),
                          record_episodes=args.record_episodes if kind is not None else 0)
    with cpu_threads(saved.train.torch_threads), training_float_modes(saved.train.matmul_precision):
        try:
            played = play(side, saved, request)
        except ConcertoError:
            raise
        except Exception as exc:
            raise RunError(f"evaluating {saved.checkpoint} failed: {describe_exception(exc)}") from None
    summary = summarize(saved, request, played, video)
    try:
        if kind is not None:
            assert played.recording is not None, "a recording was asked for"
            frames = [frame for episode in played.recording.episodes for frame in episode]
            write_video(frames, video, played.recording.fps, kind)
        if summary_path is not None:
            summary_path.write_text(json.dumps(summary, indent=2) + "\n")
    except OSError as exc:
        raise RunError(f"the evaluation finished but its output could not be written: {exc}") from None
    print("\n".join(report_lines(summary)))
    return summary


def _check_ranges(args: argparse.Namespace) -> None:
    if args.episodes is not None and not 1 <= args.episodes <= MAX_EPISODES:
        raise UserError(f"--episodes must be between 1 and {MAX_EPISODES:,}, got {args.episodes}")
    if not 1 <= args.record_episodes <= MAX_RECORDED:
        raise UserError(f"--record-episodes must be between 1 and {MAX_RECORDED}, got {args.record_episodes}")
    if args.seed is not None and not 0 <= args.seed < 2**32:
        raise UserError(f"--seed must be in [0, 2**32), got {args.seed}")
    if not re.fullmatch(DEVICE_PATTERN, args.device):
        raise UserError(f"--device must be cpu, cuda, cuda:N or mps, got {args.device!r}")


def installed_side(algo: str) -> Side[Any]:
    """The side of the installed trainer whose registry holds `algo` (core.experiments.trainers)."""
    try:
        module = trainer_module(algo)
    except UnknownNameError as exc:
        raise UnknownNameError(f"the checkpoint is for algorithm {algo!r}, which this version does not know "
                               f"({exc})") from None
    side: Side[Any] = module.evaluation_side()
    return side


def main(argv: list[str] | None = None, side_of: Callable[[str], Side[Any]] = installed_side) -> int:
    return run_main(lambda a: run(a, side_of), argv)
