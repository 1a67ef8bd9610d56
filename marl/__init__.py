"""Multi-agent algorithms, their networks, rollout collection, the train loop and the CLI."""
