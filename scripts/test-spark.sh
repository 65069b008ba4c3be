#!/usr/bin/env bash
# Issue 35: rocks_ribbon.spark on a local[2] Spark session, 10^6 keys: the
# same bytes as `ribbon big build`, no false negatives, FP rate within 3
# sigma (python/tests/test_spark.py). Runs from the repository root on a
# fresh Debian machine as root: installs a JRE and python3-venv with apt-get,
# PySpark, pandas, pyarrow and pytest with pip into a virtual environment
# kept beside the target directory, builds the ribbon binary and the
# package (pip install ./python), then runs the test.
#
# ROCKS_RIBBON_VENV: the virtual environment (default $CARGO_TARGET_DIR/venv-spark).
# Measured here (2 shared cores, load average 15): pip install of pyspark,
# pandas, pyarrow, numpy (first download) 3 min 21 s; the test itself 2 min
# 28 s; the cargo builds of ribbon and the package come on top on a fresh
# machine.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v cargo >/dev/null 2>&1 || { echo "test-spark: cargo not found: install Rust (rustup) first" >&2; exit 1; }
# The target directory of scripts/test.sh, whose ribbon binary this reuses.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/var/tmp/rocks-ribbon-target}"

need=()
command -v java >/dev/null 2>&1 || need+=(default-jre-headless)
python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || need+=(python3-venv python3-pip)
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi

venv="${ROCKS_RIBBON_VENV:-$CARGO_TARGET_DIR/venv-spark}"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check pyspark "pandas<3" pyarrow numpy pytest

if [ ! -f python/pyproject.toml ]; then
  echo "test-spark: python/pyproject.toml is missing (the rocks_ribbon package, issue 34)" >&2
  exit 1
fi
cargo build --release -q -p ribbon-cli --bin ribbon
"$venv/bin/pip" install -q --disable-pip-version-check ./python

RIBBON_BIN="$CARGO_TARGET_DIR/release/ribbon" "$venv/bin/python" -m pytest -q -p no:cacheprovider python/tests/test_spark.py
