"""Forward and hand-written backward passes of ReLU networks, without autograd.

For the small networks of the single-agent baselines (64-256 rows through 256x256 layers), the autograd
engine's per-node bookkeeping costs about as much as the matrix products themselves; DQN's and SAC's fast
paths run through these instead (their reference updates use autograd). Weights are read through detached
views of the module's parameters, so optimiser steps and `load_state_dict` (both in place) are seen at once.
`torch.ops.aten.threshold_backward` is private: single_agent.agent.fast_path_supported checks for it.
"""
from __future__ import annotations

import torch
from torch import nn

from single_agent.networks import CriticEnsemble


class Backprop:
    """Affine layers with a ReLU after each but the last; subclasses say how one layer maps and differentiates."""

    n_layers: int

    def _affine(self, x: torch.Tensor, i: int) -> torch.Tensor:
        raise NotImplementedError

    def _input_grad(self, grad: torch.Tensor, i: int) -> torch.Tensor:
        raise NotImplementedError

    def _param_grads(self, x: torch.Tensor, grad: torch.Tensor, i: int) -> list[torch.Tensor]:
        raise NotImplementedError

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor]]:
        """The network's output and each layer's input (what `backward` needs)."""
        inputs = []
        for i in range(self.n_layers):
            inputs.append(x)
            x = self._affine(x, i)
            if i < self.n_layers - 1:
                x = x.relu_()
        return x, inputs

    def param_grads(self, inputs: list[torch.Tensor], grad_out: torch.Tensor) -> list[torch.Tensor]:
        """d loss / d parameters (in the module's `parameters()` order), given d loss / d output and the layer
        inputs from `forward`."""
        return self._backward(inputs, grad_out, params=True)[0]

    def input_grad(self, inputs: list[torch.Tensor], grad_out: torch.Tensor) -> torch.Tensor:
        """d loss / d input, given d loss / d output and the layer inputs from `forward`."""
        return self._backward(inputs, grad_out, params=False)[1]

    def _backward(self, inputs: list[torch.Tensor], grad_out: torch.Tensor,
                  params: bool) -> tuple[list[torch.Tensor], torch.Tensor]:
        """The parameters' gradients (if `params`; the input's gradient is then not computed) or the input's."""
        grads: list[torch.Tensor] = []
        grad = grad_out
        for i in range(self.n_layers - 1, -1, -1):
            if params:
                grads = self._param_grads(inputs[i], grad, i) + grads
            if i or not params:
                grad = self._input_grad(grad, i)
            if i:  # a hidden layer's input is a ReLU output: the gradient passes where it is positive
                grad = torch.ops.aten.threshold_backward(grad, inputs[i], 0)
        return grads, grad


class MLPBackprop(Backprop):
    """An `nn.Sequential` of Linear layers with a ReLU between each pair (single_agent.networks.mlp)."""

    def __init__(self, net: nn.Sequential) -> None:
        linears = [m for m in net if isinstance(m, nn.Linear)]
        others = [m for m in net if not isinstance(m, nn.Linear)]
        if len(net) != 2 * len(linears) - 1 or not all(isinstance(m, nn.ReLU) for m in others):
            raise ValueError("MLPBackprop needs Linear layers with a ReLU between each pair")
        self.layers = [(m.weight.detach(), m.bias.detach()) for m in linears]
        self.n_layers = len(linears)

    def _affine(self, x: torch.Tensor, i: int) -> torch.Tensor:
        weight, bias = self.layers[i]
        return torch.addmm(bias, x, weight.t())

    def _input_grad(self, grad: torch.Tensor, i: int) -> torch.Tensor:
        return grad @ self.layers[i][0]

    def _param_grads(self, x: torch.Tensor, grad: torch.Tensor, i: int) -> list[torch.Tensor]:
        return [grad.t() @ x, grad.sum(0)]


class EnsembleBackprop(Backprop):
    """A CriticEnsemble's MultiLinear layers with ReLUs between them, heads first: inputs and outputs are
    [n_heads, batch, features] (`CriticEnsemble.heads_input`)."""

    def __init__(self, critic: CriticEnsemble) -> None:
        layers = critic.linear_layers()
        self.layers = [(m.weight.detach(), m.bias.detach()[:, None, :]) for m in layers]
        self.n_layers = len(layers)

    def _affine(self, x: torch.Tensor, i: int) -> torch.Tensor:
        weight, bias = self.layers[i]
        return torch.baddbmm(bias, x, weight)

    def _input_grad(self, grad: torch.Tensor, i: int) -> torch.Tensor:
        return torch.bmm(grad, self.layers[i][0].transpose(1, 2))

    def _param_grads(self, x: torch.Tensor, grad: torch.Tensor, i: int) -> list[torch.Tensor]:
        return [torch.bmm(x.transpose(1, 2), grad), grad.sum(1)]
