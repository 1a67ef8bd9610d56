"""Build hook: the wheel carries the repository's configs/ folder as core/configs, where core.paths finds it once
installed (the folder stays at the repository root, where a checkout reads it). Everything else is setup.cfg."""
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

CONFIGS = Path("configs")
PATTERNS = ("*.yaml", "*.md")  # MANIFEST.in puts the same files into the sdist


class BuildPyWithConfigs(build_py):
    def run(self) -> None:
        super().run()
        if self.editable_mode:  # an editable install reads configs/ in the checkout
            return
        target = Path(self.build_lib, "core", "configs")
        for path in sorted(p for pattern in PATTERNS for p in CONFIGS.rglob(pattern)):
            destination = target / path.relative_to(CONFIGS)
            self.mkpath(str(destination.parent))
            self.copy_file(str(path), str(destination))


setup(cmdclass={"build_py": BuildPyWithConfigs})
