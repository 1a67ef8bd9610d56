"""Locations of project files found at run time: configs/, at the repository root in a checkout (editable
installs included) and inside this package as core/configs in an installed wheel (setup.py copies it there)."""
from __future__ import annotations

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
PROJECT_ROOT = PACKAGE_DIR.parent  # the directory holding the import packages: the checkout, or site-packages
# the wheel's own copy wins: in site-packages, a `configs` folder beside the packages would be another project's
_INSTALLED_CONFIGS = PACKAGE_DIR / "configs"
CONFIG_DIR = _INSTALLED_CONFIGS if _INSTALLED_CONFIGS.is_dir() else PROJECT_ROOT / "configs"
