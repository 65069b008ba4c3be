#!/usr/bin/env bash
# Issue 34, the Python half: builds the rocks_ribbon package from the
# checkout as the README says (one command: pip install ./python) into a
# virtual environment and runs its pytest suite, which writes real databases
# with rocksdict (RocksDB 9.x from PyPI) and checks member keys, FP rates,
# Get paths against rocksdict's statistics, live keys, and a reconcile diff.
#
# Runs from the repository root on a fresh Debian machine as root (needs
# cargo, as the rest of the suite): installs python3-venv with apt-get when
# missing, then maturin, numpy, pytest and rocksdict with pip.
#
# ROCKS_RIBBON_PY_VENV: the virtual environment (default
#   ${TMPDIR:-/tmp}/rocks-ribbon-venv-python; kept between runs).
# CARGO_TARGET_DIR: where maturin's cargo build goes (default
#   /var/tmp/target-python; scripts/env.sh's shared one when set).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)

if ! python3 -c 'import ensurepip, venv' >/dev/null 2>&1; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3-venv python3-pip >/dev/null
fi

venv="${ROCKS_RIBBON_PY_VENV:-${TMPDIR:-/tmp}/rocks-ribbon-venv-python}"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
export PATH="$venv/bin:$PATH"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/var/tmp/target-python}"
pip=("$venv/bin/pip" install -q --disable-pip-version-check)
"${pip[@]}" "maturin>=1.7,<2" numpy pytest rocksdict

echo "== pip install ./python (maturin, one abi3 wheel)"
# --no-build-isolation: the maturin just installed builds it (no second download).
"${pip[@]}" --no-build-isolation --force-reinstall --no-deps ./python
"$venv/bin/python" -c 'import rocks_ribbon, sys; print("rocks_ribbon", rocks_ribbon.__version__, "on Python", sys.version.split()[0])'

echo "== pytest python/tests"
"$venv/bin/python" -m pytest -q python/tests
echo "test-python: $(( $(date +%s) - start )) s"
