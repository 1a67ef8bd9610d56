"""The off-policy learners' fast paths (DQN's, SAC's) against their reference (autograd) updates: the same
parameters, optimizer states, metrics and random draws from the same seed and batches; and the fallback when torch
lacks a private call the fast paths need."""
import copy
import warnings
from typing import Any, NamedTuple

import numpy as np
import pytest
import torch
from gymnasium import spaces

from core.run_state import RunState
from single_agent.agent import OffPolicyAgent, fast_path_supported, missing_private_calls
from single_agent.algos import get_algo

OBS_DIM, N_ACTIONS, ACT_DIM = 4, 3, 3


def assert_same_update(actual: Any, expected: Any) -> None:
    """Equal up to float32 rounding. The two paths sum in different orders (SAC's hand-written gradients against
    autograd's): about 1e-7 relative after a dozen updates, under a tenth of this tolerance. A wrong term, sign,
    clip or step moves parameters by about the learning rate (1e-4 .. 1e-3), far beyond it."""
    torch.testing.assert_close(actual, expected, rtol=1e-5, atol=1e-6)


class Case(NamedTuple):
    algo: str
    overrides: dict[str, Any]
    per_phase: int  # updates per training phase
    phases: int


CASES = {
    # a target update every 4 updates, so that phases of 3 cross it at different points of a phase; gradient
    # norms here are about 0.2-0.3, so max_grad_norm 0.1 clips them and the default of 10 does not
    "dqn": Case("dqn", {"target_update_interval": 4, "max_grad_norm": 0.1}, 3, 4),
    "dqn-no-double-q": Case("dqn", {"target_update_interval": 4, "double_q": False}, 3, 4),
    "dqn-dueling": Case("dqn", {"target_update_interval": 4, "dueling": True, "max_grad_norm": 0.1}, 3, 4),
    "dqn-dueling-no-double-q": Case("dqn", {"target_update_interval": 4, "dueling": True, "double_q": False}, 3, 4),
    # 100 rows x 3 action dims is no multiple of 16: one draw of 600 normals would differ from two of 300
    "sac": Case("sac", {"batch_size": 100}, 2, 4),
    "sac-fixed-alpha": Case("sac", {"batch_size": 100, "auto_alpha": False}, 2, 4),
}


def forget_the_check() -> None:
    """Make the next learner look up the private calls again (the check runs once per process)."""
    missing_private_calls.cache_clear()
    fast_path_supported.cache_clear()


@pytest.fixture
def recheck():
    """`forget_the_check`, and again once the test's patches are gone."""
    yield forget_the_check
    forget_the_check()


def make_agent(algo: str, fast_path: bool, **overrides: Any) -> OffPolicyAgent:
    """A learner at its default network sizes, initialised from seed 0."""
    entry = get_algo(algo)
    cfg = entry.config_class(**{**entry.defaults, "fast_path": fast_path, **overrides})
    action_space: spaces.Space = (spaces.Box(-2.0, 2.0, (ACT_DIM,)) if entry.continuous
                                  else spaces.Discrete(N_ACTIONS))
    obs_space = spaces.Box(-1.0, 1.0, (OBS_DIM,))
    torch.manual_seed(0)
    return entry.agent_class(obs_space, action_space, cfg, "cpu", run=RunState(0, 10_000))


