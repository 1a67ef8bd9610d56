"""Stand-in for the smac package: the built-in simulator under smac's import names (see envs/smac/compat)."""
import importlib.util as _util
from pathlib import Path as _Path

_spec = _util.spec_from_file_location("concerto_smac_compat", _Path(__file__).resolve().parents[2] / "loader.py")
assert _spec is not None and _spec.loader is not None
loader = _util.module_from_spec(_spec)
_spec.loader.exec_module(loader)
loader.check_not_shadowing("smac")
