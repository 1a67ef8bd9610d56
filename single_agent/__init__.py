"""Single-agent agents (DQN, DDPG, TD3, SAC, PPO) on gymnasium vector envs; built on core/."""
