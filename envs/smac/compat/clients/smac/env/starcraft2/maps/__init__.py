"""smac.env.starcraft2.maps on the built-in simulator: get_map_params, each map's parameters."""
from smac import loader as _loader

get_map_params = _loader.import_simulator("envs.smac.compat.api").get_map_params

__all__ = ["get_map_params"]
