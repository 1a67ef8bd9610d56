"""Pre-allocated buffers shared by the multi-agent and single-agent sides."""
from core.buffers.episode import EpisodeReplayBuffer
from core.buffers.replay import ReplayBuffer
from core.buffers.rollout import RolloutBuffer, compute_gae

__all__ = ["EpisodeReplayBuffer", "ReplayBuffer", "RolloutBuffer", "compute_gae"]
