"""Where the project is found at run time, and by what name it installs. configs/ is at the repository root in a
checkout (editable installs included) and inside this package as core/configs in an installed wheel (setup.py
copies it there)."""
from __future__ import annotations

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
PROJECT_ROOT = PACKAGE_DIR.parent  # the directory holding the import packages: the checkout, or site-packages
# the wheel's own copy wins: in site-packages, a `configs` folder beside the packages would be another project's
_INSTALLED_CONFIGS = PACKAGE_DIR / "configs"
CONFIG_DIR = _INSTALLED_CONFIGS if _INSTALLED_CONFIGS.is_dir() else PROJECT_ROOT / "configs"



def shipped_config(path: str | Path) -> Path:
    """`path` itself, unless it is a relative `configs/...` path that does not exist here but names a file of the
    project's own configs (CONFIG_DIR): then that file, so that the documented `--config configs/reference/...`
    works from any directory and from an installed wheel."""
    given = Path(path)
    parts = given.parts
    if given.exists() or given.is_absolute() or not parts or parts[0] != "configs":
        return given
    shipped = CONFIG_DIR.joinpath(*parts[1:])
    return shipped if shipped.is_file() else given


DISTRIBUTION = "concerto-marl"  # the name on the package index (`concerto` there is an unrelated project)


def install_hint(extra: str) -> str:
    """How to install an optional extra, from the package index or in a checkout."""
    return f"pip install '{DISTRIBUTION}[{extra}]' (in a checkout: pip install -e '.[{extra}]')"
