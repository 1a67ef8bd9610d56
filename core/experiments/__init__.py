"""Experiments: grids of ordinary training runs (cells), run resumably, collected into marl-eval's results
format and reported with rliable's statistics."""
