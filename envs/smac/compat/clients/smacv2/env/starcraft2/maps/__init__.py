"""smacv2.env.starcraft2.maps on the built-in simulator: get_map_params, each map's parameters."""
from smacv2 import loader as _loader

get_map_params = _loader.import_simulator("envs.smac.compat.api").get_smacv2_map_params

__all__ = ["get_map_params"]
