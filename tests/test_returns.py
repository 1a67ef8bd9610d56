"""TD(lambda) targets: by hand, with terminations and truncations."""
import torch

from marl.returns import td_lambda_returns


def test_td_lambda_returns_by_hand():
    rewards = torch.tensor([1.0, 2.0, 3.0])
    next_values = torch.tensor([10.0, 20.0, 99.0])
    continues = torch.tensor([1.0, 1.0, 0.0])  # the episode ends after step 2
    g = td_lambda_returns(rewards, continues, next_values, gamma=0.5, lam=0.5)
    g2 = 3.0
    g1 = 2.0 + 0.5 * (0.5 * 20.0 + 0.5 * g2)
    g0 = 1.0 + 0.5 * (0.5 * 10.0 + 0.5 * g1)
    torch.testing.assert_close(g, torch.tensor([g0, g1, g2]))
    one_step = td_lambda_returns(rewards, continues, next_values, gamma=0.5, lam=0.0)
    torch.testing.assert_close(one_step, torch.tensor([1.0 + 5.0, 2.0 + 10.0, 3.0]))


def test_td_lambda_returns_bootstrap_from_the_final_observation_of_a_truncated_episode():
    """Two episodes in one batch: the first truncated after two steps (its last step bootstraps from the final
    observation's value, not from the padding after it), the second terminated after three."""
    rewards = torch.tensor([[1.0, 1.0], [2.0, 1.0], [0.0, 1.0]])
    next_values = torch.tensor([[10.0, 4.0], [20.0, 4.0], [-50.0, 99.0]])
    continues = torch.tensor([[1.0, 1.0], [1.0, 1.0], [0.0, 0.0]])  # padding and a termination: no bootstrap
    last = torch.tensor([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    g = td_lambda_returns(rewards, continues, next_values, gamma=0.5, lam=0.5, last=last)
    first1 = 2.0 + 0.5 * 20.0  # lambda-weighted between next_values and itself: the plain bootstrap
    first0 = 1.0 + 0.5 * (0.5 * 10.0 + 0.5 * first1)
    second2 = 1.0
    second1 = 1.0 + 0.5 * (0.5 * 4.0 + 0.5 * second2)
    second0 = 1.0 + 0.5 * (0.5 * 4.0 + 0.5 * second1)
    torch.testing.assert_close(g[:2], torch.tensor([[first0, second0], [first1, second1]]))
    torch.testing.assert_close(g[2, 1], torch.tensor(second2))
    one_step = td_lambda_returns(rewards, continues, next_values, gamma=0.5, lam=0.0, last=last)
    torch.testing.assert_close(one_step, rewards + 0.5 * continues * next_values)
