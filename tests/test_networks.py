"""Recurrent and linear layers of the agents' networks: each fast path equals its plain reference."""
import pytest
import torch

from core.nn import MultiLayerNorm, MultiLinear
from marl.networks import AgentNet, MultiGRUCell


@pytest.mark.parametrize("heads", [1, 3])
def test_multi_gru_cell_equals_torch_gru_cell_per_head(heads):
    torch.manual_seed(0)
    cell = MultiGRUCell(heads, 5, 4).double()
    x, h = torch.randn(7, heads, 5, dtype=torch.double), torch.randn(7, heads, 4, dtype=torch.double)
    out = cell(x, h)
    for k in range(heads):
        ref = torch.nn.GRUCell(5, 4).double()
        with torch.no_grad():  # torch's gates are stacked [r, z, n] on rows, ours on columns
            ref.weight_ih.copy_(cell.input_map.weight[k].T)
            ref.bias_ih.copy_(cell.input_map.bias[k])
            ref.weight_hh.copy_(cell.hidden_map.weight[k].T)
            ref.bias_hh.copy_(cell.hidden_map.bias[k])
        torch.testing.assert_close(out[:, k], ref(x[:, k], h[:, k]))


@pytest.mark.parametrize("heads", [1, 3])
def test_multi_linear_equals_a_matrix_product_per_head(heads):
    torch.manual_seed(0)
    layer = MultiLinear(heads, 6, 2).double()
    with torch.no_grad():
        layer.bias.normal_()
    x = torch.randn(4, 3, heads, 6, dtype=torch.double)
    reference = torch.stack([x[..., k, :] @ layer.weight[k] + layer.bias[k] for k in range(heads)], dim=-2)
    torch.testing.assert_close(layer(x), reference)


@pytest.mark.parametrize("layer_norm", [False, True])
@pytest.mark.parametrize("recurrent", [True, False])
@pytest.mark.parametrize("heads", [1, 3])
def test_packed_episode_forward_equals_the_padded_reference(recurrent, heads, layer_norm):
    """forward_episodes (only the episodes' steps computed) matches forward from a zero state on every step of
    every episode, outputs and gradients, and is zero on padding."""
    torch.manual_seed(0)
    net = AgentNet(heads, 20, 7, (32,), recurrent=recurrent, rnn_hidden=16, layer_norm=layer_norm).double()
    x = torch.randn(12, 9, 3, 20, dtype=torch.double)
    lengths = torch.tensor([12, 3, 7, 7, 1, 12, 5, 9, 2])
    valid = (torch.arange(12)[:, None] < lengths[None])[..., None, None]
    reference, _ = net(x, torch.zeros(9, 3, 16, dtype=torch.double) if recurrent else None, None)
    packed = net.forward_episodes(x, lengths)
    torch.testing.assert_close(packed, reference * valid)
    weights = torch.randn_like(reference)
    grads = []
    for out in (reference * valid, packed):
        net.zero_grad()
        (out * weights).sum().backward(inputs=list(net.parameters()))
        grads.append([torch.zeros_like(p) if p.grad is None else p.grad.clone() for p in net.parameters()])
    for a, b in zip(*grads, strict=True):
        torch.testing.assert_close(a, b)


@pytest.mark.parametrize("heads", [1, 3])
def test_layer_norm_follows_each_activation_and_the_gru_output_per_head(heads):
    """layer_norm: Linear -> ReLU -> LayerNorm per hidden layer and LayerNorm on the GRU's output (the carried
    state stays raw), as the MAPPO code's MLPLayer and RNNLayer; each head normalises with its own affine pair."""
    torch.manual_seed(0)
    net = AgentNet(heads, 6, 2, (32, 24), recurrent=True, rnn_hidden=16, layer_norm=True).double()
    norms = [m for m in net.modules() if isinstance(m, MultiLayerNorm)]
    assert len(norms) == 3 and all(m.weight.shape[0] == heads for m in norms)
    x, h0 = torch.randn(4, 2, 3, 6, dtype=torch.double), torch.randn(2, 3, 16, dtype=torch.double)
    captured: list[torch.Tensor] = []
    hooks = [m.register_forward_hook(lambda m, args, out: captured.append(out)) for m in norms]
    net(x, h0, None)  # fresh affine pairs (1, 0): every agent's activations standardised
    for z in captured:
        torch.testing.assert_close(z.mean(-1), torch.zeros_like(z[..., 0]))
        torch.testing.assert_close(z.var(-1, unbiased=False), torch.ones_like(z[..., 0]), rtol=0, atol=1e-3)
    for hook in hooks:
        hook.remove()
    with torch.no_grad():
        for m in norms:
            m.weight.normal_()
            m.bias.normal_()
    out, h = net(x, h0, None)
    agents = torch.arange(3) if heads > 1 else torch.zeros(3, dtype=torch.long)  # each agent's head

    def norm(k: int, z: torch.Tensor) -> torch.Tensor:
        z = (z - z.mean(-1, keepdim=True)) / (z.var(-1, unbiased=False, keepdim=True) + 1e-5).sqrt()
        return z * norms[k].weight[agents] + norms[k].bias[agents]

    linear1, linear2, gru = net.mlp[0], net.mlp[3], net.rnn
    assert isinstance(linear1, MultiLinear) and isinstance(linear2, MultiLinear) and gru is not None
    z = norm(0, torch.relu(_per_agent(linear1, net.norm(x), agents)))
    z = norm(1, torch.relu(_per_agent(linear2, z, agents)))
    state, raw = h0, []
    for t in range(4):
        state = gru(z[t], state)
        raw.append(state)
    torch.testing.assert_close(h, state)  # the recurrent state carried on is the GRU's, not its normalised output
    torch.testing.assert_close(out, _per_agent(net.head, norm(2, torch.stack(raw)), agents))
    if heads > 1:  # agent 0's output moves only head 0's normalisers
        net.zero_grad()
        out[..., 0, :].sum().backward()
        for m in norms:
            weight_grad, bias_grad = m.weight.grad, m.bias.grad
            assert weight_grad is not None and bias_grad is not None
            assert weight_grad[1:].abs().sum() == 0 and bias_grad[1:].abs().sum() == 0
            assert weight_grad[0].abs().sum() > 0


def _per_agent(layer: MultiLinear, x: torch.Tensor, agents: torch.Tensor) -> torch.Tensor:
    """x [..., 3, in] through each agent's head of `layer`, one matrix product per agent."""
    return torch.stack([x[..., a, :] @ layer.weight[k] + layer.bias[k] for a, k in enumerate(agents.tolist())], -2)
