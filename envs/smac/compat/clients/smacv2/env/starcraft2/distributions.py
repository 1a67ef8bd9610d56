"""smacv2.env.starcraft2.distributions on the built-in simulator (envs.smac.compat.distributions)."""
from smacv2 import loader as _loader

_distributions = _loader.import_simulator("envs.smac.compat.distributions")
Distribution = _distributions.Distribution
DISTRIBUTION_MAP = _distributions.DISTRIBUTION_MAP
get_distribution = _distributions.get_distribution
register_distribution = _distributions.register_distribution
FixedDistribution = _distributions.FixedDistribution
AllTeamsDistribution = _distributions.AllTeamsDistribution
WeightedTeamsDistribution = _distributions.WeightedTeamsDistribution
PerAgentUniformDistribution = _distributions.PerAgentUniformDistribution
MaskDistribution = _distributions.MaskDistribution
ReflectPositionDistribution = _distributions.ReflectPositionDistribution
SurroundedPositionDistribution = _distributions.SurroundedPositionDistribution
SurroundedAndReflectPositionDistribution = _distributions.SurroundedAndReflectPositionDistribution

__all__ = ["DISTRIBUTION_MAP", "AllTeamsDistribution", "Distribution", "FixedDistribution", "MaskDistribution",
           "PerAgentUniformDistribution", "ReflectPositionDistribution", "SurroundedAndReflectPositionDistribution",
           "SurroundedPositionDistribution", "WeightedTeamsDistribution", "get_distribution",
           "register_distribution"]
