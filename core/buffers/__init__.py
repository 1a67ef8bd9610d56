"""Pre-allocated buffers shared by the multi-agent and single-agent sides."""
from core.buffers.rollout import RolloutBuffer, compute_gae

__all__ = ["RolloutBuffer", "compute_gae"]