def random_batch(agent: OffPolicyAgent, rows: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Transitions as the replay buffer hands them over, a tenth of them terminal (discount 0)."""
    action = (rng.integers(0, agent.act_dim, rows) if agent.discrete
              else rng.uniform(-1.0, 1.0, (rows, agent.act_dim)).astype(np.float32))
    return {"obs": rng.standard_normal((rows, OBS_DIM)).astype(np.float32),
            "next_obs": rng.standard_normal((rows, OBS_DIM)).astype(np.float32),
            "action": action, "reward": rng.standard_normal(rows).astype(np.float32),
            "discount": np.where(rng.random(rows) < 0.1, 0.0, 0.99).astype(np.float32)}


def train_phases(agent: OffPolicyAgent, per_phase: int, phases: int) -> list[dict[str, torch.Tensor]]:
    """`phases` training phases of `per_phase` updates on fixed batches, torch's generator seeded before each."""
    rng, metrics = np.random.default_rng(1), []
    for phase in range(phases):
        batch = random_batch(agent, agent.cfg.batch_size * per_phase, rng)
        torch.manual_seed(100 + phase)
        metrics.append(agent.train(batch, per_phase))
    return metrics


def learned_state(agent: OffPolicyAgent) -> dict[str, Any]:
    """Networks, targets, optimizer states (steps and moments; not their settings), n_updates, SAC's log alpha."""
    state = agent.state_dict()
    for name, module in agent.modules.items():
        if isinstance(module, torch.optim.Optimizer):
            state[name] = state[name]["state"]
    return state


@pytest.mark.parametrize("case", list(CASES))
def test_fast_path_equals_the_reference(case):
    algo, overrides, per_phase, phases = CASES[case]
    fast, reference = make_agent(algo, True, **overrides), make_agent(algo, False, **overrides)
    assert fast.fast_path and not reference.fast_path
    initial = copy.deepcopy(learned_state(reference))
    fast_metrics = train_phases(fast, per_phase, phases)
    fast_rng = torch.get_rng_state()
    reference_metrics = train_phases(reference, per_phase, phases)
    assert torch.equal(fast_rng, torch.get_rng_state())  # the same random draws, no more and no fewer
    assert_same_update(fast_metrics, reference_metrics)
    assert_same_update(learned_state(fast), learned_state(reference))
    assert fast.n_updates == per_phase * phases
    trained = learned_state(reference)
    network = "critic" if "critic" in initial else "q"  # every weight has moved: the networks compared are trained
    assert all(not torch.equal(trained[network][key], value) for key, value in initial[network].items())


class WithoutOp:
    """An op namespace lacking one operator (looking it up raises, as a torch build without it does)."""

    def __init__(self, namespace: Any, missing: str) -> None:
        self.namespace, self.missing = namespace, missing

    def __getattr__(self, name: str) -> Any:
        if name == self.missing:
            raise AttributeError(f"'_OpNamespace' 'aten' object has no attribute '{name}'")
        return getattr(self.namespace, name)


@pytest.mark.parametrize("lacking", ["torch._fused_adam_", "torch.ops.aten.threshold_backward"])
@pytest.mark.parametrize("algo", ["dqn", "sac"])
def test_without_a_private_call_the_fast_path_falls_back_to_the_reference(algo, lacking, monkeypatch, recheck):
    overrides = CASES[algo].overrides
    reference = make_agent(algo, False, **overrides)
    train_phases(reference, 1, 4)
    if lacking == "torch._fused_adam_":
        monkeypatch.delattr(torch, "_fused_adam_")
    else:
        monkeypatch.setattr(torch.ops, "aten", WithoutOp(torch.ops.aten, "threshold_backward"))
    recheck()
    with pytest.warns(RuntimeWarning, match=f"lacks {lacking}; the off-policy learners run their reference"):
        agent = make_agent(algo, True, **overrides)
    assert not agent.fast_path
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the warning comes once
        assert not make_agent(algo, True, **overrides).fast_path
    optimizers = [m for m in agent.modules.values() if isinstance(m, torch.optim.Optimizer)]
    assert all(bool(o.param_groups[0]["fused"]) == (lacking != "torch._fused_adam_") for o in optimizers)
    train_phases(agent, 1, 4)
    # it trains as the reference does (an unfused Adam rounds differently from the fused kernel)
    assert_same_update(learned_state(agent), learned_state(reference))


@pytest.mark.parametrize("algo", ["td3", "ddpg"])
def test_td3_and_ddpg_have_only_the_reference(algo, monkeypatch, recheck):
    monkeypatch.delattr(torch, "_fused_adam_")
    recheck()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no fast path asked of this torch build, so no warning either
        agents = [make_agent(algo, fast_path) for fast_path in (True, False)]
    assert not any(agent.fast_path for agent in agents)
    for agent in agents:  # three actor and target updates (TD3: policy_delay 2), a critic-only one last (TD3)
        train_phases(agent, 1, 7)
    torch.testing.assert_close(learned_state(agents[0]), learned_state(agents[1]), rtol=0, atol=0)
