#!/usr/bin/env bash
# Issue 38: `ribbon viz`, the page that teaches, driven in headless Chromium
# (ribbon-cli/tests/viz.rs): the trace, query answers and Standard128 bytes
# are the crate's; the XOR triple, back-substitution and the 0 = 1 chain are
# in the DOM with the crate's bits; Play stops on failures; A and the pivot
# row share the screen at 1366x768; no horizontal scroll at 390x844 with touch
# emulated; the query row is the hashed row; the space figure and the failed
# seeds per column count are the crate's; the controls replay the crate's
# other settings. Runs from the repository root on a fresh Debian machine as
# root: installs Debian's chromium with apt-get when it is missing (and a
# Rust toolchain is expected, as for scripts/test.sh).
#
# CARGO_TARGET_DIR: where to build (default: target/ of the checkout; ribbon-cli
# is pure Rust, so it needs none of the native RocksDB build).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v chromium >/dev/null 2>&1; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
fi
cargo test --release -q -p ribbon-cli --test viz
