"""Recurrent and linear layers of the agents' networks: each fast path equals its plain reference."""
import pytest
import torch

from core.nn import MultiLinear
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


@pytest.mark.parametrize("recurrent", [True, False])
@pytest.mark.parametrize("heads", [1, 3])
def test_packed_episode_forward_equals_the_padded_reference(recurrent, heads):
    """forward_episodes (only the episodes' steps computed) matches forward from a zero state on every step of
    every episode, outputs and gradients, and is zero on padding."""
    torch.manual_seed(0)
    net = AgentNet(heads, 20, 7, (32,), recurrent=recurrent, rnn_hidden=16).double()
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
