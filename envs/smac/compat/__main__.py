"""python -m envs.smac.compat: print the directory that holds the `smac` and `smacv2` stand-ins."""
from envs.smac.compat import clients_path

print(clients_path())
