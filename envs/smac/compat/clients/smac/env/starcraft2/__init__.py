"""smac.env.starcraft2 on the built-in simulator."""
