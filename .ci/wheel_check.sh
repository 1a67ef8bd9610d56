#!/usr/bin/env bash
# The package a user installs: build the sdist and the wheel with the standard front end, check that the wheel
# holds every file read at run time (configs/, the SMAC map data), install it into a fresh venv and, from outside
# the checkout, train and evaluate through the `concerto` command and list the trainers' entry points.
# Usage: .ci/wheel_check.sh [PYTHON]  (PYTHON has the `build` package: the dev extra's; default .venv/bin/python)
set -euo pipefail
cd "$(dirname "$0")/.."
python=${1:-.venv/bin/python}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$python" -m build --outdir "$work/dist" . >"$work/build.log" 2>&1 || { cat "$work/build.log" >&2; exit 1; }
wheel=$(echo "$work"/dist/*.whl)
echo "built $(basename "$work"/dist/*.tar.gz) and $(basename "$wheel")"

expected=$(git ls-files configs envs/smac/map_data 'envs/smac/compat/clients/*.py' | sed 's#^configs/#core/configs/#' | sort)
missing=$(comm -23 <(echo "$expected") <("$python" -c 'import sys, zipfile; print("\n".join(zipfile.ZipFile(sys.argv[1]).namelist()))' "$wheel" | sort))
if [ -n "$missing" ]; then
  echo "the wheel lacks files read at run time:" >&2
  echo "$missing" >&2
  exit 1
fi
echo "the wheel holds all $(echo "$expected" | wc -l) config, map and smac stand-in files"

"$python" -m venv "$work/venv"
"$work/venv/bin/pip" install -q torch==2.13.0
"$work/venv/bin/pip" install -q "$wheel"

cd "$work"  # outside the checkout: nothing can come from it
"$work/venv/bin/concerto" train --algo qmix --env smac_3m --steps 200 --no-progress --logdir "$work/runs"
if ! compgen -G "$work/runs/smac_3m/qmix/*/run.json" >/dev/null; then
  echo "concerto train exited 0 but wrote no run directory under $work/runs/smac_3m/qmix" >&2
  exit 1
fi
"$work/venv/bin/concerto" evaluate "$(dirname "$(echo "$work"/runs/smac_3m/qmix/*/run.json)")" --episodes 2 >/dev/null
"$work/venv/bin/concerto-train-marl" --help >/dev/null
"$work/venv/bin/concerto-train-single" --help >/dev/null
"$work/venv/bin/python" - <<'PY'
import sysconfig
from pathlib import Path

from core.experiments.trainers import training_modules
from core.paths import CONFIG_DIR

site = Path(sysconfig.get_paths()["purelib"]).resolve()
assert CONFIG_DIR.is_relative_to(site), f"configs read from {CONFIG_DIR}, not from the installed wheel in {site}"
modules = training_modules()
assert modules["qmix"] == "marl.cli" and modules["dqn"] == "single_agent.cli", modules
print(f"from the wheel: configs in {CONFIG_DIR}, trainers {sorted(set(modules.values()))}")
PY
echo "the wheel installs and trains"
