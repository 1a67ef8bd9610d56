"""Forward and hand-written backward passes of an `mlp()` (Linear layers with ReLU between), without autograd.

For the small networks of the single-agent baselines (a 64-row batch through 256x256 layers), the autograd
engine's per-node bookkeeping costs about as much as the matrix products themselves; DQN's update runs through
this instead. The weights are read through detached views of the module's parameters, so optimiser steps and
`load_state_dict` (both in place) are seen at once.
"""
from __future__ import annotations

import torch
from torch import nn


class MLPBackprop:
    """Gradients of an `nn.Sequential` of Linear layers separated by ReLUs, in `net.parameters()` order."""

    def __init__(self, net: nn.Sequential) -> None:
        linears = [m for m in net if isinstance(m, nn.Linear)]
        others = [m for m in net if not isinstance(m, nn.Linear)]
        if len(net) != 2 * len(linears) - 1 or not all(isinstance(m, nn.ReLU) for m in others):
            raise ValueError("MLPBackprop needs Linear layers with a ReLU between each pair")
        self.layers = [(m.weight.detach(), m.bias.detach()) for m in linears]

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor]]:
        """The network's output and each layer's input (what `backward` needs)."""
        inputs = []
        for i, (weight, bias) in enumerate(self.layers):
            inputs.append(x)
            x = torch.addmm(bias, x, weight.t())
            if i < len(self.layers) - 1:
                x = x.relu_()
        return x, inputs

    def backward(self, inputs: list[torch.Tensor], grad_out: torch.Tensor) -> list[torch.Tensor]:
        """d loss / d parameters, given d loss / d output and the layer inputs from `forward`."""
        grads: list[torch.Tensor] = []
        grad = grad_out
        for i in range(len(self.layers) - 1, -1, -1):
            weight, _ = self.layers[i]
            grads += [grad.sum(0), grad.t() @ inputs[i]]
            if i:  # a hidden layer's input is a ReLU output: the gradient passes where it is positive
                grad = (grad @ weight).mul_(inputs[i] > 0)
        return grads[::-1]
