"""Network building blocks for agent groups: per-agent or shared weights without a loop over agents.

Tensors carry an agent axis just before the feature axis: [..., n_agents, features]. A layer with
`n_heads == 1` shares its weights across agents (parameter sharing); with `n_heads == n_agents` each agent
has its own weights, applied in one batched matmul.
"""
from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Generic, Literal, Protocol, TypeVar, cast

import torch
from torch import nn

from core.nn import ACTIVATIONS, Activation, MultiLayerNorm, MultiLinear
from envs.spec import AgentGroup

M = TypeVar("M", bound=nn.Module)


class ModuleMap(nn.ModuleDict, Generic[M]):
    """An nn.ModuleDict (same parameters and state-dict keys) whose values the type checker knows are `M`."""

    def __init__(self, modules: Mapping[str, M]) -> None:
        super().__init__(modules)

    def __getitem__(self, key: str) -> M:
        return cast(M, super().__getitem__(key))

    def items(self) -> Iterator[tuple[str, M]]:  # type: ignore[override]  # narrows the value type only
        return ((key, cast(M, module)) for key, module in super().items())

    def values(self) -> Iterator[M]:  # type: ignore[override]  # narrows the value type only
        return (cast(M, module) for module in super().values())


class MultiGRUCell(nn.Module):
    """GRU cell with per-head or shared weights; x [..., H, in], h [..., H, hidden]."""

    def __init__(self, n_heads: int, in_features: int, hidden: int) -> None:
        super().__init__()
        self.hidden = hidden
        self.input_map = MultiLinear(n_heads, in_features, 3 * hidden, gain=1.0)
        self.hidden_map = MultiLinear(n_heads, hidden, 3 * hidden, gain=1.0)

    def forward(self, x: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        return self.step(self.input_map(x), h)

    def step(self, gi: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        """One step from the input's gate pre-activations `gi` = input_map(x), computed ahead for a whole
        sequence in one matrix product."""
        sizes = [2 * self.hidden, self.hidden]  # split, not sliced: a slice's backward fills a zero tensor
        gi_rz, gi_n = gi.split(sizes, dim=-1)
        gh_rz, gh_n = self.hidden_map(h).split(sizes, dim=-1)
        r, z = torch.sigmoid(gi_rz + gh_rz).chunk(2, dim=-1)
        n = torch.tanh(gi_n + r * gh_n)
        return n + z * (h - n)


class AgentNet(nn.Module):
    """Input LayerNorm -> MLP -> optional GRU -> linear head, for a group of agents.

    `layer_norm` adds the MAPPO code's LayerNorms (marlbenchmark/on-policy, onpolicy/algorithms/utils/mlp.py and
    rnn.py): after each hidden layer's activation (Linear -> activation -> LayerNorm) and on the GRU's output
    before the head (the recurrent state carried on stays unnormalised). Their affine pairs are per head, so
    per-agent weights get per-agent normalisers and shared weights a shared one.

    `forward(x [L, B, H, in], h0 [B, H, hidden] | None, starts [L, B] | None)` runs a sequence of L steps;
    `starts[t]` marks episode starts, where the recurrent state is reset to zero before step t.
    Returns (out [L, B, H, out_dim], h_L).
    """

    def __init__(self, n_heads: int, in_dim: int, out_dim: int, hidden_sizes: tuple[int, ...],
                 activation: Activation = "relu", recurrent: bool = False, rnn_hidden: int = 64,
                 input_norm: bool = True, out_gain: float = 0.01, layer_norm: bool = False) -> None:
        super().__init__()
        act = ACTIVATIONS[activation]
        self.norm = nn.LayerNorm(in_dim) if input_norm else nn.Identity()
        layers: list[nn.Module] = []
        size = in_dim
        for width in hidden_sizes:
            layers += [MultiLinear(n_heads, size, width), act()]
            if layer_norm:
                layers.append(MultiLayerNorm(n_heads, width))
            size = width
        self.mlp = nn.Sequential(*layers)
        self.rnn = MultiGRUCell(n_heads, size, rnn_hidden) if recurrent else None
        self.rnn_norm = MultiLayerNorm(n_heads, rnn_hidden) if recurrent and layer_norm else nn.Identity()
        if recurrent:
            size = rnn_hidden
        self.rnn_hidden = rnn_hidden if recurrent else 0
        self.head = MultiLinear(n_heads, size, out_dim, gain=out_gain)

    @property
    def recurrent(self) -> bool:
        return self.rnn is not None

    def forward(self, x: torch.Tensor, h0: torch.Tensor | None = None, starts: torch.Tensor | None = None
                ) -> tuple[torch.Tensor, torch.Tensor | None]:
        z = self.mlp(self.norm(x))
        if self.rnn is None:
            return self.head(z), h0
        if h0 is None:
            raise ValueError("a recurrent AgentNet needs its initial state h0")
        h = h0
        outs = []
        for t, gi in enumerate(self.rnn.input_map(z).unbind(0)):  # unbind: one backward op for all steps
            if starts is not None:
                h = h * (~starts[t]).to(h.dtype)[:, None, None]
            h = self.rnn.step(gi, h)
            outs.append(h)
        return self.head(self.rnn_norm(torch.stack(outs))), h

    def forward_episodes(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """Whole episodes from a zero recurrent state, computing only their steps: x [L, B, H, in], `lengths`
        [B] -> out [L, B, H, out_dim], zero where t >= lengths[b]. Equal (up to float rounding) to
        `forward(x, zeros, None)` on the episodes' steps; cheaper when lengths vary, as in replayed batches."""
        steps, batch = x.shape[:2]
        order = torch.argsort(lengths, descending=True, stable=True)
        valid = torch.arange(steps, device=x.device)[:, None] < lengths[order][None, :]  # [L, B], sorted
        z = self.mlp(self.norm(x[:, order][valid]))  # [V, H, f]: the steps in time-major order
        if self.rnn is not None:  # step t's rows are the first active[t] of the sorted batch
            active = [k for k in valid.sum(1).tolist() if k > 0]
            h = z.new_zeros(active[0], *z.shape[1:-1], self.rnn_hidden)
            outs = []
            for gi in self.rnn.input_map(z).split(active):  # split: one backward op for all steps
                h = self.rnn.step(gi, h[:gi.shape[0]])
                outs.append(h)
            z = self.rnn_norm(torch.cat(outs))
        packed = self.head(z)
        out = packed.new_zeros(steps, batch, *packed.shape[1:])
        out[valid] = packed
        return out[:, torch.argsort(order)]


def agent_ids(n_agents: int, device: torch.device | str = "cpu") -> torch.Tensor:
    """One-hot agent ids [n_agents, n_agents]; broadcast and concatenate with per-agent inputs."""
    return torch.eye(n_agents, device=device)


class AgentInput(nn.Module):
    """Flattens per-agent observations [..., n_agents, *obs_shape] and appends a one-hot agent id when the
    group shares one network (`use_id`); `id_dim()` is the width the id adds."""

    ids: torch.Tensor  # one-hot agent ids [n_agents, n_agents] (a buffer)

    def __init__(self, n_agents: int, obs_shape: tuple[int, ...], use_id: bool) -> None:
        super().__init__()
        self.obs_shape = obs_shape
        self.obs_dim = int(math.prod(obs_shape))
        self.use_id = use_id
        self.register_buffer("ids", agent_ids(n_agents), persistent=False)

    def id_dim(self) -> int:
        return self.ids.shape[0] if self.use_id else 0

    def with_id(self, x: torch.Tensor) -> torch.Tensor:
        """Append the agent id to features x [..., n_agents, f]."""
        return torch.cat([x, self.ids.expand(*x.shape[:-1], -1)], dim=-1) if self.use_id else x

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.with_id(obs.reshape(*obs.shape[: obs.dim() - len(self.obs_shape)], self.obs_dim))


class GroupNetConfig(Protocol):
    """The config keys a GroupActionNet is built from."""

    share_params: bool
    agent_id: bool
    hidden_sizes: tuple[int, ...]
    policy: Literal["mlp", "gru"]
    rnn_hidden: int
    input_norm: bool


class GroupActionNet(nn.Module):
    """One output per action for each agent of a group (Q-values, or a policy's logits): shared weights with a
    one-hot agent id, or per-agent weights."""

    def __init__(self, group: AgentGroup, cfg: GroupNetConfig) -> None:
        super().__init__()
        self.group = group
        heads = 1 if cfg.share_params else group.n_agents
        self.inputs = AgentInput(group.n_agents, group.obs_shape,
                                 use_id=cfg.share_params and cfg.agent_id and group.n_agents > 1)
        self.net = AgentNet(heads, self.inputs.obs_dim + self.inputs.id_dim(), group.n_actions, cfg.hidden_sizes,
                            recurrent=cfg.policy == "gru", rnn_hidden=cfg.rnn_hidden,
                            input_norm=cfg.input_norm, out_gain=1.0)

    def forward(self, obs: torch.Tensor, h0: torch.Tensor, starts: torch.Tensor | None
                ) -> tuple[torch.Tensor, torch.Tensor]:
        """obs [L, B, G, *obs_shape] -> outputs [L, B, G, n_actions], the last recurrent state."""
        out, h = self.net(self.inputs(obs), h0, starts)
        return out, h if h is not None else h0

    def forward_episodes(self, obs: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """Whole episodes from a zero state, only their steps: obs [L, B, G, *obs_shape], lengths [B] -> outputs
        [L, B, G, n_actions] (zero after each episode's end)."""
        return self.net.forward_episodes(self.inputs(obs), lengths)
