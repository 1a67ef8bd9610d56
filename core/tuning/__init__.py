"""Hyperparameter tuning with Optuna (scripts/tune.py): search spaces, trials run as experiments over seeds,
pruning from inside the runs, the study and its report. Optuna is an optional extra, imported where it is used."""
